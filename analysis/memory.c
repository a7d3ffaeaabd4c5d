/* SPDX-License-Identifier: MIT */
/* Stage 6, memory: live device bytes over time, peaks, growth, allocation sites and
 * never-freed allocations. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/*
 * Growth is the least-squares slope of live device bytes over time (the step curve, weighted
 * by how long each level lasted) in the second half of the trace's working span, so that
 * allocations made to set up and frees at teardown are not growth, while what keeps growing
 * as the program works is. The working span is the host's: from its first launch call to
 * its last, where allocations interleave with the work they serve even when the host runs far
 * ahead of the GPU. Without two launch calls it is the GPU's (first to last operation), and
 * without those the memory events' own.
 */
struct growth_fit {
	uint64_t w0, w1;   /* the window */
	uint64_t prev_ns;  /* since when the curve has had prev_bytes */
	double prev_bytes; /* live device bytes since prev_ns */
	double sy, sty;	   /* integrals over the window of y dt and t y dt, t in s from w0 */
};

/* Per trace, [2t] and [2t + 1]: the first and last start of a launch call (UINT64_MAX, 0
 * when it has none). */
static uint64_t *launch_spans(const struct gw_analyzer *a, unsigned n_traces)
{
	const struct gw_api *apis = a->apis.data;
	uint64_t *span = malloc(2 * (n_traces ? n_traces : 1) * sizeof(*span));

	if (!span)
		return NULL;
	for (unsigned t = 0; t < n_traces; t++) {
		span[2 * t] = UINT64_MAX;
		span[2 * t + 1] = 0;
	}
	for (size_t i = 0; i < a->apis.len; i++) {
		const struct gw_api *p = &apis[i];

		if ((p->category != GW_API_LAUNCH && p->category != GW_API_GRAPH_LAUNCH) ||
		    p->trace >= n_traces)
			continue;
		if (p->start_ns < span[2 * p->trace])
			span[2 * p->trace] = p->start_ns;
		if (p->start_ns > span[2 * p->trace + 1])
			span[2 * p->trace + 1] = p->start_ns;
	}
	return span;
}

static void growth_begin(struct growth_fit *g, const struct gw_analyzer *a, unsigned trace,
			 const uint64_t *launches, const uint64_t *mev_span)
{
	const struct gw_dev_st *devs = a->devs.data;
	uint64_t s = launches[2 * trace], e = launches[2 * trace + 1];

	if (s >= e) {
		s = UINT64_MAX;
		e = 0;
		for (size_t d = 0; d < a->devs.len; d++) {
			if (devs[d].r.trace != trace || devs[d].r.start_ns == UINT64_MAX)
				continue;
			if (devs[d].r.start_ns < s)
				s = devs[d].r.start_ns;
			if (devs[d].r.end_ns > e)
				e = devs[d].r.end_ns;
		}
	}
	if (s >= e) {
		s = mev_span[2 * trace];
		e = mev_span[2 * trace + 1];
	}
	*g = (struct growth_fit){.w0 = s + (e - s) / 2, .w1 = e, .prev_ns = s};
}

/* The curve held prev_bytes from prev_ns to t: add the part inside the window. */
static void growth_step(struct growth_fit *g, uint64_t t, double bytes)
{
	uint64_t a = g->prev_ns > g->w0 ? g->prev_ns : g->w0, b = t < g->w1 ? t : g->w1;

	if (b > a) {
		double x0 = (double)(a - g->w0) * 1e-9, x1 = (double)(b - g->w0) * 1e-9;

		g->sy += g->prev_bytes * (x1 - x0);
		g->sty += g->prev_bytes * (x1 * x1 - x0 * x0) / 2;
	}
	if (t > g->prev_ns)
		g->prev_ns = t;
	g->prev_bytes = bytes;
}

/* Slope = integral of (t - T/2)(y - mean) dt over integral of (t - T/2)^2 dt, = (sty -
 * T/2 sy) / (T^3 / 12); 0 for an empty window. Under a byte a second it is the rounding of
 * a flat curve's two large integrals, and reads 0. */
static double growth_end(struct growth_fit *g)
{
	double span = (double)(g->w1 - g->w0) * 1e-9, slope;

	growth_step(g, g->w1, g->prev_bytes);
	if (!(span > 0))
		return 0;
	slope = (g->sty - span / 2 * g->sy) / (span * span * span / 12);
	return fabs(slope) < 1 ? 0 : slope;
}

/* Whether an allocation of kind k is device memory of its own: not managed or pinned host
 * memory, and not a caching allocator's block (which lives inside what the allocator holds). */
static bool device_kind(unsigned k)
{
	return k != GW_MEM_MANAGED && k != GW_MEM_HOST_PINNED && k != GW_MEM_TENSOR;
}

/* A device's memory: the larger of its live allocations and what a caching allocator said it
 * held. */
static uint64_t dev_mem(const struct gw_dev_st *d)
{
	uint64_t v = d->live_bytes > d->reserved_bytes ? d->live_bytes : d->reserved_bytes;

	return d->allocated_bytes > v ? d->allocated_bytes : v;
}

/* Sets a device's live or reserved bytes to v, moving the trace's sum *cur with it. */
static void dev_set(struct gw_dev_st *d, uint64_t *field, uint64_t v, uint64_t *cur)
{
	uint64_t before = dev_mem(d);

	*field = v;
	*cur = *cur - before + dev_mem(d);
	if (dev_mem(d) > d->peak_bytes)
		d->peak_bytes = dev_mem(d);
}

/* The event view's live-memory counter: device di's live bytes from t on. */
static int view_memory(struct gw_analyzer *a, unsigned di, uint64_t t)
{
	struct gw_view_step *s = gw_vec_push(&a->vmem, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*s = (struct gw_view_step){
		.device = di,
		.time_ns = t,
		.value = (double)dev_mem(&((struct gw_dev_st *)a->devs.data)[di]),
	};
	return 0;
}

/* Device di's tensor blocks changed: without the allocator's own counter they are its
 * allocated bytes. */
static int tensors_moved(struct gw_analyzer *a, int di, uint64_t t, uint64_t *cur)
{
	struct gw_dev_st *d = &((struct gw_dev_st *)a->devs.data)[di];

	if (d->allocated_counter)
		return 0;
	dev_set(d, &d->allocated_bytes, d->tensor_bytes, cur);
	return a->opt.keep_events ? view_memory(a, (unsigned)di, t) : 0;
}

/* Live device bytes over time, peaks, growth, allocation sites and never-freed allocations. */
/* Each trace's memory as the one pass over all events (in time order) meets it. */
struct trace_mem {
	uint64_t cur, managed, pinned, peak;
	struct growth_fit growth;
	bool seen;
};

/*
 * Live device bytes over time, peaks, growth, allocation sites and never-freed allocations, in
 * one pass over the memory events in time order: a GPU several processes shared holds their
 * allocations at once.
 */
int gw_account_memory(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	struct gw_mev *m = a->mevs.data;
	struct gw_dev_st *devs;
	struct gw_hmap live = {0};
	size_t n_traces = a->traces.len ? a->traces.len : 1;
	uint64_t *launches = launch_spans(a, (unsigned)a->traces.len);
	uint64_t *mev_span = malloc(2 * n_traces * sizeof(*mev_span));
	struct trace_mem *tm = calloc(n_traces, sizeof(*tm));
	int r = 0;

	if (!launches || !mev_span || !tm) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < n_traces; t++) {
		mev_span[2 * t] = UINT64_MAX;
		mev_span[2 * t + 1] = 0;
	}
	for (size_t i = 0; i < a->mevs.len; i++) {
		if (m[i].time_ns < mev_span[2 * m[i].trace])
			mev_span[2 * m[i].trace] = m[i].time_ns;
		if (m[i].time_ns > mev_span[2 * m[i].trace + 1])
			mev_span[2 * m[i].trace + 1] = m[i].time_ns;
	}
	{
		size_t i = 0;

		for (; i < a->mevs.len; i++) {
			unsigned trace = m[i].trace;
			struct trace_mem *T = &tm[trace];
			uint64_t cur, managed, pinned, peak;
			struct growth_fit growth;

			if (!T->seen) {
				T->seen = true;
				growth_begin(&T->growth, a, trace, launches, mev_span);
			}
			cur = T->cur, managed = T->managed, pinned = T->pinned, peak = T->peak;
			growth = T->growth;
			{
				const struct gw_mev *e = &m[i];
				bool device_mem = device_kind(e->kind);
				int di = gw_an_device(a, trace, e->device);
				uint64_t *v;
				struct gw_alloc_acc *acc;
				bool fresh;

				if (di < 0) {
					r = di;
					goto out;
				}
				devs = a->devs.data;
				if (e->op == GW_MEV_ALLOCATED) {
					devs[di].allocated_counter = true;
					dev_set(&devs[di], &devs[di].allocated_bytes, e->bytes,
						&cur);
					if (e->bytes > devs[di].allocated_peak_bytes)
						devs[di].allocated_peak_bytes = e->bytes;
					if (a->opt.keep_events &&
					    (r = view_memory(a, (unsigned)di, e->time_ns)) < 0)
						goto out;
					device_mem = true;
				} else if (e->op == GW_MEV_RESERVED) {
					dev_set(&devs[di], &devs[di].reserved_bytes, e->bytes,
						&cur);
					if (e->bytes > devs[di].reserved_peak_bytes)
						devs[di].reserved_peak_bytes = e->bytes;
					if (a->opt.keep_events &&
					    (r = view_memory(a, (unsigned)di, e->time_ns)) < 0)
						goto out;
					device_mem = true;
				} else if (e->op == GW_MEMORY_ALLOC) {
					v = gw_hmap_get(&a->alloc_map,
							((uint64_t)trace << 8) | e->kind,
							e->stack_id, &fresh);
					if (!v) {
						r = -ENOMEM;
						goto out;
					}
					if (fresh) {
						acc = gw_vec_push(&a->allocs, sizeof(*acc));
						if (!acc) {
							r = -ENOMEM;
							goto out;
						}
						acc->trace = (uint16_t)trace;
						acc->kind = e->kind;
						acc->stack_id = e->stack_id;
						*v = a->allocs.len;
					}
					acc = &((struct gw_alloc_acc *)a->allocs.data)[*v - 1];
					acc->count++;
					acc->bytes += e->bytes;
					if (e->bytes > acc->max_bytes)
						acc->max_bytes = e->bytes;
					/* Live entry: (bytes, site index, dev, kind) packed into two words. */
					v = gw_hmap_get(&live, trace, e->addr, &fresh);
					if (!v) {
						r = -ENOMEM;
						goto out;
					}
					if (!fresh)
						goto next; /* address reused without a free we saw: keep the first */
					*v = ((uint64_t)(acc -
							 (struct gw_alloc_acc *)a->allocs.data)
					      << 40) |
					     ((uint64_t)(unsigned)di << 24) |
					     ((uint64_t)e->kind << 16);
					/* bytes do not fit beside the rest: store them in a second entry */
					v = gw_hmap_get(&live, trace | (1ull << 32), e->addr, NULL);
					if (!v) {
						r = -ENOMEM;
						goto out;
					}
					*v = e->bytes;
					if (device_mem) {
						dev_set(&devs[di], &devs[di].live_bytes,
							devs[di].live_bytes + e->bytes, &cur);
						if (a->opt.keep_events &&
						    (r = view_memory(a, (unsigned)di, e->time_ns)) <
							    0)
							goto out;
					} else if (e->kind == GW_MEM_MANAGED) {
						managed += e->bytes;
					} else if (e->kind == GW_MEM_TENSOR) {
						devs[di].tensor_bytes += e->bytes;
						if (devs[di].tensor_bytes >
						    devs[di].allocated_peak_bytes)
							devs[di].allocated_peak_bytes =
								devs[di].tensor_bytes;
						if ((r = tensors_moved(a, di, e->time_ns, &cur)) <
						    0)
							goto out;
						device_mem = !devs[di].allocated_counter;
					} else {
						pinned += e->bytes;
					}
				} else {
					uint64_t *info = gw_hmap_find(&live, trace, e->addr);
					uint64_t *bytes =
						gw_hmap_find(&live, trace | (1ull << 32), e->addr);
					uint64_t b, packed;
					unsigned k, odi;

					if (!info || !bytes)
						goto next; /* freeing what we never saw allocated */
					b = *bytes;
					packed = *info;
					k = (unsigned)(packed >> 16) & 0xff;
					odi = (unsigned)(packed >> 24) & 0xffff;
					gw_hmap_del(&live, trace, e->addr);
					gw_hmap_del(&live, trace | (1ull << 32), e->addr);
					if (device_kind(k)) {
						dev_set(&devs[odi], &devs[odi].live_bytes,
							devs[odi].live_bytes - b, &cur);
						if (a->opt.keep_events &&
						    (r = view_memory(a, odi, e->time_ns)) < 0)
							goto out;
					} else if (k == GW_MEM_MANAGED) {
						managed -= b;
					} else if (k == GW_MEM_TENSOR) {
						devs[odi].tensor_bytes -= b;
						if ((r = tensors_moved(a, (int)odi, e->time_ns,
								       &cur)) < 0)
							goto out;
					} else {
						pinned -= b;
					}
					device_mem =
						device_kind(k) || (k == GW_MEM_TENSOR &&
								   !devs[odi].allocated_counter);
				}
				if (cur > peak)
					peak = cur;
				if (managed > res->memory.managed_peak_bytes)
					res->memory.managed_peak_bytes = managed;
				if (pinned > res->memory.pinned_peak_bytes)
					res->memory.pinned_peak_bytes = pinned;
				if (!device_mem)
					goto next;
				growth_step(&growth, e->time_ns, (double)cur);
				if (res->n_bins) {
					uint64_t b =
						e->time_ns > res->start_ns
							? (e->time_ns - res->start_ns) / res->bin_ns
							: 0;

					if (b < res->n_bins && cur > res->bins[b].live_bytes_max)
						res->bins[b].live_bytes_max = cur;
				}
			}
		next:
			T->cur = cur, T->managed = managed, T->pinned = pinned, T->peak = peak;
			T->growth = growth;
		}
	}
	for (size_t t = 0; t < n_traces && t < a->traces.len; t++) {
		if (!tm[t].seen)
			continue;
		gw_an_trace(a, (unsigned)t)->info.peak_bytes = tm[t].peak;
		res->memory.final_bytes += tm[t].cur;
		res->memory.growth_bytes_per_s += growth_end(&tm[t].growth);
	}
	/* What is still live was never freed. */
	for (size_t s = 0; s < live.cap; s++) {
		struct gw_hmap_slot *sl = &live.slots[s];
		struct gw_alloc_acc *acc;
		uint64_t *bytes;

		if (!sl->used || (sl->k1 >> 32))
			continue;
		bytes = gw_hmap_find(&live, sl->k1 | (1ull << 32), sl->k2);
		acc = &((struct gw_alloc_acc *)a->allocs.data)[sl->value >> 40];
		acc->never_freed++;
		acc->never_freed_bytes += bytes ? *bytes : 0;
		res->memory.never_freed++;
		res->memory.never_freed_bytes += bytes ? *bytes : 0;
	}
	devs = a->devs.data;
	for (size_t d = 0; d < a->traces.len; d++)
		res->memory.recorded |= gw_an_trace(a, (unsigned)d)->memory_recorded;
	for (size_t d = 0; d < a->devs.len; d++) {
		double frac;

		res->memory.allocator_reserved_peak_bytes += devs[d].reserved_peak_bytes;
		res->memory.allocator_allocated_peak_bytes += devs[d].allocated_peak_bytes;
		/* CUPTI's buffers: the most any one GPU holds (each GPU's memory is its own) */
		if (devs[d].cupti_bytes > res->memory.cupti_buffer_bytes)
			res->memory.cupti_buffer_bytes = devs[d].cupti_bytes;
		if (devs[d].cupti_limit_bytes > res->memory.cupti_buffer_limit_bytes)
			res->memory.cupti_buffer_limit_bytes = devs[d].cupti_limit_bytes;
		devs[d].r.peak_bytes = devs[d].peak_bytes;
		if (devs[d].peak_bytes > res->memory.peak_bytes) {
			res->memory.peak_bytes = devs[d].peak_bytes;
			if (!res->memory.total_bytes)
				res->memory.total_bytes = devs[d].r.memory_total_bytes;
		}
		if (!devs[d].r.memory_total_bytes)
			continue;
		frac = (double)devs[d].peak_bytes / (double)devs[d].r.memory_total_bytes;
		if (frac >= res->memory.peak_fraction) {
			res->memory.peak_fraction = frac;
			res->memory.total_bytes = devs[d].r.memory_total_bytes;
		}
	}
	if (!res->memory.total_bytes)
		for (size_t d = 0; d < a->devs.len; d++)
			if (devs[d].r.memory_total_bytes) {
				res->memory.total_bytes = devs[d].r.memory_total_bytes;
				break;
			}
	/* Bins without an event keep the level of the bin before. */
	for (unsigned b = 1; b < res->n_bins; b++)
		if (!res->bins[b].live_bytes_max)
			res->bins[b].live_bytes_max = res->bins[b - 1].live_bytes_max;
out:
	gw_hmap_free(&live);
	free(launches);
	free(mev_span);
	free(tm);
	return r;
}
