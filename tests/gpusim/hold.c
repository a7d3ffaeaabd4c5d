/* SPDX-License-Identifier: MIT */
/*
 * Host functions and waits for a value in stream order. Their end is not known when they are
 * issued (the host function runs as long as it runs; the value is written when the program
 * writes it), so they cannot be placed on the timeline at the call as everything else is:
 * the stream is held, the work issued to it after the hold waits in the stream's list, and a
 * thread of gpusim's, when the stream reaches the hold, runs the host function (or watches
 * the word) on the host clock, then places the waiting work as of then. As a GPU does: the
 * work behind a host function starts only after it returned.
 */
#include <errno.h>
#include <stdlib.h>
#include <sched.h>

#include <cuda.h>

/* cuda.h names the _v2 entry points by these; the first ones are entry points of their own. */
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
				     unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
				     unsigned int flags);

#include "runtime.h"

static bool value_reached(const struct gw_sim_item *it)
{
	/* the word is written by another thread (the host, or a copy): read it as the GPU
	 * would, whole */
	uint64_t v = it->is64 ? __atomic_load_n((const uint64_t *)it->addr, __ATOMIC_ACQUIRE)
			      : __atomic_load_n((const uint32_t *)it->addr, __ATOMIC_ACQUIRE);

	switch (it->flags & 0x3u) {
	case CU_STREAM_WAIT_VALUE_EQ:
		return v == it->value;
	case CU_STREAM_WAIT_VALUE_AND:
		return (v & it->value) != 0;
	case CU_STREAM_WAIT_VALUE_NOR:
		return ~(v | it->value) != 0;
	default: /* CU_STREAM_WAIT_VALUE_GEQ: cyclic, as the hardware compares */
		return it->is64 ? (int64_t)(v - it->value) >= 0
				: (int32_t)(uint32_t)(v - it->value) >= 0;
	}
}

/* Runs a hold on the calling (gpusim's) thread once its stream reaches it. */
static void run_hold(const struct gw_sim_item *it)
{
	gw_sim_wait_until(it->start_ns);
	switch (it->kind) {
	case GW_SIM_ITEM_HOST_FUNC:
		it->fn(it->data);
		break;
	case GW_SIM_ITEM_CALLBACK:
		it->callback(it->handle, cudaSuccess, it->data);
		break;
	case GW_SIM_ITEM_WAIT_VALUE:
		/* a GPU sees the write within microseconds: no sleep, which would take tens */
		while (!value_reached(it))
			sched_yield();
		break;
	default:
		break;
	}
}

static void count_held(struct gw_sim_stream *s, int delta)
{
	gw_sim_rt.held[s->device] += (uint32_t)delta;
	if (!s->legacy && !(s->flags & cudaStreamNonBlocking))
		gw_sim_rt.held_blocking[s->device] += (uint32_t)delta;
}

/* The next hold's start, under the lock: when s gets to it. */
static void schedule(struct gw_sim_stream *s, struct gw_sim_item *it, uint64_t now)
{
	uint64_t dep = gw_sim_ready_after_locked(s);

	it->start_ns =
		dep && dep + gw_sim_rt.cfg.queue_ns > now ? dep + gw_sim_rt.cfg.queue_ns : now;
}

/*
 * The hold's thread: runs the hold when its stream reaches it, then places the work issued
 * behind it, up to the next hold, which it runs in turn. The stream stays held until the
 * records of what was placed have been handed to CUPTI, so that a synchronization that sees
 * the stream released finds every record made.
 */
static void *hold_thread(void *arg)
{
	struct gw_sim_stream *s = arg;
	struct gw_sim_item *hold;

	pthread_mutex_lock(&gw_sim_rt.lock);
	hold = s->held;
	s->held = hold->next;
	if (!s->held)
		s->held_tail = NULL;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	for (;;) {
		struct gw_sim_item *placed = NULL, **tail = &placed, *it;
		const struct gw_sim_hooks *h;
		uint64_t now;

		if (hold) {
			run_hold(hold);
			free(hold);
			hold = NULL;
			pthread_mutex_lock(&gw_sim_rt.lock);
			/* the work behind it starts after it */
			gw_sim_advance_locked(s, gw_sim_now_ns());
		} else {
			pthread_mutex_lock(&gw_sim_rt.lock);
		}
		now = gw_sim_now_ns();
		while ((it = s->held)) {
			s->held = it->next;
			it->next = NULL;
			if (it->kind == GW_SIM_ITEM_OP) {
				gw_sim_place_locked(s, &it->op, it->dur_ns, now);
				*tail = it;
				tail = &it->next;
			} else if (it->kind == GW_SIM_ITEM_EVENT) {
				gw_sim_event_set_locked(it->event, s, now);
				it->event->pending--;
				free(it);
			} else {
				schedule(s, it, now);
				hold = it;
				break;
			}
		}
		if (!s->held)
			s->held_tail = NULL;
		if (!hold && !placed) {
			s->gated = false;
			count_held(s, -1);
			pthread_cond_broadcast(&gw_sim_rt.hold_done);
			pthread_mutex_unlock(&gw_sim_rt.lock);
			return NULL;
		}
		pthread_cond_broadcast(&gw_sim_rt.hold_done); /* events recorded */
		pthread_mutex_unlock(&gw_sim_rt.lock);
		/* the records of what was placed, in stream order */
		h = atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
		while ((it = placed)) {
			placed = it->next;
			if (h)
				h->op(&it->op);
			free(it);
		}
	}
}

int gw_sim_stream_hold(struct gw_sim_stream *s, struct gw_sim_item *item)
{
	pthread_attr_t attr;
	pthread_t t;
	int r;

	item->next = NULL;
	pthread_mutex_lock(&gw_sim_rt.lock);
	if (s->gated) {
		/* behind the hold already there: its thread runs this one in turn */
		if (s->held_tail)
			s->held_tail->next = item;
		else
			s->held = item;
		s->held_tail = item;
		pthread_mutex_unlock(&gw_sim_rt.lock);
		return 0;
	}
	schedule(s, item, gw_sim_now_ns());
	s->held = s->held_tail = item;
	s->gated = true;
	count_held(s, +1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, hold_thread, s);
	pthread_attr_destroy(&attr);
	if (r) {
		s->held = s->held_tail = NULL;
		s->gated = false;
		count_held(s, -1);
		pthread_mutex_unlock(&gw_sim_rt.lock);
		free(item);
		return -r;
	}
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return 0;
}

/* --- entry points --- */

/* Declared by cuda.h only when compiling for the per-thread default stream. */
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
					  void *userData, unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue32_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
					  unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
					  unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
					     unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
					     unsigned int flags);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
				       void *userData, unsigned int flags);

/* A hold of kind k on stream (per_thread: the _ptsz form's stream 0). */
static cudaError_t hold(cudaStream_t stream, bool per_thread, struct gw_sim_item *it)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s) {
		free(it);
		return cudaErrorInvalidResourceHandle;
	}
	if (s->capture) {
		free(it);
		return cudaErrorStreamCaptureUnsupported;
	}
	it->handle = stream;
	return gw_sim_stream_hold(s, it) < 0 ? cudaErrorMemoryAllocation : cudaSuccess;
}

static cudaError_t host_func(cudaStream_t stream, bool per_thread, cudaHostFn_t fn, void *data)
{
	struct gw_sim_item *it;

	if (!fn)
		return cudaErrorInvalidValue;
	if (!(it = calloc(1, sizeof(*it))))
		return cudaErrorMemoryAllocation;
	it->kind = GW_SIM_ITEM_HOST_FUNC;
	it->fn = fn;
	it->data = data;
	return hold(stream, per_thread, it);
}

static cudaError_t stream_callback(cudaStream_t stream, bool per_thread, cudaStreamCallback_t cb,
				   void *data, unsigned int flags)
{
	struct gw_sim_item *it;

	if (!cb || flags)
		return cudaErrorInvalidValue;
	if (!(it = calloc(1, sizeof(*it))))
		return cudaErrorMemoryAllocation;
	it->kind = GW_SIM_ITEM_CALLBACK;
	it->callback = cb;
	it->data = data;
	return hold(stream, per_thread, it);
}

static cudaError_t wait_value(CUstream stream, bool per_thread, CUdeviceptr addr, uint64_t value,
			      unsigned int flags, bool is64)
{
	struct gw_sim_item *it;

	if (!addr || (addr & (is64 ? 7u : 3u)) || (flags & ~0x3u & ~CU_STREAM_WAIT_VALUE_FLUSH))
		return cudaErrorInvalidValue;
	if (!(it = calloc(1, sizeof(*it))))
		return cudaErrorMemoryAllocation;
	it->kind = GW_SIM_ITEM_WAIT_VALUE;
	it->addr = (const void *)(uintptr_t)addr;
	it->value = value;
	it->flags = flags;
	it->is64 = is64;
	return hold((cudaStream_t)stream, per_thread, it);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	RT_BEGIN(cudaLaunchHostFunc, v10000, stream, fn, userData);
	cudaError_t err;
	{
		DRV_BEGIN(cuLaunchHostFunc, cuLaunchHostFunc_params, (CUstream)stream, fn,
			  userData);
		err = host_func(stream, false, fn, userData);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	RT_BEGIN(cudaLaunchHostFunc_ptsz, v10000, stream, fn, userData);
	cudaError_t err;
	{
		DRV_BEGIN(cuLaunchHostFunc_ptsz, cuLaunchHostFunc_ptsz_params, (CUstream)stream, fn,
			  userData);
		err = host_func(stream, true, fn, userData);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
				  void *userData, unsigned int flags)
{
	RT_BEGIN(cudaStreamAddCallback, v5000, stream, callback, userData, flags);

	RT_END(stream_callback(stream, false, callback, userData, flags));
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
				       void *userData, unsigned int flags)
{
	RT_BEGIN(cudaStreamAddCallback_ptsz, v7000, stream, callback, userData, flags);

	RT_END(stream_callback(stream, true, callback, userData, flags));
}

static CUresult to_cu(cudaError_t err)
{
	switch (err) {
	case cudaSuccess:
		return CUDA_SUCCESS;
	case cudaErrorInvalidResourceHandle:
		return CUDA_ERROR_INVALID_HANDLE;
	case cudaErrorMemoryAllocation:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case cudaErrorStreamCaptureUnsupported:
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A driver entry point the application called itself: its call is the outermost. */
#define CU_HOLD(fn, body, ...)                                                                     \
	do {                                                                                       \
		fn##_params p_ = {__VA_ARGS__};                                                    \
		struct gw_sim_api a_;                                                              \
		gw_sim_api_begin(&a_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn,    \
				 #fn, &p_, NULL);                                                  \
		return to_cu(gw_sim_api_end(&a_, (body)));                                         \
	} while (0)

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	CU_HOLD(cuLaunchHostFunc, host_func((cudaStream_t)hStream, false, fn, userData), hStream,
		fn, userData);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	CU_HOLD(cuLaunchHostFunc_ptsz, host_func((cudaStream_t)hStream, true, fn, userData),
		hStream, fn, userData);
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
				     unsigned int flags)
{
	CU_HOLD(cuStreamAddCallback,
		stream_callback((cudaStream_t)hStream, false, (cudaStreamCallback_t)callback,
				userData, flags),
		hStream, callback, userData, flags);
}

CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
					  void *userData, unsigned int flags)
{
	CU_HOLD(cuStreamAddCallback_ptsz,
		stream_callback((cudaStream_t)hStream, true, (cudaStreamCallback_t)callback,
				userData, flags),
		hStream, callback, userData, flags);
}

#define WAIT_ENTRY(fn, T, per_thread, is64)                                                        \
	CUresult CUDAAPI fn(CUstream stream, CUdeviceptr addr, T value, unsigned int flags)        \
	{                                                                                          \
		CU_HOLD(fn, wait_value(stream, per_thread, addr, value, flags, is64), stream,      \
			addr, value, flags);                                                       \
	}
WAIT_ENTRY(cuStreamWaitValue32, cuuint32_t, false, false)
WAIT_ENTRY(cuStreamWaitValue32_ptsz, cuuint32_t, true, false)
WAIT_ENTRY(cuStreamWaitValue32_v2, cuuint32_t, false, false)
WAIT_ENTRY(cuStreamWaitValue32_v2_ptsz, cuuint32_t, true, false)
WAIT_ENTRY(cuStreamWaitValue64, cuuint64_t, false, true)
WAIT_ENTRY(cuStreamWaitValue64_ptsz, cuuint64_t, true, true)
WAIT_ENTRY(cuStreamWaitValue64_v2, cuuint64_t, false, true)
WAIT_ENTRY(cuStreamWaitValue64_v2_ptsz, cuuint64_t, true, true)
