/* SPDX-License-Identifier: MIT */
/* Steps: which ranges are steps, each step's share of the SM-time, the slowest and what grew. */
#include <stdio.h>

#include "analysis-test-util.h"

#define SMS  4
#define FULL 32 /* 32 blocks of 256 threads fill 4 SMs: fill 1, compute */
#define US   1000ull

static void range(struct tb *t, uint64_t tid, uint64_t s, uint64_t e, const char *name)
{
	struct gw_record r = {.type = GW_REC_RANGE};

	r.range.tid = tid;
	r.range.start_ns = s;
	r.range.end_ns = e;
	r.range.kind = GW_RANGE_PUSH_POP;
	r.range.name = (struct gw_bytes){(const uint8_t *)name, (uint32_t)strlen(name)};
	tb_add(t, &r);
}

/* The step of res named name, or NULL. */
static const struct gw_step *step_named(const struct gw_analysis *res, const char *name)
{
	for (unsigned i = 0; i < res->steps.n; i++)
		if (!strcmp(res->steps.steps[i].name, name))
			return &res->steps.steps[i];
	return NULL;
}

static double step_us(const struct gw_step *s, enum gw_bucket b)
{
	return s->sm_ns[b] / SMS / US;
}

/*
 * Four steps of thread 1, each launching one 300 us kernel; step 2 launches late (host work
 * before it). Thread 2, with no steps of its own, launches a 100 us kernel while step 1 is
 * open: it is step 1's. A range "iteration 1" inside step 1 is no step of its own, "forward"
 * matches no pattern. Times in us:
 *   step 0 [0, 900]       launch [100, 104]   K0 [110, 410]
 *   step 1 [1000, 1900]   launch [1100, 1104] K1 [1110, 1410];  tid 2: [1200, 1204] K1b [1420, 1520]
 *   step 2 [2000, 3400]   launch [2700, 2704] K2 [2710, 3010]
 *   step 3 [3400, 4300]   launch [3500, 3504] K3 [3510, 3810]
 * A kernel's time is its launching step's; idle time is the step's open on the host then (no
 * step open: outside). The gaps (design.md rule C):
 *   [410, 1110]  N = K1, launched at 1104 after the gap began: starved, no sync debt, longer
 *                than 100 us: host work, but the 4 us inside K1's launch call are launch
 *                overhead: step 0 490 host_work, outside 100, step 1 106 + 4 launch_overhead;
 *   [1410, 1420] N = K1b, already queued (its call returned at 1204), 10 us <= 20: launch
 *                overhead (queued), step 1;
 *   [1520, 2710] host work to 2706: step 1 380, outside 100, step 2 706 + 4 launch_overhead;
 *   [3010, 3510] host work to 3506: step 2 390, step 3 106 + 4 launch_overhead.
 * Steps: 0: 300 + 490 = 790 us; 1: 400 + 486 + 14 = 900; 2: 300 + 1096 + 4 = 1400; 3: 410.
 */
static void breakdown_per_step(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	const struct gw_step *s0, *s1, *s2, *s3;
	const struct gw_steps *ss;
	double sum = 0;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	range(&t, 1, 0, 900 * US, "step 0");
	range(&t, 1, 1000 * US, 1900 * US, "step 1");
	range(&t, 1, 1050 * US, 1800 * US, "iteration 1");
	range(&t, 1, 1090 * US, 1500 * US, "forward");
	range(&t, 1, 2000 * US, 3400 * US, "step 2");
	range(&t, 1, 3400 * US, 4300 * US, "step 3");
	tb_launch(&t, 1, 100 * US, 104 * US, 0, 7, 1, FULL, 110 * US, 410 * US);
	tb_launch(&t, 1, 1100 * US, 1104 * US, 0, 7, 1, FULL, 1110 * US, 1410 * US);
	tb_launch(&t, 2, 1200 * US, 1204 * US, 0, 7, 1, FULL, 1420 * US, 1520 * US);
	tb_launch(&t, 1, 2700 * US, 2704 * US, 0, 7, 1, FULL, 2710 * US, 3010 * US);
	tb_launch(&t, 1, 3500 * US, 3504 * US, 0, 7, 1, FULL, 3510 * US, 3810 * US);
	res = tb_finish(&t);
	ss = &res->steps;

	assert_int_equal(ss->n, 4);
	assert_int_equal(ss->ranges, 6);
	s0 = step_named(res, "step 0");
	s1 = step_named(res, "step 1");
	s2 = step_named(res, "step 2");
	s3 = step_named(res, "step 3");
	assert_true(s0 && s1 && s2 && s3);
	assert_ptr_equal(s0, &ss->steps[0]); /* in time order */
	assert_ptr_equal(s3, &ss->steps[3]);
	assert_int_equal(s1->ops, 2); /* thread 2's kernel too */
	assert_int_equal(s1->duration_ns, 900 * US);

	assert_near(step_us(s0, GW_BUCKET_COMPUTE), 300, 1e-6);
	assert_near(step_us(s0, GW_BUCKET_HOST_WORK), 490, 1e-6);
	assert_near(s0->device_ns, 790 * US, 1e-3);
	assert_near(step_us(s1, GW_BUCKET_COMPUTE), 400, 1e-6);
	assert_near(step_us(s1, GW_BUCKET_HOST_WORK), 486, 1e-6);
	assert_near(step_us(s1, GW_BUCKET_LAUNCH_OVERHEAD), 14, 1e-6);
	assert_near(s1->device_ns, 900 * US, 1e-3);
	assert_near(step_us(s2, GW_BUCKET_HOST_WORK), 1096, 1e-6);
	assert_near(step_us(s2, GW_BUCKET_LAUNCH_OVERHEAD), 4, 1e-6);
	assert_near(s2->device_ns, 1400 * US, 1e-3);
	assert_near(step_us(s3, GW_BUCKET_HOST_WORK), 106, 1e-6);
	assert_near(s3->device_ns, 410 * US, 1e-3);
	assert_near(s2->breakdown[GW_BUCKET_COMPUTE], 300.0 / 1400.0, 1e-12);
	/* the steps hold the window (110..3810 us) but the 200 us no step was open */
	for (unsigned i = 0; i < ss->n; i++)
		sum += ss->steps[i].device_ns;
	assert_near(sum, 3500 * US, 1e-3);
	assert_near(ss->sm_share, 3500.0 / 3700.0, 1e-12);

	/* durations 900, 900, 1400, 900: median 900, p90 (nearest rank 4 of 4) 1400 */
	assert_int_equal(ss->median_ns, 900 * US);
	assert_int_equal(ss->p90_ns, 1400 * US);
	assert_int_equal(ss->max_ns, 1400 * US);
	assert_int_equal(ss->mean_ns, 1025 * US);
	/* host_work of the steps 490, 486, 1096, 106: median (486 + 490) / 2 */
	assert_near(ss->median_bucket_ns[GW_BUCKET_HOST_WORK], 488 * US, 1e-3);
	assert_near(ss->mean_bucket_ns[GW_BUCKET_COMPUTE], 325 * US, 1e-3);

	/* only step 2 is slower than the median: +500 us, host_work 608 us over its median, the
	 * host's wait for K2's and K3's launches */
	assert_int_equal(ss->n_slow, 1);
	assert_ptr_equal(&ss->steps[ss->slow[0].step], s2);
	assert_int_equal(ss->slow[0].over_ns, 500 * US);
	assert_int_equal(ss->slow[0].bucket, GW_BUCKET_HOST_WORK);
	assert_near(ss->slow[0].bucket_over_ns, 608 * US, 1e-3);
	assert_non_null(ss->slow[0].what);
	assert_string_equal(ss->slow[0].what, "sgemm_kernel");
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * The slow part at a step's end, and a sync: each step launches a 1 ms kernel 100 us in; step 2
 * then calls cudaDeviceSynchronize at 150 us (it waits 960 us, to the kernel's end) and the
 * host works on until its range closes 7 ms in (a checkpoint). Times in us, step i at 2000 i
 * (step 3 at 11000):
 *   gap [5110, 11110] before step 3's kernel: the sync's debt 960 host_sync, then host work to
 *   11106 (after the sync): step 2 holds [5110, 11000]: 960 host_sync + 4930 host_work.
 *   Each gap before a step's kernel leaves 890 us of host work in the step before and 106 in
 *   its own: host_work per step 890, 996, 106 + 4930 = 5036, 106; median 943.
 */
static void slow_step_names_the_sync(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record r;
	const struct gw_steps *ss;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	r = (struct gw_record){.type = GW_REC_STRING};
	r.string.id = 2;
	r.string.kind = GW_STRING_API;
	r.string.text = (struct gw_bytes){(const uint8_t *)"cudaDeviceSynchronize", 21};
	tb_add(&t, &r);
	for (int i = 0; i < 4; i++) {
		uint64_t s = (uint64_t)i * 2000 * US + (i > 2 ? 5000 * US : 0);
		char name[16];

		snprintf(name, sizeof(name), "step %d", i);
		range(&t, 1, s, s + (i == 2 ? 7000 : 2000) * US, name);
		tb_launch(&t, 1, s + 100 * US, s + 104 * US, 0, 7, 1, FULL, s + 110 * US,
			  s + 1110 * US);
		if (i == 2) {
			r = tb_api_rec(&t, 1, s + 150 * US, s + 1111 * US, 0, GW_API_SYNC,
				       GW_SYNC_EXPLICIT);
			r.api.name_id = 2;
			r.api.stack_id = 0;
			tb_add(&t, &r);
		}
	}
	res = tb_finish(&t);
	ss = &res->steps;
	assert_int_equal(ss->n, 4);
	/* durations 2, 2, 7, 2 ms: step 2 is 5 ms over; the gap after its kernel, up to step 3's
	 * kernel (1110 .. 2110 + 5000 us into step 2's start), owned by step 3: the debt (961 us)
	 * is host_sync, the rest host_work after cudaDeviceSynchronize */
	assert_int_equal(ss->n_slow, 1);
	assert_int_equal(ss->slow[0].over_ns, 5000 * US);
	assert_string_equal(ss->steps[ss->slow[0].step].name, "step 2");
	assert_near(step_us(&ss->steps[2], GW_BUCKET_HOST_SYNC), 960, 1e-6);
	assert_near(step_us(&ss->steps[2], GW_BUCKET_HOST_WORK), 5036, 1e-6);
	assert_near(ss->steps[2].device_ns, 7000 * US, 1e-3);
	assert_int_equal(ss->slow[0].bucket, GW_BUCKET_HOST_WORK);
	assert_near(ss->slow[0].bucket_over_ns, (5036 - 943) * US, 1e-3);
	assert_string_equal(ss->slow[0].what, "cudaDeviceSynchronize");
	gw_analysis_free(res);
}

/* The default pattern: which names are steps. Each range is alone in time on its thread. */
static void default_pattern(void **state)
{
	static const char *const steps[] = {"ProfilerStep#12", "step",		"Step 3",
					    "train_step",      "training_step", "iteration#4",
					    "global_step=7",   "iter 9",	"STEP_10"};
	static const char *const others[] = {"optimizer.step", "Optimizer.step#SGD.step",
					     "forward",	       "step_fn",
					     "stepping",       "ProfilerStep",
					     "my step 3",      "data loading"};
	struct tb t;
	struct gw_analysis *res;
	uint64_t tid = 1;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 9, 0, 4 * US, 0, 7, 1, FULL, 10 * US, 20 * US);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		range(&t, tid++, 0, 10 * US, steps[i]);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		range(&t, tid++, 0, 10 * US, others[i]);
	res = tb_finish(&t);
	assert_int_equal(res->steps.n, sizeof(steps) / sizeof(steps[0]));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		assert_non_null(step_named(res, steps[i]));
	assert_string_equal(res->steps.pattern, GW_STEPS_DEFAULT);
	gw_analysis_free(res);
}

/* A registered name (its STRING after the range), a pattern of one's own, and "" (none). */
static void patterns_and_registered_names(void **state)
{
	static const char *const patterns[] = {NULL, "^fwd$", ""};
	static const unsigned want[] = {2, 1, 0};

	(void)state;
	for (int p = 0; p < 3; p++) {
		struct gw_analysis_options opt;
		struct gw_record r = {.type = GW_REC_RANGE};
		struct tb t;
		struct gw_analysis *res;

		gw_analysis_options_init(&opt);
		opt.symbolize = false;
		opt.steps_pattern = patterns[p];
		tb_init_opt(&t, &opt);
		tb_device(&t, 0, SMS);
		tb_string(&t, 1, "sgemm_kernel");
		tb_launch(&t, 1, 0, 4 * US, 0, 7, 1, FULL, 10 * US, 20 * US);
		range(&t, 1, 0, 30 * US, "step 1");
		range(&t, 1, 100 * US, 130 * US, "fwd");
		r.range.tid = 1;
		r.range.start_ns = 200 * US;
		r.range.end_ns = 230 * US;
		r.range.kind = GW_RANGE_START_END;
		r.range.name_id = 5;
		tb_add(&t, &r);
		r = (struct gw_record){.type = GW_REC_STRING};
		r.string.id = 5;
		r.string.kind = GW_STRING_RANGE;
		r.string.text = (struct gw_bytes){(const uint8_t *)"step 2", 6};
		tb_add(&t, &r);
		res = tb_finish(&t);
		assert_int_equal(res->steps.n, want[p]);
		if (p == 0)
			assert_non_null(step_named(res, "step 2"));
		if (p == 2) {
			/* no steps: the most frequent names are offered */
			assert_int_equal(res->steps.n_names, 3);
			assert_int_equal(res->steps.ranges, 3);
		}
		gw_analysis_free(res);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(breakdown_per_step),
		cmocka_unit_test(slow_step_names_the_sync),
		cmocka_unit_test(default_pattern),
		cmocka_unit_test(patterns_and_registered_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
