/* SPDX-License-Identifier: MIT */
/* Stage 5, attribute: the SM-time accounting of doc/causes.md — states A/B/C, the gap rules,
 * sync debt — with the per-name kernel and tiny-kernel tallies, the steps' shares and the
 * drawing bins. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define GW_INCALL_SCAN	      512
/* The longest call that counts as launching: far past the costliest real launches (a large
 * module loaded at its first launch takes milliseconds) and what a busy machine's scheduler
 * makes of a call (tens of milliseconds); a call held longer was stopped or swapped. */
#define GW_LAUNCH_CALL_MAX_NS 1000000000ull

/* A direct-mapped cache in front of a hash map of per-name accumulators: loops cycle
 * through a few names, and the hash lookup per kernel is the costliest step of a pass. */
struct gw_name_cache {
	uint64_t key[256]; /* (trace << 32 | name) + 1; 0 empty */
	uint32_t idx[256];
};

static uint32_t *name_cache_slot(struct gw_name_cache *c, unsigned trace, uint32_t name, bool *hit)
{
	uint64_t key = ((uint64_t)trace << 32 | name) + 1;
	unsigned i = (unsigned)((name * 0x9E3779B1u) >> 24);

	*hit = c->key[i] == key;
	c->key[i] = key;
	return &c->idx[i];
}

/* A synchronizing call on one device, waiting to learn when the device drained. */
struct gw_sync_ev {
	uint64_t start_ns, end_ns;
	uint32_t site; /* index into a->syncs */
	uint16_t dev;
	uint32_t api;
};

struct gw_sweep {
	struct gw_analyzer *a;
	struct gw_analysis *res;
	struct gw_dev_st *d;
	unsigned di;
	double sms;
	struct gw_sync_ev *syncs; /* this device's, by start */
	size_t n_syncs, si;
	uint64_t debt_ns;
	/* A sync that issued the operation it waits for (a synchronous or pageable copy): it
	 * waits for that operation, and is resolved at the first gap after it. */
	struct gw_sync_ev self;
	bool self_pending;
	int64_t owner; /* sync site holding the debt, -1 none */
	bool owner_fresh;
	uint64_t last_gap_end, last_gap_len;
	double sm_ns[GW_BUCKET_COUNT]; /* d->r.sm_ns while the sweep runs (no aliasing) */
	struct gw_name_cache tiny_cache, kstat_cache;
	bool view;	   /* keep_events: record the fill's steps */
	double fill_shown; /* the last fill step recorded (a device starts empty) */
	/* Steps: idle time goes to the step open on the host then (in the trace of the operation
	 * after the gap), the time operations run to the step of the one that started last. */
	struct gw_step_st *steps; /* NULL: no steps */
	const uint32_t *op_step;  /* the device's ops' steps (a->op_step from its first op) */
	uint16_t gap_trace;
	uint32_t run_step;
	struct gw_contrib gap_who, run_who; /* what the pieces came from (watched steps) */
};

/* A watched step's contributor c gave v SM-ns of bucket b. The few largest are kept; a new
 * one when all places are taken replaces the smallest and inherits its sum (an upper bound,
 * as the space-saving count is). */
static void contrib_add(struct gw_step_watch *sw, int b, const struct gw_contrib *c, double v)
{
	struct gw_contrib *t = sw->top[b];
	int least = 0;

	for (int i = 0; i < GW_STEP_CONTRIBUTORS; i++) {
		if (!t[i].kind) {
			t[i] = *c;
			t[i].sm_ns = v;
			return;
		}
		if (t[i].kind == c->kind && t[i].name_id == c->name_id && t[i].trace == c->trace &&
		    (c->kind != GW_CONTRIB_SYNC || t[i].stack_id == c->stack_id)) {
			t[i].sm_ns += v;
			if (!t[i].stack_id)
				t[i].stack_id = c->stack_id; /* launches have sampled stacks */
			return;
		}
		if (t[i].sm_ns < t[least].sm_ns)
			least = i;
	}
	v += t[least].sm_ns;
	t[least] = *c;
	t[least].sm_ns = v;
}

/* v SM-ns of bucket b for step s (index + 1; 0 none), from c. */
static inline void step_add(struct gw_sweep *w, uint32_t s, int b, double v,
			    const struct gw_contrib *c)
{
	struct gw_step_st *st;

	if (!s || !w->steps)
		return;
	st = &w->steps[s - 1];
	st->sm_ns[b] += v;
	if (st->watch && c->kind)
		contrib_add(&w->a->watch[st->watch - 1], b, c, v);
}

/* Idle [t0, t1) of bucket b: to the steps of the gap's trace open on the host then, each its
 * part; time no step was open is outside every step. */
static void step_idle(struct gw_sweep *w, uint64_t t0, uint64_t t1, int b)
{
	const struct gw_analyzer *a = w->a;
	const uint32_t *idx = a->step_time;
	size_t lo = a->step_trace[w->gap_trace], hi = a->step_trace[w->gap_trace + 1], e = hi;
	uint64_t cur = t0;

	/* from the last step to start at or before t0 */
	while (lo < e) {
		size_t mid = lo + (e - lo) / 2;

		if (w->steps[idx[mid]].start_ns <= t0)
			lo = mid + 1;
		else
			e = mid;
	}
	if (lo > a->step_trace[w->gap_trace])
		lo--;
	for (size_t k = lo; k < hi && w->steps[idx[k]].start_ns < t1; k++) {
		const struct gw_step_st *s = &w->steps[idx[k]];
		uint64_t a0 = s->start_ns > cur ? s->start_ns : cur;
		uint64_t a1 = s->end_ns < t1 ? s->end_ns : t1;

		if (a1 <= a0)
			continue;
		step_add(w, idx[k] + 1, b, (double)(a1 - a0) * w->sms, &w->gap_who);
		cur = a1; /* steps of several threads that overlap: counted once */
	}
}

/* What an operation is, as a contributor. */
static struct gw_contrib op_who(const struct gw_analyzer *a, const struct gw_op *o)
{
	const struct gw_api *c =
		o->api != UINT32_MAX ? &((struct gw_api *)a->apis.data)[o->api] : NULL;

	return (struct gw_contrib){
		.kind = o->kind == GW_OP_KERNEL	  ? GW_CONTRIB_KERNEL
			: o->kind == GW_OP_MEMCPY ? GW_CONTRIB_COPY
						  : GW_CONTRIB_SET,
		.name_id = o->kind == GW_OP_KERNEL ? o->name_id : 0,
		.stack_id = c ? c->stack_id : 0,
		.trace = o->trace,
	};
}

/* A synchronizing call's site, as a contributor. */
static struct gw_contrib sync_who(const struct gw_analyzer *a, int64_t site)
{
	const struct gw_sync_acc *s = &((const struct gw_sync_acc *)a->syncs.data)[site];

	return (struct gw_contrib){.kind = GW_CONTRIB_SYNC,
				   .name_id = s->name_id,
				   .stack_id = s->stack_id,
				   .trace = s->trace};
}

static int cmp_sync_ev(const void *x, const void *y, void *ctx)
{
	const struct gw_sync_ev *p = x, *q = y;

	(void)ctx;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* Per-name kernel statistics, one kernel at a time (after chain detection). */
static int kernel_stat(struct gw_sweep *w, const struct gw_op *o, float fill, uint32_t ai)
{
	struct gw_analyzer *a = w->a;
	unsigned trace = o->trace;
	double dur = (double)(o->end_ns - o->start_ns);
	struct gw_kernel_acc *k;
	bool hit;
	uint32_t *slot = name_cache_slot(&w->kstat_cache, trace, o->name_id, &hit);

	if (!hit) {
		bool fresh;
		uint64_t *v = gw_hmap_get(&a->kstat_map, trace, o->name_id, &fresh);

		if (!v)
			return -ENOMEM;
		if (fresh) {
			k = gw_vec_push(&a->kstats, sizeof(*k));
			if (!k)
				return -ENOMEM;
			k->trace = (uint16_t)trace;
			k->name_id = o->name_id;
			k->cls = o->cls;
			*v = a->kstats.len;
		}
		*slot = (uint32_t)(*v - 1);
	}
	k = &((struct gw_kernel_acc *)a->kstats.data)[*slot];
	if (!k->stack_id && ai != UINT32_MAX)
		k->stack_id = ((struct gw_api *)a->apis.data)[ai].stack_id;
	k->count++;
	/* Saturating, as the analyzer's kernel time: durations of a corrupt trace must not wrap
	 * the sum below fill_ns (a mean fill above 1). */
	k->total_ns = k->total_ns > UINT64_MAX - (o->end_ns - o->start_ns)
			      ? UINT64_MAX
			      : k->total_ns + (o->end_ns - o->start_ns);
	k->fill_ns += dur * fill;
	k->unfilled_sm_ns += dur * (1 - fill) * w->sms;
	if (o->flags & GW_OPF_CHAIN)
		k->chain_count++;
	return 0;
}

/* Adds [t0, t1) to the drawing bins: rate[b] SM-ns per ns for each bucket (or all SMs to
 * `bucket` when rate is NULL), the fill and whether a kernel ran. */
static void bins_add(struct gw_sweep *w, uint64_t t0, uint64_t t1, const double *rate, int bucket,
		     double fill, bool kernel)
{
	struct gw_analysis *res = w->res;
	uint64_t b, bend;

	if (!res->n_bins || t1 <= t0)
		return;
	b = (t0 - res->start_ns) / res->bin_ns;
	bend = res->start_ns + b * res->bin_ns;
	for (; t0 < t1 && b < res->n_bins; b++, t0 = bend) {
		struct gw_timeline_bin *bin = &res->bins[b];
		double dt;

		/* saturating: a window that ends near 2^64 ns (a corrupt trace) must not wrap the
		 * last bin's end below t0 */
		bend = bend > UINT64_MAX - res->bin_ns ? UINT64_MAX : bend + res->bin_ns;
		dt = (double)((bend < t1 ? bend : t1) - t0);
		if (rate) {
			for (int k = 0; k < GW_BUCKET_COUNT; k++)
				bin->sm_ns[k] += dt * rate[k];
		} else {
			bin->sm_ns[bucket] += dt * w->sms;
		}
		if (fill > 0)
			bin->sm_busy += dt * fill * w->sms;
		if (kernel)
			bin->kernel_active += dt * w->sms;
	}
}

static int gap_piece(struct gw_sweep *w, uint64_t t0, uint64_t t1, int bucket)
{
	struct gw_gap *g;

	if (t1 <= t0)
		return 0;
	w->sm_ns[bucket] += (double)(t1 - t0) * w->sms;
	if (w->steps)
		step_idle(w, t0, t1, bucket);
	bins_add(w, t0, t1, NULL, bucket, 0, false);
	if (!w->a->opt.keep_gaps)
		return 0;
	g = gw_vec_push(&w->a->gaps, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->start_ns = t0;
	g->end_ns = t1;
	g->device = w->di;
	g->bucket = (uint8_t)bucket;
	return 0;
}

/* Resolves a sync whose wait ended at drain_ns (the device drained, or the call returned). */
static void sync_resolve(struct gw_sweep *w, const struct gw_sync_ev *s, uint64_t drain_ns)
{
	uint64_t until = drain_ns < s->end_ns ? drain_ns : s->end_ns;
	uint64_t wait = until > s->start_ns ? until - s->start_ns : 0;

	((struct gw_sync_acc *)w->a->syncs.data)[s->site].wait_ns += wait;
	w->debt_ns = wait;
	w->owner = s->site;
	w->owner_fresh = true;
}

/* Holds a sync whose own call issued N: it waits for N too, and learns its W at the first gap
 * after N. Called on an idle device, it waited from N's start (n_start): before that the host
 * was staging the copy, its own work. */
static void sync_hold(struct gw_sweep *w, const struct gw_sync_ev *s, uint64_t n_start)
{
	w->self = *s;
	if (n_start > w->self.start_ns)
		w->self.start_ns = n_start;
	w->self_pending = true;
}

static void sync_release(struct gw_sweep *w, uint64_t drain_ns)
{
	if (w->self_pending)
		sync_resolve(w, &w->self, drain_ns);
	w->self_pending = false;
}

/* Time N's launching thread spent inside calls that issue work, within [r0, g1]. */
static uint64_t in_launch_calls(struct gw_sweep *w, uint32_t ai, uint64_t r0, uint64_t g1)
{
	const struct gw_api *apis = w->a->apis.data;
	const struct gw_api *n = &apis[ai];
	uint64_t reach = gw_an_trace(w->a, n->trace)->max_launch_ns, sum = 0;

	for (size_t k = 0, j = ai + 1; j-- > 0 && k < GW_INCALL_SCAN; k++) {
		const struct gw_api *c = &apis[j];
		uint64_t lo, hi;

		if (c->trace != n->trace || c->start_ns + reach < r0)
			break;
		/* N's own call, and other calls that issue work; a call that waits for earlier
		 * work (a sync, a synchronous copy of other data) is not a launch call. */
		if (j != ai &&
		    (c->tid != n->tid || c->sync_kind != GW_SYNC_NONE ||
		     (c->category != GW_API_LAUNCH && c->category != GW_API_GRAPH_LAUNCH &&
		      c->category != GW_API_MEMCPY && c->category != GW_API_MEMSET)))
			continue;
		/* A call this long is not per-launch cost: the host was held inside it
		 * (stopped, paged out, waiting on a lock). */
		if (c->end_ns - c->start_ns > GW_LAUNCH_CALL_MAX_NS)
			continue;
		lo = c->start_ns > r0 ? c->start_ns : r0;
		hi = c->end_ns < g1 ? c->end_ns : g1;
		if (hi > lo)
			sum += hi - lo;
	}
	return sum > g1 - r0 ? g1 - r0 : sum;
}

/* The hold (host function or wait for a value) op waited behind, or NULL; gi: op's index in
 * the whole op table. */
static const struct gw_hold *held_by(const struct gw_analyzer *a, const struct gw_op *op, size_t gi)
{
	const uint64_t *v;

	if (!(op->flags & (GW_OPF_HOSTFN | GW_OPF_WAITVAL)) ||
	    !(v = gw_hmap_find(&a->held_map, 0, gi)))
		return NULL;
	return &((const struct gw_hold *)a->holds.data)[*v - 1];
}

/* A gap of len before queued work that waited behind host function h: host work, by the host
 * function's call site. */
static void hostfn_add(struct gw_sweep *w, const struct gw_hold *h, uint64_t len)
{
	struct gw_analyzer *a = w->a;
	const struct gw_api *c =
		h->api != UINT32_MAX ? &((const struct gw_api *)a->apis.data)[h->api] : NULL;
	const uint64_t *v =
		gw_hmap_find(&a->hostfn_map, (uint64_t)h->trace << 32 | (c ? c->name_id : 0),
			     c ? c->stack_id : 0);
	struct gw_hostfn_acc *f;

	if (!v)
		return; /* every host function's site was made by the join */
	f = &((struct gw_hostfn_acc *)a->hostfns.data)[*v - 1];
	f->gaps++;
	f->held_ns += len;
}

/* A blocked gap of len before op (launched by api, NULL when outside the trace), by stream;
 * hold: a wait for a value issued to its stream before it, or NULL. */
static int blocked_add(struct gw_sweep *w, const struct gw_op *op, const struct gw_api *api,
		       const struct gw_hold *hold, uint64_t len)
{
	struct gw_analyzer *a = w->a;
	struct gw_blocked_acc *b;
	bool fresh;
	uint64_t *v = gw_hmap_get(&a->blocked_map, w->di, gw_op_stream(op), &fresh);

	if (!v)
		return -ENOMEM;
	if (fresh) {
		b = gw_vec_push(&a->blocked, sizeof(*b));
		if (!b) {
			gw_hmap_del(&a->blocked_map, w->di, gw_op_stream(op));
			return -ENOMEM;
		}
		b->trace = op->trace;
		b->dev = (uint16_t)w->di;
		b->stream = op->stream;
		b->held_api = UINT32_MAX;
		*v = a->blocked.len;
	}
	b = &((struct gw_blocked_acc *)a->blocked.data)[*v - 1];
	b->gaps++;
	b->total_ns += len;
	if (len > b->longest_ns) {
		b->longest_ns = len;
		b->longest_kind = op->kind;
		b->longest_name_id = op->kind == GW_OP_KERNEL ? op->name_id : 0;
		b->longest_stack_id = api ? api->stack_id : 0;
		b->longest_launched = api != NULL;
		b->held_api = hold ? hold->api : UINT32_MAX;
	}
	return 0;
}

/* State C: nothing runs in [g0, g1]; N = ops[ni] starts at g1. */
static int gap(struct gw_sweep *w, const struct gw_op *ops, size_t ni, uint64_t g0, uint64_t g1)
{
	struct gw_analyzer *a = w->a;
	uint32_t ai = (uint32_t)ops[ni].api;
	const struct gw_api *api = ai != UINT32_MAX ? &((struct gw_api *)a->apis.data)[ai] : NULL;
	const struct gw_hold *hold;
	uint64_t hs, r0, incall, su, gend = g1;
	int r;

	w->last_gap_end = g1;
	w->last_gap_len = g1 - g0;
	if (w->steps) {
		w->gap_trace = ops[ni].trace;
		w->gap_who = op_who(a, &ops[ni]);
	}
	/* Rule 0: with N not yet queued, the time N's process spent starting CUDA up (creating
	 * a context, loading kernels lazily) is start-up, one-time cost, not one of the causes;
	 * the rules below share what remains, taken from the gap's end, where a lazy load sits
	 * (inside N's own launch call). */
	if (api && api->end_ns > g0 &&
	    (su = gw_an_startup_overlap(gw_an_trace(a, ops[ni].trace), g0, g1))) {
		if ((r = gap_piece(w, g1 - su, g1, GW_BUCKET_STARTUP)) < 0)
			return r;
		g1 -= su;
	}
	/* Rule 1: N was already queued (or launched before the trace began): up to queue_ns the
	 * GPU's own per-launch latency, longer a wait that held queued work. Host and GPU times
	 * may disagree by skew_ns: queued means its launch returned at least that long before
	 * the GPU went idle; nearer, which came first is unknown, and the gap goes to the rules
	 * that do not assume N was waiting. */
	if (!api || api->end_ns + a->opt.skew_ns <= g0) {
		if (g1 - g0 <= a->opt.queue_ns) {
			w->res->launch_queued_sm_ns += (double)(g1 - g0) * w->sms;
			return gap_piece(w, g0, g1, GW_BUCKET_LAUNCH_OVERHEAD);
		}
		hold = held_by(a, &ops[ni], (size_t)(ops - (const struct gw_op *)a->ops.data) + ni);
		/* Behind a host function, the queued work waited for the host to run it: host
		 * work on the GPU's timeline, not a wait on other GPU work. */
		if (hold && hold->kind == GW_STREAM_OP_HOST_FUNC) {
			hostfn_add(w, hold, g1 - g0);
			return gap_piece(w, g0, g1, GW_BUCKET_HOST_WORK);
		}
		/* Behind a wait for a value (or any other wait): blocked, named by the wait. */
		if ((r = blocked_add(w, &ops[ni], api, hold, g1 - g0)) < 0)
			return r;
		return gap_piece(w, g0, g1, GW_BUCKET_BLOCKED);
	}
	/* N was issued behind a host function or a wait for a value after the GPU went idle: from
	 * its issue on, the GPU had the work and the hold kept it, as in rule 1 (host work by the
	 * host function's site, or blocked, named by the wait); the rules below judge the time
	 * before, while N was not yet issued. */
	if (api &&
	    (hold = held_by(a, &ops[ni], (size_t)(ops - (const struct gw_op *)a->ops.data) + ni)) &&
	    api->end_ns < g1) {
		uint64_t from = api->end_ns > g0 ? api->end_ns : g0;

		if (hold->kind == GW_STREAM_OP_HOST_FUNC) {
			hostfn_add(w, hold, g1 - from);
			r = gap_piece(w, from, g1, GW_BUCKET_HOST_WORK);
		} else if ((r = blocked_add(w, &ops[ni], api, hold, g1 - from)) >= 0) {
			r = gap_piece(w, from, g1, GW_BUCKET_BLOCKED);
		}
		if (r < 0)
			return r;
		g1 = from;
	}
	/* The device drained at g0: syncs waiting since before then learn their W; a sync that
	 * issued N itself waits for N too. */
	sync_release(w, g0);
	while (w->si < w->n_syncs && w->syncs[w->si].start_ns <= g0) {
		if (api && w->syncs[w->si].api == ai)
			sync_hold(w, &w->syncs[w->si], 0); /* called while the device was busy */
		else
			sync_resolve(w, &w->syncs[w->si], g0);
		w->si++;
	}
	/* Rule 2: the sync debt is paid first. */
	hs = g1 - g0 < w->debt_ns ? g1 - g0 : w->debt_ns;
	w->debt_ns -= hs;
	if (hs && w->owner >= 0) {
		struct gw_sync_acc *s = &((struct gw_sync_acc *)a->syncs.data)[w->owner];

		s->exposed_sm_ns += (double)hs * w->sms;
		s->exposed_ns += hs;
	}
	if (w->steps && hs && w->owner >= 0) {
		struct gw_contrib n = w->gap_who;

		w->gap_who = sync_who(a, w->owner);
		r = gap_piece(w, g0, g0 + hs, GW_BUCKET_HOST_SYNC);
		w->gap_who = n;
		if (r < 0)
			return r;
	} else if ((r = gap_piece(w, g0, g0 + hs, GW_BUCKET_HOST_SYNC)) < 0) {
		return r;
	}
	r0 = g0 + hs;
	/* Rule 3: what remains, the GPU starved. */
	if (g1 > r0 && g1 - r0 <= a->opt.starve_ns) {
		w->res->launch_between_sm_ns += (double)(g1 - r0) * w->sms;
		r = gap_piece(w, r0, g1, GW_BUCKET_LAUNCH_OVERHEAD);
	} else if (g1 > r0) {
		incall = api ? in_launch_calls(w, ai, r0, g1) : 0;
		w->res->launch_in_call_sm_ns += (double)incall * w->sms;
		/* Host work right after a sync, or while its debt was still being paid. */
		if ((w->owner_fresh || hs) && w->owner >= 0) {
			((struct gw_sync_acc *)a->syncs.data)[w->owner].host_work_after_ns +=
				g1 - incall - r0;
			if (w->steps) {
				struct gw_contrib n = w->gap_who;

				w->gap_who = sync_who(a, w->owner);
				r = gap_piece(w, r0, g1 - incall, GW_BUCKET_HOST_WORK);
				w->gap_who = n;
			} else {
				r = gap_piece(w, r0, g1 - incall, GW_BUCKET_HOST_WORK);
			}
		} else {
			r = gap_piece(w, r0, g1 - incall, GW_BUCKET_HOST_WORK);
		}
		if (r < 0)
			return r;
		r = gap_piece(w, g1 - incall, g1, GW_BUCKET_LAUNCH_OVERHEAD);
	}
	w->owner_fresh = false;
	/* Syncs called while the device sat idle with nothing queued waited for nothing. */
	g1 = gend;
	while (w->si < w->n_syncs && w->syncs[w->si].start_ns < g1 &&
	       !(api && api->end_ns <= w->syncs[w->si].start_ns)) {
		if (api && w->syncs[w->si].api == ai)
			sync_hold(w, &w->syncs[w->si], g1);
		else
			sync_resolve(w, &w->syncs[w->si], w->syncs[w->si].start_ns);
		w->si++;
	}
	return r;
}

static int tiny_add(struct gw_sweep *w, const struct gw_op *op, uint32_t ai, uint64_t gap_before)
{
	struct gw_analyzer *a = w->a;
	unsigned trace = op->trace;
	struct gw_tiny_acc *t;
	uint64_t *v = NULL;
	bool fresh = false, hit;
	uint32_t *slot = name_cache_slot(&w->tiny_cache, trace, op->name_id, &hit);

	gw_an_trace(a, trace)->info.counts.tiny_kernels++;
	if (ai != UINT32_MAX && ((struct gw_api *)a->apis.data)[ai].category == GW_API_GRAPH_LAUNCH)
		w->res->graph_tiny_kernels++;
	if (!hit) {
		v = gw_hmap_get(&a->tiny_map, trace, op->name_id, &fresh);
		if (!v)
			return -ENOMEM;
	}
	if (fresh) {
		t = gw_vec_push(&a->tiny, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->trace = (uint16_t)trace;
		t->name_id = op->name_id;
		*v = a->tiny.len;
	}
	if (!hit)
		*slot = (uint32_t)(*v - 1);
	t = &((struct gw_tiny_acc *)a->tiny.data)[*slot];
	if (!t->stack_id && ai != UINT32_MAX)
		t->stack_id = ((struct gw_api *)a->apis.data)[ai].stack_id;
	t->count++;
	t->total_ns += op->end_ns - op->start_ns;
	t->gap_before_ns += gap_before;
	return 0;
}

/* The event view's SM-fill counter: a step when the device's fill changes. */
static int view_fill(struct gw_sweep *w, uint64_t t, double f)
{
	struct gw_view_step *s;

	if (f == w->fill_shown || w->a->vfill_capped)
		return 0;
	if (w->a->vfill.len >= GW_VIEW_MAX_FILL_STEPS) {
		w->a->vfill_capped = true;
		return 0;
	}
	s = gw_vec_push(&w->a->vfill, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct gw_view_step){.device = w->di, .time_ns = t, .value = f};
	w->fill_shown = f;
	return 0;
}

static int sweep_device(struct gw_sweep *w, struct gw_op *ops, size_t n, struct gw_heap *h)
{
	const double sms = w->sms;
	double cls_fill[GW_BUCKET_COUNT] = {0};
	double fill_sm_ns = w->d->fill_sm_ns;
	uint64_t kernel_active_ns = w->d->r.kernel_active_ns;
	unsigned nk = 0, ncp = 0, nchain = 0, ncomm = 0;
	uint64_t t = ops[0].start_ns;
	size_t i = 0;
	int r;

	h->n = 0;
	w->owner = -1;
	memcpy(w->sm_ns, w->d->r.sm_ns, sizeof(w->sm_ns));
	/* Syncs before the first operation, with nothing queued, waited for nothing. */
	while (w->si < w->n_syncs && w->syncs[w->si].start_ns < ops[0].start_ns) {
		uint32_t ai = (uint32_t)ops[0].api;
		const struct gw_api *api =
			ai != UINT32_MAX ? &((struct gw_api *)w->a->apis.data)[ai] : NULL;

		if (api && api->end_ns <= w->syncs[w->si].start_ns)
			break;
		if (api && w->syncs[w->si].api == ai)
			sync_hold(w, &w->syncs[w->si], ops[0].start_ns);
		else
			sync_resolve(w, &w->syncs[w->si], w->syncs[w->si].start_ns);
		w->si++;
	}
	while (i < n || h->n) {
		uint64_t ns = i < n ? ops[i].start_ns : UINT64_MAX;
		uint64_t ne = h->n ? ops[h->v[0]].end_ns : UINT64_MAX;
		uint64_t tn = ns < ne ? ns : ne;

		if (tn > t) {
			double dt = (double)(tn - t);

			if (nk) {
				static const int cls[] = {
					GW_BUCKET_COMPUTE, GW_BUCKET_BANDWIDTH_BOUND,
					GW_BUCKET_LOW_INTENSITY, GW_BUCKET_COMMUNICATION};
				/* the unfilled share: NCCL's by design when only NCCL runs */
				int ub = ncomm == nk ? GW_BUCKET_COMMUNICATION
					 : nchain    ? GW_BUCKET_DEPENDENCY_CHAIN
						     : GW_BUCKET_SMALL_BATCH;
				double sum = 0, f, k, dk, dts = dt * sms;

				/* Kernel classes are these four buckets only. The products keep
				 * the order of the formula's factors: dt * k * share. */
				for (int c = 0; c < 4; c++)
					sum += cls_fill[cls[c]];
				f = sum < 1 ? sum : 1;
				k = sum > 0 ? sms * f / sum : 0;
				dk = dt * k;
				for (int c = 0; c < 4; c++)
					w->sm_ns[cls[c]] += dk * cls_fill[cls[c]];
				w->sm_ns[ub] += dts * (1 - f);
				if (w->run_step) {
					for (int c = 0; c < 4; c++)
						step_add(w, w->run_step, cls[c],
							 dk * cls_fill[cls[c]], &w->run_who);
					step_add(w, w->run_step, ub, dts * (1 - f), &w->run_who);
				}
				if (w->res->n_bins) {
					double rate[GW_BUCKET_COUNT] = {0};

					for (int c = 0; c < 4; c++)
						rate[cls[c]] = k * cls_fill[cls[c]];
					rate[ub] += sms * (1 - f);
					bins_add(w, t, tn, rate, 0, f, true);
				}
				fill_sm_ns += dts * f;
				kernel_active_ns += tn - t;
				if (w->view && (r = view_fill(w, t, f)) < 0)
					return r;
			} else {
				if (w->view && (r = view_fill(w, t, 0)) < 0)
					return r;
				if (ncp) {
					w->sm_ns[GW_BUCKET_DATA_TRANSFER] += dt * sms;
					step_add(w, w->run_step, GW_BUCKET_DATA_TRANSFER, dt * sms,
						 &w->run_who);
					bins_add(w, t, tn, NULL, GW_BUCKET_DATA_TRANSFER, 0, false);
				} else if ((r = gap(w, ops, i, t, tn)) < 0) {
					return r;
				}
			}
			t = tn;
		}
		if (h->n && ne <= ns) {
			const struct gw_op *o = &ops[gw_heap_pop(h, ops)];

			if (o->kind == GW_OP_KERNEL) {
				cls_fill[o->cls] -= o->fill;
				if (--nk == 0)
					memset(cls_fill, 0, sizeof(cls_fill));
				if (o->flags & GW_OPF_CHAIN)
					nchain--;
				if (o->cls == GW_BUCKET_COMMUNICATION)
					ncomm--;
			} else {
				ncp--;
			}
		} else {
			struct gw_op *o = &ops[i];

			if (w->steps) {
				w->run_step = w->op_step[i];
				if (w->run_step && w->steps[w->run_step - 1].watch)
					w->run_who = op_who(w->a, o);
			}
			if (o->kind == GW_OP_KERNEL) {
				uint64_t gb = w->last_gap_end == o->start_ns ? w->last_gap_len : 0;

				cls_fill[o->cls] += o->fill;
				nk++;
				if (o->flags & GW_OPF_CHAIN)
					nchain++;
				if (o->cls == GW_BUCKET_COMMUNICATION)
					ncomm++;
				uint32_t ai = (uint32_t)o->api;

				if ((r = kernel_stat(w, o, o->fill, ai)) < 0)
					return r;
				if ((o->flags & GW_OPF_TINY) && (r = tiny_add(w, o, ai, gb)) < 0)
					return r;
			} else {
				ncp++;
			}
			gw_heap_push(h, ops, (uint32_t)i++);
		}
	}
	if (w->view && (r = view_fill(w, t, 0)) < 0)
		return r;
	memcpy(w->d->r.sm_ns, w->sm_ns, sizeof(w->sm_ns));
	w->d->fill_sm_ns = fill_sm_ns;
	w->d->r.kernel_active_ns = kernel_active_ns;
	/* Syncs still waiting when the device finished its last operation. */
	sync_release(w, w->d->r.end_ns);
	while (w->si < w->n_syncs && w->syncs[w->si].start_ns <= w->d->r.end_ns)
		sync_resolve(w, &w->syncs[w->si++], w->d->r.end_ns);
	return 0;
}

/* Sync sites and per-device sync events from the API table. */
static int collect_syncs(struct gw_analyzer *a, struct gw_vec *evs)
{
	const struct gw_api *apis = a->apis.data;
	const uint32_t *cand = a->sync_apis.data;
	/* The candidates noted while collecting, unless sorting moved the apis. */
	size_t n = a->apis_resorted ? a->apis.len : a->sync_apis.len;

	for (size_t c = 0; c < n; c++) {
		size_t i = a->apis_resorted ? c : cand[c];
		const struct gw_api *p = &apis[i];
		uint64_t *dv, *v;
		struct gw_sync_acc *s;
		struct gw_sync_ev *e;
		bool fresh;

		if (p->sync_kind == GW_SYNC_NONE)
			continue;
		v = gw_hmap_get(&a->sync_map, ((uint64_t)p->trace << 32) | p->name_id, p->stack_id,
				&fresh);
		if (!v)
			return -ENOMEM;
		if (fresh) {
			s = gw_vec_push(&a->syncs, sizeof(*s));
			if (!s)
				return -ENOMEM;
			s->trace = p->trace;
			s->kind = p->sync_kind;
			s->stack_id = p->stack_id;
			s->name_id = p->name_id;
			*v = a->syncs.len;
		}
		s = &((struct gw_sync_acc *)a->syncs.data)[*v - 1];
		s->count++;
		dv = gw_hmap_find(&a->dev_map, p->trace, p->device);
		if (!dv)
			continue; /* a device without GPU operations: nothing to wait for */
		e = gw_vec_push(evs, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->start_ns = p->start_ns;
		e->end_ns = p->end_ns;
		e->site = (uint32_t)(*v - 1);
		e->dev = (uint16_t)(*dv - 1);
		e->api = (uint32_t)i;
	}
	return gw_sort_r(evs->data, evs->len, sizeof(struct gw_sync_ev), cmp_sync_ev, NULL) < 0
		       ? -ENOMEM
		       : 0;
}

int gw_attribute(struct gw_analyzer *a)
{
	struct gw_op *ops = a->ops.data;
	struct gw_dev_st *devs = a->devs.data;
	struct gw_vec evs = {0};
	struct gw_heap h = {0};
	size_t se = 0;
	int r;

	if ((r = collect_syncs(a, &evs)) < 0)
		goto out;
	h.v = malloc((a->ops.len + 1) * sizeof(*h.v));
	if (!h.v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t d = 0; d < a->devs.len; d++) {
		struct gw_dev_st *dv = &devs[d];
		struct gw_sync_ev *ev = evs.data;
		struct gw_sweep w = {.a = a,
				     .res = a->res,
				     .d = dv,
				     .di = (unsigned)d,
				     .view = a->opt.keep_events,
				     .steps = a->steps.len ? a->steps.data : NULL};
		size_t n = dv->op_end - dv->op_begin;

		size_t s0;

		while (se < evs.len && ev[se].dev < d)
			se++;
		s0 = se;
		while (se < evs.len && ev[se].dev == d)
			se++;
		/* no sync at all leaves evs.data NULL, and NULL + 0 is undefined */
		w.syncs = se > s0 ? ev + s0 : NULL;
		w.n_syncs = se - s0;
		if (dv->r.start_ns == UINT64_MAX || !n) {
			for (size_t k = 0; k < w.n_syncs; k++)
				sync_resolve(&w, &w.syncs[k], w.syncs[k].start_ns);
			continue;
		}
		w.sms = (double)dv->lim.sm_count;
		dv->r.budget_sm_ns = (double)(dv->r.end_ns - dv->r.start_ns) * w.sms;
		if (w.steps)
			w.op_step = a->op_step + dv->op_begin;
		if ((r = sweep_device(&w, ops + dv->op_begin, n, &h)) < 0)
			goto out;
	}
	/* Bins: SM-weighted means. */
	if (a->res->n_bins) {
		double sms = 0;

		for (size_t d = 0; d < a->devs.len; d++)
			if (devs[d].r.start_ns != UINT64_MAX)
				sms += (double)devs[d].lim.sm_count;
		for (unsigned b = 0; b < a->res->n_bins && sms > 0; b++) {
			a->res->bins[b].sm_busy /= sms * (double)a->res->bin_ns;
			a->res->bins[b].kernel_active /= sms * (double)a->res->bin_ns;
		}
	}
	r = 0;
out:
	gw_vec_free(&evs);
	free(h.v);
	return r;
}
