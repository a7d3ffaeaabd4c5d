/* SPDX-License-Identifier: MIT */
/* Stage 7, results: the report model's rows — per trace and per device, counts, the merged
 * breakdown, the quadrant's inputs, the warnings and the steps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The top idle bucket is GW_BUCKET_COUNT (none) when no SM-time was idle: naming the first
 * of the buckets that all tie at 0 would mislead. */
static void pick_dominant(const double *bd, enum gw_bucket *dom, enum gw_bucket *idle)
{
	int best = 0, best_idle = GW_BUCKET_COUNT;

	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (bd[b] > bd[best])
			best = b;
		if (b != GW_BUCKET_COMPUTE && bd[b] > 0 &&
		    (best_idle == GW_BUCKET_COUNT || bd[b] > bd[best_idle]))
			best_idle = b;
	}
	*dom = (enum gw_bucket)best;
	*idle = (enum gw_bucket)best_idle;
}

static int add_warning(struct gw_analysis *res, char *text)
{
	char **w;

	if (!text)
		return -ENOMEM;
	w = realloc(res->warnings, (res->n_warnings + 1) * sizeof(*w));
	if (!w) {
		free(text);
		return -ENOMEM;
	}
	res->warnings = w;
	res->warnings[res->n_warnings++] = text;
	return 0;
}

/* Whether trace t used device d: its own, or a GPU it shared with the trace that owns it. A
 * shared GPU is in each sharer's row; the merged view counts it once. */
static bool used_by(const struct gw_dev_st *d, unsigned t)
{
	if (d->r.trace == t)
		return true;
	for (size_t i = 0; i < d->sharers.len; i++)
		if (((const uint16_t *)d->sharers.data)[i] == t)
			return true;
	return false;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return p < q ? -1 : p > q;
}

static int cmp_double(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

/* The median of n sorted values: the middle one, or the mean of the middle two. */
static double median_of(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The SMs of the devices trace t used. */
static double trace_sms(const struct gw_analyzer *a, unsigned t)
{
	const struct gw_dev_st *devs = a->devs.data;
	double sms = 0;

	for (size_t d = 0; d < a->devs.len; d++)
		if (devs[d].r.budget_sm_ns > 0 && used_by(&devs[d], t))
			sms += (double)devs[d].lim.sm_count;
	return sms;
}

/* The most frequent range names, when no step matched: what a --steps pattern could name. */
static int top_names(struct gw_analyzer *a, struct gw_steps *s)
{
	const struct gw_range_name *names = a->range_names.data;
	unsigned want = a->range_names.len < 5 ? (unsigned)a->range_names.len : 5;
	bool *taken = calloc(a->range_names.len + 1, sizeof(*taken));

	s->names = calloc(want + 1u, sizeof(*s->names));
	s->name_counts = calloc(want + 1u, sizeof(*s->name_counts));
	if (!taken || !s->names || !s->name_counts) {
		free(taken);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < want; k++) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < a->range_names.len; i++)
			if (!taken[i] && (best == SIZE_MAX || names[i].count > names[best].count))
				best = i;
		taken[best] = true;
		if (!(s->names[k] = strdup(names[best].text ? names[best].text : "?"))) {
			free(taken);
			return -ENOMEM;
		}
		s->name_counts[k] = names[best].count;
		s->n_names = k + 1;
	}
	free(taken);
	return 0;
}

/* The slowest steps over the median, the bucket that grew the most in each, and what gave
 * most of that bucket's time (the sweep watched them). */
static void slow_steps(struct gw_analyzer *a, struct gw_steps *s)
{
	const struct gw_step_st *st = a->steps.data;

	for (unsigned w = 1; w <= a->n_watch; w++) {
		unsigned i;
		const struct gw_step *p;
		struct gw_slow_step *o;
		const struct gw_contrib *top = NULL;
		int best = GW_BUCKET_COMPUTE;

		for (i = 0; i < s->n && st[i].watch != w; i++)
			;
		/* a tenth over the median is a step's ordinary spread, not a slow step */
		if (i == s->n || s->steps[i].duration_ns <= s->median_ns + s->median_ns / 10)
			continue;
		p = &s->steps[i];
		for (int b = 0; b < GW_BUCKET_COUNT; b++)
			if (p->device_ns * p->breakdown[b] - s->median_bucket_ns[b] >
			    p->device_ns * p->breakdown[best] - s->median_bucket_ns[best])
				best = b;
		o = &s->slow[s->n_slow];
		o->step = i;
		o->over_ns = (int64_t)(p->duration_ns - s->median_ns);
		o->bucket = (enum gw_bucket)best;
		o->bucket_over_ns = p->device_ns * p->breakdown[best] - s->median_bucket_ns[best];
		/* GPU time that grew by a fifth of the wall time or less does not explain it: the
		 * host's range outlasted its GPU work (the host ran ahead, or the window ended) */
		if (o->bucket_over_ns <= 0.2 * (double)o->over_ns) {
			o->bucket = GW_BUCKET_COUNT;
			a->slow_who[s->n_slow] = (struct gw_contrib){0};
			s->n_slow++;
			continue;
		}
		for (int k = 0; k < GW_STEP_CONTRIBUTORS; k++) {
			const struct gw_contrib *c = &a->watch[w - 1].top[best][k];

			if (c->kind && (!top || c->sm_ns > top->sm_ns))
				top = c;
		}
		a->slow_who[s->n_slow] = top ? *top : (struct gw_contrib){0};
		s->n_slow++;
	}
	/* slowest first */
	for (unsigned x = 1; x < s->n_slow; x++)
		for (unsigned y = x; y > 0 && s->slow[y].over_ns > s->slow[y - 1].over_ns; y--) {
			struct gw_slow_step t = s->slow[y];
			struct gw_contrib c = a->slow_who[y];

			s->slow[y] = s->slow[y - 1];
			s->slow[y - 1] = t;
			a->slow_who[y] = a->slow_who[y - 1];
			a->slow_who[y - 1] = c;
		}
}

static int cmp_step_time(const void *x, const void *y, void *ctx)
{
	const struct gw_step_st *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* The steps of the report model: each step's figures, and the summary over them. */
static int step_results(struct gw_analyzer *a)
{
	struct gw_steps *s = &a->res->steps;
	const struct gw_step_st *st = a->steps.data;
	const struct gw_range_name *names = a->range_names.data;
	double total = 0, *v;
	uint64_t *d, sum = 0;

	s->ranges = a->ranges.len;
	/* by trace, then start: the order of the report (the ops' step indices are spent) */
	if (gw_sort_r(a->steps.data, a->steps.len, sizeof(*st), cmp_step_time, NULL) < 0)
		return -ENOMEM;
	if (!(s->pattern = strdup(a->opt.steps_pattern ? a->opt.steps_pattern : GW_STEPS_DEFAULT)))
		return -ENOMEM;
	if (!a->steps.len)
		return a->range_names.len ? top_names(a, s) : 0;
	if (!(s->steps = calloc(a->steps.len, sizeof(*s->steps))) ||
	    !(s->slow = calloc(GW_STEP_WATCHED, sizeof(*s->slow))))
		return -ENOMEM;
	s->n = (unsigned)a->steps.len;
	for (unsigned i = 0; i < s->n; i++) {
		struct gw_step *o = &s->steps[i];
		double sm = 0, sms = trace_sms(a, st[i].trace);

		if (!(o->name = strdup(names[st[i].name].text)))
			return -ENOMEM;
		o->trace = st[i].trace;
		o->tid = st[i].tid;
		o->start_ns = st[i].start_ns;
		o->end_ns = st[i].end_ns;
		o->duration_ns = st[i].end_ns - st[i].start_ns;
		o->ops = st[i].ops;
		for (int b = 0; b < GW_BUCKET_COUNT; b++) {
			o->sm_ns[b] = st[i].sm_ns[b];
			sm += st[i].sm_ns[b];
			s->mean_breakdown[b] += st[i].sm_ns[b];
		}
		for (int b = 0; b < GW_BUCKET_COUNT && sm > 0; b++)
			o->breakdown[b] = o->sm_ns[b] / sm;
		o->device_ns = sms > 0 ? sm / sms : 0;
		total += sm;
		sum += o->duration_ns;
	}
	for (int b = 0; b < GW_BUCKET_COUNT && total > 0; b++)
		s->mean_breakdown[b] /= total;
	s->sm_share = a->res->budget_sm_ns > 0 ? total / a->res->budget_sm_ns : 0;
	s->mean_ns = sum / s->n;
	d = malloc(s->n * sizeof(*d));
	v = malloc(s->n * sizeof(*v));
	if (!d || !v) {
		free(d);
		free(v);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < s->n; i++)
		d[i] = s->steps[i].duration_ns;
	qsort(d, s->n, sizeof(*d), cmp_u64);
	s->median_ns = s->n % 2 ? d[s->n / 2] : d[s->n / 2 - 1] / 2 + d[s->n / 2] / 2;
	s->p90_ns = d[(s->n * 9 + 9) / 10 - 1];
	s->max_ns = d[s->n - 1];
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		double m = 0;

		for (unsigned i = 0; i < s->n; i++) {
			v[i] = s->steps[i].device_ns * s->steps[i].breakdown[b];
			m += v[i];
		}
		qsort(v, s->n, sizeof(*v), cmp_double);
		s->median_bucket_ns[b] = median_of(v, s->n);
		s->mean_bucket_ns[b] = m / s->n;
	}
	free(d);
	free(v);
	slow_steps(a, s);
	return 0;
}

int gw_build_results(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	struct gw_dev_st *devs = a->devs.data;
	const struct gw_api *apis = a->apis.data;
	double filled = 0, active = 0;
	int r;

	/* the inputs' own warnings first: what was left out of what follows */
	for (size_t i = 0; i < a->warnings.len; i++) {
		char **w = &((char **)a->warnings.data)[i];
		int e = add_warning(a->res, *w);

		*w = NULL;
		if (e < 0)
			return e;
	}

	/* Every api that may wait is a candidate, unless sorting moved them or the join made a
	 * non-copy call wait. */
	bool all = a->apis_resorted || a->sync_outside;
	const uint32_t *cand = a->sync_apis.data;
	size_t n = all ? a->apis.len : a->sync_apis.len;

	for (size_t c = 0; c < n; c++) {
		size_t i = all ? c : cand[c];

		if (apis[i].sync_kind != GW_SYNC_NONE) {
			gw_an_trace(a, apis[i].trace)->info.counts.host_syncs++;
			gw_an_trace(a, apis[i].trace)
				->info.counts
				.syncs_by_kind[apis[i].sync_kind <= GW_SYNC_POLL ? apis[i].sync_kind
										 : 0]++;
		}
	}

	/* the counts only with their arrays: freeing a result walks what they say */
	res->devices = calloc(a->devs.len + 1u, sizeof(*res->devices));
	res->traces = calloc(a->traces.len + 1u, sizeof(*res->traces));
	if (!res->devices || !res->traces)
		return -ENOMEM;
	res->n_devices = (unsigned)a->devs.len;
	res->n_traces = (unsigned)a->traces.len;
	for (unsigned t = 0; t < res->n_traces; t++) {
		struct gw_trace_st *ts = gw_an_trace(a, t);
		struct gw_trace_info *ti = &res->traces[t];
		double sm[GW_BUCKET_COUNT] = {0}, budget = 0;
		bool imported;

		*ti = ts->info;
		memset(&ts->info, 0, sizeof(ts->info)); /* strings now owned by res */
		ti->dropped_records =
			ts->drops_sum > ts->footer_dropped ? ts->drops_sum : ts->footer_dropped;
		ti->clean_exit = ts->footer_seen || (ts->have_end_status && ts->reader_said_clean);
		ti->start_ns = UINT64_MAX;
		for (size_t d = 0; d < a->devs.len; d++) {
			if (!used_by(&devs[d], t) || devs[d].r.start_ns == UINT64_MAX)
				continue;
			for (int b = 0; b < GW_BUCKET_COUNT; b++)
				sm[b] += devs[d].r.sm_ns[b];
			budget += devs[d].r.budget_sm_ns;
			if (devs[d].r.start_ns < ti->start_ns)
				ti->start_ns = devs[d].r.start_ns;
			if (devs[d].r.end_ns > ti->end_ns)
				ti->end_ns = devs[d].r.end_ns;
		}
		if (ti->start_ns == UINT64_MAX)
			ti->start_ns = 0;
		for (int b = 0; b < GW_BUCKET_COUNT && budget > 0; b++)
			ti->breakdown[b] = sm[b] / budget;
		pick_dominant(ti->breakdown, &ti->dominant, &ti->top_idle);

		res->counts.kernels += ti->counts.kernels;
		res->counts.tiny_kernels += ti->counts.tiny_kernels;
		res->counts.launches += ti->counts.launches;
		res->counts.host_syncs += ti->counts.host_syncs;
		res->counts.memcpy += ti->counts.memcpy;
		res->counts.memset += ti->counts.memset;
		res->counts.allocations += ti->counts.allocations;
		res->counts.frees += ti->counts.frees;
		res->counts.captured_launches += ti->counts.captured_launches;
		res->counts.poll_queries += ti->counts.poll_queries;
		res->counts.host_functions += ti->counts.host_functions;
		res->counts.value_waits += ti->counts.value_waits;
		res->counts.peer_copies += ti->counts.peer_copies;
		for (int k = 0; k < 5; k++)
			res->counts.syncs_by_kind[k] += ti->counts.syncs_by_kind[k];
		res->startup.context_ns += ts->startup_totals.context_ns;
		res->startup.contexts += ts->startup_totals.contexts;
		res->startup.loading_ns += ts->startup_totals.loading_ns;
		res->startup.loadings += ts->startup_totals.loadings;
		res->startup.compile_ns += ts->startup_totals.compile_ns;
		res->startup.compiles += ts->startup_totals.compiles;

		imported = ti->capture_mode == GW_CAPTURE_IMPORT_KINETO ||
			   ti->capture_mode == GW_CAPTURE_IMPORT_NSYS;
		/* an imported file's cut is said by its source's own note, with the byte */
		if (ti->truncated && !imported &&
		    (r = add_warning(res,
				     gw_strdupf("%s: the trace is truncated (the process died, "
						"is still running, or its writes failed: a "
						"full disk, a file-size limit); analysed up "
						"to its last complete frame",
						ti->path))) < 0)
			return r;
		if (ti->untimed_gpu_ops &&
		    (r = add_warning(res, gw_strdupf("%s: %llu GPU operations came without "
						     "timestamps (CUPTI could not time them): "
						     "counted, not placed on the timeline",
						     ti->path,
						     (unsigned long long)ti->untimed_gpu_ops))) < 0)
			return r;
		if (ti->dropped_records &&
		    (r = add_warning(
			     res, gw_strdupf("%s: %llu records were dropped during capture; "
					     "the figures undercount",
					     ti->path, (unsigned long long)ti->dropped_records))) <
			    0)
			return r;
		for (size_t m = 0; m < ts->notes.len; m++) {
			const char *note = ((char **)ts->notes.data)[m];

			if ((r = add_warning(res, gw_strdupf("%s: %s: %s", ti->path,
							     imported ? "import" : "capture",
							     note))) < 0)
				return r;
		}
	}
	for (size_t d = 0; d < a->devs.len; d++) {
		struct gw_device_result *o = &res->devices[d];

		*o = devs[d].r;
		devs[d].r.name = NULL;
		if (o->start_ns == UINT64_MAX)
			o->start_ns = o->end_ns = 0;
		for (int b = 0; b < GW_BUCKET_COUNT; b++) {
			res->sm_ns[b] += o->sm_ns[b];
			if (o->budget_sm_ns > 0)
				o->breakdown[b] = o->sm_ns[b] / o->budget_sm_ns;
		}
		res->budget_sm_ns += o->budget_sm_ns;
		active += (double)o->kernel_active_ns * (double)o->sm_count;
		filled += devs[d].fill_sm_ns;
		if (!o->described && o->budget_sm_ns > 0 &&
		    (r = add_warning(
			     res,
			     gw_strdupf("device %llu of %s has no device record: its limits "
					"are assumed, an H100 SXM's (%llu SMs, %llu threads, %llu "
					"Ki registers, %llu KiB shared per SM)",
					(unsigned long long)o->id, res->traces[o->trace].path,
					(unsigned long long)gw_assumed_limits.sm_count,
					(unsigned long long)gw_assumed_limits.max_threads_per_sm,
					(unsigned long long)gw_assumed_limits.regs_per_sm / 1024,
					(unsigned long long)gw_assumed_limits.smem_per_sm_bytes /
						1024))) < 0)
			return r;
	}
	if (res->budget_sm_ns > 0) {
		for (int b = 0; b < GW_BUCKET_COUNT; b++)
			res->breakdown[b] = res->sm_ns[b] / res->budget_sm_ns;
		res->util.kernel_active = active / res->budget_sm_ns;
		res->util.sm_busy = filled / res->budget_sm_ns;
	} else if ((r = add_warning(res, strdup("no GPU operation in the trace: nothing to "
						"attribute"))) < 0) {
		return r;
	}
	pick_dominant(res->breakdown, &res->dominant, &res->top_idle);
	res->util.compute = res->breakdown[GW_BUCKET_COMPUTE];
	res->unclassified_kernel_share =
		a->kernel_ns ? (double)a->unclassified_ns / (double)a->kernel_ns : 0;
	return step_results(a);
}
