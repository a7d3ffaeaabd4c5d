/* SPDX-License-Identifier: MIT */
/* Injection library for test-injection: counts its InitializeInjection calls. */
#include <cuda_runtime_api.h>

int gw_sim_test_inject_calls;
int gw_sim_test_inject_devices;

int InitializeInjection(void);
int InitializeInjection(void)
{
	gw_sim_test_inject_calls++;
	cudaGetDeviceCount(&gw_sim_test_inject_devices);
	return 1;
}
