/* SPDX-License-Identifier: MIT */
/* Kernel durations follow the wave model; synchronizing calls wait for them on the host clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim-test.h"

#define SMS	  132
#define WAVE_US	  2000
#define SLOW_US	  20000
#define FAST_US	  1
#define LAUNCH_US 4
#define QUEUE_US  1
#define SLACK_NS  (50 * 1000000ull) /* scheduling noise allowed above the model */
#define US	  1000ull

static void plain_kernel(void)
{
}
static void slow_kernel(void)
{
}
static void fast_kernel(void)
{
}

static uint64_t launch_and_sync(const void *k, unsigned int blocks, unsigned int threads)
{
	uint64_t t0 = test_now_ns();

	assert_int_equal(test_launch(k, blocks, threads, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	return test_now_ns() - t0;
}

/* 256 threads: min(32, 2048/256, 65536/(32*256)) = 8 blocks per SM, 1056 per wave. */
static void test_three_waves(void **state)
{
	uint64_t dt = launch_and_sync(plain_kernel, 3 * SMS * 8, 256);

	(void)state;
	assert_true(dt >= 3 * WAVE_US * US);
	assert_true(dt < 3 * WAVE_US * US + SLACK_NS);
}

/* One block more than three full waves makes a fourth wave. */
static void test_tail_wave(void **state)
{
	uint64_t dt = launch_and_sync(plain_kernel, 3 * SMS * 8 + 1, 256);

	(void)state;
	assert_true(dt >= 4 * WAVE_US * US);
	assert_true(dt < 4 * WAVE_US * US + SLACK_NS);
}

/* 1024 threads: 2048/1024 = 2 and 65536/(32*1024) = 2 blocks per SM: 265 blocks need 2 waves. */
static void test_big_blocks(void **state)
{
	uint64_t dt = launch_and_sync(plain_kernel, 2 * SMS + 1, 1024);

	(void)state;
	assert_true(dt >= 2 * WAVE_US * US);
	assert_true(dt < 2 * WAVE_US * US + SLACK_NS);
}

static void test_occupancy_rule(void **state)
{
	int n = -1;

	(void)state;
	assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, plain_kernel, 256, 0),
			 cudaSuccess);
	assert_int_equal(n, 8);
	assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, plain_kernel, 32, 0),
			 cudaSuccess);
	assert_int_equal(n, 32); /* the 32-block cap, not 2048/32 = 64 */
	assert_int_equal(
		cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, plain_kernel, 128, 100 * 1024),
		cudaSuccess);
	assert_int_equal(n, 2); /* 228 KiB / 100 KiB */
	assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, plain_kernel, 1024, 0),
			 cudaSuccess);
	assert_int_equal(n, 2);
}

/* GPUSIM_KERNEL_US: the first substring that matches sets the per-wave time. */
static void test_kernel_us_override(void **state)
{
	cudaEvent_t a, b;
	float ms = -1;
	uint64_t dt;

	(void)state;
	dt = launch_and_sync(slow_kernel, 1, 32);
	assert_true(dt >= SLOW_US * US);
	assert_true(dt < SLOW_US * US + SLACK_NS);

	/* Queued behind a slow kernel, the fast one starts GPUSIM_QUEUE_US after it ends. */
	assert_int_equal(cudaEventCreate(&a), cudaSuccess);
	assert_int_equal(cudaEventCreate(&b), cudaSuccess);
	assert_int_equal(test_launch(slow_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, 0), cudaSuccess);
	assert_int_equal(test_launch(fast_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaEventRecord(b, 0), cudaSuccess);
	assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
	assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
	assert_float_equal(ms * 1000.0f, (float)(QUEUE_US + FAST_US), 0.01f);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
}

/* Each launch spends GPUSIM_LAUNCH_US on the calling thread. */
static void test_launch_cost(void **state)
{
	const int n = 1000;
	uint64_t t0 = test_now_ns(), dt;

	(void)state;
	for (int i = 0; i < n; i++)
		assert_int_equal(test_launch(fast_kernel, 1, 32, 0), cudaSuccess);
	dt = test_now_ns() - t0;
	assert_true(dt >= (uint64_t)n * LAUNCH_US * US);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_waves),	   cmocka_unit_test(test_tail_wave),
		cmocka_unit_test(test_big_blocks),	   cmocka_unit_test(test_occupancy_rule),
		cmocka_unit_test(test_kernel_us_override), cmocka_unit_test(test_launch_cost),
	};

	setenv("GPUSIM_SMS", "132", 1);
	setenv("GPUSIM_WAVE_US", "2000", 1);
	setenv("GPUSIM_LAUNCH_US", "4", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	setenv("GPUSIM_KERNEL_US", "slow_kernel=20000,kernel=1", 1);
	test_register_kernel(plain_kernel, "_Z12plain_launchv");
	test_register_kernel(slow_kernel, "_Z11slow_kernelv");
	test_register_kernel(fast_kernel, "_Z11fast_kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
