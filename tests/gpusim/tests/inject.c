/* SPDX-License-Identifier: MIT */
/* An injection library for test-injection: counts InitializeInjection calls and, like a real
 * tool, calls back into the runtime from it. */
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
