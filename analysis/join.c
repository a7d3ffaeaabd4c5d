/* SPDX-License-Identifier: MIT */
/* Stage 2, join: sorts the tables, joins each GPU operation to its API call, classifies
 * kernels and computes their fill; with the ops in order, finds the runs (stage 3) in the
 * same walk. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ---- finish ---- */

static int cmp_api(const void *x, const void *y, void *ctx)
{
	const struct gw_api *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->corr < q->corr ? -1 : p->corr > q->corr;
}

static int cmp_op(const void *x, const void *y, void *ctx)
{
	const struct gw_op *p = x, *q = y;

	(void)ctx;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* Memory events in time order across traces: processes that share a GPU share its memory. */
static int cmp_mev(const void *x, const void *y, void *ctx)
{
	const struct gw_mev *p = x, *q = y;

	(void)ctx;
	if (p->time_ns != q->time_ns)
		return p->time_ns < q->time_ns ? -1 : 1;
	return p->trace < q->trace ? -1 : p->trace > q->trace;
}

static uint32_t find_api(const struct gw_analyzer *a, uint16_t trace, uint64_t corr, size_t *hint)
{
	const struct gw_api *v = a->apis.data;
	size_t n = a->apis.len, lo = 0, hi = n;

	/* Ops come in launch order per stream: the next few API entries usually hold the match. */
	for (size_t i = *hint; i < n && i < *hint + 4; i++)
		if (v[i].trace == trace && v[i].corr == corr)
			return (uint32_t)(*hint = i);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].trace < trace || (v[mid].trace == trace && v[mid].corr < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].trace == trace && v[lo].corr == corr) {
		*hint = lo;
		return (uint32_t)lo;
	}
	return UINT32_MAX;
}

/* Class of a kernel name, cached per string id. */
static uint8_t name_class(struct gw_analyzer *a, unsigned trace, uint32_t id, bool *classified)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	struct gw_string_ent *e = gw_an_string_ent(t, id);
	char *d;
	uint8_t c;
	bool ok;

	if (e && e->cls) {
		*classified = e->cls & 0x80;
		return (uint8_t)((e->cls & 0x7f) - 1);
	}
	d = gw_demangle(e && e->text ? e->text : "");
	c = (uint8_t)gw_kernel_class(d ? d : (e ? e->text : ""), &ok);
	free(d);
	*classified = ok;
	if (e)
		e->cls = (uint8_t)((c + 1) | (ok ? 0x80 : 0));
	return c;
}

/* Loops cycle through a few names: the classes of the last 64 are remembered. */
struct gw_class_cache {
	uint64_t key; /* (trace << 32 | name) + 1; 0 empty */
	uint8_t cls;
	bool ok;
};

static struct gw_class_cache *class_of(struct gw_analyzer *a, struct gw_class_cache *cache,
				       unsigned trace, uint32_t name)
{
	uint64_t key = ((uint64_t)trace << 32 | name) + 1;
	struct gw_class_cache *c = &cache[(name * 0x9E3779B1u) >> 26];

	if (c->key != key) {
		c->key = key;
		c->cls = name_class(a, trace, name, &c->ok);
	}
	return c;
}

/* Loops repeat a few launch shapes: the fills of the last 64 are remembered. */
struct gw_fill_cache {
	const struct gw_dev_st *d;
	struct gw_launch_shape shape;
	uint16_t trace; /* context ids are a trace's own */
	float fill;
};

static float op_fill(struct gw_analyzer *a, struct gw_fill_cache *cache, const struct gw_dev_st *d,
		     const struct gw_op *op)
{
	const struct gw_launch_shape *s = &op->shape;
	unsigned i = ((s->blocks * 0x9E3779B1u) ^ (s->threads * 0x85EBCA6Bu) ^
		      (s->smem * 0xC2B2AE35u) ^ s->regs) >>
		     26;

	if (cache[i].d != d || cache[i].trace != op->trace ||
	    memcmp(&cache[i].shape, s, sizeof(*s)) != 0) {
		struct gw_kernel_shape k;

		gw_an_kernel_shape(gw_an_trace(a, op->trace), s, &k);
		cache[i].d = d;
		cache[i].shape = *s;
		cache[i].trace = op->trace;
		cache[i].fill = (float)gw_kernel_fill(&d->lim, &k);
	}
	return cache[i].fill;
}

/* Whether traces of devices d and e are images of one process that exec'd: one host and pid,
 * and the earlier image's footer says it ended by exec. */
static bool exec_chain(struct gw_analyzer *a, const struct gw_dev_st *d, const struct gw_dev_st *e)
{
	const struct gw_trace_st *td = gw_an_trace(a, d->r.trace), *te = gw_an_trace(a, e->r.trace);
	const struct gw_trace_st *first =
		td->info.capture_start_ns <= te->info.capture_start_ns ? td : te;

	return td->info.pid == te->info.pid && first->exec_ended;
}

/* Whether devices d and e are one physical GPU: one host, one uuid, and windows that meet
 * (processes sharing it) or one process's images before and after an exec (the GPU then idled
 * through the exec: one window, not two GPUs). */
static bool same_gpu(struct gw_analyzer *a, const struct gw_dev_st *d, const struct gw_dev_st *e)
{
	const char *hd = gw_an_trace(a, d->r.trace)->host, *he = gw_an_trace(a, e->r.trace)->host;

	if (!d->uuid_len || d->uuid_len != e->uuid_len || memcmp(d->uuid, e->uuid, d->uuid_len) ||
	    !hd || !he || strcmp(hd, he))
		return false;
	return (d->first_ns <= e->last_ns && e->first_ns <= d->last_ns) || exec_chain(a, d, e);
}

/*
 * Devices of several traces that are one GPU in use at the same time (processes sharing it)
 * become one device: one SM-time budget, one timeline the sweep walks, one memory. The table is
 * compacted and every device index (ops, the event view, the (trace, id) map) follows.
 */
static int merge_shared_devices(struct gw_analyzer *a)
{
	struct gw_dev_st *devs = a->devs.data;
	size_t n = a->devs.len, kept = 0;
	uint32_t *root, *to;
	bool merged = false;
	int r = 0;

	root = malloc((n + 1) * sizeof(*root));
	to = malloc((n + 1) * sizeof(*to));
	if (!root || !to) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		root[i] = (uint32_t)i;
	/* a window grows with what joins it, so join until nothing more does */
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < n; i++) {
			for (size_t j = i + 1; j < n && root[i] == i; j++) {
				struct gw_dev_st *d = &devs[i], *e = &devs[j];
				uint16_t *s;

				if (root[j] != j || e->r.trace == d->r.trace || !same_gpu(a, d, e))
					continue;
				root[j] = (uint32_t)i;
				if (e->first_ns < d->first_ns)
					d->first_ns = e->first_ns;
				if (e->last_ns > d->last_ns)
					d->last_ns = e->last_ns;
				if (!exec_chain(a, d, e)) /* an exec keeps the process */
					d->r.processes += e->r.processes;
				/* each process has CUPTI buffers of its own on the GPU */
				d->cupti_bytes += e->cupti_bytes;
				d->cupti_limit_bytes += e->cupti_limit_bytes;
				if (!(s = gw_vec_push(&d->sharers, sizeof(*s)))) {
					r = -ENOMEM;
					goto out;
				}
				*s = (uint16_t)e->r.trace;
				for (size_t k = 0; k < e->sharers.len; k++) {
					if (!(s = gw_vec_push(&d->sharers, sizeof(*s)))) {
						r = -ENOMEM;
						goto out;
					}
					*s = ((uint16_t *)e->sharers.data)[k];
				}
				merged = again = true;
			}
		}
	}
	if (!merged)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (root[i] != i) {
			free(devs[i].r.name);
			free(devs[i].uuid);
			gw_vec_free(&devs[i].sharers);
			continue;
		}
		to[i] = (uint32_t)kept;
		if (kept != i)
			devs[kept] = devs[i];
		kept++;
	}
	for (size_t i = 0; i < n; i++)
		if (root[i] != i)
			to[i] = to[root[i]];
	for (size_t i = 0; i < a->ops.len; i++) {
		struct gw_op *op = &((struct gw_op *)a->ops.data)[i];

		op->dev = (uint16_t)to[op->dev];
	}
	for (size_t i = 0; i < a->vops.len; i++) {
		struct gw_vop *v = &((struct gw_vop *)a->vops.data)[i];

		v->dev = (uint16_t)to[v->dev];
	}
	/* every (trace, device id) key now leads to its GPU */
	for (size_t s = 0; s < a->dev_map.cap; s++)
		if (a->dev_map.slots[s].used)
			a->dev_map.slots[s].value = to[a->dev_map.slots[s].value - 1] + 1;
	a->devs.len = kept;
	a->last_dev = 0;
	a->ops_unsorted = true; /* the processes' ops interleave */
out:
	free(root);
	free(to);
	return r;
}

static int cmp_span(const void *x, const void *y, void *ctx)
{
	const struct gw_span *p = x, *q = y;

	(void)ctx;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* Each trace's start-up spans in time order, overlaps merged (threads may load at once). */
static int merge_startup(struct gw_analyzer *a)
{
	for (size_t i = 0; i < a->traces.len; i++) {
		struct gw_trace_st *t = gw_an_trace(a, (unsigned)i);
		struct gw_span *v = t->startup.data;
		size_t n = 0;

		if (!t->startup.len)
			continue;
		if (gw_sort_r(v, t->startup.len, sizeof(*v), cmp_span, NULL) < 0)
			return -ENOMEM;
		for (size_t k = 1; k < t->startup.len; k++) {
			if (v[k].start_ns <= v[n].end_ns) {
				if (v[k].end_ns > v[n].end_ns)
					v[n].end_ns = v[k].end_ns;
			} else {
				v[++n] = v[k];
			}
		}
		t->startup.len = n + 1;
	}
	return 0;
}

static int cmp_hold(const void *x, const void *y, void *ctx)
{
	const struct gw_hold *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	if (p->stream != q->stream)
		return p->stream < q->stream ? -1 : 1;
	return p->corr < q->corr ? -1 : p->corr > q->corr;
}

/* The holds' devices (after the merge of shared GPUs) and calls, in (trace, dev, stream, corr)
 * order; each host function's call site is counted. */
static int resolve_holds(struct gw_analyzer *a)
{
	struct gw_hold *h = a->holds.data;
	size_t hint = 0;

	for (size_t i = 0; i < a->holds.len; i++) {
		uint64_t *d = gw_hmap_find(&a->dev_map, h[i].trace, h[i].device);

		h[i].dev = d ? (uint16_t)(*d - 1) : UINT16_MAX;
		h[i].api = find_api(a, h[i].trace, h[i].corr, &hint);
		if (h[i].kind == GW_STREAM_OP_HOST_FUNC) {
			const struct gw_api *c =
				h[i].api != UINT32_MAX ? &((struct gw_api *)a->apis.data)[h[i].api]
						       : NULL;
			uint32_t name = c ? c->name_id : 0, stack = c ? c->stack_id : 0;
			bool fresh;
			uint64_t *v = gw_hmap_get(&a->hostfn_map, (uint64_t)h[i].trace << 32 | name,
						  stack, &fresh);
			struct gw_hostfn_acc *f;

			if (!v)
				return -ENOMEM;
			if (fresh) {
				if (!(f = gw_vec_push(&a->hostfns, sizeof(*f)))) {
					gw_hmap_del(&a->hostfn_map,
						    (uint64_t)h[i].trace << 32 | name, stack);
					return -ENOMEM;
				}
				*f = (struct gw_hostfn_acc){
					.trace = h[i].trace, .name_id = name, .stack_id = stack};
				*v = a->hostfns.len;
			}
			((struct gw_hostfn_acc *)a->hostfns.data)[*v - 1].calls++;
		}
	}
	return gw_sort_r(h, a->holds.len, sizeof(*h), cmp_hold, NULL) < 0 ? -ENOMEM : 0;
}

/*
 * Whether op i (its correlation id still in place) waited in its stream behind a host function
 * or a wait for a value: one issued to its stream after the stream's previous operation and
 * before it (correlation ids grow with each call a process makes). Ops come in start order,
 * which is issue order within a stream; last holds each stream's previous operation's id.
 */
static int mark_held(struct gw_analyzer *a, struct gw_op *op, size_t i, struct gw_hmap *last)
{
	const struct gw_hold *h = a->holds.data;
	size_t lo = 0, hi = a->holds.len;
	uint64_t k1 = (uint64_t)op->trace << 16 | op->dev, after;
	bool fresh;
	uint64_t *v = gw_hmap_get(last, k1, op->stream, &fresh);

	if (!v)
		return -ENOMEM;
	after = fresh ? 0 : *v;
	*v = op->corr > after ? op->corr : after;
	/* the first hold of this stream issued after `after` */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gw_hold *m = &h[mid];
		int c = m->trace != op->trace	  ? (m->trace < op->trace ? -1 : 1)
			: m->dev != op->dev	  ? (m->dev < op->dev ? -1 : 1)
			: m->stream != op->stream ? (m->stream < op->stream ? -1 : 1)
						  : (m->corr <= after ? -1 : 1);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < a->holds.len && h[k].trace == op->trace && h[k].dev == op->dev &&
			    h[k].stream == op->stream && h[k].corr < op->corr;
	     k++) {
		uint64_t *slot;

		/* a host function holds the stream for longer than any wait it shares a gap
		 * with could tell: it is what the gap is named after */
		if ((op->flags & GW_OPF_HOSTFN) && h[k].kind != GW_STREAM_OP_HOST_FUNC)
			continue;
		if (!(slot = gw_hmap_get(&a->held_map, 0, i, &fresh)))
			return -ENOMEM;
		*slot = k + 1;
		op->flags &= (uint8_t) ~(GW_OPF_HOSTFN | GW_OPF_WAITVAL);
		op->flags |= h[k].kind == GW_STREAM_OP_HOST_FUNC ? GW_OPF_HOSTFN : GW_OPF_WAITVAL;
	}
	return 0;
}

int gw_join(struct gw_analyzer *a)
{
	struct gw_op *ops;
	struct gw_api *apis;
	struct gw_dev_st *devs = a->devs.data;
	size_t hint = 0;
	struct gw_fill_cache fill_cache[64] = {0};
	struct gw_class_cache class_cache[64] = {0};
	struct gw_dev_st *rd = NULL; /* the device whose runs are being walked */
	struct gw_runs runs;
	struct gw_hmap last = {0}; /* (trace, dev, stream) -> its latest op's correlation id */
	size_t m = 0;
	bool inline_runs;
	int r;

	if ((r = merge_shared_devices(a)) < 0 || (r = merge_startup(a)) < 0)
		return r;
	devs = a->devs.data;
	inline_runs = !a->ops_unsorted;
	a->apis_resorted = a->apis_unsorted;
	if ((a->apis_resorted &&
	     gw_sort_r(a->apis.data, a->apis.len, sizeof(struct gw_api), cmp_api, NULL) < 0) ||
	    (a->ops_unsorted &&
	     gw_sort_r(a->ops.data, a->ops.len, sizeof(struct gw_op), cmp_op, NULL) < 0) ||
	    gw_sort_r(a->mevs.data, a->mevs.len, sizeof(struct gw_mev), cmp_mev, NULL) < 0)
		return -ENOMEM;
	ops = a->ops.data;
	apis = a->apis.data;
	if (a->holds.len && (r = resolve_holds(a)) < 0)
		return r;
	a->kidx = malloc((a->ops.len + 1) * sizeof(*a->kidx));
	if (!a->kidx)
		return -ENOMEM;
	for (size_t i = 0; i < a->devs.len; i++) {
		devs[i].op_begin = devs[i].op_end = 0;
		devs[i].r.start_ns = UINT64_MAX;
		/* Only when no device waits for its own pass: fusion candidates are then added
		 * in the same device order as the passes would add them. */
		if (devs[i].add_streams)
			inline_runs = false;
	}
	for (size_t i = 0; i < a->ops.len; i++) {
		struct gw_op *op = &ops[i];
		struct gw_dev_st *d = &devs[op->dev];
		uint32_t ai = find_api(a, op->trace, op->corr, &hint);

		if (d->r.start_ns == UINT64_MAX) {
			d->op_begin = i;
			d->r.start_ns = op->start_ns;
			d->streams = false;
			d->first_stream = UINT64_MAX;
			/* Ops in add order, each device's kernels on one stream: they are in
			 * (stream, start) order already, and chains and fusion runs are found
			 * right here instead of in a pass of their own. */
			if (rd && (r = gw_runs_step(a, rd, a->kidx, m, m, &runs)) < 0) {
				gw_hmap_free(&last);
				return r;
			}
			rd = NULL;
			if (inline_runs) {
				rd = d;
				m = 0;
				runs = (struct gw_runs){.chain = SIZE_MAX, .tiny = SIZE_MAX};
			}
		}
		d->op_end = i + 1;
		if (op->end_ns > d->r.end_ns)
			d->r.end_ns = op->end_ns;
		if (a->holds.len && (r = mark_held(a, op, i, &last)) < 0) {
			gw_hmap_free(&last);
			return r;
		}
		/* The correlation id is not needed any more: its place holds the API and fill. */
		op->api = ai;
		op->fill = 0;
		if (op->kind == GW_OP_KERNEL) {
			struct gw_class_cache *cc =
				class_of(a, class_cache, op->trace, op->name_id);

			op->fill = op_fill(a, fill_cache, d, op);
			op->cls = cc->cls;
			if (op->end_ns - op->start_ns < a->opt.tiny_ns)
				op->flags |= GW_OPF_TINY;
			if (d->first_stream == UINT64_MAX)
				d->first_stream = gw_op_stream(op);
			else if (gw_op_stream(op) != d->first_stream)
				d->streams = true;
			/* Saturating: a corrupt trace's absurd durations must not wrap the sums
			 * (an unclassified share above 1). */
			uint64_t dur = op->end_ns - op->start_ns;

			a->kernel_ns =
				a->kernel_ns > UINT64_MAX - dur ? UINT64_MAX : a->kernel_ns + dur;
			if (!cc->ok)
				a->unclassified_ns = a->unclassified_ns > UINT64_MAX - dur
							     ? UINT64_MAX
							     : a->unclassified_ns + dur;
			if (rd) {
				a->kidx[m] = (uint32_t)(i - d->op_begin);
				if ((r = gw_runs_step(a, d, a->kidx, m, SIZE_MAX, &runs)) < 0) {
					gw_hmap_free(&last);
					return r;
				}
				m++;
			}
		} else if (op->kind == GW_OP_MEMCPY && (op->flags & GW_OPF_PAGEABLE) &&
			   ai != UINT32_MAX && apis[ai].sync_kind == GW_SYNC_NONE) {
			/* An async copy from or to pageable memory waits for the host staging. */
			apis[ai].sync_kind = GW_SYNC_COPY;
			if (apis[ai].category != GW_API_MEMCPY)
				a->sync_outside = true; /* not among the candidates */
		}
	}
	gw_hmap_free(&last);
	if (rd && (r = gw_runs_step(a, rd, a->kidx, m, m, &runs)) < 0)
		return r;
	for (size_t i = 0; i < a->devs.len; i++)
		devs[i].runs_done = inline_runs;
	return 0;
}
