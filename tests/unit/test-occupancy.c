/* SPDX-License-Identifier: MIT */
/*
 * Blocks per SM as the hardware allocates them, for compute capabilities 7.0 to 12.0, one row
 * per limit, against values worked out by hand from the CUDA occupancy calculator's rules
 * (CUDA C Programming Guide, "Occupancy Calculator"; the per-architecture constants are the
 * Guide's table of technical specifications):
 *   warps      floor(max warps per SM / ceil(threads / 32))
 *   registers  registers per warp = roundup(regs x 32, 256); each of the SM's 4 sub-partitions
 *              holds floor(regs per SM / 4 / that) warps; blocks = floor(4 x those / warps
 *              per block)
 *   shared     per block = roundup(static + dynamic + reserved, granularity), reserved 1 KiB
 *              and granularity 128 B from 8.0 (256 B and none before); blocks = floor(the
 *              SM's carveout / that)
 *   blocks     the SM's block slots (and from 9.0 its block barriers, one a block)
 * Then the fill of a wave with clusters and green contexts.
 */
#include "analysis-test-util.h"

#define KIB 1024ull

/* Devices as CUPTI's device record describes them. */
static const struct gw_device_limits v100 = {80, 2048, 32, 65536, 96 * KIB, 32, 7, 0},
				     t4 = {40, 1024, 16, 65536, 64 * KIB, 32, 7, 5},
				     a100 = {108, 2048, 32, 65536, 164 * KIB, 32, 8, 0},
				     a10 = {72, 1536, 16, 65536, 100 * KIB, 32, 8, 6},
				     h100 = {132, 2048, 32, 65536, 228 * KIB, 32, 9, 0},
				     b200 = {148, 2048, 32, 65536, 228 * KIB, 32, 10, 0},
				     rtx5090 = {170, 1536, 24, 65536, 100 * KIB, 32, 12, 0};

struct row {
	const char *what;
	const struct gw_device_limits *dev;
	struct gw_kernel_shape k;
	uint64_t blocks_per_sm;
	unsigned limit;
};

#define SHAPE(threads, regs, smem)                                                                 \
	{                                                                                          \
		.threads_per_block = threads, .regs_per_thread = regs, .dynamic_smem_bytes = smem  \
	}

static const struct row rows[] = {
	/* warps 64 / 32 = 2; registers 512 a warp, 32 a sub-partition, 128 / 32 = 4 */
	{"H100 1024 threads", &h100, SHAPE(1024, 16, 0), 2, GW_OCC_LIMIT_THREADS},
	/* 33 x 32 = 1056 -> 1280 a warp; 16384 / 1280 = 12 a sub-partition, 48 / 8 = 6
	 * (without the granularity: 65536 / (33 x 256) = 7); warps 64 / 8 = 8 */
	{"H100 33 registers", &h100, SHAPE(256, 33, 0), 6, GW_OCC_LIMIT_REGISTERS},
	/* 16384 + 1024 reserved = 17408; 233472 / 17408 = 13 (without: 14); warps 16,
	 * registers 128 / 4 = 32, slots 32 */
	{"H100 16 KiB shared", &h100, SHAPE(128, 16, 16 * KIB), 13, GW_OCC_LIMIT_SHARED_MEMORY},
	/* warps 64, registers 128, shared 233472 / 1024 = 228: the 32 slots */
	{"H100 32 threads", &h100, SHAPE(32, 16, 0), 32, GW_OCC_LIMIT_BLOCKS},
	/* the 100 KiB carveout it ran with: 102400 / 17408 = 5 */
	{"H100 16 KiB, 100 KiB carveout",
	 &h100,
	 {.threads_per_block = 128,
	  .regs_per_thread = 16,
	  .dynamic_smem_bytes = 16 * KIB,
	  .smem_executed_bytes = 100 * KIB},
	 5,
	 GW_OCC_LIMIT_SHARED_MEMORY},
	/* 100 KiB + 1 KiB = 103424 over the 48 KiB default: opt-in; 233472 / 103424 = 2 */
	{"H100 100 KiB opt-in",
	 &h100,
	 {.threads_per_block = 128,
	  .regs_per_thread = 16,
	  .dynamic_smem_bytes = 100 * KIB,
	  .smem_optin = true},
	 2,
	 GW_OCC_LIMIT_SHARED_MEMORY},
	/* the same launch whose trace does not say opt-in: it ran, so it was */
	{"H100 100 KiB, opt-in unrecorded", &h100, SHAPE(128, 16, 100 * KIB), 2,
	 GW_OCC_LIMIT_SHARED_MEMORY},
	/* 167936 / 17408 = 9 */
	{"A100 16 KiB shared", &a100, SHAPE(128, 16, 16 * KIB), 9, GW_OCC_LIMIT_SHARED_MEMORY},
	/* 1280 a warp: 12 a sub-partition, 48 / 8 = 6; warps 8 */
	{"A100 33 registers", &a100, SHAPE(256, 33, 0), 6, GW_OCC_LIMIT_REGISTERS},
	/* warps 48 / 8 = 6; registers 1024 a warp, 16 a sub-partition, 64 / 8 = 8 */
	{"A10 256 threads", &a10, SHAPE(256, 32, 0), 6, GW_OCC_LIMIT_THREADS},
	/* warps 48 / 2 = 24, registers 128 / 2 = 64, shared 102400 / 1024 = 100: 16 slots */
	{"A10 64 threads", &a10, SHAPE(64, 16, 0), 16, GW_OCC_LIMIT_BLOCKS},
	/* no reservation, 256 B units: 98304 / 16384 = 6; warps 16, registers 32 */
	{"V100 16 KiB shared", &v100, SHAPE(128, 16, 16 * KIB), 6, GW_OCC_LIMIT_SHARED_MEMORY},
	/* 1280 a warp: 12 a sub-partition, 48 / 8 = 6; warps 8 */
	{"V100 33 registers", &v100, SHAPE(256, 33, 0), 6, GW_OCC_LIMIT_REGISTERS},
	/* warps 32 / 8 = 4; registers 128 / 8 = 16; slots 16 */
	{"T4 256 threads", &t4, SHAPE(256, 16, 0), 4, GW_OCC_LIMIT_THREADS},
	/* 32768 + 1024 = 33792; 233472 / 33792 = 6; warps 16, registers 32 */
	{"B200 32 KiB shared", &b200, SHAPE(128, 16, 32 * KIB), 6, GW_OCC_LIMIT_SHARED_MEMORY},
	/* warps 48, registers 128, shared 102400 / 1024 = 100: 24 slots; from 9.0 every block
	 * also takes a block barrier, and 12.x has one per slot (9.0 and 10.0 two): a tie */
	{"RTX 5090 32 threads", &rtx5090, SHAPE(32, 16, 0), 24,
	 GW_OCC_LIMIT_BLOCKS | GW_OCC_LIMIT_OTHER},
};

static void calculator_rules(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gw_occupancy o;

		gw_occupancy(rows[i].dev, &rows[i].k, &o);
		print_message("%-34s %3llu blocks/SM, limits 0x%x%s\n", rows[i].what,
			      (unsigned long long)o.blocks_per_sm, o.limits,
			      o.exact ? "" : " (plain limits)");
		assert_true(o.exact);
		assert_int_equal(o.blocks_per_sm, rows[i].blocks_per_sm);
		assert_int_equal(o.limits, rows[i].limit);
	}
}

/* Without a compute capability (an import that does not say): the plain limits, no
 * granularity or reservation, and the answer says so. */
static void plain_limits(void **state)
{
	struct gw_device_limits d = h100;
	struct gw_kernel_shape k = SHAPE(256, 33, 0);
	struct gw_occupancy o;

	(void)state;
	d.cc_major = d.cc_minor = 0;
	gw_occupancy(&d, &k, &o);
	assert_false(o.exact);
	assert_int_equal(o.blocks_per_sm, 65536 / (33 * 256)); /* 7 */
	assert_int_equal(o.limits, GW_OCC_LIMIT_REGISTERS);
	/* a compute capability the calculator does not know: the same */
	d.cc_major = 42;
	gw_occupancy(&d, &k, &o);
	assert_false(o.exact);
	assert_int_equal(o.blocks_per_sm, 7);
	/* a block over the SM's registers still holds one (it ran) */
	k = (struct gw_kernel_shape)SHAPE(1024, 255, 0);
	gw_occupancy(&h100, &k, &o);
	assert_int_equal(o.blocks_per_sm, 1);
}

/* One block per SM: 1024 threads at 64 registers take the SM's 64 Ki registers. */
#define ONE_PER_SM(n)                                                                              \
	{                                                                                          \
		.blocks = n, .threads_per_block = 1024, .regs_per_thread = 64                      \
	}

static void clusters_and_contexts(void **state)
{
	struct gw_kernel_shape k = ONE_PER_SM(128);
	struct gw_occupancy o;

	(void)state;
	gw_occupancy(&h100, &k, &o);
	assert_int_equal(o.blocks_per_sm, 1);
	/* 128 blocks on 132 SMs */
	assert_near(gw_kernel_fill(&h100, &k), 128.0 / 132.0, 1e-12);
	/* clusters of 8: a wave holds 16 whole clusters (128 blocks); the same one wave */
	k.cluster_blocks = 8;
	assert_near(gw_kernel_fill(&h100, &k), 128.0 / 132.0, 1e-12);
	/* 264 blocks: two full waves without clusters, three with (128 + 128 + 8) */
	k.blocks = 264;
	assert_near(gw_kernel_fill(&h100, &k), 264.0 / (3 * 132.0), 1e-12);
	k.cluster_blocks = 0;
	assert_near(gw_kernel_fill(&h100, &k), 1.0, 1e-12);
	/* a green context of 16 SMs: 264 blocks in ceil(264 / 16) = 17 waves of the device's
	 * 132 slots, of which 16 work */
	k.context_sms = 16;
	assert_near(gw_kernel_fill(&h100, &k), 264.0 / (17 * 132.0), 1e-12);
	/* a context at least as large as the device is the device */
	k.context_sms = 200;
	assert_near(gw_kernel_fill(&h100, &k), 1.0, 1e-12);
	/* a cluster larger than a context's wave: one cluster at a time */
	k = (struct gw_kernel_shape)ONE_PER_SM(32);
	k.cluster_blocks = 16;
	k.context_sms = 8;
	assert_near(gw_kernel_fill(&h100, &k), 32.0 / (2 * 132.0), 1e-12);
}

/* The fill reaches the attribution through the KERNEL and CONTEXT records: a kernel of a
 * 33-SM green context that fills it leaves three quarters of the device unfilled. */
static void green_context_in_attribution(void **state)
{
	struct tb t;
	struct gw_record r = {.type = GW_REC_CONTEXT}, api, k;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, 132);
	r.context =
		(struct gw_rec_context){.device = 0, .context_id = 5, .green = 1, .sm_count = 33};
	tb_add(&t, &r);
	tb_string(&t, 1, "sgemm_kernel");
	/* T_THREADS-thread blocks at 32 registers: the plain limits give 8 per SM, so the
	 * context's wave is 33 x 8 = 264 blocks, a quarter of the device's 132 x 8 slots */
	api = tb_api_rec(&t, 1, 1000, 2000, 0, GW_API_LAUNCH, GW_SYNC_NONE);
	k = tb_kernel_rec(api.api.correlation, 0, 7, 1, 264, 2000, 12000);
	k.kernel.context_id = 5;
	tb_add(&t, &api);
	tb_add(&t, &k);
	res = tb_finish(&t);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 0.25, 1e-9);
	assert_near(res->breakdown[GW_BUCKET_SMALL_BATCH], 0.75, 1e-9);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(calculator_rules),
		cmocka_unit_test(plain_limits),
		cmocka_unit_test(clusters_and_contexts),
		cmocka_unit_test(green_context_in_attribution),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
