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
 * each event: 1, 3, 2, 3 GiB. Peak 3 GiB, final 3 GiB; B and C never freed. Growth: one
 * launch call is no span, so the GPU's is the working span; the kernel runs from 1 to 4 s,
 * so the window is [2.5, 4] s, where the curve is 3 GiB for 0.5 s
 * then 2 GiB for 1 s (C comes at the window's end). With t from 2.5 s: integral of y dt =
 * 3.5, of t y dt = 3 * 0.25 / 2 + 2 * (2.25 - 0.25) / 2 = 2.375; slope = (2.375 - 0.75 *
 * 3.5) / (1.5^3 / 12) = -0.25 / 0.28125 = -8/9 GiB/s: memory fell while the kernel ran.
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

static void header(struct tb *t, uint64_t mode)
{
	struct gw_record r = {.type = GW_REC_HEADER};

	r.header.capture_mode = mode;
	r.header.rank = -1;
	tb_add(t, &r);
}

static void counter(struct tb *t, uint64_t time, uint64_t which, uint64_t value)
{
	struct gw_record r = {.type = GW_REC_COUNTER};

	r.counter = (struct gw_rec_counter){.time_ns = time, .counter = which, .value = value};
	tb_add(t, &r);
}

/*
 * A caching allocator (an imported profile): it reports holding 10 GiB from 1 s and 60 GiB
 * from 2 s (of an 80 GiB device), and tensors of 6 and 30 GiB live in it (blocks at 1.5 and
 * 2.5 s, the first freed at 3 s). Device memory is what the allocator held: peak 60 GiB,
 * 75%, not high; the tensors are not device memory of their own (they are inside it), and
 * they used 36 GiB at most. The tensor blocks are allocation sites all the same.
 */
static void caching_allocator(void **state)
{
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	tb_init(&t);
	header(&t, GW_CAPTURE_IMPORT_KINETO);
	tb_device_mem(&t, 0, 4, 80 * GIB);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1 * S, 4 * S);
	counter(&t, 1 * S, GW_COUNTER_ALLOCATOR_RESERVED, 10 * GIB);
	counter(&t, 2 * S, GW_COUNTER_ALLOCATOR_RESERVED, 60 * GIB);
	mem(&t, S + S / 2, GW_MEMORY_ALLOC, GW_MEM_TENSOR, 0xa000, 6 * GIB, 1);
	mem(&t, 2 * S + S / 2, GW_MEMORY_ALLOC, GW_MEM_TENSOR, 0xb000, 30 * GIB, 2);
	mem(&t, 3 * S, GW_MEMORY_FREE, GW_MEM_TENSOR, 0xa000, 0, 0);
	res = tb_finish(&t);
	assert_true(res->memory.recorded);
	assert_int_equal(res->memory.peak_bytes, 60 * GIB);
	assert_int_equal(res->memory.final_bytes, 60 * GIB);
	assert_near(res->memory.peak_fraction, 0.75, 1e-12);
	assert_false(res->memory_high);
	assert_int_equal(res->memory.allocator_reserved_peak_bytes, 60 * GIB);
	assert_int_equal(res->memory.allocator_allocated_peak_bytes, 36 * GIB);
	assert_int_equal(res->n_alloc_sites, 2);
	assert_int_equal(res->alloc_sites[0].bytes, 30 * GIB);
	gw_analysis_free(res);
}

/* An imported profile without a memory record: memory is unknown, never low or high; one of
 * gpuwhy's own captures without an allocation recorded none, and is low. */
static void memory_not_recorded(void **state)
{
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	for (int own = 0; own < 2; own++) {
		tb_init(&t);
		header(&t, own ? GW_CAPTURE_CUPTI : GW_CAPTURE_IMPORT_NSYS);
		tb_device_mem(&t, 0, 4, 80 * GIB);
		tb_string(&t, 1, "sgemm_kernel");
		tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1 * S, 4 * S);
		res = tb_finish(&t);
		assert_int_equal(res->memory.recorded, own);
		assert_false(res->memory_high);
		assert_int_equal(res->memory.peak_bytes, 0);
		gw_analysis_free(res);
	}
}

/*
 * CUPTI's own buffers (COUNTER records with each context): 9.6 MB allocated, up to 800 MB, on
 * device 0 (CUPTI's defaults: 3 and 250 buffers of 3.2 MB); device 1's context says 6.4 MB.
 * The memory section shows the GPU that holds the most, apart from the program's peak (3 GiB
 * of allocations): the profiler's memory, not the program's. A trace without them: unknown.
 */
static void cupti_buffers(void **state)
{
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	for (int with = 0; with < 2; with++) {
		tb_init(&t);
		tb_device_mem(&t, 0, 4, 80 * GIB);
		tb_device_mem(&t, 1, 4, 80 * GIB);
		tb_string(&t, 1, "sgemm_kernel");
		tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1 * S, 4 * S);
		mem(&t, 1 * S, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0xa000, 3 * GIB, 1);
		if (with) {
			struct gw_record r = {.type = GW_REC_COUNTER};

			r.counter = (struct gw_rec_counter){
				.counter = GW_COUNTER_CUPTI_BUFFER_BYTES, .value = 9600000};
			tb_add(&t, &r);
			r.counter.counter = GW_COUNTER_CUPTI_BUFFER_LIMIT_BYTES;
			r.counter.value = 800000000;
			tb_add(&t, &r);
			r.counter =
				(struct gw_rec_counter){.device = 1,
							.counter = GW_COUNTER_CUPTI_BUFFER_BYTES,
							.value = 6400000};
			tb_add(&t, &r);
		}
		res = tb_finish(&t);
		assert_int_equal(res->memory.peak_bytes, 3 * GIB);
		assert_int_equal(res->memory.cupti_buffer_bytes, with ? 9600000 : 0);
		assert_int_equal(res->memory.cupti_buffer_limit_bytes, with ? 800000000 : 0);
		gw_analysis_free(res);
	}
}

static void live_peak_final_growth(void **state)
{
	struct gw_analysis *res = run(4 * GIB);
	uint64_t sites_bytes = 0;

	(void)state;
	assert_int_equal(res->memory.peak_bytes, 3 * GIB);
	assert_int_equal(res->memory.final_bytes, 3 * GIB);
	assert_near(res->memory.growth_bytes_per_s, -8.0 / 9.0 * GIB, 1.0);
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

/*
 * Setup, steady growth, teardown: 8 GiB at 0.5 s before a kernel that runs from 0 to 10 s,
 * 1 GiB more at each of 1, 2, ..., 10 s, everything freed at 11 s. The window is [5, 10] s,
 * where the curve is 13 + floor(t) GiB (t from 5 s). Its slope is 1 minus the slope of the
 * sawtooth frac(t): (5 / 12) / (125 / 12) = 1/25, so 0.96 GiB/s. Neither the setup nor the
 * teardown counts: a fit over the events, the final free among them, would say otherwise.
 */
static void growth_while_working(void **state)
{
	struct gw_analysis *res;
	struct tb t;

	(void)state;
	tb_init(&t);
	tb_device_mem(&t, 0, 4, 64 * GIB);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 0, 10 * S);
	mem(&t, S / 2, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0x1000, 8 * GIB, 1);
	for (uint64_t k = 1; k <= 10; k++)
		mem(&t, k * S, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0x1000 + k * 0x100, GIB, 2);
	mem(&t, 11 * S, GW_MEMORY_FREE, GW_MEM_DEVICE, 0x1000, 0, 3);
	for (uint64_t k = 1; k <= 10; k++)
		mem(&t, 11 * S + k, GW_MEMORY_FREE, GW_MEM_DEVICE, 0x1000 + k * 0x100, 0, 3);
	res = tb_finish(&t);
	assert_int_equal(res->memory.peak_bytes, 18 * GIB);
	assert_int_equal(res->memory.final_bytes, 0);
	assert_near(res->memory.growth_bytes_per_s, 0.96 * GIB, 1.0);
	gw_analysis_free(res);

	/* Allocated once before the work, freed after it: no growth at all. (One launch call:
	 * the GPU's span [1, 9] s is the working span.) */
	tb_init(&t);
	tb_device_mem(&t, 0, 4, 64 * GIB);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 10, 0, 1, 1, 32, 1 * S, 9 * S);
	mem(&t, S / 2, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0x1000, 60 * GIB, 1);
	mem(&t, 10 * S, GW_MEMORY_FREE, GW_MEM_DEVICE, 0x1000, 0, 3);
	res = tb_finish(&t);
	assert_near(res->memory.growth_bytes_per_s, 0, 1e-9);
	gw_analysis_free(res);
}

/*
 * The host far ahead of the GPU, as a decode loop that never reads back is: a launch call
 * each ms from 0 to 100 ms, each followed by a 1 GiB allocation at the same ms (1..100),
 * while the GPU works from 1 to 20 s. The host's span [0, 100] ms is the working span, so the
 * window is [50, 100] ms: the curve is 50 + floor(t / 1 ms) GiB there, 50 unit steps, whose
 * slope is 1 - 1/50^2 steps a step's width: 0.9996 GiB/ms. Over the GPU's span the
 * allocations would all be setup, and growth 0.
 */
static void growth_host_ahead(void **state)
{
	struct gw_analysis *res;
	struct tb t;
	const uint64_t ms = 1000000;

	(void)state;
	tb_init(&t);
	tb_device_mem(&t, 0, 4, 256 * GIB);
	tb_string(&t, 1, "decode_step_kernel");
	for (uint64_t k = 0; k <= 100; k++) {
		tb_launch(&t, 1, k * ms, k * ms + 10, 0, 1, 1, 32, S + k * (S / 6),
			  S + (k + 1) * (S / 6));
		if (k)
			mem(&t, k * ms, GW_MEMORY_ALLOC, GW_MEM_DEVICE, 0x1000 * k, GIB, 2);
	}
	res = tb_finish(&t);
	assert_int_equal(res->memory.peak_bytes, 100 * GIB);
	assert_near(res->memory.growth_bytes_per_s, (1.0 - 1.0 / 2500) * GIB * 1000, 1e-3 * GIB);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_peak_final_growth), cmocka_unit_test(caching_allocator),
		cmocka_unit_test(memory_not_recorded),	  cmocka_unit_test(quadrant_memory_high),
		cmocka_unit_test(growth_while_working),	  cmocka_unit_test(growth_host_ahead),
		cmocka_unit_test(cupti_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
