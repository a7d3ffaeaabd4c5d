/* SPDX-License-Identifier: MIT */
/* Stage 3, runs: per stream, dependency chains (repeated under-filled kernels) and fusion
 * candidates (repeated runs of tiny kernels); kernels that overlap another stream's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define GW_CHAIN_MAX_FILL    0.5
#define GW_CHAIN_MAX_PERIOD  4
#define GW_CHAIN_MIN_REPEATS 16
#define GW_FUSION_MAX	     8

static int cmp_stream_idx(const void *x, const void *y, void *ctx)
{
	const struct gw_op *ops = ctx;
	const struct gw_op *p = &ops[*(const uint32_t *)x];
	const struct gw_op *q = &ops[*(const uint32_t *)y];

	if (gw_op_stream(p) != gw_op_stream(q))
		return gw_op_stream(p) < gw_op_stream(q) ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* Marks kernels overlapped by a kernel of another stream (only called when the device ran
 * kernels on more than one stream). */
static void mark_overlaps(struct gw_op *ops, size_t n, struct gw_heap *h)
{
	h->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (ops[i].kind != GW_OP_KERNEL)
			continue;
		while (h->n && ops[h->v[0]].end_ns <= ops[i].start_ns)
			gw_heap_pop(h, ops);
		for (size_t k = 0; k < h->n; k++) {
			struct gw_op *o = &ops[h->v[k]];

			if (gw_op_stream(o) != gw_op_stream(&ops[i])) {
				o->flags |= GW_OPF_OVERLAP;
				ops[i].flags |= GW_OPF_OVERLAP;
			}
		}
		gw_heap_push(h, ops, (uint32_t)i);
	}
	h->n = 0;
}

/* Chain detection on one stream's candidate segment idx[s..e): repeats of period 1-4. */
static void mark_chain_segment(struct gw_op *ops, const uint32_t *idx, size_t s, size_t e)
{
	for (size_t p = 1; p <= GW_CHAIN_MAX_PERIOD; p++) {
		size_t j = s;

		if (e - s < GW_CHAIN_MIN_REPEATS * p)
			break;
		for (size_t i = s + p; i <= e; i++) {
			if (i < e && ops[idx[i]].name_id == ops[idx[i - p]].name_id)
				continue;
			/* The stretch [j, i) repeats with period p. */
			if (i - j >= GW_CHAIN_MIN_REPEATS * p)
				for (size_t k = j; k < i; k++)
					ops[idx[k]].flags |= GW_OPF_CHAIN;
			j = i - p + 1;
		}
	}
}

static int fusion_add(struct gw_analyzer *a, struct gw_fusion_cache *fc, unsigned trace,
		      const struct gw_op *ops, const uint32_t *idx, size_t s, unsigned len,
		      unsigned period, uint64_t occ)
{
	uint64_t h1 = 1469598103934665603ull, h2 = period;
	struct gw_fusion_acc *f;
	uint64_t *v;
	unsigned ci;
	bool fresh;

	for (unsigned k = 0; k < period; k++) {
		h1 = (h1 ^ ops[idx[s + k]].name_id) * 1099511628211ull;
		h2 = h2 * 31 + ops[idx[s + k]].name_id;
	}
	ci = (unsigned)(((h1 ^ trace) * 0x9E3779B97F4A7C15ull ^ h2) >> 58);
	if (!fc->idx[ci] || fc->k1[ci] != (h1 ^ trace) || fc->k2[ci] != h2) {
		v = gw_hmap_get(&a->fusion_map, h1 ^ trace, h2, &fresh);
		if (!v)
			return -ENOMEM;
		if (fresh) {
			f = gw_vec_push(&a->fusion, sizeof(*f));
			if (!f)
				return -ENOMEM;
			f->trace = (uint16_t)trace;
			f->n = (uint8_t)period;
			for (unsigned k = 0; k < period; k++)
				f->names[k] = ops[idx[s + k]].name_id;
			if (ops[idx[s]].api != UINT32_MAX)
				f->stack_id =
					((struct gw_api *)a->apis.data)[ops[idx[s]].api].stack_id;
			*v = a->fusion.len;
		}
		fc->k1[ci] = h1 ^ trace;
		fc->k2[ci] = h2;
		fc->idx[ci] = (uint32_t)*v;
	}
	f = &((struct gw_fusion_acc *)a->fusion.data)[fc->idx[ci] - 1];
	f->occurrences += occ;
	for (unsigned k = 0; k < len; k++) {
		const struct gw_op *o = &ops[idx[s + k]];

		f->kernel_ns += o->end_ns - o->start_ns;
		/* Idle time between members of one occurrence (not between occurrences). */
		if (k % period && o->start_ns > ops[idx[s + k - 1]].end_ns)
			f->saved_ns += o->start_ns - ops[idx[s + k - 1]].end_ns;
	}
	return 0;
}

/* Fusion candidates in one stream's run of consecutive tiny kernels idx[s..e). */
static int fusion_run(struct gw_analyzer *a, struct gw_fusion_cache *fc, unsigned trace,
		      const struct gw_op *ops, const uint32_t *idx, size_t s, size_t e)
{
	size_t len = e - s;

	if (len < 2)
		return 0;
	for (unsigned p = 1; p <= GW_FUSION_MAX && 2 * p <= len; p++) {
		size_t i;

		for (i = s + p; i < e; i++)
			if (ops[idx[i]].name_id != ops[idx[i - p]].name_id)
				break;
		if (i < e)
			continue;
		/* Period p: one kernel repeated is fused in pairs at least. */
		unsigned q = p == 1 ? 2 : p;

		return fusion_add(a, fc, trace, ops, idx, s, (unsigned)(len / q * q), q, len / q);
	}
	if (len <= GW_FUSION_MAX)
		return fusion_add(a, fc, trace, ops, idx, s, (unsigned)len, (unsigned)len, 1);
	return 0;
}

int gw_runs_step(struct gw_analyzer *a, struct gw_dev_st *d, const uint32_t *idx, size_t i,
		 size_t m, struct gw_runs *st)
{
	struct gw_op *ops = (struct gw_op *)a->ops.data + d->op_begin;
	const struct gw_op *o = i < m ? &ops[idx[i]] : NULL;
	bool fresh_stream = !o || (i && gw_op_stream(o) != gw_op_stream(&ops[idx[i - 1]]));
	bool cand = o && o->fill < GW_CHAIN_MAX_FILL && !(o->flags & GW_OPF_OVERLAP);
	bool tiny = o && (o->flags & GW_OPF_TINY);
	int r;

	if (st->chain != SIZE_MAX && (!cand || fresh_stream)) {
		mark_chain_segment(ops, idx, st->chain, i);
		st->chain = SIZE_MAX;
	}
	if (cand && st->chain == SIZE_MAX)
		st->chain = i;
	if (st->tiny != SIZE_MAX && (!tiny || fresh_stream)) {
		/* a run is one stream's: one trace's */
		if ((r = fusion_run(a, &st->fc, ops[idx[st->tiny]].trace, ops, idx, st->tiny, i)) <
		    0)
			return r;
		st->tiny = SIZE_MAX;
	}
	if (tiny && st->tiny == SIZE_MAX)
		st->tiny = i;
	return 0;
}

/* Per-stream passes over one device's kernels: chains (maximal runs of under-filled,
 * non-overlapped kernels of one stream) and fusion candidates (runs of tiny kernels of one
 * stream), both found in one walk. */
static int stream_passes(struct gw_analyzer *a, struct gw_dev_st *d, struct gw_op *ops, size_t n,
			 uint32_t *idx, bool streams)
{
	struct gw_runs st = {.chain = SIZE_MAX, .tiny = SIZE_MAX};
	size_t m = 0;
	int r;

	if (!streams) {
		/* One stream: start order is already (stream, start) order, and the walk builds
		 * the kernel index as it goes (runs only look back). */
		for (size_t i = 0; i < n; i++) {
			if (ops[i].kind != GW_OP_KERNEL)
				continue;
			idx[m] = (uint32_t)i;
			if ((r = gw_runs_step(a, d, idx, m, SIZE_MAX, &st)) < 0)
				return r;
			m++;
		}
		return gw_runs_step(a, d, idx, m, m, &st);
	}
	for (size_t i = 0; i < n; i++)
		if (ops[i].kind == GW_OP_KERNEL)
			idx[m++] = (uint32_t)i;
	if (gw_sort_r(idx, m, sizeof(*idx), cmp_stream_idx, ops) < 0)
		return -ENOMEM;
	for (size_t i = 0; i <= m; i++)
		if ((r = gw_runs_step(a, d, idx, i, m, &st)) < 0)
			return r;
	return 0;
}

int gw_find_runs(struct gw_analyzer *a)
{
	struct gw_op *ops = a->ops.data;
	struct gw_dev_st *devs = a->devs.data;
	struct gw_heap h = {0};
	int r = 0;

	h.v = malloc((a->ops.len + 1) * sizeof(*h.v));
	if (!h.v)
		return -ENOMEM;
	for (size_t d = 0; d < a->devs.len && r >= 0; d++) {
		struct gw_dev_st *dv = &devs[d];
		size_t n = dv->op_end - dv->op_begin;

		if (dv->r.start_ns == UINT64_MAX || !n)
			continue;
		if (dv->streams)
			mark_overlaps(ops + dv->op_begin, n, &h);
		if (!dv->runs_done)
			r = stream_passes(a, dv, ops + dv->op_begin, n, a->kidx, dv->streams);
	}
	free(h.v);
	return r;
}
