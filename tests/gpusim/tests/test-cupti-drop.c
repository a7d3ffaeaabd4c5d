/* SPDX-License-Identifier: MIT */
/* Records that find no buffer are dropped and counted, as CUPTI does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>
#include <cupti.h>

#include "sim-test.h"

#define LAUNCHES 10

static int requests;
static int completions;

static void kernel(void)
{
}

/* A client out of memory: it never has a buffer to give. */
static void CUPTIAPI no_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
	requests++;
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			       size_t valid)
{
	(void)ctx, (void)stream, (void)buffer, (void)size, (void)valid;
	completions++;
}

static void test_dropped(void **state)
{
	size_t dropped = 0;

	(void)state;
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityRegisterCallbacks(no_buffer, completed), CUPTI_SUCCESS);
	for (int i = 0; i < LAUNCHES; i++)
		assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	/* one kernel record per launch, nothing else enabled: each asked for a buffer, none had one */
	assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	assert_int_equal(dropped, LAUNCHES);
	assert_int_equal(requests, LAUNCHES);
	assert_int_equal(completions, 0);
	/* reading the count resets it */
	assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	assert_int_equal(dropped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dropped),
	};

	setenv("GPUSIM_WAVE_US", "5", 1);
	test_register_kernel(kernel, "_Z6kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
