/* SPDX-License-Identifier: MIT */
/*
 * Stage 2b, counters: the devices' measured counters (METRIC records: NVML GPM metrics or
 * utilization samples), and what they say each kind of work uses (doc/causes.md, Measured
 * counters).
 *
 * A window of ~100 ms holds many kernels, so no window is one kernel's. What a kernel uses is
 * estimated from all the windows together: in window w, of length T_w, each group g of
 * operations (a kernel name, the rest of a name class's kernels, device copies, host copies)
 * ran for t_wg, and the counter's mean y_w is modelled as sum_g b_g t_wg / T_w, b_g being the
 * group's use while it runs. The b_g in [0, 1] that fit the windows best (least squares,
 * windows weighted by their length) are the estimates; their standard errors come from the
 * residuals and from how often the groups ran apart (groups that only ever run in the same
 * proportion cannot be told apart: their errors are unknown). Where an estimate is clear, the
 * counters give its kernels their class: DRAM >= 60% of peak is bandwidth_bound; DRAM and SM
 * both under 60% is low_intensity; else compute.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_NAMED	12   /* kernel names estimated on their own */
#define NAMED_SHARE	0.02 /* ... when they have at least this share of the kernel time */
#define MAX_GROUPS	(MAX_NAMED + GW_BUCKET_COUNT + 2)
#define THRESHOLD	0.6  /* design.md: 60% of peak */
#define WINDOW_SHARE	0.05 /* a group counts as in a window when it fills this much of it */
#define N_COUNTER_KIN	(GW_COUNTER_MEMORY_BUSY - GW_COUNTER_DRAM_BW_UTIL + 1)
/* The fit holds a row of MAX_GROUPS doubles per window: past this many windows (a day and a
 * half at 100 ms), neighbours are merged two by two, their values averaged by length. */
#define MAX_FIT_WINDOWS (1u << 17)

static const char *const counter_keys[N_COUNTER_KIN] = {
	"dram_bw_util", "sm_util", "sm_occupancy", "tensor_util", "gpu_busy", "memory_busy",
};

enum group_kind { G_NAME, G_CLASS, G_DEVICE_COPIES, G_HOST_COPIES };

struct group {
	enum group_kind kind;
	uint16_t trace;
	uint32_t name_id;
	uint8_t cls; /* G_NAME, G_CLASS: the name class */
	uint64_t busy_ns;
};

/* A fit of one counter over one device's windows. */
struct fit {
	double b[MAX_GROUPS], se[MAX_GROUPS];
	unsigned windows[MAX_GROUPS];
	double rss, tss, weight; /* weighted; weight: the windows' total weight */
	unsigned n;
};

static int cmp_metric(const void *x, const void *y, void *ctx)
{
	const struct gw_metric_ent *p = x, *q = y;

	(void)ctx;
	if (p->counter != q->counter)
		return p->counter < q->counter ? -1 : 1;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

static int cmp_group(const void *x, const void *y, void *ctx)
{
	const struct group *p = x, *q = y;

	(void)ctx;
	if (p->busy_ns != q->busy_ns)
		return p->busy_ns > q->busy_ns ? -1 : 1;
	return p->name_id < q->name_id ? -1 : p->name_id > q->name_id;
}

static bool device_copy(uint8_t copy_kind)
{
	/* CUpti_ActivityMemcpyKind: ATOA 5, ATOD 6, DTOA 7, DTOD 8, PTOP 10 stay on devices */
	return (copy_kind >= 5 && copy_kind <= 8) || copy_kind == 10;
}

/* The operations' groups of device d, busiest first: kernel names with their share, the rest
 * of each name class, copies. map: (trace, name_id) -> group index + 1. */
static int make_groups(struct gw_analyzer *a, const struct gw_dev_st *d, struct group *g,
		       unsigned *ret_n, struct gw_hmap *map)
{
	const struct gw_op *ops = a->ops.data;
	struct gw_vec names = {0};
	uint64_t kernel_ns = 0, copies[2] = {0, 0};
	unsigned n = 0;
	int r = 0;

	for (size_t i = d->op_begin; i < d->op_end; i++) {
		const struct gw_op *o = &ops[i];
		uint64_t dur = o->end_ns - o->start_ns, *v;
		struct group *e;
		bool fresh;

		if (o->kind != GW_OP_KERNEL) {
			copies[o->kind == GW_OP_MEMSET || device_copy(o->cls) ? 0 : 1] += dur;
			continue;
		}
		kernel_ns += dur;
		if (!(v = gw_hmap_get(map, o->trace, o->name_id, &fresh))) {
			r = -ENOMEM;
			goto out;
		}
		if (fresh) {
			if (!(e = gw_vec_push(&names, sizeof(*e)))) {
				r = -ENOMEM;
				goto out;
			}
			*e = (struct group){G_NAME, o->trace, o->name_id, o->cls, 0};
			*v = names.len;
		}
		((struct group *)names.data)[*v - 1].busy_ns += dur;
	}
	if (names.len &&
	    gw_sort_r(names.data, names.len, sizeof(struct group), cmp_group, NULL) < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < names.len; i++) {
		struct group *e = &((struct group *)names.data)[i];
		unsigned gi = n;

		if (n < MAX_NAMED && (double)e->busy_ns >= NAMED_SHARE * (double)kernel_ns) {
			g[n++] = *e;
		} else {
			/* the rest of its class, one group */
			for (gi = 0; gi < n; gi++)
				if (g[gi].kind == G_CLASS && g[gi].cls == e->cls)
					break;
			if (gi == n)
				g[n++] = (struct group){G_CLASS, 0, 0, e->cls, 0};
			g[gi].busy_ns += e->busy_ns;
		}
		*gw_hmap_find(map, e->trace, e->name_id) = gi + 1;
	}
	for (int k = 0; k < 2; k++)
		if (copies[k])
			g[n++] = (struct group){k ? G_HOST_COPIES : G_DEVICE_COPIES, 0, 0, 0,
						copies[k]};
	*ret_n = n;
out:
	gw_vec_free(&names);
	return r;
}

/* Inverts m + ridge I (m: p x p, row-major, symmetric positive semi-definite) into inv by
 * Gauss-Jordan with partial pivoting. The ridge keeps a singular m invertible: along a
 * direction m does not determine, the inverse is of the order of 1 / ridge. */
static void invert(const double *m, double *inv, unsigned p, double ridge)
{
	double w[MAX_GROUPS][2 * MAX_GROUPS];

	for (unsigned i = 0; i < p; i++)
		for (unsigned j = 0; j < 2 * p; j++)
			w[i][j] = j < p ? m[i * p + j] + (i == j ? ridge : 0) : (j - p == i);
	for (unsigned c = 0; c < p; c++) {
		unsigned best = c;

		for (unsigned i = c + 1; i < p; i++)
			if (fabs(w[i][c]) > fabs(w[best][c]))
				best = i;
		if (!(fabs(w[best][c]) > 0))
			continue; /* cannot happen with a ridge > 0 */
		if (best != c)
			for (unsigned j = 0; j < 2 * p; j++) {
				double t = w[c][j];

				w[c][j] = w[best][j];
				w[best][j] = t;
			}
		for (unsigned j = 0; j < 2 * p; j++)
			if (j != c)
				w[c][j] /= w[c][c];
		w[c][c] = 1;
		for (unsigned i = 0; i < p; i++) {
			double f = w[i][c];

			if (i == c || f == 0)
				continue;
			for (unsigned j = 0; j < 2 * p; j++)
				w[i][j] -= f * w[c][j];
		}
	}
	for (unsigned i = 0; i < p; i++)
		for (unsigned j = 0; j < p; j++)
			inv[i * p + j] = w[i][p + j];
}

/*
 * Fits one counter's windows m[0..nm) (sorted by start) of device d to the groups: the box-
 * constrained least squares by coordinate descent on the normal equations (a few groups, so
 * the p x p system is small whatever the number of windows), then each estimate's standard
 * error, sigma^2 (G^-1)_gg, with sigma^2 from the residuals. A group whose column the others
 * explain (it never ran apart from them in other proportions) has no error: -1.
 */
static int fit_counter(struct gw_analyzer *a, const struct gw_dev_st *d, const struct gw_hmap *map,
		       const struct gw_metric_ent *m, size_t nm, unsigned p, struct fit *f)
{
	const struct gw_op *ops = a->ops.data;
	double G[MAX_GROUPS * MAX_GROUPS] = {0}, Ginv[MAX_GROUPS * MAX_GROUPS], h[MAX_GROUPS] = {0};
	double *x, sum_t = 0, ybar = 0, max_diag = 0;
	size_t budget;

	struct gw_metric_ent *merged = NULL;

	memset(f, 0, sizeof(*f));
	if (!nm)
		return 0;
	if (nm > MAX_FIT_WINDOWS) {
		size_t n = nm;

		if (!(merged = malloc(nm * sizeof(*merged))))
			return -ENOMEM;
		memcpy(merged, m, nm * sizeof(*merged));
		while (n > MAX_FIT_WINDOWS) {
			size_t k = 0;

			for (size_t i = 0; i < n; i += 2, k++) {
				struct gw_metric_ent e = merged[i];

				if (i + 1 < n) {
					double l0 = (double)(e.end_ns - e.start_ns);
					double l1 = (double)(merged[i + 1].end_ns -
							     merged[i + 1].start_ns);

					e.value =
						(float)((l0 * e.value + l1 * merged[i + 1].value) /
							(l0 + l1));
					e.end_ns = merged[i + 1].end_ns;
				}
				merged[k] = e;
			}
			n = k;
		}
		m = merged;
		nm = n;
	}
	budget = 64 * (nm + (d->op_end - d->op_begin)) + 1000000;
	x = calloc(nm * p + 1, sizeof(*x));
	if (!x) {
		free(merged);
		return -ENOMEM;
	}
	for (size_t w = 0; w < nm; w++)
		sum_t += (double)(m[w].end_ns - m[w].start_ns);
	/* each operation's time in each window it overlaps (windows sorted, mostly disjoint:
	 * an operation meets one or two; a trace whose windows all overlap each other would
	 * make this quadratic, so past a budget the device gets no estimates) */
	for (size_t i = d->op_begin; i < d->op_end; i++) {
		const struct gw_op *o = &ops[i];
		unsigned g;
		size_t lo = 0, hi = nm;

		if (o->kind == GW_OP_KERNEL) {
			const uint64_t *v = gw_hmap_find(map, o->trace, o->name_id);

			if (!v || !*v)
				continue;
			g = (unsigned)*v - 1;
		} else {
			/* the copy groups are the last one or two */
			bool dev = o->kind == GW_OP_MEMSET || device_copy(o->cls);
			const uint64_t *v = gw_hmap_find(map, UINT64_MAX, dev ? 0 : 1);

			if (!v || !*v)
				continue;
			g = (unsigned)*v - 1;
		}
		/* the first window ending after the operation starts */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (m[mid].end_ns <= o->start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t w = lo; w < nm && m[w].start_ns < o->end_ns; w++) {
			uint64_t s = o->start_ns > m[w].start_ns ? o->start_ns : m[w].start_ns;
			uint64_t e = o->end_ns < m[w].end_ns ? o->end_ns : m[w].end_ns;

			if (!budget--) {
				free(x);
				free(merged);
				memset(f, 0, sizeof(*f));
				return 0;
			}
			if (e > s)
				x[w * p + g] +=
					(double)(e - s) / (double)(m[w].end_ns - m[w].start_ns);
		}
	}
	/* normal equations, each window weighted by its length (normalized to mean 1) */
	for (size_t w = 0; w < nm; w++) {
		double om = (double)(m[w].end_ns - m[w].start_ns) * (double)nm / sum_t;
		const double *xw = &x[w * p];

		for (unsigned j = 0; j < p; j++) {
			if (xw[j] >= WINDOW_SHARE)
				f->windows[j]++;
			h[j] += om * xw[j] * m[w].value;
			for (unsigned k = 0; k < p; k++)
				G[j * p + k] += om * xw[j] * xw[k];
		}
		ybar += om * m[w].value;
		f->weight += om;
	}
	ybar /= f->weight;
	for (unsigned j = 0; j < p; j++)
		if (G[j * p + j] > max_diag)
			max_diag = G[j * p + j];
	/* b in [0, 1] minimizing the weighted squared residuals: coordinate descent converges
	 * on this convex problem; the sweeps stop when nothing moves */
	for (int sweep = 0; sweep < 2000; sweep++) {
		double moved = 0;

		for (unsigned j = 0; j < p; j++) {
			double r = h[j], v;

			if (G[j * p + j] <= 1e-12 * (max_diag > 0 ? max_diag : 1))
				continue;
			for (unsigned k = 0; k < p; k++)
				if (k != j)
					r -= G[j * p + k] * f->b[k];
			v = r / G[j * p + j];
			v = v < 0 ? 0 : v > 1 ? 1 : v;
			moved = fmax(moved, fabs(v - f->b[j]));
			f->b[j] = v;
		}
		if (moved < 1e-10)
			break;
	}
	for (size_t w = 0; w < nm; w++) {
		double om = (double)(m[w].end_ns - m[w].start_ns) * (double)nm / sum_t, pred = 0;

		for (unsigned j = 0; j < p; j++)
			pred += x[w * p + j] * f->b[j];
		f->rss += om * (m[w].value - pred) * (m[w].value - pred);
		f->tss += om * (m[w].value - ybar) * (m[w].value - ybar);
	}
	f->n = (unsigned)nm;
	invert(G, Ginv, p, 1e-9 * (max_diag > 0 ? max_diag : 1));
	/* 1 / (G_jj (G^-1)_jj) is 1 minus the share of group j's column the other columns
	 * explain: 1 for a group that ran apart from all others, near 0 (about 1e-9 here, the
	 * ridge) for one that only ran beside others in one proportion */
	for (unsigned j = 0; j < p; j++) {
		double sigma2 = f->rss / (nm > p ? (double)(nm - p) : 1.0);
		double gjj = G[j * p + j], inv = Ginv[j * p + j];

		if (!(gjj > 0) || !isfinite(inv) || inv <= 0 || 1.0 / (gjj * inv) < 1e-3)
			f->se[j] = -1;
		else
			f->se[j] = sqrt(sigma2 * inv);
	}
	free(x);
	free(merged);
	return 0;
}

/* How sure the estimate is of the side of the 60% line it is on. */
static const char *confidence(double b, double se, unsigned windows)
{
	double margin;

	if (se < 0 || windows < 2)
		return "low";
	margin = fabs(b - THRESHOLD) / fmax(se, 1e-9);
	if (windows >= 3 && margin >= 3 && se <= 0.1)
		return "high";
	return margin >= 1.5 ? "medium" : "low";
}

static const char *weaker(const char *x, const char *y)
{
	static const char *const order[] = {"low", "medium", "high"};

	for (int i = 0; i < 3; i++)
		if (!strcmp(x, order[i]) || !strcmp(y, order[i]))
			return order[i];
	return "low";
}

static char *group_name(struct gw_analyzer *a, const struct group *g)
{
	const char *n;

	switch (g->kind) {
	case G_NAME:
		n = gw_an_string(a, g->trace, g->name_id);
		return n ? gw_demangle(n) : gw_strdupf("kernel#%u", g->name_id);
	case G_CLASS:
		return gw_strdupf("other %s kernels", gw_buckets[g->cls].key);
	case G_DEVICE_COPIES:
		return gw_strdupf("device copies and memsets");
	default:
		return gw_strdupf("host copies");
	}
}

/* The series of device di (its index in the result) from the metrics m[0..n) of one trace,
 * sorted by counter and start. */
static int add_series(struct gw_counters *c, unsigned di, const struct gw_dev_st *d,
		      const struct gw_metric_ent *m, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct gw_counter_series *s;
		double sum = 0, len = 0;

		while (j < n && m[j].counter == m[i].counter)
			j++;
		s = &c->series[c->n_series];
		*s = (struct gw_counter_series){
			.device = di,
			.counter = (enum gw_counter)(GW_COUNTER_DRAM_BW_UTIL + m[i].counter),
			.key = counter_keys[m[i].counter],
			.points = calloc(j - i, sizeof(*s->points)),
			.n = j - i,
		};
		if (!s->points)
			return -ENOMEM;
		c->n_series++;
		for (size_t k = i; k < j; k++) {
			uint64_t a0 = m[k].start_ns > d->r.start_ns ? m[k].start_ns : d->r.start_ns;
			uint64_t a1 = m[k].end_ns < d->r.end_ns ? m[k].end_ns : d->r.end_ns;

			s->points[k - i] =
				(struct gw_counter_point){m[k].start_ns, m[k].end_ns, m[k].value};
			if (a1 > a0) {
				sum += (double)(a1 - a0) * m[k].value;
				len += (double)(a1 - a0);
			}
		}
		s->mean = len > 0 ? sum / len : -1;
		i = j;
	}
	return 0;
}

/* The windows of one counter in m[0..n) (sorted by counter), or NULL. */
static const struct gw_metric_ent *counter_range(const struct gw_metric_ent *m, size_t n,
						 enum gw_counter counter, size_t *ret_n)
{
	size_t i = 0, j;

	while (i < n && (unsigned)m[i].counter + GW_COUNTER_DRAM_BW_UTIL != (unsigned)counter)
		i++;
	for (j = i; j < n && m[j].counter == m[i].counter; j++)
		;
	*ret_n = j - i;
	return j > i ? &m[i] : NULL;
}

/* What is known of a device's sampler: its source and period, or why there is none. */
static void sampler_info(struct gw_analyzer *a, struct gw_counters *c)
{
	const struct gw_sampler_ent *s = a->samplers.data;

	for (size_t i = 0; i < a->samplers.len; i++)
		if (s[i].source != GW_SAMPLER_NONE && !c->period_ns)
			c->period_ns = s[i].period_ns;
	if (c->measured)
		return;
	for (size_t i = 0; i < a->samplers.len; i++)
		if (s[i].source == GW_SAMPLER_NONE && s[i].reason) {
			c->reason = strdup(s[i].reason);
			return;
		}
}

/* Per device: decide each group's class from its estimates, and apply the clear ones. */
static void decide(struct gw_analyzer *a, const struct gw_dev_st *d, const struct group *g,
		   const struct gw_hmap *map, struct gw_usage_estimate *e, unsigned p, bool gpm,
		   double *moved_ns)
{
	struct gw_op *ops = a->ops.data;
	uint8_t to[MAX_GROUPS];
	bool apply[MAX_GROUPS] = {false};

	for (unsigned j = 0; j < p; j++) {
		const char *conf;

		e[j].measured_class = GW_BUCKET_COUNT;
		if (e[j].dram >= THRESHOLD) {
			e[j].measured_class = GW_BUCKET_BANDWIDTH_BOUND;
			conf = confidence(e[j].dram, e[j].dram_se, e[j].windows);
		} else if (e[j].sm >= 0) {
			e[j].measured_class =
				e[j].sm < THRESHOLD ? GW_BUCKET_LOW_INTENSITY : GW_BUCKET_COMPUTE;
			conf = weaker(confidence(e[j].dram, e[j].dram_se, e[j].windows),
				      confidence(e[j].sm, e[j].sm_se, e[j].windows));
		} else {
			/* under 60% without an SM counter: not bandwidth-bound, but which of
			 * the other two cannot be said */
			conf = confidence(e[j].dram, e[j].dram_se, e[j].windows);
		}
		e[j].confidence = conf;
		/* Only GPM measures bandwidth; collectives keep their class (their time is the
		 * collective's whatever they move); copies have no class to change. */
		apply[j] = gpm && e[j].kernels && strcmp(conf, "low") &&
			   e[j].measured_class != GW_BUCKET_COUNT &&
			   e[j].name_class != GW_BUCKET_COMMUNICATION;
		e[j].applied = apply[j];
		to[j] = (uint8_t)e[j].measured_class;
		if (apply[j] && e[j].measured_class != e[j].name_class)
			*moved_ns += (double)e[j].busy_ns;
	}
	for (size_t i = d->op_begin; i < d->op_end; i++) {
		struct gw_op *o = &ops[i];
		const uint64_t *v;

		if (o->kind != GW_OP_KERNEL || !(v = gw_hmap_find(map, o->trace, o->name_id)) ||
		    !*v || !apply[*v - 1])
			continue;
		o->cls = to[*v - 1];
		/* the event view reads a kernel's class from its name's entry (a name that ran
		 * on several devices takes the last device's) */
		struct gw_string_ent *se = gw_an_string_ent(gw_an_trace(a, o->trace), o->name_id);

		if (se && se->cls)
			se->cls = (uint8_t)((o->cls + 1) | (se->cls & 0x80));
	}
	(void)g;
}

int gw_measure_counters(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	struct gw_counters *c = &res->counters;
	struct gw_metric_ent *m = a->metrics.data;
	struct gw_dev_st *devs = a->devs.data;
	double dram_sum = 0, dram_len = 0, moved_ns = 0, rss = 0, tss = 0;
	size_t n_est = 0;
	int r = 0;

	res->util.memory_bandwidth = -1;
	/* each window to its device's index (a GPU several processes shared is one device) */
	for (size_t i = 0; i < a->metrics.len; i++) {
		const uint64_t *v = gw_hmap_find(&a->dev_map, m[i].trace, m[i].device);

		m[i].device = v && *v ? (uint32_t)(*v - 1) : UINT32_MAX;
	}
	if (a->metrics.len && gw_sort_r(m, a->metrics.len, sizeof(*m), cmp_metric, NULL) < 0)
		return -ENOMEM;
	c->series = calloc(a->devs.len * N_COUNTER_KIN + 1, sizeof(*c->series));
	c->estimates = calloc(a->devs.len * MAX_GROUPS + 1, sizeof(*c->estimates));
	if (!c->series || !c->estimates)
		return -ENOMEM;
	for (size_t di = 0; di < a->devs.len; di++) {
		struct gw_dev_st *d = &devs[di];
		struct group g[MAX_GROUPS];
		struct gw_hmap map = {0};
		struct gw_metric_ent *dm;
		size_t nd = 0, ny = 0, ns = 0;
		unsigned p = 0, trace = UINT32_MAX;
		const struct gw_metric_ent *y = NULL, *sm = NULL;
		struct fit fy, fs;
		bool gpm;

		if (d->r.start_ns == UINT64_MAX)
			continue;
		/* this device's windows, from the first trace that has any (processes sharing
		 * a GPU each measured the same GPU) */
		dm = malloc((a->metrics.len + 1) * sizeof(*dm));
		if (!dm)
			return -ENOMEM;
		for (size_t i = 0; i < a->metrics.len; i++)
			if (m[i].device == di && m[i].trace < trace)
				trace = m[i].trace;
		for (size_t i = 0; i < a->metrics.len; i++)
			if (m[i].device == di && m[i].trace == trace &&
			    m[i].end_ns > d->r.start_ns && m[i].start_ns < d->r.end_ns)
				dm[nd++] = m[i];
		if (!nd) {
			free(dm);
			continue;
		}
		c->measured = true;
		if ((r = add_series(c, (unsigned)di, d, dm, nd)) < 0)
			goto next;
		/* DRAM from GPM; without GPM the share of time memory was busy (not bandwidth:
		 * shown, never used to reclassify) */
		y = counter_range(dm, nd, GW_COUNTER_DRAM_BW_UTIL, &ny);
		gpm = y != NULL;
		if (!y)
			y = counter_range(dm, nd, GW_COUNTER_MEMORY_BUSY, &ny);
		sm = counter_range(dm, nd, GW_COUNTER_SM_UTIL, &ns);
		if (!c->source)
			c->source = gpm ? GW_SAMPLER_GPM : GW_SAMPLER_SAMPLES;
		if (gpm) {
			for (size_t s = 0; s < c->n_series; s++)
				if (c->series[s].device == di &&
				    c->series[s].counter == GW_COUNTER_DRAM_BW_UTIL &&
				    c->series[s].mean >= 0) {
					double len = (double)(d->r.end_ns - d->r.start_ns);

					dram_sum += c->series[s].mean * len;
					dram_len += len;
				}
		}
		if (!y)
			goto next;
		if ((r = make_groups(a, d, g, &p, &map)) < 0)
			goto next;
		/* the copy groups' keys */
		for (unsigned j = 0; j < p; j++)
			if (g[j].kind == G_DEVICE_COPIES || g[j].kind == G_HOST_COPIES) {
				uint64_t *v =
					gw_hmap_get(&map, UINT64_MAX,
						    g[j].kind == G_DEVICE_COPIES ? 0 : 1, NULL);

				if (!v) {
					r = -ENOMEM;
					goto next;
				}
				*v = j + 1;
			}
		if (!p)
			goto next;
		if ((r = fit_counter(a, d, &map, y, ny, p, &fy)) < 0 ||
		    (sm && (r = fit_counter(a, d, &map, sm, ns, p, &fs)) < 0))
			goto next;
		if (!fy.n)
			goto next; /* windows that all overlap: no fit (fit_counter) */
		rss += fy.rss;
		tss += fy.tss;
		c->windows += fy.n;
		for (unsigned j = 0; j < p; j++) {
			struct gw_usage_estimate *e = &c->estimates[n_est + j];

			*e = (struct gw_usage_estimate){
				.device = (unsigned)di,
				.name = group_name(a, &g[j]),
				.kernels = g[j].kind == G_NAME || g[j].kind == G_CLASS,
				.busy_ns = g[j].busy_ns,
				.windows = fy.windows[j],
				.dram = fy.b[j],
				.dram_se = fy.se[j],
				.sm = sm ? fs.b[j] : -1,
				.sm_se = sm ? fs.se[j] : -1,
				.name_class = g[j].kind == G_NAME || g[j].kind == G_CLASS
						      ? (enum gw_bucket)g[j].cls
						      : GW_BUCKET_COMPUTE,
			};
			if (!e->name) {
				r = -ENOMEM;
				goto next;
			}
			c->n_estimates++;
		}
		decide(a, d, g, &map, &c->estimates[n_est], p, gpm, &moved_ns);
		n_est += p;
	next:
		gw_hmap_free(&map);
		free(dm);
		if (r < 0)
			return r;
	}
	if (dram_len > 0)
		res->util.memory_bandwidth = dram_sum / dram_len;
	if (c->windows) {
		double wsum = (double)c->windows;

		c->dram_fit_rms = sqrt(rss / wsum);
		c->dram_r2 = tss > 0 ? 1 - rss / tss : 1;
	}
	c->reclassified_share = a->kernel_ns ? moved_ns / (double)a->kernel_ns : 0;
	sampler_info(a, c);
	return 0;
}
