/* SPDX-License-Identifier: MIT */
/* GPUSIM_QUEUE_DEPTH: a launch returns only once fewer than DEPTH operations are pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim-test.h"

#define DEPTH	 2
#define WAVE_NS	 (20 * 1000000ull)
#define LAUNCHES 5

static void kernel(void)
{
}

/*
 * One-block kernels of one wave each on one stream: kernel i ends at t0 + (i + 1) * WAVE (plus
 * tiny gaps). Launch i >= DEPTH must wait for kernel i - DEPTH to end, so it returns no earlier
 * than t0 + (i - DEPTH + 1) * WAVE; the first DEPTH launches return at once.
 */
static void test_depth_blocks_launches(void **state)
{
	uint64_t t0, ret[LAUNCHES];

	(void)state;
	t0 = test_now_ns();
	for (int i = 0; i < LAUNCHES; i++) {
		assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
		ret[i] = test_now_ns() - t0;
	}
	for (int i = 0; i < DEPTH; i++)
		assert_true(ret[i] < WAVE_NS);
	for (int i = DEPTH; i < LAUNCHES; i++)
		assert_true(ret[i] >= (uint64_t)(i - DEPTH + 1) * WAVE_NS);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_true(test_now_ns() - t0 >= LAUNCHES * WAVE_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_blocks_launches),
	};

	setenv("GPUSIM_QUEUE_DEPTH", "2", 1);
	setenv("GPUSIM_WAVE_US", "20000", 1);
	test_register_kernel(kernel, "_Z6kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
