/* SPDX-License-Identifier: MIT */
/* Two analyses compared: per bucket, per step or per run, the sites that changed, a verdict. */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Windows further apart than this, with no steps to compare, get a warning. */
#define GW_DIFF_WINDOW_RATIO	   2.0
/* Runs sharing less of their kernel time than this by kernel name get a warning. */
#define GW_DIFF_MIN_KERNEL_OVERLAP 0.5

const char *gw_diff_site_key(enum gw_diff_site_kind kind)
{
	static const char *const keys[] = {
		[GW_DIFF_SYNC] = "sync",
		[GW_DIFF_HOST_AFTER_SYNC] = "host_work_after_sync",
		[GW_DIFF_TINY_KERNEL] = "tiny_kernel",
		[GW_DIFF_ALLOCATION] = "allocation",
	};

	return kind < GW_DIFF_SITE_KINDS ? keys[kind] : "?";
}

static double side_sms(const struct gw_analysis *a)
{
	double sms = 0;

	for (unsigned d = 0; d < a->n_devices; d++)
		if (a->devices[d].budget_sm_ns > 0)
			sms += (double)a->devices[d].sm_count;
	return sms;
}

static void side_init(struct gw_diff_side *s, const struct gw_analysis *a, bool per_step)
{
	const struct gw_steps *st = &a->steps;
	int idle = GW_BUCKET_COUNT;

	s->a = a;
	s->steps = st->n;
	s->sms = side_sms(a);
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (per_step) {
			double sm = 0;

			for (unsigned i = 0; i < st->n; i++)
				sm += st->steps[i].sm_ns[b];
			s->share[b] = st->mean_breakdown[b];
			s->sm_ns[b] = sm / st->n;
			s->device_ns[b] = st->mean_bucket_ns[b];
		} else {
			s->share[b] = a->breakdown[b];
			s->sm_ns[b] = a->sm_ns[b];
			s->device_ns[b] = s->sms > 0 ? a->sm_ns[b] / s->sms : 0;
		}
		/* under half a percent is not a cause worth naming */
		if (b != GW_BUCKET_COMPUTE && s->share[b] >= 0.005 &&
		    (idle == GW_BUCKET_COUNT || s->share[b] > s->share[idle]))
			idle = b;
	}
	s->top_idle = (enum gw_bucket)idle;
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		s->gpu_ns += s->device_ns[b];
	s->wall_ns = per_step ? (double)st->median_ns : (double)(a->end_ns - a->start_ns);
}

/* A site as the comparison keys it. */
struct entry {
	enum gw_diff_site_kind kind;
	const char *name, *function, *file, *where;
	double value, count;
};

static bool same_text(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* The same site: what it is, and its function and file (or its text, without a function). */
static bool same_site(const struct entry *x, const struct entry *y)
{
	if (x->kind != y->kind || !same_text(x->name, y->name))
		return false;
	if (x->kind == GW_DIFF_TINY_KERNEL)
		return true; /* a kernel is its name; its launch stacks are sampled */
	if (!x->function || !y->function)
		return !x->function && !y->function && same_text(x->where, y->where);
	return same_text(x->function, y->function) && same_text(x->file, y->file);
}

/* Adds a site, or adds to the one already there with its key. */
static int put(struct gw_vec *v, const struct entry *e)
{
	struct entry *p = v->data;

	for (size_t i = 0; i < v->len; i++)
		if (same_site(&p[i], e)) {
			p[i].value += e->value;
			p[i].count += e->count;
			return 0;
		}
	if (!(p = gw_vec_push(v, sizeof(*p))))
		return -ENOMEM;
	*p = *e;
	return 0;
}

/* The sites of one side, per step when div is the step count. */
static int side_sites(const struct gw_analysis *a, double div, struct gw_vec *v)
{
	int r = 0;

	for (unsigned i = 0; i < a->n_sync_sites && r >= 0; i++) {
		const struct gw_sync_site *s = &a->sync_sites[i];
		struct entry e = {GW_DIFF_SYNC,		 s->api,       s->site.function,
				  s->site.file,		 s->site.text, (double)s->exposed_ns / div,
				  (double)s->count / div};

		r = put(v, &e);
		e.kind = GW_DIFF_HOST_AFTER_SYNC;
		e.value = (double)s->host_work_after_ns / div;
		if (r >= 0 && s->host_work_after_ns)
			r = put(v, &e);
	}
	for (unsigned i = 0; i < a->n_tiny_kernels && r >= 0; i++) {
		const struct gw_tiny_kernel *t = &a->tiny_kernels[i];
		struct entry e = {GW_DIFF_TINY_KERNEL,	 t->name,
				  t->site.function,	 t->site.file,
				  t->site.text,		 (double)t->gap_before_ns / div,
				  (double)t->count / div};

		r = put(v, &e);
	}
	for (unsigned i = 0; i < a->n_alloc_sites && r >= 0; i++) {
		const struct gw_alloc_site *s = &a->alloc_sites[i];
		struct entry e = {GW_DIFF_ALLOCATION,	 gw_mem_kind_name(s->kind)->key,
				  s->site.function,	 s->site.file,
				  s->site.text,		 (double)s->bytes / div,
				  (double)s->count / div};

		r = put(v, &e);
	}
	return r;
}

static int cmp_site(const void *x, const void *y)
{
	const struct gw_diff_site *p = x, *q = y;
	double dp = fabs(p->after - p->before), dq = fabs(q->after - q->before);

	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	if (dp != dq)
		return dp > dq ? -1 : 1;
	return fabs(p->after_count - p->before_count) > fabs(q->after_count - q->before_count) ? -1
											       : 1;
}

/* Both sides' sites matched, the most changed of each kind kept. */
static int match_sites(struct gw_diff *d)
{
	struct gw_vec bv = {0}, av = {0}, out = {0};
	double bdiv = d->per_step ? d->before.steps : 1, adiv = d->per_step ? d->after.steps : 1;
	struct entry *be, *ae;
	bool *used = NULL;
	unsigned kept[GW_DIFF_SITE_KINDS] = {0};
	int r;

	if ((r = side_sites(d->before.a, bdiv, &bv)) < 0 ||
	    (r = side_sites(d->after.a, adiv, &av)) < 0)
		goto out;
	be = bv.data;
	ae = av.data;
	r = -ENOMEM;
	if (!(used = calloc(av.len + 1, sizeof(*used))))
		goto out;
	for (size_t i = 0; i < bv.len + av.len; i++) {
		const struct entry *x = i < bv.len ? &be[i] : &ae[i - bv.len];
		const struct entry *y = NULL;
		struct gw_diff_site *s;

		if (i < bv.len) {
			for (size_t k = 0; k < av.len && !y; k++)
				if (!used[k] && same_site(x, &ae[k])) {
					used[k] = true;
					y = &ae[k];
				}
		} else if (used[i - bv.len]) {
			continue;
		}
		if (!(s = gw_vec_push(&out, sizeof(*s))))
			goto out;
		s->kind = x->kind;
		s->name = x->name;
		s->function = x->function;
		s->file = x->file;
		s->where = y ? y->where : x->where;
		if (i < bv.len) {
			s->before = x->value;
			s->before_count = x->count;
			s->after = y ? y->value : 0;
			s->after_count = y ? y->count : 0;
		} else {
			s->after = x->value;
			s->after_count = x->count;
		}
	}
	if (gw_sort(out.data, out.len, sizeof(struct gw_diff_site), cmp_site) < 0)
		goto out;
	d->sites = calloc(out.len + 1, sizeof(*d->sites));
	if (!d->sites)
		goto out;
	for (size_t i = 0; i < out.len; i++) {
		const struct gw_diff_site *s = &((struct gw_diff_site *)out.data)[i];

		if (kept[s->kind] >= GW_DIFF_SITES_PER_KIND ||
		    (s->after == s->before && s->after_count == s->before_count))
			continue;
		kept[s->kind]++;
		d->sites[d->n_sites++] = *s;
	}
	r = 0;
out:
	free(used);
	gw_vec_free(&bv);
	gw_vec_free(&av);
	gw_vec_free(&out);
	return r;
}

static int warn(struct gw_diff *d, char *text)
{
	char **w;

	if (!text)
		return -ENOMEM;
	if (!(w = realloc(d->warnings, (d->n_warnings + 1) * sizeof(*w)))) {
		free(text);
		return -ENOMEM;
	}
	d->warnings = w;
	d->warnings[d->n_warnings++] = text;
	return 0;
}

/* The program a trace ran: the first word of its command, without its directory. */
static const char *program(const struct gw_analysis *a, char *buf, size_t n)
{
	const char *c = a->n_traces && a->traces[0].command ? a->traces[0].command : "";
	const char *sp = strchr(c, ' '), *end = sp ? sp : c + strlen(c), *p = end;

	while (p > c && p[-1] != '/')
		p--;
	snprintf(buf, n, "%.*s", (int)(end - p), p);
	return buf;
}

/* The share of x's kernel time whose kernels y also ran, by name. */
static double kernel_overlap(const struct gw_analysis *x, const struct gw_analysis *y)
{
	double all = 0, shared = 0;

	for (unsigned i = 0; i < x->n_kernels; i++) {
		bool in = false;

		for (unsigned k = 0; k < y->n_kernels && !in; k++)
			in = !strcmp(x->kernels[i].name, y->kernels[k].name);
		all += (double)x->kernels[i].total_ns;
		if (in)
			shared += (double)x->kernels[i].total_ns;
	}
	return all > 0 ? shared / all : 1;
}

/* Whether the runs are alike enough to compare, said as warnings where they are not. */
static int check_alike(struct gw_diff *d)
{
	const struct gw_analysis *b = d->before.a, *a = d->after.a;
	char pb[256], pa[256];
	double ob, oa, wb = d->before.wall_ns, wa = d->after.wall_ns;
	int r;

	if (!d->per_step && (b->steps.n || a->steps.n) &&
	    (r = warn(d, gw_strdupf("only the %s run has steps: the runs are compared as wholes",
				    b->steps.n ? "first" : "second"))) < 0)
		return r;
	program(b, pb, sizeof(pb));
	program(a, pa, sizeof(pa));
	if (*pb && *pa && strcmp(pb, pa) &&
	    (r = warn(d, gw_strdupf("the runs are of different programs (%s and %s)", pb, pa))) < 0)
		return r;
	if (b->n_devices && a->n_devices &&
	    (b->devices[0].sm_count != a->devices[0].sm_count ||
	     !same_text(b->devices[0].name, a->devices[0].name)) &&
	    (r = warn(d, gw_strdupf("the runs used different GPUs (%s, %llu SMs; %s, %llu SMs)",
				    b->devices[0].name ? b->devices[0].name : "unknown",
				    (unsigned long long)b->devices[0].sm_count,
				    a->devices[0].name ? a->devices[0].name : "unknown",
				    (unsigned long long)a->devices[0].sm_count))) < 0)
		return r;
	ob = kernel_overlap(b, a);
	oa = kernel_overlap(a, b);
	if (b->n_kernels && a->n_kernels && fmin(ob, oa) < GW_DIFF_MIN_KERNEL_OVERLAP &&
	    (r = warn(d, gw_strdupf("the runs share only %.0f%% of their kernel time by kernel "
				    "name: other kernels ran (another job, other inputs, another "
				    "version?), so the comparison may mislead",
				    fmin(ob, oa) * 100))) < 0)
		return r;
	for (int i = 0; i < 2 && d->per_step; i++) {
		const struct gw_diff_side *s = i ? &d->after : &d->before;

		if (s->wall_ns < s->gpu_ns / GW_DIFF_WINDOW_RATIO &&
		    (r = warn(d,
			      gw_strdupf("in the %s run the steps' ranges (median %.2f ms) are far "
					 "shorter than their GPU time (%.2f ms a step): the host "
					 "ran ahead of the GPU, so wall time a step understates "
					 "it; GPU time a step is the measure",
					 i ? "second" : "first", s->wall_ns / 1e6,
					 s->gpu_ns / 1e6))) < 0)
			return r;
	}
	if (!d->per_step && wb > 0 && wa > 0 &&
	    fmax(wb, wa) / fmin(wb, wa) > GW_DIFF_WINDOW_RATIO &&
	    (r = warn(d, gw_strdupf("the GPU windows differ %.1f-fold and there are no steps to "
				    "compare one step with another: compare the shares, not the "
				    "times (mark steps with NVTX ranges)",
				    fmax(wb, wa) / fmin(wb, wa)))) < 0)
		return r;
	return 0;
}

/* "GPU time per step -19% (176.0 -> 142.6 ms): host_work -15 points; host_work is no longer
 * the largest idle cause; the largest is now launch_overhead (12%)." The bucket named is the
 * idle one that moved most: compute moves by what the idle buckets give back. */
static char *verdict(const struct gw_diff *d)
{
	const struct gw_diff_side *b = &d->before, *a = &d->after;
	int big = GW_BUCKET_COUNT;
	char head[160], move[96] = "", idle[320];

	for (int k = 0; k < GW_BUCKET_COUNT; k++)
		if (k != GW_BUCKET_COMPUTE &&
		    (big == GW_BUCKET_COUNT || fabs(d->delta_share[k]) > fabs(d->delta_share[big])))
			big = k;
	if (isnan(d->gpu_change))
		snprintf(head, sizeof(head), "no GPU work in the first run");
	else
		snprintf(head, sizeof(head), "%s %+.0f%% (%.2f -> %.2f ms)",
			 d->per_step ? "GPU time per step" : "GPU window", d->gpu_change * 100,
			 b->gpu_ns / 1e6, a->gpu_ns / 1e6);
	if (fabs(d->delta_share[big]) >= 0.0005)
		snprintf(move, sizeof(move), ": %s %+.0f points", gw_buckets[big].key,
			 d->delta_share[big] * 100);
	if (b->top_idle == a->top_idle && a->top_idle < GW_BUCKET_COUNT)
		snprintf(idle, sizeof(idle), "the largest idle cause is still %s (%.0f%%)",
			 gw_buckets[a->top_idle].key, a->share[a->top_idle] * 100);
	else if (b->top_idle < GW_BUCKET_COUNT && a->top_idle < GW_BUCKET_COUNT)
		snprintf(idle, sizeof(idle),
			 "%s is no longer the largest idle cause; the largest is now %s (%.0f%%)",
			 gw_buckets[b->top_idle].key, gw_buckets[a->top_idle].key,
			 a->share[a->top_idle] * 100);
	else if (a->top_idle < GW_BUCKET_COUNT)
		snprintf(idle, sizeof(idle), "the largest idle cause is now %s (%.0f%%)",
			 gw_buckets[a->top_idle].key, a->share[a->top_idle] * 100);
	else if (b->top_idle < GW_BUCKET_COUNT)
		snprintf(idle, sizeof(idle), "%s is gone, and nothing idles now",
			 gw_buckets[b->top_idle].key);
	else
		snprintf(idle, sizeof(idle), "nothing idles, before or after");
	return gw_strdupf("%s%s; %s.", head, move, idle);
}

int gw_diff_new(const struct gw_analysis *before, const struct gw_analysis *after,
		struct gw_diff **ret)
{
	struct gw_diff *d = calloc(1, sizeof(*d));
	int r = -ENOMEM;

	*ret = NULL;
	if (!d)
		return -ENOMEM;
	d->per_step = before->steps.n && after->steps.n;
	side_init(&d->before, before, d->per_step);
	side_init(&d->after, after, d->per_step);
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		d->delta_share[b] = d->after.share[b] - d->before.share[b];
		d->delta_ns[b] = d->after.device_ns[b] - d->before.device_ns[b];
	}
	d->gpu_change = d->before.gpu_ns > 0
				? (d->after.gpu_ns - d->before.gpu_ns) / d->before.gpu_ns
				: NAN;
	d->wall_change = d->before.wall_ns > 0
				 ? (d->after.wall_ns - d->before.wall_ns) / d->before.wall_ns
				 : NAN;
	if ((r = match_sites(d)) < 0 || (r = check_alike(d)) < 0)
		goto fail;
	if (!(d->verdict = verdict(d))) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = d;
	return 0;
fail:
	gw_diff_free(d);
	return r;
}

void gw_diff_free(struct gw_diff *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->n_warnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->sites);
	free(d->verdict);
	free(d);
}
