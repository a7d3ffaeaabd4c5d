/* SPDX-License-Identifier: MIT */
/* libcupti.so.13 stand-in: callbacks, activity records and buffers, as CUDA 13's CUPTI. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpusim.h"
#include "names.h"

#define FLUSH_PERIOD_NS	      (100 * 1000000ull)
/* Records between an operation and its delivery wait in a ring that producers fill without a
 * lock, as CUPTI's per-context buffers are; the worker is woken early once it is half full. */
#define RING_SLOTS	      8192u
#define RING_WAKE_CHECK	      1024u /* producers look at the fill every this many records */
#define RING_FULL_PATIENCE_NS (1000 * 1000000ull) /* a full ring whose reader is stuck drops */
#define EXT_STACK_DEPTH	      32

union record {
	CUpti_Activity base;
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemcpy6 memcpy;
	CUpti_ActivityMemcpyPtoP4 memcpy2;
	CUpti_ActivityMemset4 memset;
	CUpti_ActivityMemory4 memory;
	CUpti_ActivityAPI api;
	CUpti_ActivityDevice5 device;
	CUpti_ActivityContext3 context;
	CUpti_ActivityOverhead3 overhead;
	CUpti_ActivitySynchronization2 sync;
	CUpti_ActivityExternalCorrelation ext;
};

struct pending {
	uint64_t ready_ns; /* on the runtime's clock: deliverable once its op has finished */
	union record r;
};

/*
 * A ring slot: seq is the position + 1 once the record is published, 0 once it was read. A
 * device operation is kept as it is and turned into its record (of kind op_kind) by the
 * flusher, as CUPTI builds device records away from the launching thread.
 */
struct slot {
	_Atomic uint64_t seq;
	uint32_t op_kind; /* CUPTI_ACTIVITY_KIND_INVALID: r holds the record */
	uint64_t ready_ns;
	union {
		struct gw_sim_op op;
		union record r;
	};
};

/* How this CUPTI behaves where the real one's behaviour is a choice of the test (README.md's
 * CUPTI knobs); read once, at the first use of the library. */
enum fork_mode { FORK_HANG, FORK_FAIL, FORK_REPAIR };
enum flush_hang { HANG_NOCONTEXT, HANG_ALWAYS, HANG_NEVER };
static struct {
	bool busy;		/* GPUSIM_CUPTI_BUSY=1 */
	unsigned int api;	/* GPUSIM_CUPTI_API: 13, 12 or 10 */
	bool init_driver;	/* GPUSIM_CUPTI_INIT=subscribe */
	bool nested_callbacks;	/* GPUSIM_NESTED_CALLBACKS=1 */
	bool split_flush;	/* GPUSIM_CUPTI_FLUSH=split */
	bool forced_wait;	/* GPUSIM_CUPTI_FORCED=wait */
	enum fork_mode fork;	/* GPUSIM_CUPTI_FORK */
	enum flush_hang hang;	/* GPUSIM_CUPTI_FLUSH_HANG */
	bool device_never;	/* GPUSIM_CUPTI_DEVICE=never */
	bool sync_queries;	/* GPUSIM_SYNC_QUERIES=1 */
	uint64_t second_at;	/* GPUSIM_SECOND_CLIENT=N[:M]: at the Nth kernel */
	uint64_t second_window; /* ... for M kernels (0: to the end) */
	int64_t gpu_skew_ns;	/* GPUSIM_GPU_SKEW_NS */
	int64_t gpu_jitter_ns;	/* GPUSIM_GPU_JITTER_NS */
} knob;

/* A client buffer CUPTI holds (GPUSIM_CUPTI_FLUSH=real): records are written into it in the
 * order they were made; it goes back to the client only once every record in it is complete
 * (a forced flush hands it back anyway, the incomplete records with zero timestamps). */
struct held {
	uint8_t *buf;
	size_t size, used, max_records, records;
	uint64_t ready_ns; /* when its last record's operation ends */
	bool sealed;	   /* full: records go to the next buffer */
};

enum flush_mode { FLUSH_PERIODIC, FLUSH_EXPLICIT, FLUSH_FORCED };

static struct {
	/* callbacks */
	atomic_bool subscribed;
	CUpti_CallbackFunc callback;
	void *userdata;
	_Atomic uint8_t runtime_cb[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	_Atomic uint8_t driver_cb[CUPTI_DRIVER_TRACE_CBID_SIZE];
	_Atomic uint8_t context_created_cb; /* resource domain: CONTEXT_CREATED */
	/* activity */
	_Atomic uint8_t kind[CUPTI_ACTIVITY_KIND_COUNT];
	_Atomic uint8_t runtime_off[CUPTI_RUNTIME_TRACE_CBID_SIZE]; /* per-cbid opt-out */
	_Atomic uint8_t driver_off[CUPTI_DRIVER_TRACE_CBID_SIZE];
	atomic_bool device_emitted;
	atomic_bool context_emitted;
	CUpti_TimestampCallbackFunc timestamp;
	_Atomic int64_t ts_offset_ns;
	CUpti_ActivityThreadIdType thread_id_type;
	/* records waiting for a flush: the ring (any thread writes, the flusher reads) */
	struct slot *ring;
	/* producers' line: the flusher writes ring_head for every record it reads */
	_Alignas(64) _Atomic uint64_t ring_tail; /* next position to claim */
	_Atomic uint64_t head_seen;		 /* a producer's last look at ring_head */
	_Atomic uint64_t last_ready_ns;		 /* the latest ready_ns pushed */
	_Alignas(64) _Atomic uint64_t ring_head; /* next position to read */
	/* read but not yet finished, in order; the flusher's own (flush_lock) */
	struct pending *kept;
	size_t kept_n, kept_cap;
	atomic_size_t dropped;
	/* buffers and the worker thread */
	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	pthread_mutex_t flush_lock; /* serializes flushes; guards the current buffer */
	uint8_t *buf;
	size_t buf_size;
	size_t buf_used;
	size_t buf_max_records;
	size_t buf_records;
	pthread_mutex_t worker_lock;
	pthread_cond_t worker_cond;
	pthread_cond_t done_cond;
	bool worker_running;
	bool wake;
	uint64_t flush_requested;
	uint64_t flush_done;
	pthread_t worker;
	enum flush_mode flush_mode; /* the strongest flush asked for since the last one */
	/* GPUSIM_CUPTI_FLUSH=real: the client buffers held, oldest first (flush_lock) */
	struct held *held;
	size_t n_held, cap_held;
	atomic_bool all_sync_records; /* cuptiActivityEnableAllSyncRecords */
	atomic_bool used;	      /* this process subscribed, registered or enabled */
	atomic_bool forked;	      /* a fork child of a process that used CUPTI */
	_Atomic uint64_t kernels;     /* kernel operations made (GPUSIM_SECOND_CLIENT) */
	_Atomic int second_due;	      /* 1: take over, 2: end the window */
} cp = {
	.flush_lock = PTHREAD_MUTEX_INITIALIZER,
	.worker_lock = PTHREAD_MUTEX_INITIALIZER,
	.worker_cond = PTHREAD_COND_INITIALIZER,
	.done_cond = PTHREAD_COND_INITIALIZER,
	.all_sync_records = true,
};

static __thread uint64_t ext_stack[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][EXT_STACK_DEPTH];
static __thread unsigned int ext_depth[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread bool in_flush;

static void ensure_hooks(void);

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

static void knobs_load(void)
{
	const char *api = getenv("GPUSIM_CUPTI_API");
	const char *second = getenv("GPUSIM_SECOND_CLIENT");
	unsigned long long at = 0, window = 0;

	knob.busy = env_is("GPUSIM_CUPTI_BUSY", "1");
	knob.api = api && !strcmp(api, "12") ? 12 : api && !strcmp(api, "10") ? 10 : 13;
	knob.init_driver = !env_is("GPUSIM_CUPTI_INIT", "none");
	knob.nested_callbacks = !env_is("GPUSIM_NESTED_CALLBACKS", "0");
	knob.split_flush = env_is("GPUSIM_CUPTI_FLUSH", "split");
	knob.forced_wait = env_is("GPUSIM_CUPTI_FORCED", "wait");
	knob.fork = env_is("GPUSIM_CUPTI_FORK", "repair") ? FORK_REPAIR
		    : env_is("GPUSIM_CUPTI_FORK", "fail") ? FORK_FAIL
							  : FORK_HANG;
	knob.hang = env_is("GPUSIM_CUPTI_FLUSH_HANG", "always")	 ? HANG_ALWAYS
		    : env_is("GPUSIM_CUPTI_FLUSH_HANG", "never") ? HANG_NEVER
								 : HANG_NOCONTEXT;
	knob.device_never = env_is("GPUSIM_CUPTI_DEVICE", "never");
	knob.sync_queries = !env_is("GPUSIM_SYNC_QUERIES", "0");
	knob.gpu_skew_ns =
		getenv("GPUSIM_GPU_SKEW_NS") ? strtoll(getenv("GPUSIM_GPU_SKEW_NS"), NULL, 10) : 0;
	knob.gpu_jitter_ns = getenv("GPUSIM_GPU_JITTER_NS")
				     ? llabs(strtoll(getenv("GPUSIM_GPU_JITTER_NS"), NULL, 10))
				     : 0;
	if (second && sscanf(second, "%llu:%llu", &at, &window) >= 1 && at > 0) {
		knob.second_at = at;
		knob.second_window = window;
	}
}

static void knobs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, knobs_load);
}

/* A CUPTI call in a fork child of a process that used CUPTI: the real library has no fork
 * support (its threads and locks stayed in the parent), so the call never returns, or fails. */
static CUptiResult forked_call(void)
{
	if (knob.fork == FORK_FAIL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	for (;;)
		pause();
}

#define FORK_GUARD()                                                                               \
	do {                                                                                       \
		if (atomic_load_explicit(&cp.forked, memory_order_relaxed))                        \
			return forked_call();                                                      \
	} while (0)

/* What a hung cuptiActivityFlushAll does (HPCToolkit's issue 195: a flush in a process that
 * made no GPU call, blocked in sem_wait for ever). */
static void hang(void)
{
	for (;;)
		pause();
}

/* The first CUPTI calls load the driver and, unless GPUSIM_CUPTI_INIT=none, initialize it:
 * whether the real cuptiSubscribe runs cuInit is unverified, and assuming it does is what
 * shows a tool that subscribes before main initializing CUDA behind the program's back. */
static void mark_used(void)
{
	knobs();
	atomic_store(&cp.used, true);
	if (knob.init_driver)
		gw_sim_driver_init();
}

/* Whether this CUPTI (GPUSIM_CUPTI_API) knows a callback id: CUPTI 12 lacks what CUDA 13.0
 * added (__cudaLaunchKernel, cuCtxSynchronize_v2, the batch prefetches). */
static bool cbid_known(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (knob.api >= 13)
		return true;
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cbid < 487 : cbid < 800;
}

static bool kind_on(CUpti_ActivityKind k)
{
	return atomic_load_explicit(&cp.kind[k], memory_order_relaxed);
}

static uint64_t ts(uint64_t ns)
{
	return ns + (uint64_t)atomic_load_explicit(&cp.ts_offset_ns, memory_order_relaxed);
}

static uint32_t thread_id(void)
{
	if (cp.thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)syscall(SYS_gettid);
	return (uint32_t)pthread_self();
}

static void wake_worker(void)
{
	pthread_mutex_lock(&cp.worker_lock);
	cp.wake = true;
	pthread_cond_signal(&cp.worker_cond);
	pthread_mutex_unlock(&cp.worker_lock);
}

static size_t record_size(CUpti_ActivityKind kind);
static void build_op_record(union record *r, CUpti_ActivityKind kind, const struct gw_sim_op *op);

/* Waits for the flusher to make room; false when it cannot (no worker, this thread is the
 * flusher, or it made no progress for RING_FULL_PATIENCE_NS). */
static bool wait_for_room(uint64_t pos)
{
	struct timespec pause = {0, 50000};
	uint64_t head = atomic_load(&cp.ring_head), waited = 0;

	if (in_flush)
		return false;
	while (pos - head >= RING_SLOTS) {
		bool running;

		pthread_mutex_lock(&cp.worker_lock);
		running = cp.worker_running;
		cp.wake = true;
		pthread_cond_signal(&cp.worker_cond);
		pthread_mutex_unlock(&cp.worker_lock);
		if (!running || waited >= RING_FULL_PATIENCE_NS)
			return false;
		nanosleep(&pause, NULL);
		waited += (uint64_t)pause.tv_nsec;
		if (atomic_load(&cp.ring_head) != head) {
			head = atomic_load(&cp.ring_head);
			waited = 0;
		}
	}
	return true;
}

/* Claims the next slot for a record, which the caller fills and publishes; NULL (the record
 * counted as dropped) when there is none. */
static struct slot *claim(uint64_t *ret_pos)
{
	uint64_t pos = atomic_load_explicit(&cp.ring_tail, memory_order_relaxed);

	if (!cp.ring || atomic_load_explicit(&cp.forked, memory_order_relaxed))
		goto drop;
	do {
		/* ring_head only moves forward: an old look at it can only underestimate room */
		if (pos - atomic_load_explicit(&cp.head_seen, memory_order_acquire) >= RING_SLOTS) {
			uint64_t head = atomic_load_explicit(&cp.ring_head, memory_order_acquire);

			if (pos - head >= RING_SLOTS && !wait_for_room(pos))
				goto drop;
			atomic_store_explicit(&cp.head_seen, head, memory_order_release);
		}
	} while (!atomic_compare_exchange_weak_explicit(
		&cp.ring_tail, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed));
	*ret_pos = pos;
	return &cp.ring[pos % RING_SLOTS];
drop:
	atomic_fetch_add(&cp.dropped, 1);
	return NULL;
}

/* Hands a filled slot to the flusher: deliverable once the clock reaches ready_ns. */
static void publish(struct slot *s, uint64_t pos, uint64_t ready_ns)
{
	uint64_t last = atomic_load_explicit(&cp.last_ready_ns, memory_order_relaxed);

	s->ready_ns = ready_ns;
	atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
	while (ready_ns > last &&
	       !atomic_compare_exchange_weak_explicit(&cp.last_ready_ns, &last, ready_ns,
						      memory_order_relaxed, memory_order_relaxed))
		;
	if ((pos + 1) % RING_WAKE_CHECK == 0 &&
	    pos + 1 - atomic_load_explicit(&cp.ring_head, memory_order_relaxed) >= RING_SLOTS / 2)
		wake_worker();
}

static void push(const union record *r, uint64_t ready_ns)
{
	uint64_t pos;
	struct slot *s = claim(&pos);

	if (!s)
		return;
	s->op_kind = CUPTI_ACTIVITY_KIND_INVALID;
	memcpy(&s->r, r, record_size(r->base.kind));
	publish(s, pos, ready_ns);
}

/* When the last pending record's operation ends (delivered ones have ended already). */
static uint64_t pending_end(void)
{
	return atomic_load(&cp.last_ready_ns);
}

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	default:
		return 0;
	}
}

/* --- delivery: records into client buffers, buffers back to the client --- */

static void complete_buffer(void)
{
	uint8_t *buf = cp.buf;

	if (!buf)
		return;
	cp.buf = NULL;
	cp.completed(NULL, 0, buf, cp.buf_size, cp.buf_used);
}

/* Asks the client for a buffer: 8-byte aligned start, its size and record limit. */
static bool request_buffer(struct held *h)
{
	uint8_t *buf = NULL;
	size_t size = 0, max_records = 0;
	uintptr_t start;

	cp.requested(&buf, &size, &max_records);
	if (!buf)
		return false;
	start = ((uintptr_t)buf + 7) & ~(uintptr_t)7;
	*h = (struct held){
		.buf = buf,
		.size = size,
		.used = start - (uintptr_t)buf,
		.max_records = max_records,
	};
	return true;
}

static bool get_buffer(void)
{
	struct held h;

	if (!request_buffer(&h))
		return false;
	cp.buf = h.buf;
	cp.buf_size = h.size;
	cp.buf_used = h.used;
	cp.buf_max_records = h.max_records;
	cp.buf_records = 0;
	return true;
}

static bool fits(const struct held *h, size_t size)
{
	return h->used + size <= h->size && (!h->max_records || h->records < h->max_records);
}

/* GPUSIM_CUPTI_FLUSH=split: the ready record goes into the current buffer at once. */
static void deliver(const union record *r)
{
	size_t size = record_size(r->base.kind);

	for (int tries = 0; tries < 2; tries++) {
		if (!cp.buf && !get_buffer())
			break;
		if (cp.buf_used + size <= cp.buf_size &&
		    (!cp.buf_max_records || cp.buf_records < cp.buf_max_records)) {
			memcpy(cp.buf + cp.buf_used, r, size);
			cp.buf_used += size;
			cp.buf_records++;
			return;
		}
		if (!cp.buf_records) {
			/* Too small for even one record: hand it back empty, count the drop. */
			complete_buffer();
			break;
		}
		complete_buffer();
	}
	atomic_fetch_add(&cp.dropped, 1);
}

/* GPUSIM_CUPTI_FLUSH=real: the record goes into the newest held buffer, a new one when full. */
static void hold(const union record *r, uint64_t ready_ns)
{
	size_t size = record_size(r->base.kind);
	struct held *h = cp.n_held ? &cp.held[cp.n_held - 1] : NULL;

	if (h && !h->sealed && !fits(h, size))
		h->sealed = true;
	if (!h || h->sealed) {
		if (cp.n_held == cp.cap_held) {
			size_t cap = cp.cap_held ? 2 * cp.cap_held : 16;
			struct held *v = realloc(cp.held, cap * sizeof(*v));

			if (!v)
				goto drop;
			cp.held = v;
			cp.cap_held = cap;
		}
		h = &cp.held[cp.n_held];
		if (!request_buffer(h))
			goto drop;
		cp.n_held++;
		if (!fits(h, size)) {
			/* Too small for even one record: handed back empty when its turn comes. */
			h->sealed = true;
			goto drop;
		}
	}
	memcpy(h->buf + h->used, r, size);
	h->used += size;
	h->records++;
	if (ready_ns > h->ready_ns)
		h->ready_ns = ready_ns;
	return;
drop:
	atomic_fetch_add(&cp.dropped, 1);
}

/* A forced flush hands back records whose operation has not finished with zero timestamps,
 * as CUPTI does ("incomplete records"); they are never delivered again. */
static void zero_unfinished(struct held *h, uint64_t now)
{
	CUpti_Activity *a = NULL;
	uint64_t limit = ts(now);

	while (cuptiActivityGetNextRecord(h->buf, h->used, &a) == CUPTI_SUCCESS) {
		union record *r = (union record *)(void *)a;

		switch (a->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			if (r->kernel.end > limit)
				r->kernel.start = r->kernel.end = r->kernel.completed = 0;
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			if (r->memcpy.end > limit)
				r->memcpy.start = r->memcpy.end = 0;
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			if (r->memset.end > limit)
				r->memset.start = r->memset.end = 0;
			break;
		default:
			break;
		}
	}
}

/*
 * Hands back the held buffers, oldest first, that this flush may: a default flush stops at
 * the first one with an incomplete record (cupti_activity.h: flag 0 "doesn't return buffers
 * which have one or more incomplete records"), and returns the newest, partly filled one only
 * when asked (a periodic pass returns only full ones); a forced flush returns them all.
 */
static void release_held(enum flush_mode mode)
{
	uint64_t now = gw_sim_now_ns();
	size_t n = 0;

	for (; n < cp.n_held; n++) {
		struct held *h = &cp.held[n];

		if (mode == FLUSH_FORCED)
			zero_unfinished(h, now);
		else if (h->ready_ns > now || (!h->sealed && mode == FLUSH_PERIODIC))
			break;
		if (cp.completed)
			cp.completed(NULL, 0, h->buf, h->size, h->records ? h->used : 0);
	}
	memmove(cp.held, cp.held + n, (cp.n_held - n) * sizeof(*cp.held));
	cp.n_held -= n;
}

/* Keeps a record whose operation has not finished for a later flush (split). */
static void keep(const struct pending *p)
{
	if (cp.kept_n == cp.kept_cap) {
		size_t cap = cp.kept_cap ? cp.kept_cap * 2 : 1024;
		struct pending *v = realloc(cp.kept, cap * sizeof(*v));

		if (!v) {
			atomic_fetch_add(&cp.dropped, 1);
			return;
		}
		cp.kept = v;
		cp.kept_cap = cap;
	}
	cp.kept[cp.kept_n++] = *p;
}

static void deliver_or_drop(const union record *r)
{
	if (cp.requested && cp.completed)
		deliver(r);
	else
		atomic_fetch_add(&cp.dropped, 1);
}

/*
 * Called with flush_lock held. The ring is read up to the first record still being written,
 * in the order records were made. GPUSIM_CUPTI_FLUSH=real: every record goes into a held
 * buffer at once, and release_held decides which buffers go back. split: finished records go
 * out, the others wait, ahead of those made after them.
 */
static void flush_locked(enum flush_mode mode)
{
	uint64_t now = gw_sim_now_ns(), head;
	struct pending p;
	size_t n = 0;

	if (knob.split_flush) {
		for (size_t i = 0; i < cp.kept_n; i++) {
			if (cp.kept[i].ready_ns <= now)
				deliver_or_drop(&cp.kept[i].r);
			else
				cp.kept[n++] = cp.kept[i];
		}
		cp.kept_n = n;
	}
	if (!cp.ring)
		goto done;
	head = atomic_load_explicit(&cp.ring_head, memory_order_relaxed);
	for (;; head++) {
		struct slot *s = &cp.ring[head % RING_SLOTS];

		if (atomic_load_explicit(&s->seq, memory_order_acquire) != head + 1)
			break;
		p.ready_ns = s->ready_ns;
		if (s->op_kind != CUPTI_ACTIVITY_KIND_INVALID)
			build_op_record(&p.r, (CUpti_ActivityKind)s->op_kind, &s->op);
		else
			memcpy(&p.r, &s->r, record_size(s->r.base.kind));
		if (!knob.split_flush) {
			if (cp.requested && cp.completed)
				hold(&p.r, p.ready_ns);
			else
				atomic_fetch_add(&cp.dropped, 1);
		} else if (p.ready_ns <= now) {
			deliver_or_drop(&p.r);
		} else {
			keep(&p);
		}
		atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
		atomic_store_explicit(&cp.ring_head, head + 1, memory_order_release);
	}
done:
	if (!knob.split_flush)
		release_held(mode);
	else if (cp.buf && cp.buf_records)
		complete_buffer();
}

static void flush_now(enum flush_mode mode)
{
	pthread_mutex_lock(&cp.flush_lock);
	in_flush = true;
	flush_locked(mode);
	in_flush = false;
	pthread_mutex_unlock(&cp.flush_lock);
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cp.worker_lock);
	for (;;) {
		enum flush_mode mode = FLUSH_PERIODIC;
		uint64_t gen;
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += (long)FLUSH_PERIOD_NS;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		while (!cp.wake && cp.flush_requested == cp.flush_done &&
		       pthread_cond_timedwait(&cp.worker_cond, &cp.worker_lock, &dl) == 0)
			;
		cp.wake = false;
		gen = cp.flush_requested;
		if (gen > cp.flush_done) {
			mode = cp.flush_mode;
			cp.flush_mode = FLUSH_PERIODIC;
		}
		pthread_mutex_unlock(&cp.worker_lock);
		flush_now(mode);
		pthread_mutex_lock(&cp.worker_lock);
		if (gen > cp.flush_done)
			cp.flush_done = gen;
		pthread_cond_broadcast(&cp.done_cond);
	}
	return NULL;
}

/*
 * The real CUPTI has no fork support: in a child of a process that used it, its threads are
 * gone and its locks may be held, so a CUPTI call blocks for ever (GPUSIM_CUPTI_FORK=hang) or
 * fails (fail); records of the child's work are never delivered; callbacks still fire, being
 * the driver's. GPUSIM_CUPTI_FORK=repair: the child gets a working CUPTI of its own, none of
 * the parent's records.
 */
static void atfork_child(void)
{
	if (knob.fork != FORK_REPAIR) {
		if (atomic_load(&cp.used))
			atomic_store(&cp.forked, true);
		return;
	}
	cp.worker_running = false;
	pthread_mutex_init(&cp.worker_lock, NULL);
	pthread_mutex_init(&cp.flush_lock, NULL);
	pthread_cond_init(&cp.worker_cond, NULL);
	pthread_cond_init(&cp.done_cond, NULL);
	cp.flush_requested = cp.flush_done = 0;
	/* The parent's unread records stay behind head; slots hold only older positions. */
	atomic_store(&cp.ring_head, atomic_load(&cp.ring_tail));
	atomic_store(&cp.head_seen, atomic_load(&cp.ring_tail));
	atomic_store(&cp.last_ready_ns, 0);
	cp.kept_n = 0;
	cp.n_held = 0;
	cp.buf = NULL;
	atomic_store(&cp.dropped, 0);
}

static bool start_worker(void)
{
	bool ok;

	ensure_hooks();
	pthread_mutex_lock(&cp.worker_lock);
	if (!cp.worker_running) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		cp.worker_running = pthread_create(&cp.worker, &attr, worker_main, NULL) == 0;
		pthread_attr_destroy(&attr);
	}
	ok = cp.worker_running;
	pthread_mutex_unlock(&cp.worker_lock);
	return ok;
}

/* --- the hooks the runtime calls --- */

static bool cb_on(const struct gw_sim_api *a)
{
	if (!atomic_load_explicit(&cp.subscribed, memory_order_relaxed))
		return false;
	if (a->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return a->cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && cp.runtime_cb[a->cbid];
	return a->cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && cp.driver_cb[a->cbid];
}

static bool record_on(const struct gw_sim_api *a)
{
	if (a->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return kind_on(CUPTI_ACTIVITY_KIND_RUNTIME) &&
		       a->cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && !cp.runtime_off[a->cbid];
	return kind_on(CUPTI_ACTIVITY_KIND_DRIVER) && a->cbid < CUPTI_DRIVER_TRACE_CBID_SIZE &&
	       !cp.driver_off[a->cbid];
}

static void fire(struct gw_sim_api *a, CUpti_ApiCallbackSite site)
{
	CUpti_CallbackData d = {
		.callbackSite = site,
		.functionName = a->name,
		.functionParams = a->params,
		.functionReturnValue = site == CUPTI_API_EXIT ? (void *)&a->ret : NULL,
		.symbolName = a->symbol,
		.context = gw_sim_context(),
		.contextUid = (uint32_t)gw_sim_context_device(gw_sim_context()) + 1,
		.correlationData = &a->correlation_data,
		.correlationId = a->correlation_id,
	};

	cp.callback(cp.userdata, a->domain, a->cbid, &d);
}

static void hk_api_enter(struct gw_sim_api *a)
{
	bool quiet = a->outer && a->domain == CUPTI_CB_DOMAIN_DRIVER_API && !knob.nested_callbacks;

	a->traced = (cb_on(a) && !quiet ? 1u : 0u) | (record_on(a) ? 2u : 0u);
	if (a->traced & 2u)
		a->start_ns = gw_sim_now_ns();
	if (a->traced & 1u)
		fire(a, CUPTI_API_ENTER);
}

static void second_client(int step);

static void hk_api_exit(struct gw_sim_api *a)
{
	int due;

	if (a->traced & 1u)
		fire(a, CUPTI_API_EXIT);
	if (a->traced & 2u) {
		union record r = {0};

		r.api = (CUpti_ActivityAPI){
			.kind = a->domain == CUPTI_CB_DOMAIN_RUNTIME_API
					? CUPTI_ACTIVITY_KIND_RUNTIME
					: CUPTI_ACTIVITY_KIND_DRIVER,
			.cbid = a->cbid,
			.start = ts(a->start_ns),
			.end = ts(gw_sim_now_ns()),
			.processId = (uint32_t)getpid(),
			.threadId = thread_id(),
			.correlationId = a->correlation_id,
			.returnValue = (uint32_t)a->ret,
		};
		push(&r, 0);
	}
	if (a->domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
		for (unsigned int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
			union record r = {0};

			if (!ext_depth[k])
				continue;
			r.ext = (CUpti_ActivityExternalCorrelation){
				.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
				.externalKind = (CUpti_ExternalCorrelationKind)k,
				.externalId = ext_stack[k][ext_depth[k] - 1],
				.correlationId = a->correlation_id,
			};
			push(&r, 0);
		}
	}
	/* The second client acts between two of the application's calls, as a profiler's
	 * window opens and closes between steps. */
	if (!a->outer && knob.second_at && (due = atomic_exchange(&cp.second_due, 0)))
		second_client(due);
}

/* The record kind an operation makes now; CUPTI_ACTIVITY_KIND_INVALID for none. */
static CUpti_ActivityKind op_record_kind(const struct gw_sim_op *op)
{
	switch (op->kind) {
	case GW_SIM_OP_KERNEL:
		if (kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
			return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		if (kind_on(CUPTI_ACTIVITY_KIND_KERNEL))
			return CUPTI_ACTIVITY_KIND_KERNEL;
		break;
	case GW_SIM_OP_MEMCPY:
		/* a copy between two devices is CUPTI's MEMCPY2 kind, never a MEMCPY */
		if (op->peer)
			return kind_on(CUPTI_ACTIVITY_KIND_MEMCPY2) ? CUPTI_ACTIVITY_KIND_MEMCPY2
								    : CUPTI_ACTIVITY_KIND_INVALID;
		if (kind_on(CUPTI_ACTIVITY_KIND_MEMCPY))
			return CUPTI_ACTIVITY_KIND_MEMCPY;
		break;
	case GW_SIM_OP_MEMSET:
		if (kind_on(CUPTI_ACTIVITY_KIND_MEMSET))
			return CUPTI_ACTIVITY_KIND_MEMSET;
		break;
	}
	return CUPTI_ACTIVITY_KIND_INVALID;
}

static void hk_op(const struct gw_sim_op *op)
{
	CUpti_ActivityKind kind = op_record_kind(op);
	struct slot *s;
	uint64_t pos;

	if (op->kind == GW_SIM_OP_KERNEL && knob.second_at) {
		uint64_t n = atomic_fetch_add(&cp.kernels, 1) + 1;

		if (n == knob.second_at)
			atomic_store(&cp.second_due, 1);
		else if (knob.second_window && n == knob.second_at + knob.second_window)
			atomic_store(&cp.second_due, 2);
	}
	if (kind == CUPTI_ACTIVITY_KIND_INVALID || !(s = claim(&pos)))
		return;
	s->op_kind = kind;
	s->op = *op;
	publish(s, pos, op->end_ns);
}

/* The period of GPUSIM_GPU_JITTER_NS's drift: slow against a kernel, as interpolation error
 * drifts, so that times stay in order on a stream. */
#define JITTER_PERIOD_NS 10000000ull

/* A GPU time as CUPTI reports it: on the client's clock, off by GPUSIM_GPU_SKEW_NS plus a
 * drift of up to GPUSIM_GPU_JITTER_NS either way (a triangle wave over JITTER_PERIOD_NS):
 * CUPTI converts GPU ticks to host time by interpolation, µs off. */
static uint64_t gpu_ts(uint64_t ns)
{
	int64_t off = knob.gpu_skew_ns;

	if (knob.gpu_jitter_ns) {
		/* phase in [0, 4): up 0..1, down 1..3, up 3..4 */
		double phase = (double)(ns % JITTER_PERIOD_NS) / (JITTER_PERIOD_NS / 4.0);
		double tri = phase < 1 ? phase : phase < 3 ? 2 - phase : phase - 4;

		off += (int64_t)(tri * (double)knob.gpu_jitter_ns);
	}
	return ts(ns) + (uint64_t)off;
}

/* The record of a device operation, on the flusher's thread. */
static void build_op_record(union record *r, CUpti_ActivityKind kind, const struct gw_sim_op *op)
{
	switch (op->kind) {
	case GW_SIM_OP_KERNEL:
		r->kernel = (CUpti_ActivityKernel10){
			.kind = kind,
			.registersPerThread = (uint16_t)op->regs,
			.start = gpu_ts(op->start_ns),
			.end = gpu_ts(op->end_ns),
			.completed = gpu_ts(op->end_ns),
			.deviceId = op->device,
			.contextId = op->device + 1,
			.streamId = op->stream_id,
			.gridX = (int32_t)op->grid.x,
			.gridY = (int32_t)op->grid.y,
			.gridZ = (int32_t)op->grid.z,
			.blockX = (int32_t)op->block.x,
			.blockY = (int32_t)op->block.y,
			.blockZ = (int32_t)op->block.z,
			.staticSharedMemory = (int32_t)op->static_smem,
			.dynamicSharedMemory = (int32_t)op->dynamic_smem,
			.correlationId = op->correlation_id,
			.gridId = (int64_t)op->correlation_id,
			.name = op->name,
			.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR,
			.sharedMemoryExecuted = op->carveout,
			/* gpusim lets any launch have the opt-in limit: beyond 48 KiB a real
			 * program must have opted in */
			.shmemLimitConfig = op->static_smem + op->dynamic_smem > 48 * 1024
						    ? CUPTI_FUNC_SHMEM_LIMIT_OPTIN
						    : CUPTI_FUNC_SHMEM_LIMIT_DEFAULT,
			.graphNodeId = op->graph_node_id,
			.graphId = op->graph_id,
			.channelType = CUPTI_CHANNEL_TYPE_COMPUTE,
			.clusterX = op->cluster.x,
			.clusterY = op->cluster.y,
			.clusterZ = op->cluster.z,
		};
		break;
	case GW_SIM_OP_MEMCPY:
		if (op->peer) {
			r->memcpy2 = (CUpti_ActivityMemcpyPtoP4){
				.kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
				.copyKind = op->copy_kind,
				.srcKind = op->src_kind,
				.dstKind = op->dst_kind,
				.flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0,
				.bytes = op->bytes,
				.start = gpu_ts(op->start_ns),
				.end = gpu_ts(op->end_ns),
				.deviceId = op->device,
				.contextId = op->device + 1,
				.streamId = op->stream_id,
				.srcDeviceId = op->src_device,
				.srcContextId = op->src_device + 1,
				.dstDeviceId = op->dst_device,
				.dstContextId = op->dst_device + 1,
				.correlationId = op->correlation_id,
				.graphNodeId = op->graph_node_id,
				.graphId = op->graph_id,
				.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY,
			};
			break;
		}
		r->memcpy = (CUpti_ActivityMemcpy6){
			.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
			.copyKind = op->copy_kind,
			.srcKind = op->src_kind,
			.dstKind = op->dst_kind,
			.flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0,
			.bytes = op->bytes,
			.start = gpu_ts(op->start_ns),
			.end = gpu_ts(op->end_ns),
			.deviceId = op->device,
			.contextId = op->device + 1,
			.streamId = op->stream_id,
			.correlationId = op->correlation_id,
			.runtimeCorrelationId = op->correlation_id,
			.graphNodeId = op->graph_node_id,
			.graphId = op->graph_id,
			.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY,
			.copyCount = 1,
		};
		break;
	case GW_SIM_OP_MEMSET:
		r->memset = (CUpti_ActivityMemset4){
			.kind = CUPTI_ACTIVITY_KIND_MEMSET,
			.value = op->value,
			.bytes = op->bytes,
			.start = gpu_ts(op->start_ns),
			.end = gpu_ts(op->end_ns),
			.deviceId = op->device,
			.contextId = op->device + 1,
			.streamId = op->stream_id,
			.correlationId = op->correlation_id,
			.flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0,
			.memoryKind = op->dst_kind,
			.graphNodeId = op->graph_node_id,
			.graphId = op->graph_id,
			.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY,
		};
		break;
	}
}

static void hk_memory(const struct gw_sim_mem_event *ev)
{
	union record r = {0};

	if (!kind_on(CUPTI_ACTIVITY_KIND_MEMORY2))
		return;
	r.memory = (CUpti_ActivityMemory4){
		.kind = CUPTI_ACTIVITY_KIND_MEMORY2,
		.memoryOperationType = ev->release
					       ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
					       : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
		.memoryKind = (CUpti_ActivityMemoryKind)ev->mem_kind,
		.correlationId = ev->correlation_id,
		.address = ev->address,
		.bytes = ev->bytes,
		.timestamp = ts(ev->t_ns),
		.processId = (uint32_t)getpid(),
		.deviceId = 0,
		.contextId = GW_SIM_CONTEXT_ID,
		.streamId = ev->stream_id,
		.isAsync = ev->async,
	};
	if (ev->async)
		r.memory.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	push(&r, 0);
}

static void hk_sync(const struct gw_sim_sync_event *ev)
{
	union record r = {0};

	if (!kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		return;
	/* CUPTI records every query by default; cuptiActivityEnableAllSyncRecords(0) leaves out
	 * those that found the work unfinished. */
	if (ev->query && (!knob.sync_queries || (ev->result && !atomic_load(&cp.all_sync_records))))
		return;
	r.sync = (CUpti_ActivitySynchronization2){
		.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		.type = ev->type,
		.start = ts(ev->start_ns),
		.end = ts(ev->end_ns),
		.correlationId = ev->correlation_id,
		.contextId = GW_SIM_CONTEXT_ID,
		.streamId = ev->stream_id ? ev->stream_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE,
		.cudaEventId = ev->event_id ? ev->event_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE,
		.returnValue = ev->result,
	};
	push(&r, 0);
}

/* Each device's context, once the devices are up: a green one under GPUSIM_GREEN_SMS. */
static void emit_context(void)
{
	const struct gw_sim_config *cfg;
	union record r = {0};
	bool expected = false;

	if (!kind_on(CUPTI_ACTIVITY_KIND_CONTEXT) || !gw_sim_device_ready() ||
	    !atomic_compare_exchange_strong(&cp.context_emitted, &expected, true))
		return;
	cfg = gw_sim_config();
	for (uint32_t d = 0; d < cfg->devices; d++) {
		r.context = (CUpti_ActivityContext3){
			.kind = CUPTI_ACTIVITY_KIND_CONTEXT,
			.contextId = d + 1,
			.deviceId = d,
			.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA,
			.nullStreamId = GW_SIM_LEGACY_STREAM_ID,
			.isGreenContext = cfg->green_sms ? 1 : 0,
			.numMultiprocessors = (uint16_t)cfg->green_sms,
		};
		push(&r, 0);
	}
}

static void emit_device(void)
{
	const struct gw_sim_config *cfg;
	union record r = {0};
	bool expected = false;

	/* When the real CUPTI makes the DEVICE record is unspecified: GPUSIM_CUPTI_DEVICE=never
	 * stands for a CUPTI that never does. */
	if (knob.device_never || !kind_on(CUPTI_ACTIVITY_KIND_DEVICE) || !gw_sim_device_ready() ||
	    !atomic_compare_exchange_strong(&cp.device_emitted, &expected, true))
		return;
	cfg = gw_sim_config();
	for (uint32_t d = 0; d < cfg->devices; d++) {
		r.device = (CUpti_ActivityDevice5){
			.kind = CUPTI_ACTIVITY_KIND_DEVICE,
			.globalMemoryBandwidth = (uint64_t)(cfg->d2d_gbps * 1e6), /* KB/s */
			.globalMemorySize = cfg->mem_bytes,
			.constantMemorySize = 64 * 1024,
			.l2CacheSize = 50 * 1024 * 1024,
			.numThreadsPerWarp = 32,
			.coreClockRate = 1980000,
			.numMemcpyEngines = 2,
			.numMultiprocessors = cfg->sms,
			.maxIPC = 4,
			.maxWarpsPerMultiprocessor = GW_SIM_THREADS_PER_SM / 32,
			.maxBlocksPerMultiprocessor = GW_SIM_BLOCKS_PER_SM,
			.maxSharedMemoryPerMultiprocessor = GW_SIM_SMEM_PER_SM,
			.maxRegistersPerMultiprocessor = GW_SIM_REGS_PER_SM,
			.maxRegistersPerBlock = GW_SIM_REGS_PER_SM,
			.maxSharedMemoryPerBlock = GW_SIM_SMEM_PER_BLOCK,
			.maxThreadsPerBlock = GW_SIM_MAX_THREADS,
			.maxBlockDimX = 1024,
			.maxBlockDimY = 1024,
			.maxBlockDimZ = 64,
			.maxGridDimX = 0x7fffffff,
			.maxGridDimY = 65535,
			.maxGridDimZ = 65535,
			.computeCapabilityMajor = 9,
			.computeCapabilityMinor = 0,
			.id = d,
			.name = GW_SIM_DEVICE_NAME,
			.isCudaVisible = 1,
		};
		memcpy(r.device.uuid.bytes, "gpusim-device-00", 16);
		r.device.uuid.bytes[15] = (char)('0' + d);
		push(&r, 0);
	}
}

static void hk_context_created(void)
{
	CUpti_ResourceData d = {.context = gw_sim_context()};

	if (atomic_load(&cp.subscribed) && atomic_load(&cp.context_created_cb) && cp.callback)
		cp.callback(cp.userdata, CUPTI_CB_DOMAIN_RESOURCE,
			    CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &d);
}

/* Start-up work on the calling thread (lazy loading), as CUPTI's OVERHEAD record. */
static void hk_overhead(uint32_t kind, uint64_t start_ns, uint64_t end_ns)
{
	union record r = {0};

	if (!kind_on(CUPTI_ACTIVITY_KIND_OVERHEAD))
		return;
	r.overhead = (CUpti_ActivityOverhead3){
		.kind = CUPTI_ACTIVITY_KIND_OVERHEAD,
		.overheadKind = (CUpti_ActivityOverheadKind)kind,
		.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD,
		.start = ts(start_ns),
		.end = ts(end_ns),
	};
	r.overhead.objectId.pt.processId = (uint32_t)getpid();
	r.overhead.objectId.pt.threadId = thread_id();
	push(&r, 0);
}

static void emit_device_and_context(void)
{
	emit_device();
	emit_context();
}

static const struct gw_sim_hooks hooks = {
	.api_enter = hk_api_enter,
	.api_exit = hk_api_exit,
	.op = hk_op,
	.memory = hk_memory,
	.sync = hk_sync,
	.device = emit_device_and_context,
	.context_created = hk_context_created,
	.overhead = hk_overhead,
};

static void install_hooks(void)
{
	/* Populated at once, as CUPTI allocates its (pinned) device buffers up front: not a page
	 * fault on the launching thread for every 17 records of the first lap. */
	void *ring = mmap(NULL, RING_SLOTS * sizeof(struct slot), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	knobs();
	cp.ring = ring == MAP_FAILED ? NULL : ring;
	pthread_atfork(NULL, NULL, atfork_child);
	gw_sim_set_hooks(&hooks);
}

static void ensure_hooks(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_hooks);
}

/* --- the CUPTI API --- */

CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	knobs();
	*version = knob.api == 12 ? 26 : knob.api == 10 ? 12 : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	const char *s;

	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	s = gw_sim_cupti_result_name((unsigned int)result);
	if (!s)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*str = s;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	bool expected = false;

	FORK_GUARD();
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	mark_used();
	ensure_hooks();
	if (knob.busy)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	/* A second subscriber is refused and changes nothing of the first's. */
	if (!atomic_compare_exchange_strong(&cp.subscribed, &expected, true))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	cp.callback = callback;
	cp.userdata = userdata;
	*subscriber = (CUpti_SubscriberHandle)(void *)&cp;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			      void *userdata, CUpti_SubscriberParams *pParams)
{
	(void)pParams;
	return cuptiSubscribe(subscriber, callback, userdata);
}

static bool valid_subscriber(CUpti_SubscriberHandle s)
{
	return s == (CUpti_SubscriberHandle)(void *)&cp && atomic_load(&cp.subscribed);
}

static void set_domain(CUpti_CallbackDomain domain, uint8_t on)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		for (size_t i = 0; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
			cp.runtime_cb[i] = on;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		for (size_t i = 0; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
			cp.driver_cb[i] = on;
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
		cp.context_created_cb = on;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	FORK_GUARD();
	if (!valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	set_domain(CUPTI_CB_DOMAIN_RUNTIME_API, 0);
	set_domain(CUPTI_CB_DOMAIN_DRIVER_API, 0);
	set_domain(CUPTI_CB_DOMAIN_RESOURCE, 0);
	atomic_store(&cp.subscribed, false);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	FORK_GUARD();
	if (!valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!cbid_known(domain, cbid))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
			return CUPTI_ERROR_INVALID_PARAMETER;
		cp.runtime_cb[cbid] = !!enable;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
			return CUPTI_ERROR_INVALID_PARAMETER;
		cp.driver_cb[cbid] = !!enable;
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			cp.context_created_cb = !!enable;
	} else if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	/* Other resource callbacks and other domains (synchronize, NVTX, state) are accepted
	 * and never fire. */
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
			      CUpti_CallbackDomain domain)
{
	FORK_GUARD();
	if (!valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	set_domain(domain, !!enable);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	FORK_GUARD();
	if (!valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	set_domain(CUPTI_CB_DOMAIN_RUNTIME_API, !!enable);
	set_domain(CUPTI_CB_DOMAIN_DRIVER_API, !!enable);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
				  CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!enable || !valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		*enable = cp.runtime_cb[cbid];
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		*enable = cp.driver_cb[cbid];
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	const char *s = NULL;

	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	knobs();
	if (!cbid_known(domain, cbid))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		s = gw_sim_runtime_cbid_name(cbid);
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		s = gw_sim_driver_cbid_name(cbid);
	if (!s)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = s;
	return CUPTI_SUCCESS;
}

static bool kind_supported(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_DEVICE:
	case CUPTI_ACTIVITY_KIND_CONTEXT:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_MEMORY2:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return true;
	default:
		return false;
	}
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	FORK_GUARD();
	if ((unsigned int)kind >= CUPTI_ACTIVITY_KIND_COUNT || kind == CUPTI_ACTIVITY_KIND_INVALID)
		return CUPTI_ERROR_INVALID_KIND;
	if (!kind_supported(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	mark_used();
	ensure_hooks();
	atomic_store(&cp.kind[kind], 1);
	if (kind == CUPTI_ACTIVITY_KIND_DEVICE)
		emit_device();
	if (kind == CUPTI_ACTIVITY_KIND_CONTEXT)
		emit_context();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	FORK_GUARD();
	if ((unsigned int)kind >= CUPTI_ACTIVITY_KIND_COUNT || kind == CUPTI_ACTIVITY_KIND_INVALID)
		return CUPTI_ERROR_INVALID_KIND;
	if (!kind_supported(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	atomic_store(&cp.kind[kind], 0);
	if (kind == CUPTI_ACTIVITY_KIND_DEVICE)
		atomic_store(&cp.device_emitted, false);
	if (kind == CUPTI_ACTIVITY_KIND_CONTEXT)
		atomic_store(&cp.context_emitted, false);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cp.runtime_off[cbid] = !enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cp.driver_off[cbid] = !enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
					   CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	FORK_GUARD();
	if (!funcBufferRequested || !funcBufferCompleted)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&cp.used, true);
	pthread_mutex_lock(&cp.flush_lock);
	cp.requested = funcBufferRequested;
	cp.completed = funcBufferCompleted;
	pthread_mutex_unlock(&cp.flush_lock);
	return start_worker() ? CUPTI_SUCCESS : CUPTI_ERROR_UNKNOWN;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	enum flush_mode mode =
		flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? FLUSH_FORCED : FLUSH_EXPLICIT;
	uint64_t gen;

	FORK_GUARD();
	knobs();
	if (knob.hang == HANG_ALWAYS || (knob.hang == HANG_NOCONTEXT && !gw_sim_device_ready()))
		hang();
	if (!cp.requested)
		return CUPTI_ERROR_INVALID_OPERATION;
	if (in_flush)
		return CUPTI_SUCCESS; /* from a buffer callback: that flush is under way */
	/* GPUSIM_CUPTI_FORCED=wait: the virtual device finishes the pending work first, so no
	 * record comes back incomplete. */
	if (mode == FLUSH_FORCED && knob.forced_wait)
		gw_sim_wait_until(pending_end());
	if (!start_worker()) {
		flush_now(mode);
		return CUPTI_SUCCESS;
	}
	pthread_mutex_lock(&cp.worker_lock);
	gen = ++cp.flush_requested;
	if (mode > cp.flush_mode)
		cp.flush_mode = mode;
	pthread_cond_signal(&cp.worker_cond);
	while (cp.flush_done < gen)
		pthread_cond_wait(&cp.done_cond, &cp.worker_lock);
	pthread_mutex_unlock(&cp.worker_lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
	(void)context, (void)streamId;
	return cuptiActivityFlushAll(flag);
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
	(void)time;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
				       CUpti_Activity **record)
{
	uint8_t *p, *end = buffer + validBufferSizeBytes;
	size_t size;

	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!*record) {
		p = (uint8_t *)(((uintptr_t)buffer + 7) & ~(uintptr_t)7);
	} else {
		size = record_size((*record)->kind);
		if (!size)
			return CUPTI_ERROR_INVALID_KIND;
		p = (uint8_t *)*record + size;
	}
	if (p + sizeof(CUpti_Activity) > end)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size = record_size(((CUpti_Activity *)(void *)p)->kind);
	if (!size)
		return CUPTI_ERROR_INVALID_KIND;
	if (p + size > end)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(void *)p;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	(void)context, (void)streamId;
	FORK_GUARD();
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dropped = atomic_exchange(&cp.dropped, 0);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	uint64_t a, b, c;
	int64_t off;

	FORK_GUARD();
	if (!funcTimestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cp.timestamp = funcTimestamp;
	/* Express every time on the client's clock: offset measured around one reading. An offset
	 * within the reading's own uncertainty is the same clock (CLOCK_MONOTONIC_RAW, as gpuwhy
	 * registers): then none is applied, so host and device times compare exactly. */
	a = gw_sim_now_ns();
	b = funcTimestamp();
	c = gw_sim_now_ns();
	off = (int64_t)(b - (a + (c - a) / 2));
	if ((uint64_t)(off < 0 ? -off : off) <= c - a)
		off = 0;
	atomic_store(&cp.ts_offset_ns, off);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = ts(gw_sim_now_ns());
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	(void)attr;
	if (!valueSize || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* CUPTI's documented defaults (cupti_activity.h): gpusim allocates nothing for them. */
CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	size_t v;

	if (!valueSize || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (attr) {
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
		v = 3200000;
		break;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
		v = 8388608;
		break;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
		v = 250;
		break;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
		v = 3;
		break;
	case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
	case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
		if (*valueSize < 1)
			return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
		*(uint8_t *)value = 0;
		*valueSize = 1;
		return CUPTI_SUCCESS;
	default:
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (*valueSize < sizeof(size_t))
		return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	*(size_t *)value = v;
	*valueSize = sizeof(size_t);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
	    type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cp.thread_id_type = type;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*type = cp.thread_id_type;
	return CUPTI_SUCCESS;
}

/* A context's device: NULL is the calling thread's current one. */
static int device_of(CUcontext context)
{
	return gw_sim_context_device(context ? context : gw_sim_context());
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
	int d = device_of(context);

	FORK_GUARD();
	if (!deviceId || d < 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*deviceId = (uint32_t)d;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
	int d = device_of(context);

	if (!contextId || d < 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*contextId = (uint32_t)d + 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
			       uint32_t *streamId)
{
	(void)context;
	if (!streamId || gw_sim_stream_id((cudaStream_t)stream, perThreadStream, streamId) < 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
	return cuptiGetStreamIdEx(context, stream, 0, streamId);
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	if ((unsigned int)kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE ||
	    ext_depth[kind] == EXT_STACK_DEPTH)
		return CUPTI_ERROR_INVALID_PARAMETER;
	ext_stack[kind][ext_depth[kind]++] = id;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
						  uint64_t *lastId)
{
	if ((unsigned int)kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!ext_depth[kind])
		return CUPTI_ERROR_QUEUE_EMPTY;
	ext_depth[kind]--;
	if (lastId)
		*lastId = ext_stack[kind][ext_depth[kind]];
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
	FORK_GUARD();
	atomic_store(&cp.all_sync_records, enable != 0);
	return CUPTI_SUCCESS;
}

/* Kineto (PyTorch's profiler) links against it: accepted, and CUDA_EVENT records, which
 * gpusim does not make, carry no device timestamps to begin with. */
CUptiResult cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable)
{
	(void)enable;
	FORK_GUARD();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiFinalize(void)
{
	FORK_GUARD();
	for (size_t k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		atomic_store(&cp.kind[k], 0);
	atomic_store(&cp.device_emitted, false);
	atomic_store(&cp.context_emitted, false);
	if (atomic_load(&cp.subscribed))
		cuptiUnsubscribe((CUpti_SubscriberHandle)(void *)&cp);
	if (cp.requested)
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return CUPTI_SUCCESS;
}

/*
 * --- a second CUPTI client in the process (GPUSIM_SECOND_CLIENT=N[:M]) ---
 *
 * What torch.profiler's Kineto does at a profiler window, at the Nth kernel: subscribe (which
 * fails: only cuptiSubscribe is exclusive, and Kineto carries on), register its own timestamp
 * callback and buffer callbacks (from then on every buffer, the first client's included, is
 * completed to it; Kineto drops the ones it did not hand out), enable the kinds it wants; at
 * the (N+M)th kernel, flush and disable them. Its calls go through the dynamic linker, as
 * those of a library linked against libcupti do, so a preloaded tool may interpose them.
 */
static _Atomic uint64_t second_records;

static uint64_t CUPTIAPI second_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t); /* CUPTI's own default on Linux */
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void CUPTIAPI second_callback(void *userdata, CUpti_CallbackDomain domain,
				     CUpti_CallbackId cbid, const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
}

#define SECOND_MAGIC 0x5345434f4e44ull /* "SECOND": a buffer this client handed out */

static void CUPTIAPI second_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint64_t *p = aligned_alloc(8, 64 + 64 * 1024);

	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	if (!p)
		return;
	p[0] = SECOND_MAGIC;
	*buffer = (uint8_t *)p + 64;
	*size = 64 * 1024;
}

static void CUPTIAPI second_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *a = NULL;
	uint64_t *p = buffer ? (uint64_t *)(void *)(buffer - 64) : NULL;

	(void)ctx, (void)stream, (void)size;
	/* Kineto: "unknown buffer", neither read nor given back. */
	if (!p || ((uintptr_t)buffer & 7) || p[0] != SECOND_MAGIC)
		return;
	while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
		atomic_fetch_add(&second_records, 1);
	free(p);
}

/* The function the dynamic linker gives a library calling name (a preloaded tool's first),
 * else this library's own. */
#define VIA_LINKER(fn) ((__typeof__(fn) *)linker_sym(#fn, (void *)fn))
static void *linker_sym(const char *name, void *own)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	return f ? f : own;
}

static const CUpti_ActivityKind second_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};

static void second_client(int step)
{
	CUpti_SubscriberHandle sub;

	if (step == 1) {
		VIA_LINKER(cuptiSubscribe)(&sub, second_callback, NULL);
		VIA_LINKER(cuptiActivityRegisterTimestampCallback)(second_clock);
		VIA_LINKER(cuptiActivityRegisterCallbacks)(second_requested, second_completed);
		for (size_t i = 0; i < sizeof(second_kinds) / sizeof(second_kinds[0]); i++)
			VIA_LINKER(cuptiActivityEnable)(second_kinds[i]);
	} else {
		VIA_LINKER(cuptiActivityFlushAll)(0);
		for (size_t i = 0; i < sizeof(second_kinds) / sizeof(second_kinds[0]); i++)
			VIA_LINKER(cuptiActivityDisable)(second_kinds[i]);
	}
}
