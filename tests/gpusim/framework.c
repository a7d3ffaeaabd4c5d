/* SPDX-License-Identifier: MIT */
/*
 * Runtime calls that frameworks link against (PyTorch's libraries import 113 cudart symbols,
 * and Python loads them with RTLD_NOW, so every one must exist). The ones a framework's
 * ordinary work depends on behave: stream capture queries, the capture mode exchange, host
 * functions in stream order, the driver entry-point lookup (it refuses: the caller falls back
 * to libcuda.so.1). The rest are in unsupported.def and answer cudaErrorNotSupported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static cudaError_t capture_info(cudaStream_t stream, bool per_thread,
				enum cudaStreamCaptureStatus *status, unsigned long long *id,
				cudaGraph_t *graph, const cudaGraphNode_t **deps,
				const cudaGraphEdgeData **edges, size_t *n_deps)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!status)
		return cudaErrorInvalidValue;
	*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	if (!s->capture)
		return cudaSuccess;
	/* A capture is a sequence of launches (launch.c): no dependency set to hand out. */
	if (id)
		*id = s->capture->id;
	if (graph)
		*graph = (cudaGraph_t)(void *)s->capture;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (n_deps)
		*n_deps = 0;
	return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
				     enum cudaStreamCaptureStatus *captureStatus_out,
				     unsigned long long *id_out, cudaGraph_t *graph_out,
				     const cudaGraphNode_t **dependencies_out,
				     const cudaGraphEdgeData **edgeData_out,
				     size_t *numDependencies_out)
{
	RT_BEGIN(cudaStreamGetCaptureInfo, v12030, stream, captureStatus_out, id_out, graph_out,
		 dependencies_out, edgeData_out, numDependencies_out);

	RT_END(capture_info(stream, false, captureStatus_out, id_out, graph_out, dependencies_out,
			    edgeData_out, numDependencies_out));
}

/* The thread's capture interaction mode: kept and exchanged, never enforced (gpusim does not
 * refuse unsafe calls during a capture by mode). */
static __thread enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	RT_BEGIN(cudaThreadExchangeStreamCaptureMode, v10010, mode);
	enum cudaStreamCaptureMode old;

	if (!mode || (unsigned int)*mode > cudaStreamCaptureModeRelaxed)
		RT_END(cudaErrorInvalidValue);
	old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	RT_END(cudaSuccess);
}

/*
 * There is no driver behind gpusim: every driver entry point is "not found", the answer a
 * caller must handle for symbols a driver is too old to have. PyTorch then dlopens
 * libcuda.so.1 (gpusim's stub, libcuda.c) and tolerates the functions it lacks.
 */
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	RT_BEGIN(cudaGetDriverEntryPointByVersion, v12050, symbol, funcPtr, cudaVersion, flags,
		 driverStatus);

	if (!symbol || !funcPtr)
		RT_END(cudaErrorInvalidValue);
	*funcPtr = NULL;
	if (driverStatus)
		*driverStatus = cudaDriverEntryPointSymbolNotFound;
	RT_END(cudaSuccess);
}

/*
 * Host functions run on one gpusim thread, in the order they were queued, each once the host
 * clock reaches the end of the work queued before it on its stream. Later work on the stream
 * is not held back by the function's own run time (the timeline placed it at the call).
 */
struct host_call {
	cudaHostFn_t host_fn;
	cudaStreamCallback_t callback;
	void *user;
	cudaStream_t stream;
	uint64_t ready_ns;
	struct host_call *next;
};

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t host_cond = PTHREAD_COND_INITIALIZER;
static struct host_call *host_head, **host_tail = &host_head;
static bool host_thread_started;

static void *host_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct host_call *c;

		pthread_mutex_lock(&host_lock);
		while (!host_head)
			pthread_cond_wait(&host_cond, &host_lock);
		c = host_head;
		host_head = c->next;
		if (!host_head)
			host_tail = &host_head;
		pthread_mutex_unlock(&host_lock);
		gw_sim_wait_until(c->ready_ns);
		if (c->host_fn)
			c->host_fn(c->user);
		else
			c->callback(c->stream, cudaSuccess, c->user);
		free(c);
	}
	return NULL;
}

static cudaError_t queue_host_call(cudaStream_t stream, bool per_thread, cudaHostFn_t fn,
				   cudaStreamCallback_t callback, void *user)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	struct host_call *c;

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!fn && !callback)
		return cudaErrorInvalidValue;
	/* a capture holds kernel launches only (launch.c) */
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	c = calloc(1, sizeof(*c));
	if (!c)
		return cudaErrorMemoryAllocation;
	*c = (struct host_call){.host_fn = fn,
				.callback = callback,
				.user = user,
				.stream = stream,
				.ready_ns = gw_sim_stream_ready(s)};
	pthread_mutex_lock(&host_lock);
	if (!host_thread_started) {
		pthread_t t;

		if (pthread_create(&t, NULL, host_thread, NULL)) {
			pthread_mutex_unlock(&host_lock);
			free(c);
			return cudaErrorMemoryAllocation;
		}
		pthread_detach(t);
		host_thread_started = true;
	}
	*host_tail = c;
	host_tail = &c->next;
	pthread_cond_signal(&host_cond);
	pthread_mutex_unlock(&host_lock);
	gw_sim_stats_host_func();
	return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	RT_BEGIN(cudaLaunchHostFunc, v10000, stream, fn, userData);

	RT_END(queue_host_call(stream, false, fn, NULL, userData));
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
				  void *userData, unsigned int flags)
{
	RT_BEGIN(cudaStreamAddCallback, v5000, stream, callback, userData, flags);

	if (flags)
		RT_END(cudaErrorInvalidValue);
	RT_END(queue_host_call(stream, false, NULL, callback, userData));
}

/* One simulated device, on no real bus: a well-formed address that names it. */
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
	RT_BEGIN(cudaDeviceGetPCIBusId, v4010, pciBusId, len, device);

	if (!pciBusId || len <= 0)
		RT_END(cudaErrorInvalidValue);
	if (device != 0)
		RT_END(cudaErrorInvalidDevice);
	if (snprintf(pciBusId, (size_t)len, "0000:00:00.0") >= len)
		RT_END(cudaErrorInvalidValue);
	RT_END(cudaSuccess);
}

/* The default pool holds nothing back (cudaMallocAsync memory is freed at once): its
 * reserved and used figures are zero, trimming has nothing to do. */
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	RT_BEGIN(cudaMemPoolGetAttribute, v11020, memPool, attr, value);

	if (!memPool || !value)
		RT_END(cudaErrorInvalidValue);
	switch (attr) {
	case cudaMemPoolReuseFollowEventDependencies:
	case cudaMemPoolReuseAllowOpportunistic:
	case cudaMemPoolReuseAllowInternalDependencies:
		*(int *)value = 1;
		break;
	case cudaMemPoolAttrReleaseThreshold:
	case cudaMemPoolAttrReservedMemCurrent:
	case cudaMemPoolAttrReservedMemHigh:
	case cudaMemPoolAttrUsedMemCurrent:
	case cudaMemPoolAttrUsedMemHigh:
		*(unsigned long long *)value = 0;
		break;
	default:
		RT_END(cudaErrorInvalidValue);
	}
	RT_END(cudaSuccess);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	RT_BEGIN(cudaMemPoolTrimTo, v11020, memPool, minBytesToKeep);

	RT_END(memPool ? cudaSuccess : cudaErrorInvalidValue);
}

/* For unsupported.c, which defines the calls gpusim has no model for without their
 * prototypes: sets the last error as a failed call does. */
int gw_sim_not_supported(void);
int gw_sim_not_supported(void)
{
	gw_sim_stats_unsupported();
	gw_sim_set_error(cudaErrorNotSupported);
	return cudaErrorNotSupported;
}
