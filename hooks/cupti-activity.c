/* SPDX-License-Identifier: MIT */
/* CUPTI activity buffers: a preallocated pool, conversion of completed buffers into trace
 * records (kernels, copies, memsets, synchronizations, devices), and a periodic flusher. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <gpuwhy/trace-format.h>

#include "clock.h"
#include "subscriber.h"
#include "intern.h"
#include "trace-writer.h"

/* CUPTI recommends 1-10 MB buffers; 16 in flight cover bursts between two flushes. Pages are
 * touched only as CUPTI fills them (MAP_NORESERVE), and the lowest free buffer is handed out
 * first, so a steady flow keeps reusing one warm MiB. */
/* One CUPTI buffer can hold more records than a thread's ring in the writer (1 MiB): after
 * this many (a kernel record takes 136 bytes there: about half the ring), counted across the
 * buffers a thread converts, it waits for the writer to catch up rather than drop records.
 * Each wait ends a frame. */
#define RECORDS_PER_DRAIN 4096
#define DRAIN_WAIT_NS	  200000000ull
#define POOL_BUFFERS	  16
#define BUFFER_BYTES	  (1u << 20)
#define BUFFER_ALIGN	  8

static uint8_t *pool;
/* records this thread converted since it last waited for the writer (initial-exec: 4 bytes) */
static __thread __attribute__((tls_model("initial-exec"))) uint32_t since_drain;
static _Atomic uint32_t pool_free; /* bit i set: buffer i is free */
static _Atomic bool activity_on;

int gw_cupti_pool_init(void)
{
	void *p;

	if (pool)
		return 0;
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

void CUPTIAPI gw_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint32_t free_mask = atomic_load(&pool_free);

	*max_records = 0;
	*size = BUFFER_BYTES;
	while (free_mask) {
		uint32_t bit = free_mask & -free_mask;

		if (atomic_compare_exchange_weak(&pool_free, &free_mask, free_mask & ~bit)) {
			*buffer = pool + (size_t)__builtin_ctz(bit) * BUFFER_BYTES;
			return;
		}
	}
	/* Pool exhausted (the writer or the flusher fell behind): CUPTI before API 27 may crash
	 * on a NULL buffer, so give it heap memory rather than stall or refuse. */
	*buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES);
	if (!*buffer)
		*size = 0;
}

static void buffer_release(uint8_t *buffer)
{
	if (pool && buffer >= pool && buffer < pool + (size_t)POOL_BUFFERS * BUFFER_BYTES)
		atomic_fetch_or(&pool_free, 1u << ((buffer - pool) / BUFFER_BYTES));
	else
		free(buffer);
}

static void convert_kernel(const CUpti_ActivityKernel10 *k)
{
	struct gw_rec_kernel r = {
		.device = k->deviceId,
		.stream = k->streamId,
		.correlation = k->correlationId,
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
	};

	gw_emit(GW_REC_KERNEL, &r);
}

static void convert_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	struct gw_rec_memcpy r = {
		.device = m->deviceId,
		.stream = m->streamId,
		.correlation = m->correlationId,
		.start_ns = m->start,
		.end_ns = m->end,
		.bytes = m->bytes,
		.copy_kind = m->copyKind,
		.src_kind = m->srcKind,
		.dst_kind = m->dstKind,
		.flags = m->flags,
		.graph_id = m->graphId,
	};

	gw_emit(GW_REC_MEMCPY, &r);
}

static void convert_memset(const CUpti_ActivityMemset4 *m)
{
	struct gw_rec_memset r = {
		.device = m->deviceId,
		.stream = m->streamId,
		.correlation = m->correlationId,
		.start_ns = m->start,
		.end_ns = m->end,
		.bytes = m->bytes,
		.value = m->value,
		.mem_kind = m->memoryKind,
		.flags = m->flags,
		.graph_id = m->graphId,
	};

	gw_emit(GW_REC_MEMSET, &r);
}

static void convert_sync(const CUpti_ActivitySynchronization2 *s)
{
	struct gw_rec_sync r = {
		.correlation = s->correlationId,
		.start_ns = s->start,
		.end_ns = s->end,
		.type = s->type,
		.stream = s->streamId,
		.event = s->cudaEventId,
	};

	gw_emit(GW_REC_SYNC, &r);
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

	gw_emit(GW_REC_DEVICE, &r);
}

void CUPTIAPI gw_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid_size)
{
	CUpti_Activity *a = NULL;
	uint32_t n = since_drain;
	size_t dropped = 0;

	(void)size;
	if (!buffer)
		return;
	if (atomic_load(&activity_on)) {
		while (gw_cupti.cuptiActivityGetNextRecord(buffer, valid_size, &a) ==
		       CUPTI_SUCCESS) {
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
			case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
				convert_sync((const CUpti_ActivitySynchronization2 *)a);
				break;
			case CUPTI_ACTIVITY_KIND_DEVICE:
				convert_device((const CUpti_ActivityDevice5 *)a);
				break;
			default:
				break;
			}
			if (++n == RECORDS_PER_DRAIN) {
				gw_writer_flush(DRAIN_WAIT_NS);
				n = 0;
			}
		}
		since_drain = n;
		if (gw_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
			    CUPTI_SUCCESS &&
		    dropped) {
			struct gw_rec_drops d = {
				.time_ns = gw_now_ns(),
				.source = GW_DROP_CUPTI,
				.count = dropped,
			};

			gw_emit(GW_REC_DROPS, &d);
		}
	}
	buffer_release(buffer);
}

static pthread_t flusher;
static bool flusher_running;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_wake;
static bool flusher_stop;

static void *flusher_main(void *arg)
{
	struct timespec deadline;

	(void)arg;
	pthread_mutex_lock(&flusher_lock);
	while (!flusher_stop) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += GW_CUPTI_FLUSH_NS;
		deadline.tv_sec += deadline.tv_nsec / 1000000000;
		deadline.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&flusher_wake, &flusher_lock, &deadline);
		if (flusher_stop)
			break;
		/* Never across a CUPTI call: CUPTI takes its own locks around our callbacks. */
		pthread_mutex_unlock(&flusher_lock);
		gw_cupti_flush(false);
		pthread_mutex_lock(&flusher_lock);
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
	flusher_stop = false;
	/* The application's signals go to the application's threads, not to this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&flusher, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	flusher_running = !r;
	return r;
}

void gw_cupti_flusher_stop(void)
{
	if (!flusher_running)
		return;
	pthread_mutex_lock(&flusher_lock);
	flusher_stop = true;
	pthread_cond_signal(&flusher_wake);
	pthread_mutex_unlock(&flusher_lock);
	pthread_join(flusher, NULL);
	flusher_running = false;
}

void gw_cupti_flusher_forget(void)
{
	flusher_running = false;
	pthread_mutex_init(&flusher_lock, NULL);
}
