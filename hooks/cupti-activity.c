/* SPDX-License-Identifier: MIT */
/* CUPTI activity buffers: a preallocated pool, completed buffers queued by CUPTI's callback and
 * converted into trace records (kernels, copies, memsets, devices, contexts) on
 * gpuwhy's own flusher thread, which also flushes CUPTI periodically and once at exit. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <gpuwhy/trace-format.h>

#include "capture-state.h"
#include "clock.h"
#include "correlation.h"
#include "nvml-sampler.h"
#include "subscriber.h"
#include "intern.h"
#include "trace-writer.h"

/*
 * CUPTI recommends 1-10 MB buffers; 16 in flight cover bursts between two flushes. Pages are
 * touched only as CUPTI fills them (MAP_NORESERVE), and the lowest free buffer is handed out
 * first, so a steady flow keeps reusing one warm MiB. Each buffer starts with a header of
 * gpuwhy's (CUPTI gets the rest): the completion callback only queues it there, so CUPTI's
 * callback, which may run under CUPTI's own lock, never waits for gpuwhy's writer.
 */
#define POOL_BUFFERS	   16
#define BUFFER_BYTES	   (1u << 20)
#define HEADER_BYTES	   64
#define BUFFER_MAGIC	   0x6770757768796275ull /* "gpuwhybu" */
/* One CUPTI buffer can hold more records than a thread's ring in the writer (1 MiB): after
 * this many (a kernel record takes 136 bytes there: about half the ring), the flusher waits
 * for the writer to catch up rather than drop records. Each wait ends a frame. */
#define RECORDS_PER_DRAIN  4096
#define DRAIN_WAIT_NS	   200000000ull
/* A Kernel10 record is 232 bytes: a buffer holds about 4,500 of them. */
#define RECORDS_PER_BUFFER (BUFFER_BYTES / 232)
/* Launches after CUPTI last asked for or returned a buffer of ours, and seconds, past which
 * CUPTI no longer hands gpuwhy its records: four buffers' worth cannot fit in what it holds. */
#define TAKEOVER_LAUNCHES  (4 * RECORDS_PER_BUFFER)
#define TAKEOVER_NS	   1000000000ull
/* At exit, how long the flusher lets work still running on the GPU finish before it forces
 * CUPTI's buffers out: a forced flush returns incomplete records without times, never again. */
#define EXIT_DRAIN_NS	   1000000000ull
#define EXIT_DRAIN_STEP_NS 5000000ull

struct buf_head {
	struct buf_head *next;
	uint64_t magic;
	size_t valid;	/* bytes of records CUPTI wrote */
	size_t dropped; /* records CUPTI reported dropped with this buffer */
	bool heap;
};
_Static_assert(sizeof(struct buf_head) <= HEADER_BYTES, "buffer header too large");

static uint8_t *pool;
static _Atomic uint32_t pool_free; /* bit i set: buffer i is free */
static _Atomic bool activity_on;
static _Atomic(struct buf_head *) completed; /* pushed by CUPTI's callback, newest first */

/* What the exit notes and the takeover check need; the flusher's own unless atomic. */
static uint64_t since_drain;
static uint64_t kernels_seen, untimed_seen;
/* GPU records (kernels, copies, memsets) seen, and how many carried an inner call's id */
static uint64_t join_seen[3], join_aliased[3];
static bool device_seen;
static _Atomic uint64_t launches_at_event; /* gw_cupti_launches at CUPTI's last buffer call */
static _Atomic uint64_t last_event_ns;
static _Atomic bool takeover_noted;
static _Atomic uint64_t buffers_out; /* handed to CUPTI, not yet completed back */
static uint64_t epoch_ns;

_Atomic bool gw_cupti_cuda_seen;
_Atomic uint64_t gw_cupti_launches;

int gw_cupti_pool_init(void)
{
	void *p;

	if (pool)
		return 0;
	if (gw_corr_init() < 0)
		return -ENOMEM;
	p = mmap(NULL, (size_t)POOL_BUFFERS * BUFFER_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	pool = p;
	atomic_store(&pool_free, (uint32_t)((1ull << POOL_BUFFERS) - 1));
	return 0;
}

void gw_cupti_set_activity(bool on)
{
	atomic_store(&activity_on, on);
}

void gw_cupti_set_epoch(uint64_t start_ns)
{
	epoch_ns = start_ns;
	atomic_store(&last_event_ns, start_ns);
}

static void buffer_event(void)
{
	atomic_store_explicit(&launches_at_event,
			      atomic_load_explicit(&gw_cupti_launches, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&last_event_ns, gw_now_ns(), memory_order_relaxed);
}

void CUPTIAPI gw_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint32_t free_mask = atomic_load(&pool_free);
	struct buf_head *h = NULL;

	buffer_event();
	*max_records = 0;
	while (free_mask) {
		uint32_t bit = free_mask & -free_mask;

		if (atomic_compare_exchange_weak(&pool_free, &free_mask, free_mask & ~bit)) {
			h = (struct buf_head *)(void *)(pool +
							(size_t)__builtin_ctz(bit) * BUFFER_BYTES);
			h->heap = false;
			break;
		}
	}
	/* Pool exhausted (the writer or the flusher fell behind): CUPTI before API 27 may crash
	 * on a NULL buffer, so give it heap memory rather than stall or refuse. */
	if (!h && (h = aligned_alloc(HEADER_BYTES, BUFFER_BYTES)))
		h->heap = true;
	if (!h) {
		*buffer = NULL;
		*size = 0;
		return;
	}
	h->magic = BUFFER_MAGIC;
	h->next = NULL;
	atomic_fetch_add(&buffers_out, 1);
	*buffer = (uint8_t *)h + HEADER_BYTES;
	*size = BUFFER_BYTES - HEADER_BYTES;
}

static void buffer_release(struct buf_head *h)
{
	uint8_t *p = (uint8_t *)h;

	h->magic = 0;
	if (h->heap)
		free(h);
	else
		atomic_fetch_or(&pool_free, 1u << ((p - pool) / BUFFER_BYTES));
}

static void wake_flusher(void);

void CUPTIAPI gw_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid_size)
{
	struct buf_head *h = buffer ? (struct buf_head *)(void *)(buffer - HEADER_BYTES) : NULL;

	(void)size;
	buffer_event();
	/* A buffer gpuwhy did not hand out (another client's, completed here) is not ours. */
	if (!h || ((uintptr_t)buffer & 7) || h->magic != BUFFER_MAGIC)
		return;
	atomic_fetch_sub(&buffers_out, 1);
	h->valid = valid_size;
	h->dropped = 0;
	if (gw_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &h->dropped) != CUPTI_SUCCESS)
		h->dropped = 0;
	h->next = atomic_load(&completed);
	while (!atomic_compare_exchange_weak(&completed, &h->next, h))
		;
	wake_flusher();
}

/* The recorded call's id for a GPU record of kind i (0 kernel, 1 copy, 2 memset). */
static uint32_t join(unsigned i, uint32_t id)
{
	uint32_t outer = gw_corr_resolve(id);

	join_seen[i]++;
	join_aliased[i] += outer != id;
	return outer;
}

static void convert_kernel(const CUpti_ActivityKernel10 *k)
{
	struct gw_rec_kernel r = {
		.device = k->deviceId,
		.stream = k->streamId,
		.correlation = join(0, k->correlationId),
		.start_ns = k->start,
		.end_ns = k->end,
		.name_id = gw_intern_string(GW_STRING_KERNEL, k->name),
		.grid_x = (uint64_t)k->gridX,
		.grid_y = (uint64_t)k->gridY,
		.grid_z = (uint64_t)k->gridZ,
		.block_x = (uint64_t)k->blockX,
		.block_y = (uint64_t)k->blockY,
		.block_z = (uint64_t)k->blockZ,
		.registers_per_thread = k->registersPerThread,
		.static_smem_bytes = k->staticSharedMemory,
		.dynamic_smem_bytes = k->dynamicSharedMemory,
		.graph_id = k->graphId,
		.smem_executed_bytes = k->sharedMemoryExecuted,
		.smem_optin = k->shmemLimitConfig == CUPTI_FUNC_SHMEM_LIMIT_OPTIN,
		.context_id = k->contextId,
	};

	if (gw_cupti_version >= GW_CUPTI_API_CLUSTERS) {
		r.cluster_x = k->clusterX;
		r.cluster_y = k->clusterY;
		r.cluster_z = k->clusterZ;
	}

	kernels_seen++;
	untimed_seen += !k->start && !k->end;
	gw_emit(GW_REC_KERNEL, &r);
}

static void convert_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	struct gw_rec_memcpy r = {
		.device = m->deviceId,
		.stream = m->streamId,
		.correlation = join(1, m->correlationId),
		.start_ns = m->start,
		.end_ns = m->end,
		.bytes = m->bytes,
		.copy_kind = m->copyKind,
		.src_kind = m->srcKind,
		.dst_kind = m->dstKind,
		.flags = m->flags,
		.graph_id = m->graphId,
	};

	untimed_seen += !m->start && !m->end;
	gw_emit(GW_REC_MEMCPY, &r);
}

static void convert_memset(const CUpti_ActivityMemset4 *m)
{
	struct gw_rec_memset r = {
		.device = m->deviceId,
		.stream = m->streamId,
		.correlation = join(2, m->correlationId),
		.start_ns = m->start,
		.end_ns = m->end,
		.bytes = m->bytes,
		.value = m->value,
		.mem_kind = m->memoryKind,
		.flags = m->flags,
		.graph_id = m->graphId,
	};

	untimed_seen += !m->start && !m->end;
	gw_emit(GW_REC_MEMSET, &r);
}

/* A peer-to-peer copy (MEMCPY2): a copy with both its devices. The fields read sit at the same
 * offsets in every CUpti_ActivityMemcpyPtoP version; graphId only from the third on, so it is
 * left out. */
static void convert_memcpy2(const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct gw_rec_memcpy r = {
		.device = m->deviceId,
		.stream = m->streamId,
		.correlation = join(1, m->correlationId),
		.start_ns = m->start,
		.end_ns = m->end,
		.bytes = m->bytes,
		.copy_kind = m->copyKind,
		.src_kind = m->srcKind,
		.dst_kind = m->dstKind,
		.flags = m->flags,
		.src_device = (uint64_t)m->srcDeviceId + 1,
		.dst_device = (uint64_t)m->dstDeviceId + 1,
	};

	untimed_seen += !m->start && !m->end;
	gw_emit(GW_REC_MEMCPY, &r);
}

static void convert_device(const CUpti_ActivityDevice5 *d)
{
	const char *name = d->name ? d->name : "";
	struct gw_rec_device r = {
		.device = d->id,
		.name = {(const uint8_t *)name, (uint32_t)strlen(name)},
		.sm_count = d->numMultiprocessors,
		.cc_major = d->computeCapabilityMajor,
		.cc_minor = d->computeCapabilityMinor,
		.memory_total_bytes = d->globalMemorySize,
		.memory_bandwidth_kbps = d->globalMemoryBandwidth,
		.max_threads_per_sm = (uint64_t)d->maxWarpsPerMultiprocessor * 32,
		.max_blocks_per_sm = d->maxBlocksPerMultiprocessor,
		.regs_per_sm = d->maxRegistersPerMultiprocessor,
		.smem_per_sm_bytes = d->maxSharedMemoryPerMultiprocessor,
		.max_threads_per_block = d->maxThreadsPerBlock,
		.max_regs_per_block = d->maxRegistersPerBlock,
		.max_smem_per_block_bytes = d->maxSharedMemoryPerBlock,
		.warp_size = 32,
		.uuid = {(const uint8_t *)d->uuid.bytes, sizeof(d->uuid.bytes)},
	};

	device_seen = true;
	gw_emit(GW_REC_DEVICE, &r);
	/* the sampler of measured counters samples the devices the program uses */
	gw_nvml_device_seen(d->id, (const uint8_t *)d->uuid.bytes);
}

/* Start-up work CUPTI timed: lazy loading of a kernel or module, PTX compilation. CUPTI's own
 * overheads (its buffers, its instrumentation) are gpuwhy's cost, not the program's: left out.
 * The fields read sit at the same offsets since the first overhead record. */
static void convert_overhead(const CUpti_ActivityOverhead3 *o)
{
	struct gw_rec_overhead r = {
		.device = UINT64_MAX,
		.start_ns = o->start,
		.end_ns = o->end,
	};

	switch ((unsigned)o->overheadKind) {
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
		r.kind = GW_OVERHEAD_FUNCTION_LOADING;
		break;
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
		r.kind = GW_OVERHEAD_MODULE_LOADING;
		break;
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
		r.kind = GW_OVERHEAD_COMPILER;
		break;
	default:
		return;
	}
	if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		r.tid = o->objectId.pt.threadId;
	else if (o->objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE ||
		 o->objectKind == CUPTI_ACTIVITY_OBJECT_CONTEXT ||
		 o->objectKind == CUPTI_ACTIVITY_OBJECT_STREAM)
		r.device = o->objectId.dcs.deviceId;
	gw_emit(GW_REC_OVERHEAD, &r);
}

/* A context, for the SMs a green one's kernels may use (read from CUPTIs that have them). */
static void convert_context(const CUpti_ActivityContext3 *c)
{
	struct gw_rec_context r = {.device = c->deviceId, .context_id = c->contextId};
	struct gw_rec_counter m = {.time_ns = gw_now_ns(), .device = c->deviceId};

	if (gw_cupti_version >= GW_CUPTI_API_GREEN_CONTEXTS && c->isGreenContext) {
		r.green = 1;
		r.sm_count = c->numMultiprocessors;
	}
	gw_emit(GW_REC_CONTEXT, &r);
	/* CUPTI's own buffers in this context's device memory, when its attributes said. */
	if (gw_cupti_buffer_bytes) {
		m.counter = GW_COUNTER_CUPTI_BUFFER_BYTES;
		m.value = gw_cupti_buffer_bytes;
		gw_emit(GW_REC_COUNTER, &m);
	}
	if (gw_cupti_buffer_limit_bytes) {
		m.counter = GW_COUNTER_CUPTI_BUFFER_LIMIT_BYTES;
		m.value = gw_cupti_buffer_limit_bytes;
		gw_emit(GW_REC_COUNTER, &m);
	}
}

static void convert_buffer(struct buf_head *h)
{
	uint8_t *buffer = (uint8_t *)h + HEADER_BYTES;
	CUpti_Activity *a = NULL;

	while (gw_cupti.cuptiActivityGetNextRecord(buffer, h->valid, &a) == CUPTI_SUCCESS) {
		switch (a->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			convert_kernel((const CUpti_ActivityKernel10 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			convert_memcpy((const CUpti_ActivityMemcpy6 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			convert_memset((const CUpti_ActivityMemset4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			convert_memcpy2((const CUpti_ActivityMemcpyPtoP4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			convert_device((const CUpti_ActivityDevice5 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_CONTEXT:
			convert_context((const CUpti_ActivityContext3 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_OVERHEAD:
			convert_overhead((const CUpti_ActivityOverhead3 *)a);
			break;
		default:
			break;
		}
		if (++since_drain == RECORDS_PER_DRAIN) {
			gw_writer_flush(DRAIN_WAIT_NS);
			since_drain = 0;
		}
	}
	if (h->dropped) {
		struct gw_rec_drops d = {
			.time_ns = gw_now_ns(),
			.source = GW_DROP_CUPTI,
			.count = h->dropped,
		};

		gw_emit(GW_REC_DROPS, &d);
	}
}

/* Converts the completed buffers, oldest first, and gives them back to the pool. One thread
 * at a time (the flusher, or the exit path once the flusher is done). */
static void convert_completed(void)
{
	struct buf_head *h = atomic_exchange(&completed, NULL), *fifo = NULL;

	while (h) {
		struct buf_head *next = h->next;

		h->next = fifo;
		fifo = h;
		h = next;
	}
	for (h = fifo; h;) {
		struct buf_head *next = h->next;

		if (atomic_load(&activity_on))
			convert_buffer(h);
		buffer_release(h);
		h = next;
	}
}

static void note(unsigned level, const char *text)
{
	struct gw_rec_note rec = {
		.time_ns = gw_now_ns(),
		.level = level,
		.text = {(const uint8_t *)text, (uint32_t)strlen(text)},
	};

	gw_emit(GW_REC_NOTE, &rec);
}

static double since_epoch_s(uint64_t t_ns)
{
	return t_ns > epoch_ns ? (double)(t_ns - epoch_ns) / 1e9 : 0;
}

/*
 * Another CUPTI client that re-registers the buffer callbacks (torch.profiler's Kineto does at
 * every profiler window) gets every buffer from then on; gpuwhy's callbacks still fire. Where
 * gpuwhy cannot see the call (CUDA_INJECTION64_PATH without LD_PRELOAD), this is the trace
 * of it: launches go on, and CUPTI neither asks for nor returns a buffer of gpuwhy's.
 */
static void check_takeover(void)
{
	uint64_t launches = atomic_load_explicit(&gw_cupti_launches, memory_order_relaxed);
	uint64_t at = atomic_load_explicit(&launches_at_event, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&last_event_ns, memory_order_relaxed);
	char text[320];

	uint64_t now = gw_now_ns();

	/* at and last move together under other threads: a pair read across a move is skipped */
	if (atomic_load(&takeover_noted) || at > launches || launches - at < TAKEOVER_LAUNCHES ||
	    last > now || now - last < TAKEOVER_NS || atomic_exchange(&takeover_noted, true))
		return;
	snprintf(text, sizeof(text),
		 "CUPTI has handed gpuwhy no activity buffer since +%.3f s although %llu launches "
		 "followed: another CUPTI client (a profiler such as torch.profiler) has probably "
		 "taken them over; GPU records after that are missing",
		 since_epoch_s(last), (unsigned long long)(launches - at));
	note(GW_NOTE_WARNING, text);
}

static char pending_foreign[320];
static _Atomic unsigned foreign_seen; /* bit per kind of call noted */
static pthread_mutex_t foreign_lock = PTHREAD_MUTEX_INITIALIZER;

void gw_cupti_foreign_call(enum gw_cupti_foreign what, const char *caller)
{
	static const char *const lost[] = {
		[GW_FOREIGN_BUFFERS] = "took over CUPTI's activity buffers: no GPU records after "
				       "that",
		[GW_FOREIGN_TIMESTAMP] = "replaced the timestamp callback: later GPU times are on "
					 "another clock",
		[GW_FOREIGN_DISABLE] = "disabled an activity kind gpuwhy records: no such GPU "
				       "records after that",
		[GW_FOREIGN_FINALIZE] = "finalized CUPTI: no GPU records after that",
	};
	static const char *const call[] = {
		[GW_FOREIGN_BUFFERS] = "cuptiActivityRegisterCallbacks",
		[GW_FOREIGN_TIMESTAMP] = "cuptiActivityRegisterTimestampCallback",
		[GW_FOREIGN_DISABLE] = "cuptiActivityDisable",
		[GW_FOREIGN_FINALIZE] = "cuptiFinalize",
	};
	char text[sizeof(pending_foreign)];

	if (!caller || !*caller)
		caller = "the program";
	if (gw_capturing()) {
		if (atomic_fetch_or(&foreign_seen, 1u << what) & (1u << what))
			return;
		if (what == GW_FOREIGN_BUFFERS || what == GW_FOREIGN_FINALIZE)
			atomic_store(&takeover_noted, true);
		snprintf(text, sizeof(text),
			 "another CUPTI client (%s, called from %s) %s at +%.3f s", call[what],
			 caller, lost[what], since_epoch_s(gw_now_ns()));
		note(GW_NOTE_WARNING, text);
		return;
	}
	/* Before gpuwhy's start, whose own registration then replaces the other client's: that
	 * client gets nothing, which the trace says when it begins. */
	if (what == GW_FOREIGN_DISABLE)
		return;
	snprintf(text, sizeof(text),
		 "another CUPTI client (%s, called from %s) came before gpuwhy started: gpuwhy's "
		 "own registration replaced it, and that client gets no GPU records",
		 call[what], caller);
	pthread_mutex_lock(&foreign_lock);
	if (!*pending_foreign)
		memcpy(pending_foreign, text, sizeof(text));
	pthread_mutex_unlock(&foreign_lock);
}

void gw_cupti_start_notes(void)
{
	pthread_mutex_lock(&foreign_lock);
	if (*pending_foreign)
		note(GW_NOTE_WARNING, pending_foreign);
	*pending_foreign = '\0';
	pthread_mutex_unlock(&foreign_lock);
}

void gw_cupti_join_stats(char *text, size_t size)
{
	snprintf(text, size,
		 "GPU records that carried an inner call's correlation id: kernels %llu of %llu, "
		 "copies %llu of %llu, memsets %llu of %llu",
		 (unsigned long long)join_aliased[0], (unsigned long long)join_seen[0],
		 (unsigned long long)join_aliased[1], (unsigned long long)join_seen[1],
		 (unsigned long long)join_aliased[2], (unsigned long long)join_seen[2]);
}

void gw_cupti_exit_notes(void)
{
	char text[320];

	if (untimed_seen) {
		snprintf(text, sizeof(text),
			 "CUPTI returned %llu GPU operations without timestamps (still running "
			 "when its buffers were flushed at exit): counted, left off the timeline",
			 (unsigned long long)untimed_seen);
		note(GW_NOTE_WARNING, text);
	}
	if (kernels_seen && !device_seen)
		note(GW_NOTE_WARNING,
		     "CUPTI delivered no DEVICE record: SM fill is computed with assumed device "
		     "limits");
}

/* --- the flusher thread --- */

static pthread_t flusher;
static bool flusher_running;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_wake;
static bool stop_asked, final_asked, final_done, woken;
static _Atomic bool abandoned; /* the exit path gave up on this thread */
static _Atomic bool in_flush;  /* the flusher is inside cuptiActivityFlushAll */

static void flush_cupti(bool forced)
{
	atomic_store(&in_flush, true);
	gw_cupti_flush(forced);
	atomic_store(&in_flush, false);
}

static void wake_flusher(void)
{
	pthread_mutex_lock(&flusher_lock);
	woken = true;
	pthread_cond_signal(&flusher_wake);
	pthread_mutex_unlock(&flusher_lock);
}

/* CUPTI is flushed only after the program's first recorded CUDA call, and never in a fork
 * child: cuptiActivityFlushAll may block for ever in a process without GPU work. */
static bool may_flush(void)
{
	return atomic_load(&gw_cupti_cuda_seen) && atomic_load(&gw_cupti_usable);
}

void gw_cupti_flush_at_teardown(void)
{
	/* Every buffer whose records are complete leaves CUPTI while the context still exists;
	 * the flusher's thread converts them. Not forced: a record of work still running would
	 * come back untimed and never again, and the teardown waits for that work anyway. */
	if (!may_flush())
		return;
	flush_cupti(false);
	wake_flusher();
}

/*
 * The exit's flush: default flushes while CUPTI still holds a buffer of ours (one with a record
 * of work that has not finished) and for at most EXIT_DRAIN_NS, so that work finishing at exit
 * keeps its times; then a forced flush for whatever is left.
 */
static void final_flush(void)
{
	uint64_t deadline = gw_now_ns() + EXIT_DRAIN_NS;
	struct timespec step = {0, EXIT_DRAIN_STEP_NS};

	for (;;) {
		flush_cupti(false);
		if (atomic_load(&abandoned))
			return;
		convert_completed();
		if (!atomic_load(&buffers_out) || gw_now_ns() >= deadline)
			break;
		nanosleep(&step, NULL);
	}
	flush_cupti(true);
}

static void *flusher_main(void *arg)
{
	uint64_t last_flush = gw_now_ns();
	bool final = false;

	(void)arg;
	pthread_mutex_lock(&flusher_lock);
	for (;;) {
		struct timespec deadline;

		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += GW_CUPTI_FLUSH_NS;
		deadline.tv_sec += deadline.tv_nsec / 1000000000;
		deadline.tv_nsec %= 1000000000;
		while (!woken && !stop_asked && !final_asked &&
		       pthread_cond_timedwait(&flusher_wake, &flusher_lock, &deadline) != ETIMEDOUT)
			;
		woken = false;
		final = final_asked;
		if (stop_asked && !final)
			break;
		/* Never across a CUPTI call: CUPTI takes its own locks around our callbacks. */
		pthread_mutex_unlock(&flusher_lock);
		convert_completed();
		if (final || gw_now_ns() - last_flush >= GW_CUPTI_FLUSH_NS) {
			if (may_flush() && final)
				final_flush();
			else if (may_flush())
				flush_cupti(false);
			last_flush = gw_now_ns();
			if (atomic_load(&abandoned))
				return NULL;
			convert_completed();
		}
		if (may_flush())
			check_takeover();
		pthread_mutex_lock(&flusher_lock);
		if (final) {
			final_done = true;
			pthread_cond_broadcast(&flusher_wake);
			break;
		}
	}
	pthread_mutex_unlock(&flusher_lock);
	return NULL;
}

int gw_cupti_flusher_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&flusher_wake, &ca);
	pthread_condattr_destroy(&ca);
	stop_asked = final_asked = final_done = woken = false;
	atomic_store(&abandoned, false);
	/* The application's signals go to the application's threads, not to this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&flusher, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	flusher_running = !r;
	return r;
}

int gw_cupti_finish(uint64_t timeout_ns)
{
	struct timespec deadline;
	bool done;

	if (!flusher_running) {
		/* No thread to wait on (it could not start, or this is a fork child): what CUPTI
		 * handed over already is converted; CUPTI is not called. */
		convert_completed();
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(timeout_ns / 1000000000u);
	deadline.tv_nsec += (long)(timeout_ns % 1000000000u);
	deadline.tv_sec += deadline.tv_nsec / 1000000000;
	deadline.tv_nsec %= 1000000000;
	pthread_mutex_lock(&flusher_lock);
	final_asked = true;
	pthread_cond_signal(&flusher_wake);
	while (!final_done &&
	       pthread_cond_timedwait(&flusher_wake, &flusher_lock, &deadline) != ETIMEDOUT)
		;
	done = final_done;
	pthread_mutex_unlock(&flusher_lock);
	flusher_running = false;
	if (!done) {
		/* Stuck inside CUPTI: left behind, it converts nothing more if it ever returns;
		 * what CUPTI did hand over (full buffers, from its own thread) is converted here. */
		atomic_store(&abandoned, true);
		pthread_detach(flusher);
		if (atomic_load(&in_flush))
			convert_completed();
		return -ETIMEDOUT;
	}
	pthread_join(flusher, NULL);
	return 0;
}

void gw_cupti_flusher_forget(void)
{
	flusher_running = false;
	pthread_mutex_init(&flusher_lock, NULL);
	atomic_store(&completed, NULL);
	atomic_store(&buffers_out, 0);
	kernels_seen = untimed_seen = 0;
	memset(join_seen, 0, sizeof(join_seen));
	memset(join_aliased, 0, sizeof(join_aliased));
	device_seen = false;
	atomic_store(&gw_cupti_cuda_seen, false);
}
