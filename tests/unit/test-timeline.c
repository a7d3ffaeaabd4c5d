/* SPDX-License-Identifier: MIT */
/* State A with concurrent kernels, several devices, and records that arrive out of order. */
#include "analysis-test-util.h"

#define SMS 4 /* 32 blocks of 256 threads fill 4 SMs */

/* Two streams: a gemm at fill 0.5 and an add at fill 0.25 together fill 0.75. The filled
 * share goes to each kernel's class in proportion to its fill; 0.25 is small_batch. */
static void concurrent_below_one(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	tb_string(&t, 2, "add_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 16, 1000, 11000);
	tb_launch(&t, 1, 20, 30, 0, 2, 2, 8, 1000, 11000);
	res = tb_finish(&t);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 0.5, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_BANDWIDTH_BOUND], 0.25, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_SMALL_BATCH], 0.25, 1e-9);
	assert_near(res->util.sm_busy, 0.75, 1e-9);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* Fill 0.75 + 0.5 = 1.25 is capped at 1, shared 0.6 / 0.4; nothing is unfilled. Then the
 * gemm runs alone for as long again at 0.75. */
static void concurrent_capped(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	tb_string(&t, 2, "add_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 24, 1000, 21000);
	tb_launch(&t, 1, 20, 30, 0, 2, 2, 16, 1000, 11000);
	res = tb_finish(&t);
	/* First half: compute 0.6, bandwidth 0.4; second half: compute 0.75, small 0.25. */
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], (0.6 + 0.75) / 2, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_BANDWIDTH_BOUND], 0.4 / 2, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_SMALL_BATCH], 0.25 / 2, 1e-9);
	assert_near(res->util.kernel_active, 1.0, 1e-9);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* Two devices over the same 10 us: 4 SMs full of gemm, 12 SMs half filled. Weighted by SMs:
 * compute (4 + 6) / 16, small_batch 6 / 16; device 1 on its own is half and half. */
static void several_devices(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, 4);
	tb_device(&t, 1, 12);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1000, 11000);
	tb_launch(&t, 1, 20, 30, 1, 1, 1, 48, 1000, 11000); /* 48 of 96 blocks */
	res = tb_finish(&t);
	assert_int_equal(res->n_devices, 2);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 10.0 / 16.0, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_SMALL_BATCH], 6.0 / 16.0, 1e-9);
	for (unsigned i = 0; i < 2; i++) {
		const struct gw_device_result *d = &res->devices[i];

		assert_near(d->breakdown[GW_BUCKET_COMPUTE], d->id == 0 ? 1.0 : 0.5, 1e-9);
		assert_near(d->budget_sm_ns, 10000.0 * (d->id == 0 ? 4 : 12), 1e-6);
	}
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* GPU records arrive in batches after the API records, and not sorted: the same sequence
 * fed reversed gives the same buckets. */
static void out_of_order(void **state)
{
	struct gw_analysis *res[2];

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		struct tb t;
		struct gw_record recs[20];
		int n = 0;

		tb_init(&t);
		tb_device(&t, 0, SMS);
		tb_string(&t, 1, "sgemm_kernel");
		for (uint64_t i = 0; i < 5; i++) {
			/* Launch at 50 us steps, kernel 10 us: 40 us of starvation each (short). */
			recs[n] = tb_api_rec(&t, 1, i * 50000, i * 50000 + 4000, 0, GW_API_LAUNCH,
					     GW_SYNC_NONE);
			recs[n + 1] = tb_kernel_rec(recs[n].api.correlation, 0, 1, 1, 32,
						    i * 50000 + 5000, i * 50000 + 15000);
			n += 2;
		}
		for (int i = 0; i < n; i++)
			tb_add(&t, &recs[pass ? n - 1 - i : i]);
		res[pass] = tb_finish(&t);
	}
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		assert_near(res[0]->breakdown[b], res[1]->breakdown[b], 1e-12);
	/* Window 5 us .. 215 us: 50 us of kernels, 4 gaps of 40 us (launch overhead). */
	assert_near(res[1]->breakdown[GW_BUCKET_COMPUTE], 50.0 / 210.0, 1e-12);
	assert_near(res[1]->breakdown[GW_BUCKET_LAUNCH_OVERHEAD], 160.0 / 210.0, 1e-12);
	assert_int_equal(res[1]->counts.launches, 5);
	assert_int_equal(res[1]->counts.kernels, 5);
	gw_analysis_free(res[0]);
	gw_analysis_free(res[1]);
}

/* The drawing timeline's bins add up to the buckets. */
static void bins_sum_to_buckets(void **state)
{
	struct gw_analysis_options opt;
	struct tb t;
	struct gw_analysis *res;
	double sum[GW_BUCKET_COUNT] = {0};

	(void)state;
	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	opt.timeline_bins = 240;
	tb_init_opt(&t, &opt);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 1000, 0, 1, 1, 16, 2000, 12000);
	tb_launch(&t, 1, 300000, 304000, 0, 1, 1, 32, 305000, 315000);
	res = tb_finish(&t);
	assert_true(res->n_bins > 0);
	for (unsigned i = 0; i < res->n_bins; i++)
		for (int b = 0; b < GW_BUCKET_COUNT; b++)
			sum[b] += res->bins[i].sm_ns[b];
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		assert_near(sum[b], res->sm_ns[b], 1e-3);
	gw_analysis_free(res);
}

/* CUPTI reports 0 for both timestamps of an operation it could not time. Such a kernel, copy
 * or memset is counted, but the window and the breakdown are those of the timed ones alone:
 * here one full gemm over [1000, 11000], so all compute, in a 10 us window. */
static void untimed_ops(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record cp = tb_copy_rec(0, 1, 0, 0, false);
	struct gw_record ms = {.type = GW_REC_MEMSET};
	bool warned = false;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1000, 11000);
	tb_launch(&t, 1, 20, 30, 0, 1, 1, 32, 0, 0);
	tb_add(&t, &cp);
	ms.memset.stream = 1;
	tb_add(&t, &ms);
	res = tb_finish(&t);
	assert_int_equal(res->counts.kernels, 2);
	assert_int_equal(res->counts.memcpy, 1);
	assert_int_equal(res->counts.memset, 1);
	assert_int_equal(res->traces[0].untimed_gpu_ops, 3);
	assert_int_equal(res->start_ns, 1000);
	assert_int_equal(res->end_ns, 11000);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 1.0, 1e-9);
	tb_assert_sums_to_one(res);
	for (unsigned i = 0; i < res->n_warnings; i++)
		warned |= strstr(res->warnings[i], "3 GPU operations came without timestamps") !=
			  NULL;
	assert_true(warned);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(concurrent_below_one), cmocka_unit_test(concurrent_capped),
		cmocka_unit_test(several_devices),	cmocka_unit_test(out_of_order),
		cmocka_unit_test(bins_sum_to_buckets),	cmocka_unit_test(untimed_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
