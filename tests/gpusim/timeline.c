/* SPDX-License-Identifier: MIT */
/* The virtual device timeline: streams, events, the queue-depth limit and host-clock waits. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "runtime.h"

#define LEGACY(d)                                                                                  \
	{                                                                                          \
		.magic = GW_SIM_STREAM_MAGIC, .id = GW_SIM_LEGACY_STREAM_ID, .device = (d),        \
		.legacy = true                                                                     \
	}
struct gw_sim_runtime gw_sim_rt = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.hold_done = PTHREAD_COND_INITIALIZER,
	.legacy = {LEGACY(0), LEGACY(1), LEGACY(2), LEGACY(3), LEGACY(4), LEGACY(5), LEGACY(6),
		   LEGACY(7)},
	.next_stream_id = GW_SIM_LEGACY_STREAM_ID + 1,
	.next_event_id = 1,
	.next_graph_id = 1,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static atomic_bool device_ready;
static atomic_bool injection_started;
static __thread struct gw_sim_stream *thread_stream[GW_SIM_MAX_DEVICES];
static __thread unsigned int current_device;

uint64_t gw_sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void config_init(void)
{
	gw_sim_config_load(&gw_sim_rt.cfg);
}

const struct gw_sim_config *gw_sim_config(void)
{
	pthread_once(&config_once, config_init);
	return &gw_sim_rt.cfg;
}

bool gw_sim_device_ready(void)
{
	return atomic_load(&device_ready);
}

/* Each device's context handle: an address of ours, never dereferenced by anyone. */
static int contexts[GW_SIM_MAX_DEVICES];

CUcontext gw_sim_device_context(unsigned int d)
{
	return (CUcontext)(void *)&contexts[d < GW_SIM_MAX_DEVICES ? d : 0];
}

CUcontext gw_sim_context(void)
{
	return gw_sim_device_context(current_device);
}

int gw_sim_context_device(CUcontext ctx)
{
	const int *p = (const int *)(void *)ctx;

	return p >= contexts && p < contexts + GW_SIM_MAX_DEVICES ? (int)(p - contexts) : -1;
}

unsigned int gw_sim_current_device(void)
{
	return current_device;
}

int gw_sim_set_device(int device)
{
	if (device < 0 || (uint32_t)device >= gw_sim_config()->devices)
		return -EINVAL;
	current_device = (unsigned int)device;
	return 0;
}

/* fork() while another thread holds a lock must not leave it held in the child: take them all
 * (no path holds two at once, so the order is free), release them on both sides. */
static void fork_prepare(void)
{
	gw_sim_registry_fork_lock(true);
	gw_sim_mem_fork_lock(true);
	pthread_mutex_lock(&gw_sim_rt.lock);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&gw_sim_rt.lock);
	gw_sim_mem_fork_lock(false);
	gw_sim_registry_fork_lock(false);
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void activity_init(void);

static void device_init(void)
{
	const struct gw_sim_hooks *h;

	gw_sim_config();
	activity_init();
	atomic_store(&device_ready, true);
	h = atomic_load(&gw_sim_hooks_ptr);
	if (h)
		h->device();
}

/* Like the driver: the injection library is loaded once, after the device exists, so that its
 * InitializeInjection may itself call the runtime. */
static void load_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*init)(void);
	void *handle;

	if (!path || !*path)
		return;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		return;
	*(void **)&init = dlsym(handle, "InitializeInjection");
	if (init)
		init();
}

void gw_sim_init(void)
{
	bool expected = false;

	if (atomic_load_explicit(&device_ready, memory_order_acquire) &&
	    atomic_load_explicit(&injection_started, memory_order_relaxed))
		return;
	pthread_once(&init_once, device_init);
	if (atomic_compare_exchange_strong(&injection_started, &expected, true))
		load_injection();
}

void gw_sim_driver_init(void)
{
	gw_sim_init();
}

void gw_sim_spin_ns(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = gw_sim_now_ns() + ns;
	while (gw_sim_now_ns() < end)
		__builtin_ia32_pause();
}

/* Sleeps most of the way, then spins: sleeps overshoot by tens of µs, the model wants µs. */
void gw_sim_wait_until(uint64_t t_ns)
{
	for (;;) {
		uint64_t now = gw_sim_now_ns();
		struct timespec ts;

		if (now >= t_ns)
			return;
		if (t_ns - now <= 100000) {
			gw_sim_spin_ns(t_ns - now);
			return;
		}
		ts.tv_sec = (time_t)((t_ns - now - 80000) / 1000000000ull);
		ts.tv_nsec = (long)((t_ns - now - 80000) % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

/* --- streams and events (callers hold no lock; handles are never unmapped, only recycled) --- */

struct gw_sim_stream *gw_sim_stream_get(cudaStream_t handle, bool per_thread)
{
	struct gw_sim_stream *s;
	unsigned int d = current_device;

	if (handle == cudaStreamLegacy || (!handle && !per_thread))
		return &gw_sim_rt.legacy[d];
	if (handle == cudaStreamPerThread || !handle) {
		if (!thread_stream[d])
			thread_stream[d] = gw_sim_stream_new(cudaStreamDefault, 0);
		if (thread_stream[d])
			thread_stream[d]->per_thread = true;
		return thread_stream[d];
	}
	s = (struct gw_sim_stream *)handle;
	return s->magic == GW_SIM_STREAM_MAGIC ? s : NULL;
}

int gw_sim_stream_id(cudaStream_t stream, bool per_thread, uint32_t *ret_id)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return -EINVAL;
	*ret_id = s->id;
	return 0;
}

struct gw_sim_stream *gw_sim_stream_new(unsigned int flags, int priority)
{
	struct gw_sim_stream *s;

	pthread_mutex_lock(&gw_sim_rt.lock);
	s = gw_sim_rt.free_streams;
	if (s)
		gw_sim_rt.free_streams = s->next_free;
	else
		s = malloc(sizeof(*s));
	if (s) {
		memset(s, 0, sizeof(*s));
		s->magic = GW_SIM_STREAM_MAGIC;
		s->id = gw_sim_rt.next_stream_id++;
		s->device = current_device;
		s->flags = flags;
		s->priority = priority;
	}
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return s;
}

void gw_sim_stream_free(struct gw_sim_stream *s)
{
	if (!s || s->legacy || s->per_thread)
		return;
	pthread_mutex_lock(&gw_sim_rt.lock);
	/* CUDA lets the work finish after the destroy returns; the struct must outlive it */
	while (s->gated)
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	s->magic = 0;
	s->next_free = gw_sim_rt.free_streams;
	gw_sim_rt.free_streams = s;
	pthread_mutex_unlock(&gw_sim_rt.lock);
}

struct gw_sim_event *gw_sim_event_get(cudaEvent_t handle)
{
	struct gw_sim_event *e = (struct gw_sim_event *)handle;

	return e && e->magic == GW_SIM_EVENT_MAGIC ? e : NULL;
}

struct gw_sim_event *gw_sim_event_new(unsigned int flags)
{
	struct gw_sim_event *e;

	pthread_mutex_lock(&gw_sim_rt.lock);
	e = gw_sim_rt.free_events;
	if (e)
		gw_sim_rt.free_events = e->next_free;
	else
		e = malloc(sizeof(*e));
	if (e) {
		memset(e, 0, sizeof(*e));
		e->magic = GW_SIM_EVENT_MAGIC;
		e->id = gw_sim_rt.next_event_id++;
		e->flags = flags;
	}
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return e;
}

void gw_sim_event_free(struct gw_sim_event *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&gw_sim_rt.lock);
	e->magic = 0;
	e->next_free = gw_sim_rt.free_events;
	gw_sim_rt.free_events = e;
	pthread_mutex_unlock(&gw_sim_rt.lock);
}

/* --- the pending-operation heap (ends of operations not yet finished), under the lock --- */

static void heap_push(uint64_t v)
{
	struct gw_sim_runtime *rt = &gw_sim_rt;
	size_t i;

	if (rt->n_pending == rt->cap_pending) {
		size_t cap = rt->cap_pending ? rt->cap_pending * 2 : 1024;
		uint64_t *p = realloc(rt->pending, cap * sizeof(*p));

		if (!p)
			return; /* the op still runs; it only escapes the depth accounting */
		rt->pending = p;
		rt->cap_pending = cap;
	}
	i = rt->n_pending++;
	while (i && rt->pending[(i - 1) / 2] > v) {
		rt->pending[i] = rt->pending[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	rt->pending[i] = v;
}

static void heap_pop(void)
{
	struct gw_sim_runtime *rt = &gw_sim_rt;
	uint64_t v = rt->pending[--rt->n_pending];
	size_t i = 0, n = rt->n_pending;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && rt->pending[c + 1] < rt->pending[c])
			c++;
		if (rt->pending[c] >= v)
			break;
		rt->pending[i] = rt->pending[c];
		i = c;
	}
	if (n)
		rt->pending[i] = v;
}

static void heap_drain(uint64_t now)
{
	while (gw_sim_rt.n_pending && gw_sim_rt.pending[0] <= now)
		heap_pop();
}

static bool blocking(const struct gw_sim_stream *s)
{
	return !s->legacy && !(s->flags & cudaStreamNonBlocking);
}

/* --- the usage log behind the simulated NVML counters (under the lock) --- */

/* In enqueue order: queued_ns never decreases, and max_end_ns (the latest end of this entry
 * and all before it) neither, so a window's entries are found by two binary searches. */
struct activity_ent {
	uint64_t queued_ns, start_ns, end_ns, max_end_ns;
	float dram, sm, occupancy, tensor;
	uint32_t device;
	bool kernel;
};

/*
 * The last ACTIVITY_RING operations, in a ring allocated and touched when the device starts:
 * an enqueue holds the runtime's lock, and a page fault or a copy there would stall the
 * timeline the program sees. A window older than the ring's oldest entry reads as idle.
 */
#define ACTIVITY_RING (1u << 16)

static struct activity_ent *activity_ring;
static uint64_t activity_head; /* entries appended so far */

static inline struct activity_ent *activity_at(uint64_t i)
{
	return &activity_ring[i & (ACTIVITY_RING - 1)];
}

static void activity_init(void)
{
	/* the kernel maps its pages now (zeroed), with no store of ours to each */
	void *p = mmap(NULL, ACTIVITY_RING * sizeof(*activity_ring), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	activity_ring = p == MAP_FAILED ? NULL : p;
}

static void activity_add(const struct gw_sim_op *op)
{
	struct activity_ent e = {
		.queued_ns = op->queued_ns,
		.start_ns = op->start_ns,
		.end_ns = op->end_ns,
		.max_end_ns = op->end_ns,
		.dram = (float)op->usage.dram,
		.sm = (float)op->usage.sm,
		.occupancy = (float)op->usage.occupancy,
		.tensor = (float)op->usage.tensor,
		.device = op->device,
		.kernel = op->kind == GW_SIM_OP_KERNEL,
	};

	if (!activity_ring)
		return; /* no memory for it: the counters read idle, the program goes on */
	/* A copy or memset moves its bytes at its rate for its whole duration (its fixed
	 * latency included); host-to-host copies do not touch device memory. */
	if (!e.kernel && op->end_ns > op->start_ns &&
	    op->copy_kind != CUPTI_ACTIVITY_MEMCPY_KIND_HTOH && gw_sim_rt.cfg.d2d_gbps > 0) {
		double d = (double)op->bytes / (double)(op->end_ns - op->start_ns) /
			   gw_sim_rt.cfg.d2d_gbps;

		e.dram = d > 1 ? 1.0f : (float)d;
	}
	if (activity_head && activity_at(activity_head - 1)->max_end_ns > e.max_end_ns)
		e.max_end_ns = activity_at(activity_head - 1)->max_end_ns;
	*activity_at(activity_head++) = e;
}

static int cmp_span(const void *x, const void *y)
{
	const uint64_t *p = x, *q = y;

	return p[0] < q[0] ? -1 : p[0] > q[0];
}

/* Length of the union of the spans v[0..n) (start, end pairs), sorted here. */
static uint64_t union_ns(uint64_t (*v)[2], size_t n)
{
	uint64_t total = 0, s = 0, e = 0;

	qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (i && v[i][0] <= e) {
			if (v[i][1] > e)
				e = v[i][1];
			continue;
		}
		total += e - s;
		s = v[i][0];
		e = v[i][1];
	}
	return total + (e - s);
}

void gw_sim_activity(uint32_t device, uint64_t t0, uint64_t t1, struct gw_sim_activity *ret)
{
	uint64_t(*kspans)[2] = NULL, (*mspans)[2] = NULL;
	uint64_t lo, hi;
	size_t nk = 0, nm = 0;
	double len = (double)(t1 - t0);

	memset(ret, 0, sizeof(*ret));
	if (t1 <= t0)
		return;
	pthread_mutex_lock(&gw_sim_rt.lock);
	/* the ring's entries are [head - ring size, head); before lo all ended by t0; from hi
	 * on, all were queued (so start) after t1 */
	lo = activity_head > ACTIVITY_RING ? activity_head - ACTIVITY_RING : 0;
	for (hi = activity_head; lo < hi;) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (activity_at(mid)->max_end_ns <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint64_t b = activity_head, a = (hi = lo); a < b;) {
		uint64_t mid = a + (b - a) / 2;

		if (activity_at(mid)->queued_ns < t1)
			a = mid + 1;
		else
			b = mid;
		hi = a;
	}
	kspans = malloc((hi - lo + 1) * sizeof(*kspans));
	mspans = malloc((hi - lo + 1) * sizeof(*mspans));
	for (uint64_t i = lo; kspans && mspans && i < hi; i++) {
		const struct activity_ent *e = activity_at(i);
		uint64_t s = e->start_ns > t0 ? e->start_ns : t0;
		uint64_t f = e->end_ns < t1 ? e->end_ns : t1;
		double w;

		if (f <= s || e->device != device)
			continue;
		w = (double)(f - s) / len;
		ret->mean.dram += w * e->dram;
		ret->mean.sm += w * e->sm;
		ret->mean.occupancy += w * e->occupancy;
		ret->mean.tensor += w * e->tensor;
		if (e->kernel) {
			kspans[nk][0] = s;
			kspans[nk++][1] = f;
		}
		if (e->dram > 0) {
			mspans[nm][0] = s;
			mspans[nm++][1] = f;
		}
	}
	pthread_mutex_unlock(&gw_sim_rt.lock);
	if (kspans && mspans) {
		ret->kernel_busy = nk ? (double)union_ns(kspans, nk) / len : 0;
		ret->memory_busy = nm ? (double)union_ns(mspans, nm) / len : 0;
	}
	free(kspans);
	free(mspans);
	/* no contention model: concurrent operations' shares add up, capped at the full scale */
	if (ret->mean.dram > 1)
		ret->mean.dram = 1;
	if (ret->mean.sm > 1)
		ret->mean.sm = 1;
	if (ret->mean.occupancy > 1)
		ret->mean.occupancy = 1;
	if (ret->mean.tensor > 1)
		ret->mean.tensor = 1;
}

/* Earliest time an operation on s may start, by stream order and the default-stream rules. */
static uint64_t ready_after(const struct gw_sim_stream *s)
{
	uint64_t t = s->last_end_ns;
	unsigned int d = s->device;

	if (s->legacy) {
		if (gw_sim_rt.blocking_max_end_ns[d] > t)
			t = gw_sim_rt.blocking_max_end_ns[d];
	} else if (!(s->flags & cudaStreamNonBlocking)) {
		if (gw_sim_rt.legacy[d].last_end_ns > t)
			t = gw_sim_rt.legacy[d].last_end_ns;
	}
	return t;
}

uint64_t gw_sim_ready_after_locked(const struct gw_sim_stream *s)
{
	return ready_after(s);
}

static void stream_advance(struct gw_sim_stream *s, uint64_t end)
{
	unsigned int d = s->device;

	if (end > s->last_end_ns)
		s->last_end_ns = end;
	if (blocking(s) && end > gw_sim_rt.blocking_max_end_ns[d])
		gw_sim_rt.blocking_max_end_ns[d] = end;
	if (end > gw_sim_rt.device_last_end_ns[d])
		gw_sim_rt.device_last_end_ns[d] = end;
}

void gw_sim_advance_locked(struct gw_sim_stream *s, uint64_t end)
{
	stream_advance(s, end);
}

/* Under the lock: whether work on s must wait for a stream held by a host function or a wait
 * other than s itself (the default-stream rules make the legacy stream and the blocking ones
 * wait for each other). */
static bool waits_on_held(const struct gw_sim_stream *s)
{
	unsigned int d = s->device;

	if (s->legacy)
		return gw_sim_rt.held_blocking[d] > 0;
	return blocking(s) && gw_sim_rt.legacy[d].gated;
}

void gw_sim_place_locked(struct gw_sim_stream *s, struct gw_sim_op *op, uint64_t dur_ns,
			 uint64_t now)
{
	uint64_t start, dep = ready_after(s);

	/* GPUSIM_HOLD_US: the host queues ahead of a device that has not started yet, so a test
	 * that needs the host to stay ahead does not depend on when the host was scheduled. */
	if (gw_sim_rt.cfg.hold_ns && !gw_sim_rt.hold_until_ns)
		gw_sim_rt.hold_until_ns = now + gw_sim_rt.cfg.hold_ns;
	start = now > gw_sim_rt.hold_until_ns ? now : gw_sim_rt.hold_until_ns;
	if (dep && dep + gw_sim_rt.cfg.queue_ns > start)
		start = dep + gw_sim_rt.cfg.queue_ns;
	op->queued_ns = now;
	op->start_ns = start;
	op->end_ns = start + dur_ns;
	op->stream_id = s->id;
	op->device = s->device;
	stream_advance(s, op->end_ns);
	if (op->end_ns > now)
		heap_push(op->end_ns);
	activity_add(op);
}

void gw_sim_enqueue(struct gw_sim_stream *s, struct gw_sim_op *op, uint64_t dur_ns, bool launch)
{
	const struct gw_sim_hooks *h;
	uint64_t now;

	pthread_mutex_lock(&gw_sim_rt.lock);
	/* Behind a host function or a wait: the operation waits in the stream, its times set
	 * when the hold ends; a call that waits for the operation waits for that first. */
	while ((s->gated && op->blocking) || waits_on_held(s))
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	if (s->gated) {
		struct gw_sim_item *it = calloc(1, sizeof(*it));

		if (it) {
			it->kind = GW_SIM_ITEM_OP;
			it->op = *op;
			it->dur_ns = dur_ns;
			if (s->held_tail)
				s->held_tail->next = it;
			else
				s->held = it;
			s->held_tail = it;
		}
		op->start_ns = op->end_ns = 0;
		op->stream_id = s->id;
		op->device = s->device;
		pthread_mutex_unlock(&gw_sim_rt.lock);
		return;
	}
	/* an operation its call issued earlier (a batch's, issued at once) is placed as of then */
	now = op->queued_ns ? op->queued_ns : gw_sim_now_ns();
	heap_drain(now);
	while (launch && gw_sim_rt.n_pending >= gw_sim_rt.cfg.queue_depth) {
		uint64_t t = gw_sim_rt.pending[0];

		pthread_mutex_unlock(&gw_sim_rt.lock);
		gw_sim_wait_until(t);
		pthread_mutex_lock(&gw_sim_rt.lock);
		now = gw_sim_now_ns();
		heap_drain(now);
	}
	gw_sim_place_locked(s, op, dur_ns, now);
	pthread_mutex_unlock(&gw_sim_rt.lock);
	gw_sim_stats_op(op);
	h = atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	if (h)
		h->op(op);
}

/* The end of all work issued to s: a hold's end is known once it has run. */
uint64_t gw_sim_stream_end(struct gw_sim_stream *s)
{
	uint64_t t;

	pthread_mutex_lock(&gw_sim_rt.lock);
	while (s->gated)
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	t = s->last_end_ns;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return t;
}

uint64_t gw_sim_device_end_of(unsigned int device)
{
	uint64_t t;

	pthread_mutex_lock(&gw_sim_rt.lock);
	while (gw_sim_rt.held[device])
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	t = gw_sim_rt.device_last_end_ns[device];
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return t;
}

uint64_t gw_sim_device_end(void)
{
	return gw_sim_device_end_of(current_device);
}

bool gw_sim_stream_held(struct gw_sim_stream *s)
{
	bool held;

	pthread_mutex_lock(&gw_sim_rt.lock);
	held = s->gated;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return held;
}

bool gw_sim_event_pending(const struct gw_sim_event *e)
{
	bool pending;

	pthread_mutex_lock(&gw_sim_rt.lock);
	pending = e->pending > 0;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return pending;
}

void gw_sim_event_set_locked(struct gw_sim_event *e, struct gw_sim_stream *s, uint64_t now)
{
	uint64_t t = ready_after(s);

	e->t_ns = t > now ? t : now;
	e->recorded = true;
}

void gw_sim_event_record(struct gw_sim_event *e, struct gw_sim_stream *s)
{
	uint64_t now = gw_sim_now_ns();

	pthread_mutex_lock(&gw_sim_rt.lock);
	while (waits_on_held(s))
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	if (s->gated) {
		struct gw_sim_item *it = calloc(1, sizeof(*it));

		if (it) {
			it->kind = GW_SIM_ITEM_EVENT;
			it->event = e;
			e->pending++;
			if (s->held_tail)
				s->held_tail->next = it;
			else
				s->held = it;
			s->held_tail = it;
		}
		pthread_mutex_unlock(&gw_sim_rt.lock);
		return;
	}
	gw_sim_event_set_locked(e, s, now);
	pthread_mutex_unlock(&gw_sim_rt.lock);
}

/* Whether e has been recorded, and its time: a record waiting behind a hold is waited for. */
bool gw_sim_event_time(const struct gw_sim_event *e, uint64_t *ret_t_ns)
{
	bool recorded;

	pthread_mutex_lock(&gw_sim_rt.lock);
	while (e->pending)
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	recorded = e->recorded;
	*ret_t_ns = e->t_ns;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return recorded;
}

void gw_sim_stream_wait(struct gw_sim_stream *s, const struct gw_sim_event *e)
{
	pthread_mutex_lock(&gw_sim_rt.lock);
	while (e->pending)
		pthread_cond_wait(&gw_sim_rt.hold_done, &gw_sim_rt.lock);
	if (e->recorded)
		stream_advance(s, e->t_ns);
	pthread_mutex_unlock(&gw_sim_rt.lock);
}
