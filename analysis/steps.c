/* SPDX-License-Identifier: MIT */
/* Stage 4, steps: the ranges that are steps, each GPU operation's step, the slowest watched. */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int gw_steps_pattern_check(const char *pattern, char *why, size_t why_size)
{
	regex_t re;
	int e;

	if (!pattern || !*pattern)
		return 0;
	e = regcomp(&re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (e) {
		if (why && why_size)
			regerror(e, &re, why, why_size);
		return -EINVAL;
	}
	regfree(&re);
	return 0;
}

/* Names resolved and matched against the pattern. */
static int match_names(struct gw_analyzer *a)
{
	const char *pattern = a->opt.steps_pattern ? a->opt.steps_pattern : GW_STEPS_DEFAULT;
	struct gw_range_name *names = a->range_names.data;
	regex_t re;

	for (size_t i = 0; i < a->range_names.len; i++) {
		const char *text;

		if (names[i].text || !names[i].name_id)
			continue;
		text = gw_an_string(a, names[i].trace, names[i].name_id);
		names[i].text =
			text ? strdup(text)
			     : gw_strdupf("(string %llu)", (unsigned long long)names[i].name_id);
		if (!names[i].text)
			return -ENOMEM;
	}
	if (!*pattern || !a->range_names.len)
		return 0;
	if (regcomp(&re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB))
		return -EINVAL; /* the programs check the pattern first */
	for (size_t i = 0; i < a->range_names.len; i++)
		names[i].step = regexec(&re, names[i].text, 0, NULL, 0) == 0;
	regfree(&re);
	return 0;
}

static int cmp_step(const void *x, const void *y, void *ctx)
{
	const struct gw_step_st *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return p->end_ns > q->end_ns ? -1 : p->end_ns < q->end_ns; /* the outer one first */
}

/* The matching ranges, the outermost of each thread: a range that begins before the step
 * kept before it on its thread ends is inside it (or overlaps it) and is not a step. */
static int collect_steps(struct gw_analyzer *a)
{
	const struct gw_range *rg = a->ranges.data;
	const struct gw_range_name *names = a->range_names.data;
	struct gw_step_st *st;
	size_t kept = 0;

	for (size_t i = 0; i < a->ranges.len; i++) {
		struct gw_step_st *s;

		if (!names[rg[i].name].step)
			continue;
		if (!(s = gw_vec_push(&a->steps, sizeof(*s))))
			return -ENOMEM;
		s->start_ns = rg[i].start_ns;
		s->end_ns = rg[i].end_ns;
		s->tid = rg[i].tid;
		s->name = rg[i].name;
		s->trace = rg[i].trace;
	}
	if (gw_sort_r(a->steps.data, a->steps.len, sizeof(*st), cmp_step, NULL) < 0)
		return -ENOMEM;
	st = a->steps.data;
	for (size_t i = 0; i < a->steps.len; i++) {
		if (kept && st[kept - 1].trace == st[i].trace && st[kept - 1].tid == st[i].tid &&
		    st[i].start_ns < st[kept - 1].end_ns)
			continue;
		st[kept++] = st[i];
	}
	a->steps.len = kept;
	return 0;
}

/* Where the steps of one thread are; the trace's steps in time order are the model's. */
struct step_index {
	struct gw_hmap threads; /* (trace, tid) -> first step + 1, and (trace | 1 << 32, tid)
				 * -> end of its steps */
	uint32_t *by_time;	/* a->step_time */
	size_t *trace_begin;	/* a->step_trace */
};

static int cmp_time(const void *x, const void *y, void *ctx)
{
	const struct gw_step_st *st = ctx;
	const struct gw_step_st *p = &st[*(const uint32_t *)x], *q = &st[*(const uint32_t *)y];

	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

static int index_steps(struct gw_analyzer *a, struct step_index *x)
{
	const struct gw_step_st *st = a->steps.data;
	size_t n = a->steps.len, t = 0;

	x->by_time = a->step_time = malloc((n + 1) * sizeof(*x->by_time));
	x->trace_begin = a->step_trace = calloc(a->traces.len + 1, sizeof(*x->trace_begin));
	if (!x->by_time || !x->trace_begin)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t *v;
		bool fresh;

		x->by_time[i] = (uint32_t)i;
		if (!(v = gw_hmap_get(&x->threads, st[i].trace, st[i].tid, &fresh)))
			return -ENOMEM;
		if (fresh)
			*v = i + 1;
		if (!(v = gw_hmap_get(&x->threads, st[i].trace | 1ull << 32, st[i].tid, NULL)))
			return -ENOMEM;
		*v = i + 1;
	}
	if (gw_sort_r(x->by_time, n, sizeof(*x->by_time), cmp_time, a->steps.data) < 0)
		return -ENOMEM;
	for (size_t i = 0; i <= a->traces.len; i++) {
		while (t < n && st[x->by_time[t]].trace < i)
			t++;
		x->trace_begin[i] = t;
	}
	return 0;
}

/* The step open at t among steps idx[lo, hi) (in start order), or -1. */
static int64_t open_at(const struct gw_step_st *st, const uint32_t *idx, size_t lo, size_t hi,
		       uint64_t t)
{
	size_t b = lo, e = hi;

	while (b < e) {
		size_t mid = b + (e - b) / 2;

		if (st[idx ? idx[mid] : mid].start_ns <= t)
			b = mid + 1;
		else
			e = mid;
	}
	if (b == lo)
		return -1;
	b = idx ? idx[b - 1] : b - 1;
	return t < st[b].end_ns ? (int64_t)b : -1;
}

/* Each operation's step: the step open on its launching thread when the launch was called,
 * or, for a thread without steps, the step of its trace open then. */
static int assign_ops(struct gw_analyzer *a, struct step_index *x)
{
	struct gw_op *ops = a->ops.data;
	struct gw_step_st *st = a->steps.data;
	const struct gw_api *apis = a->apis.data;
	uint64_t last_key = UINT64_MAX;
	size_t lo = 0, hi = 0;
	bool own = false;

	if (!(a->op_step = calloc(a->ops.len + 1, sizeof(*a->op_step))))
		return -ENOMEM;
	for (size_t i = 0; i < a->ops.len; i++) {
		const struct gw_api *c;
		uint64_t key;
		int64_t s;

		if (ops[i].api == UINT32_MAX)
			continue;
		c = &apis[ops[i].api];
		key = (uint64_t)c->trace << 32 | c->tid;
		if (key != last_key) {
			uint64_t *b = gw_hmap_find(&x->threads, c->trace, c->tid);

			last_key = key;
			own = b != NULL;
			if (own) {
				lo = *b - 1;
				hi = *gw_hmap_find(&x->threads, c->trace | 1ull << 32, c->tid);
			} else {
				lo = x->trace_begin[c->trace];
				hi = x->trace_begin[c->trace + 1];
			}
		}
		s = open_at(st, own ? NULL : x->by_time, lo, hi, c->start_ns);
		if (s >= 0) {
			a->op_step[i] = (uint32_t)s + 1;
			st[s].ops++;
		}
	}
	return 0;
}

static int cmp_duration(const void *x, const void *y, void *ctx)
{
	const struct gw_step_st *st = ctx;
	const struct gw_step_st *p = &st[*(const uint32_t *)x], *q = &st[*(const uint32_t *)y];
	uint64_t dp = p->end_ns - p->start_ns, dq = q->end_ns - q->start_ns;

	return dp > dq ? -1 : dp < dq;
}

/* The slowest steps get a watch: the sweep keeps what their SM-time came from. */
static int watch_slowest(struct gw_analyzer *a)
{
	struct gw_step_st *st = a->steps.data;
	size_t n = a->steps.len;
	uint32_t *idx;

	if (n < 3)
		return 0; /* no median to be slower than */
	if (!(idx = malloc(n * sizeof(*idx))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	if (gw_sort_r(idx, n, sizeof(*idx), cmp_duration, st) < 0) {
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && i < GW_STEP_WATCHED; i++)
		st[idx[i]].watch = (uint8_t)++a->n_watch;
	free(idx);
	return 0;
}

int gw_find_steps(struct gw_analyzer *a)
{
	struct step_index x = {0};
	int r;

	if ((r = match_names(a)) < 0 || (r = collect_steps(a)) < 0)
		return r;
	if (!a->steps.len)
		return 0;
	if (a->steps.len >= UINT32_MAX)
		return -E2BIG;
	if ((r = index_steps(a, &x)) >= 0 && (r = assign_ops(a, &x)) >= 0)
		r = watch_slowest(a);
	gw_hmap_free(&x.threads);
	return r;
}
