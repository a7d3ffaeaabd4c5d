/* SPDX-License-Identifier: MIT */
/* SM fill with the tail effect, and the kernel-name class table. */
#include "analysis-test-util.h"

static const struct gw_device_limits h100 = {
	.sm_count = 132,
	.max_threads_per_sm = 2048,
	.max_blocks_per_sm = 32,
	.regs_per_sm = 65536,
	.smem_per_sm_bytes = 228 * 1024,
	.warp_size = 32,
};

static double fill(uint64_t blocks, uint64_t threads, uint64_t regs)
{
	struct gw_kernel_shape k = {
		.blocks = blocks, .threads_per_block = threads, .regs_per_thread = regs};

	return gw_kernel_fill(&h100, &k);
}

/* The limits without a compute capability: the plain per-SM ones (test-occupancy has the
 * calculator's). */
static void fill_and_tail(void **state)
{
	/* 256 threads, 32 registers: 8 blocks per SM, capacity 132 x 8 = 1056 blocks. */
	(void)state;
	assert_near(fill(528, 256, 32), 0.5, 1e-12);
	assert_near(fill(1056, 256, 32), 1.0, 1e-12);
	/* 1.5 waves run as 2: the last wave is half full, fill 1.5 / 2. */
	assert_near(fill(1584, 256, 32), 0.75, 1e-12);
	/* One block past two full waves: 3 waves for 2112 + 1 blocks. */
	assert_near(fill(2113, 256, 32), 2113.0 / 1056.0 / 3.0, 1e-12);
	assert_near(fill(1, 256, 32), 1.0 / 1056.0, 1e-12);
	assert_near(fill(0, 256, 32), 0.0, 1e-12);
}

static void name_classes(void **state)
{
	bool ok;

	(void)state;
	assert_int_equal(gw_kernel_class("ampere_sgemm_128x64_nn", &ok), GW_BUCKET_COMPUTE);
	assert_true(ok);
	/* Compute names are checked first: "gemm" wins over "add". */
	assert_int_equal(gw_kernel_class("gemm_add_bias", &ok), GW_BUCKET_COMPUTE);
	assert_int_equal(gw_kernel_class("ncclDevKernel_AllReduce", &ok), GW_BUCKET_COMMUNICATION);
	assert_int_equal(gw_kernel_class("layer_norm_fwd", &ok), GW_BUCKET_LOW_INTENSITY);
	assert_int_equal(gw_kernel_class("void transpose<float>(float*, int)", &ok),
			 GW_BUCKET_LOW_INTENSITY);
	assert_int_equal(gw_kernel_class("add_kernel(float*, float const*, int)", &ok),
			 GW_BUCKET_BANDWIDTH_BOUND);
	assert_int_equal(gw_kernel_class("gemv2T_kernel", &ok), GW_BUCKET_BANDWIDTH_BOUND);
	assert_int_equal(gw_kernel_class("vectorized_elementwise_kernel", &ok),
			 GW_BUCKET_BANDWIDTH_BOUND);
	/* Inductor's Triton kernels by their prefix, before any other word in the name. */
	assert_int_equal(gw_kernel_class("triton_poi_fused_convolution_relu_3", &ok),
			 GW_BUCKET_BANDWIDTH_BOUND);
	assert_int_equal(gw_kernel_class("triton_red_fused_add_mean_1", &ok),
			 GW_BUCKET_LOW_INTENSITY);
	assert_int_equal(gw_kernel_class("triton_per_fused__softmax_2", &ok),
			 GW_BUCKET_LOW_INTENSITY);
	assert_int_equal(gw_kernel_class("triton_tem_fused_addmm_0", &ok), GW_BUCKET_COMPUTE);
	assert_true(ok);
	assert_int_equal(gw_kernel_class("Marlin<256, 4, 16, 4, 4, 8>", &ok), GW_BUCKET_COMPUTE);
	assert_true(ok);
	assert_int_equal(gw_kernel_class("dynamic_scaled_fp8_quant_kernel", &ok),
			 GW_BUCKET_BANDWIDTH_BOUND);
	assert_int_equal(gw_kernel_class("cub::DeviceScanKernel<Policy>", &ok),
			 GW_BUCKET_LOW_INTENSITY);
	/* Parameter types are not part of the name: "(float*)" must not classify. */
	assert_int_equal(gw_kernel_class("my_op(float*)", &ok), GW_BUCKET_COMPUTE);
	assert_false(ok);
}

static void bucket_table(void **state)
{
	(void)state;
	assert_string_equal(gw_buckets[GW_BUCKET_HOST_SYNC].key, "host_sync");
	assert_int_equal(gw_buckets[GW_BUCKET_HOST_SYNC].cause, 6);
	assert_int_equal(gw_buckets[GW_BUCKET_BANDWIDTH_BOUND].cause, 1);
	assert_int_equal(gw_bucket_from_key("dependency_chain"), GW_BUCKET_DEPENDENCY_CHAIN);
	assert_true(gw_bucket_from_key("nope") < 0);
}

/* A kernel's fill reaches the buckets: 528 of 1056 blocks is half the SMs. */
static void fill_in_attribution(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, 132);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, 528, 2000, 12000);
	res = tb_finish(&t);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 0.5, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_SMALL_BATCH], 0.5, 1e-9);
	assert_near(res->util.sm_busy, 0.5, 1e-9);
	assert_near(res->util.kernel_active, 1.0, 1e-9);
	assert_int_equal(res->counts.kernels, 1);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fill_and_tail),
		cmocka_unit_test(name_classes),
		cmocka_unit_test(bucket_table),
		cmocka_unit_test(fill_in_attribution),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
