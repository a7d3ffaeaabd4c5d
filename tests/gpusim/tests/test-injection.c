/* SPDX-License-Identifier: MIT */
/* CUDA_INJECTION64_PATH: loaded at the first runtime call, InitializeInjection called once. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim-test.h"

static void test_injection(void **state)
{
	const char *path = getenv("GPUSIM_TEST_INJECTION");
	int n = 0, *calls, *devices;
	void *h;

	(void)state;
	assert_non_null(path);
	assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD));
	assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
	assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	calls = dlsym(h, "gw_sim_test_inject_calls");
	devices = dlsym(h, "gw_sim_test_inject_devices");
	assert_non_null(calls);
	assert_non_null(devices);
	assert_int_equal(*calls, 1);
	assert_int_equal(*devices, 1); /* the runtime answered from inside InitializeInjection */
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_injection),
	};
	const char *path = getenv("GPUSIM_TEST_INJECTION");

	if (path)
		setenv("CUDA_INJECTION64_PATH", path, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
