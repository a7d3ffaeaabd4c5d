/* SPDX-License-Identifier: MIT */
/* GPUSIM_HOLD_US: the device starts nothing before the hold ends, so a host stall while the
 * host queues work leaves no gap on the device timeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "sim-test.h"

#define HOLD_US	 200000
#define STALL_US 30000
#define FAST_US	 1
#define QUEUE_US 1
#define US	 1000ull

static void fast_kernel(void)
{
}

static void host_stall(void)
{
	struct timespec ts = {0, STALL_US * 1000L};

	nanosleep(&ts, NULL);
}

/* k1, a 30 ms host stall, k2: without the hold k2 starts >= 30 ms after k1; with it, both were
 * queued before the device started, so k2 starts QUEUE_US after k1 ends. */
static void test_hold(void **state)
{
	uint64_t t0 = test_now_ns(), dt;
	cudaEvent_t a, b;
	float ms = -1;

	(void)state;
	assert_int_equal(cudaEventCreate(&a), cudaSuccess);
	assert_int_equal(cudaEventCreate(&b), cudaSuccess);
	assert_int_equal(test_launch(fast_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, 0), cudaSuccess);
	host_stall();
	assert_int_equal(test_launch(fast_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaEventRecord(b, 0), cudaSuccess);
	assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
	dt = test_now_ns() - t0;
	assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
	assert_float_equal(ms * 1000.0f, (float)(QUEUE_US + FAST_US), 0.01f);
	/* the sync waited for the hold: the kernels ran after it */
	assert_true(dt >= HOLD_US * US);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold),
	};

	setenv("GPUSIM_HOLD_US", "200000", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	setenv("GPUSIM_KERNEL_US", "fast_kernel=1", 1);
	test_register_kernel(fast_kernel, "_Z11fast_kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
