/* SPDX-License-Identifier: MIT */
/* Memory accounting: live bytes, peak, final, growth, never-freed, kinds, the quadrant. */
#include "analysis-test-util.h"

#define GIB (1ull << 30)
#define S   1000000000ull

static void mem(struct tb *t, uint64_t time, int op, int kind, uint64_t addr, uint64_t bytes,
		uint64_t stack)
{
	struct gw_record r = {.type = GW_REC_MEMORY};

	r.memory.time_ns = time;
	r.memory.op = (uint64_t)op;
	r.memory.mem_kind = (uint64_t)kind;
	r.memory.address = addr;
	r.memory.bytes = op == GW_MEMORY_FREE ? 0 : bytes;
	r.memory.stack_id = stack;
	tb_add(t, &r);
}

/*
 * Device memory: A 1 GiB at 1 s, B 2 GiB at 2 s, free A at 3 s, C 1 GiB at 4 s. Live after
 * each event: 1, 3, 2, 3 GiB. Peak 3 GiB, final 3 GiB; B and C never freed. Least squares
 * over (1,1) (2,3) (3,2) (4,3): slope = sum dx dy / sum dx^2 = 2.5 / 5 = 0.5 GiB/s.
 * Managed (1 GiB) and pinned host (4 GiB) memory are counted apart. Freed out of order.
 */
static struct gw_analysis *run(uint64_t total)
{
	struct tb t;

	tb_init(&t);
	tb_device_mem(&t, 0, 4, total);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1 * S, 4 * S); /* a compute-bound window */
	mem(&t, 3 * S, GW_MEMORY_FREE, GW_MEM_DEVICE, 0xa000, 0, 0);
	mem(&t, 1 * S, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0xa000, 1 * GIB, 1);
	mem(&t, 2 * S, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0xb000, 2 * GIB, 2);
	mem(&t, 4 * S, GW_MEMORY_ALLOC, GW_MEM_ASYNC, 0xc000, 1 * GIB, 1);
	mem(&t, 2 * S + 1, GW_MEMORY_ALLOC, GW_MEM_MANAGED, 0xd000, 1 * GIB, 3);
	mem(&t, 2 * S + 2, GW_MEMORY_ALLOC, GW_MEM_HOST_PINNED, 0xe000, 4 * GIB, 3);
	return tb_finish(&t);
}

static void live_peak_final_growth(void **state)
{
	struct gw_analysis *res = run(4 * GIB);
	uint64_t sites_bytes = 0;

	(void)state;
	assert_int_equal(res->memory.peak_bytes, 3 * GIB);
	assert_int_equal(res->memory.final_bytes, 3 * GIB);
	assert_near(res->memory.growth_bytes_per_s, 0.5 * GIB, 1.0);
	assert_int_equal(res->memory.managed_peak_bytes, 1 * GIB);
	assert_int_equal(res->memory.pinned_peak_bytes, 4 * GIB);
	/* Never freed: B, C (device) and the managed and pinned allocations. */
	assert_int_equal(res->memory.never_freed, 4);
	assert_int_equal(res->memory.never_freed_bytes, (2 + 1 + 1 + 4) * GIB);
	assert_int_equal(res->counts.allocations, 5);
	assert_int_equal(res->counts.frees, 1);
	assert_int_equal(res->memory.total_bytes, 4 * GIB);
	assert_near(res->memory.peak_fraction, 0.75, 1e-12);
	for (unsigned i = 0; i < res->n_alloc_sites; i++)
		sites_bytes += res->alloc_sites[i].bytes;
	assert_int_equal(sites_bytes, (1 + 2 + 1 + 1 + 4) * GIB);
	/* Largest site first: the pinned 4 GiB. */
	assert_int_equal(res->alloc_sites[0].bytes, 4 * GIB);
	/* 75% < 80%: memory low; compute 100%: compute high. */
	assert_false(res->memory_high);
	assert_true(res->compute_high);
	assert_true(res->n_recs >= 1);
	assert_int_equal(res->recs[0].bucket, GW_BUCKET_COUNT);
	gw_analysis_free(res);
}

static void quadrant_memory_high(void **state)
{
	/* 3 GiB of 3.5 GiB = 86% >= 80%. */
	struct gw_analysis *res = run(7 * GIB / 2);

	(void)state;
	assert_true(res->memory_high);
	assert_near(res->memory.peak_fraction, 6.0 / 7.0, 1e-12);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_peak_final_growth),
		cmocka_unit_test(quadrant_memory_high),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
