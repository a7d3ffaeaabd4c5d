/* SPDX-License-Identifier: MIT */
/*
 * The counters stage (analysis/counters.c): measured windows fitted to the kernels that ran in
 * them, the classes they give (doc/causes.md, Measured counters). Every schedule is built here,
 * and each window's value is worked out from the kernels' true use, so the right estimate is
 * known before the analysis runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis-test-util.h"

#define MS	1000000ull
#define SMS	132
#define FULL	(SMS * T_BLOCKS_PER_SM) /* one full wave: fill 1 */
#define WIN	(100 * MS)
#define N_WIN	30
#define T0	(1000 * MS)
#define N_NAMES 3

static const char *const names[N_NAMES] = {"elementwise_add_kernel", "my_update_kernel",
					   "sgemm_tile_kernel"};
/* the kernels' true use while they run */
static const double dram[N_NAMES] = {0.85, 0.30, 0.05};
static const double sm[N_NAMES] = {1.00, 0.40, 0.95};

static void metric(struct tb *t, enum gw_counter counter, uint64_t s, uint64_t e, double v)
{
	struct gw_record r = {.type = GW_REC_METRIC};

	r.metric.device = 0;
	r.metric.counter = counter;
	r.metric.start_ns = s;
	r.metric.end_ns = e;
	r.metric.value = (uint64_t)llround(v * GW_METRIC_SCALE);
	tb_add(t, &r);
}

static void sampler(struct tb *t, uint64_t source, const char *reason)
{
	struct gw_record r = {.type = GW_REC_SAMPLER};

	r.sampler.device = source ? 0 : UINT64_MAX;
	r.sampler.source = source;
	r.sampler.period_ns = WIN;
	r.sampler.reason =
		(struct gw_bytes){(const uint8_t *)reason, reason ? (uint32_t)strlen(reason) : 0};
	tb_add(t, &r);
}

/*
 * Window w holds, back to back from its start, kernels of each name for share[w][k] of it (a
 * kernel of 1 ms each; the shares of a window sum to at most 1); the rest is idle. Its DRAM and
 * SM values are the kernels' use times their shares, plus noise of up to +-noise, as a real
 * counter has.
 */
static void schedule(struct tb *t, double share[][N_NAMES], unsigned n_win, double noise,
		     enum gw_counter dram_counter, double *ret_ns)
{
	for (unsigned k = 0; k < N_NAMES; k++) {
		tb_string(t, k + 1, names[k]);
		ret_ns[k] = 0;
	}
	for (unsigned w = 0; w < n_win; w++) {
		uint64_t ws = T0 + w * WIN, at = ws;
		double yd = 0, ys = 0;

		for (unsigned k = 0; k < N_NAMES; k++) {
			unsigned n = (unsigned)llround(share[w][k] * 100);

			for (unsigned i = 0; i < n; i++, at += MS)
				tb_launch(t, 1, at - 5000, at - 1000, 0, 7, k + 1, FULL, at,
					  at + MS);
			yd += dram[k] * n / 100.0;
			ys += sm[k] * n / 100.0;
			ret_ns[k] += (double)n * MS;
		}
		/* -1, -1/2, 0, 1/2, 1 times the noise: each of the six mixes of varied()
		 * (w = p + 6i) gets all five over its five windows, so the noise has no mean */
		double z = (double)((int)((7 * w + 3) % 5) - 2) / 2;

		yd += z * noise * (yd > noise);
		ys -= z * noise * (ys > noise);
		metric(t, dram_counter, ws, ws + WIN, yd);
		if (dram_counter == GW_COUNTER_DRAM_BW_UTIL)
			metric(t, GW_COUNTER_SM_UTIL, ws, ws + WIN, ys);
	}
}

/* Shares that vary from window to window: three phases, and mixes between them. */
static void varied(double share[][N_NAMES])
{
	for (unsigned w = 0; w < N_WIN; w++) {
		unsigned p = w % 6;

		share[w][0] = p == 0 ? 0.9 : p == 3 ? 0.5 : p == 5 ? 0.2 : 0;
		share[w][1] = p == 1 ? 0.9 : p == 3 ? 0.3 : p == 4 ? 0.4 : 0;
		share[w][2] = p == 2 ? 0.9 : p == 4 ? 0.5 : p == 5 ? 0.6 : 0;
	}
}

static const struct gw_usage_estimate *estimate(const struct gw_analysis *res, const char *name)
{
	for (unsigned i = 0; i < res->counters.n_estimates; i++)
		if (!strncmp(res->counters.estimates[i].name, name, strlen(name)))
			return &res->counters.estimates[i];
	return NULL;
}

/* GPM windows with counter noise: each kernel's use is recovered within a few standard errors,
 * and the classes follow the rule. */
static void test_estimates(void **state)
{
	double share[N_WIN][N_NAMES], ns[N_NAMES], window, bw, li, co;
	const double noise = 0.01;
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	varied(share);
	tb_init(&t);
	tb_device(&t, 0, SMS);
	sampler(&t, GW_SAMPLER_GPM, NULL);
	schedule(&t, share, N_WIN, noise, GW_COUNTER_DRAM_BW_UTIL, ns);
	res = tb_finish(&t);
	assert_true(res->counters.measured);
	assert_int_equal(res->counters.source, GW_SAMPLER_GPM);
	assert_int_equal(res->counters.period_ns, WIN);
	assert_int_equal(res->counters.windows, N_WIN);
	for (unsigned k = 0; k < N_NAMES; k++) {
		const struct gw_usage_estimate *e = estimate(res, names[k]);

		assert_non_null(e);
		assert_int_equal(e->busy_ns, (uint64_t)ns[k]);
		/* the noise is at most 0.01 a window, over 10 or more windows each */
		assert_true(fabs(e->dram - dram[k]) < 0.02);
		assert_true(fabs(e->sm - sm[k]) < 0.02);
		assert_true(e->dram_se > 0 && e->dram_se < 0.02);
		assert_true(fabs(e->dram - dram[k]) < 4 * e->dram_se);
		assert_string_equal(e->confidence, "high");
		assert_true(e->applied);
	}
	assert_int_equal(estimate(res, names[0])->measured_class, GW_BUCKET_BANDWIDTH_BOUND);
	assert_int_equal(estimate(res, names[0])->name_class, GW_BUCKET_BANDWIDTH_BOUND);
	/* named nothing the rules know (compute), but neither DRAM nor SMs are busy */
	assert_int_equal(estimate(res, names[1])->name_class, GW_BUCKET_COMPUTE);
	assert_int_equal(estimate(res, names[1])->measured_class, GW_BUCKET_LOW_INTENSITY);
	assert_int_equal(estimate(res, names[2])->measured_class, GW_BUCKET_COMPUTE);
	/* every kernel fills the device: each bucket is its kernels' time over the window */
	window = (double)(res->end_ns - res->start_ns);
	bw = ns[0] / window;
	li = ns[1] / window;
	co = ns[2] / window;
	assert_true(fabs(res->breakdown[GW_BUCKET_BANDWIDTH_BOUND] - bw) < 1e-9);
	assert_true(fabs(res->breakdown[GW_BUCKET_LOW_INTENSITY] - li) < 1e-9);
	assert_true(fabs(res->breakdown[GW_BUCKET_COMPUTE] - co) < 1e-9);
	assert_true(fabs(res->counters.reclassified_share - ns[1] / (ns[0] + ns[1] + ns[2])) <
		    1e-12);
	/* the kernels' table shows the counters' class */
	for (unsigned i = 0; i < res->n_kernels; i++)
		if (!strncmp(res->kernels[i].name, names[1], strlen(names[1])))
			assert_int_equal(res->kernels[i].cls, GW_BUCKET_LOW_INTENSITY);
	/* the measured mean: windows cover the whole device window */
	{
		double sum = 0, len = 0;

		for (unsigned w = 0; w < N_WIN; w++) {
			double y = 0;

			for (unsigned k = 0; k < N_NAMES; k++)
				y += dram[k] * share[w][k];
			sum += y;
			len += 1;
		}
		/* the device window starts at the first kernel and ends at the last: the
		 * first and last windows' idle tails are outside it */
		assert_true(fabs(res->util.memory_bandwidth - sum / len) < 0.05);
	}
	assert_int_equal(res->counters.n_series, 2);
	assert_int_equal(res->counters.series[0].n, N_WIN);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* Two kernels that only ever run in one proportion: the windows give their sum, not each, so
 * their estimates have no error bars, low confidence, and the names stay. */
static void test_collinear(void **state)
{
	double share[N_WIN][N_NAMES], ns[N_NAMES];
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	for (unsigned w = 0; w < N_WIN; w++) {
		double load = 0.2 + 0.02 * (w % 10);

		share[w][0] = load;
		share[w][1] = load;
		share[w][2] = w % 3 ? 0 : 0.2;
	}
	tb_init(&t);
	tb_device(&t, 0, SMS);
	schedule(&t, share, N_WIN, 0, GW_COUNTER_DRAM_BW_UTIL, ns);
	res = tb_finish(&t);
	for (unsigned k = 0; k < 2; k++) {
		const struct gw_usage_estimate *e = estimate(res, names[k]);

		assert_non_null(e);
		assert_true(e->dram_se < 0);
		assert_string_equal(e->confidence, "low");
		assert_false(e->applied);
	}
	/* their sum is what the windows do say */
	assert_true(fabs(estimate(res, names[0])->dram + estimate(res, names[1])->dram - dram[0] -
			 dram[1]) < 1e-3);
	assert_true(estimate(res, names[2])->applied);
	/* names kept: my_update_kernel is compute by name */
	assert_true(fabs(res->breakdown[GW_BUCKET_LOW_INTENSITY]) < 1e-12);
	gw_analysis_free(res);
}

/* Utilization samples time memory use, not bandwidth: estimated and shown, never a class. */
static void test_samples(void **state)
{
	double share[N_WIN][N_NAMES], ns[N_NAMES];
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	varied(share);
	tb_init(&t);
	tb_device(&t, 0, SMS);
	sampler(&t, GW_SAMPLER_SAMPLES, NULL);
	schedule(&t, share, N_WIN, 0, GW_COUNTER_MEMORY_BUSY, ns);
	res = tb_finish(&t);
	assert_true(res->counters.measured);
	assert_int_equal(res->counters.source, GW_SAMPLER_SAMPLES);
	assert_true(res->util.memory_bandwidth < 0);
	assert_int_equal(res->counters.n_estimates, N_NAMES);
	for (unsigned i = 0; i < res->counters.n_estimates; i++) {
		assert_false(res->counters.estimates[i].applied);
		assert_true(res->counters.estimates[i].sm < 0);
	}
	assert_true(fabs(res->breakdown[GW_BUCKET_LOW_INTENSITY]) < 1e-12);
	gw_analysis_free(res);
}

/* No windows: the sampler's reason; METRIC records of an unknown kind or of no length, and of
 * a device without work, change nothing. */
static void test_none(void **state)
{
	double share[1][N_NAMES] = {{0.5, 0, 0}}, ns[N_NAMES];
	struct gw_analysis *res;
	struct gw_record r = {.type = GW_REC_METRIC};
	struct tb t;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	sampler(&t, GW_SAMPLER_NONE, "NVML refused to start");
	schedule(&t, share, 0, 0, GW_COUNTER_DRAM_BW_UTIL, ns);
	tb_launch(&t, 1, T0 - 5000, T0 - 1000, 0, 7, 1, FULL, T0, T0 + MS);
	r.metric = (struct gw_rec_metric){0, 99, T0, T0 + WIN, 5}; /* unknown kind */
	tb_add(&t, &r);
	r.metric = (struct gw_rec_metric){0, GW_COUNTER_DRAM_BW_UTIL, T0, T0, 5}; /* no length */
	tb_add(&t, &r);
	r.metric = (struct gw_rec_metric){3, GW_COUNTER_DRAM_BW_UTIL, T0, T0 + WIN, 5}; /* idle */
	tb_add(&t, &r);
	res = tb_finish(&t);
	assert_false(res->counters.measured);
	assert_string_equal(res->counters.reason, "NVML refused to start");
	assert_true(res->util.memory_bandwidth < 0);
	assert_int_equal(res->counters.n_estimates, 0);
	assert_true(fabs(res->breakdown[GW_BUCKET_BANDWIDTH_BOUND] - 1) < 1e-12);
	gw_analysis_free(res);
}

/* A corrupt trace whose windows all cover the same span: fitting every operation to every
 * window would be quadratic; past the budget (64 per window and operation, plus a million)
 * the device gets no estimates, and the report is otherwise whole. */
static void test_overlapping(void **state)
{
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, names[0]);
	for (unsigned i = 0; i < 2000; i++)
		tb_launch(&t, 1, T0 + i * MS - 5000, T0 + i * MS - 1000, 0, 7, 1, FULL, T0 + i * MS,
			  T0 + (i + 1) * MS);
	/* 2000 operations x 3000 windows = 6 million overlaps > 64 x 5000 + 1 million */
	for (unsigned w = 0; w < 3000; w++)
		metric(&t, GW_COUNTER_DRAM_BW_UTIL, T0, T0 + 2000 * MS, 0.5);
	res = tb_finish(&t);
	assert_true(res->counters.measured);
	assert_int_equal(res->counters.n_estimates, 0);
	assert_true(fabs(res->util.memory_bandwidth - 0.5) < 1e-6);
	assert_true(fabs(res->breakdown[GW_BUCKET_BANDWIDTH_BOUND] - 1) < 1e-9);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimates),   cmocka_unit_test(test_collinear),
		cmocka_unit_test(test_samples),	    cmocka_unit_test(test_none),
		cmocka_unit_test(test_overlapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
