/* SPDX-License-Identifier: MIT */
/* Dependency chains versus small batches, and fusion candidates among tiny kernels. */
#include <stdio.h>

#include "analysis-test-util.h"

#define SMS   4
#define SMALL 4 /* 4 of 32 blocks: fill 0.125 */
#define DUR   10000
#define STEP  11000 /* kernels 1 us apart, each launched long before: queued gaps */

/* n kernels on stream 7, names from ids[i % period] (ids start at 1). */
static struct gw_analysis *run_loop(unsigned n, unsigned period, bool distinct, bool overlap_at_20)
{
	struct tb t;
	char name[32];

	tb_init(&t);
	tb_device(&t, 0, SMS);
	for (unsigned i = 1; i <= (distinct ? n : period); i++) {
		snprintf(name, sizeof(name), "rnn_step_%c%c", 'a' + (i / 26) % 26, 'a' + i % 26);
		tb_string(&t, i, name);
	}
	tb_string(&t, 100, "other_stream_op");
	for (unsigned i = 0; i < n; i++) {
		uint64_t id = distinct ? i + 1 : i % period + 1;

		tb_launch(&t, 1, i * 100, i * 100 + 50, 0, 7, id, SMALL, (uint64_t)i * STEP,
			  (uint64_t)i * STEP + DUR);
	}
	if (overlap_at_20)
		tb_launch(&t, 1, 5000, 5050, 0, 8, 100, SMALL, 20 * STEP, 20 * STEP + DUR);
	return tb_finish(&t);
}

static void period_one_chain(void **state)
{
	struct gw_analysis *res = run_loop(40, 1, false, false);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 40.0 * DUR * 0.875 * SMS, 1e-3);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 0, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 40.0 * DUR * 0.125 * SMS, 1e-3);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 39.0 * 1000 * SMS, 1e-6);
	assert_int_equal(res->top_idle, GW_BUCKET_DEPENDENCY_CHAIN);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

static void period_two_chain(void **state)
{
	struct gw_analysis *res = run_loop(40, 2, false, false);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 40.0 * DUR * 0.875 * SMS, 1e-3);
	gw_analysis_free(res);
}

/* Period 4 is the longest; a 5-kernel loop body is heterogeneous layers. */
static void period_limits(void **state)
{
	struct gw_analysis *res = run_loop(80, 4, false, false);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 80.0 * DUR * 0.875 * SMS, 1e-3);
	gw_analysis_free(res);
	res = run_loop(100, 5, false, false);
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 0, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 100.0 * DUR * 0.875 * SMS, 1e-3);
	gw_analysis_free(res);
}

static void heterogeneous_is_small_batch(void **state)
{
	struct gw_analysis *res = run_loop(40, 1, true, false);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 0, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 40.0 * DUR * 0.875 * SMS, 1e-3);
	assert_int_equal(res->top_idle, GW_BUCKET_SMALL_BATCH);
	gw_analysis_free(res);
}

/* "At least 16 times in a row": 16 repeats are a chain, 15 are not. */
static void sixteen_repeats(void **state)
{
	struct gw_analysis *res = run_loop(16, 1, false, false);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 16.0 * DUR * 0.875 * SMS, 1e-3);
	gw_analysis_free(res);
	res = run_loop(15, 1, false, false);
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 0, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 15.0 * DUR * 0.875 * SMS, 1e-3);
	gw_analysis_free(res);
}

/* A kernel of another stream overlapping step 20 breaks the chain there: steps 0-19 and
 * 21-39 stay chains (20 and 19 repeats); while step 20 and the other kernel run, fill is
 * 0.25 and the unfilled 0.75 is small_batch. */
static void overlap_breaks_chain(void **state)
{
	struct gw_analysis *res = run_loop(40, 1, false, true);

	(void)state;
	assert_near(tb_sm(res, GW_BUCKET_DEPENDENCY_CHAIN), 39.0 * DUR * 0.875 * SMS, 1e-3);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 1.0 * DUR * 0.75 * SMS, 1e-3);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 41.0 * DUR * 0.125 * SMS, 1e-3);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * Tiny kernels and fusion: 5 iterations of [scale (2 us), shift (2 us), clip (2 us)] with
 * 1 us between them, then a 50 us gemm. The repeated 3-kernel sequence is the candidate;
 * each occurrence gives back its 2 inner gaps (2 us): 10 us in all.
 */
static void fusion_candidates(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	uint64_t at = 0;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "scale_kernel");
	tb_string(&t, 2, "shift_kernel");
	tb_string(&t, 3, "clip_kernel");
	tb_string(&t, 4, "sgemm_kernel");
	for (int it = 0; it < 5; it++) {
		for (uint64_t k = 1; k <= 3; k++) {
			tb_launch(&t, 1, 0, 10, 0, 7, k, 32, at, at + 2000);
			at += 3000;
		}
		tb_launch(&t, 1, 0, 10, 0, 7, 4, 32, at, at + 50000);
		at += 51000;
	}
	res = tb_finish(&t);
	assert_int_equal(res->counts.tiny_kernels, 15);
	assert_int_equal(res->n_tiny_kernels, 3);
	assert_int_equal(res->tiny_kernels[0].count, 5);
	assert_int_equal(res->tiny_kernels[0].total_ns, 10000);
	assert_int_equal(res->n_fusion, 1);
	assert_int_equal(res->fusion[0].n_kernels, 3);
	assert_string_equal(res->fusion[0].names[0], "scale_kernel");
	assert_string_equal(res->fusion[0].names[2], "clip_kernel");
	assert_int_equal(res->fusion[0].occurrences, 5);
	assert_int_equal(res->fusion[0].kernel_ns, 30000);
	assert_int_equal(res->fusion[0].saved_ns, 10000);
	gw_analysis_free(res);
}

/* A launch call whose stack id is `stack` and the kernel it caused, on stream 7. */
static void launch_from(struct tb *t, uint64_t dev, uint64_t stack, uint64_t name_id, uint64_t s,
			uint64_t e)
{
	struct gw_record api = tb_api_rec(t, 1, 0, 10, dev, GW_API_LAUNCH, GW_SYNC_NONE);
	struct gw_record k = tb_kernel_rec(api.api.correlation, dev, 7, name_id, 32, s, e);

	api.api.kernel_name_id = name_id;
	api.api.stack_id = stack;
	tb_add(t, &api);
	tb_add(t, &k);
}

/*
 * A fusion candidate's site is the launch site of its first kernel, on its own device: device 0
 * runs one 50 us gemm launched from stack 5; device 1 runs [scale, shift] (2 us each, 1 us
 * apart) 3 times, all launched from stack 7. The candidate is on device 1: stack 7.
 */
static void fusion_site_second_device(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	uint64_t at = 0;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_device(&t, 1, SMS);
	tb_string(&t, 1, "scale_kernel");
	tb_string(&t, 2, "shift_kernel");
	tb_string(&t, 4, "sgemm_kernel");
	launch_from(&t, 0, 5, 4, 0, 50000);
	for (int it = 0; it < 3; it++) {
		for (uint64_t k = 1; k <= 2; k++) {
			launch_from(&t, 1, 7, k, at, at + 2000);
			at += 3000;
		}
		at += 20000;
	}
	res = tb_finish(&t);
	assert_int_equal(res->n_fusion, 1);
	assert_int_equal(res->fusion[0].n_kernels, 2);
	assert_string_equal(res->fusion[0].names[0], "scale_kernel");
	assert_int_equal(res->fusion[0].occurrences, 3);
	assert_int_equal(res->fusion[0].site.stack_id, 7);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(period_one_chain),  cmocka_unit_test(period_two_chain),
		cmocka_unit_test(period_limits),     cmocka_unit_test(heterogeneous_is_small_batch),
		cmocka_unit_test(sixteen_repeats),   cmocka_unit_test(overlap_breaks_chain),
		cmocka_unit_test(fusion_candidates), cmocka_unit_test(fusion_site_second_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
