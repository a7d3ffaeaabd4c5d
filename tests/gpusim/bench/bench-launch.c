/* SPDX-License-Identifier: MIT */
/* Host cost per launch of the simulated runtime, with and without a CUPTI subscriber. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "../tests/sim-test.h"

static void kernel(void)
{
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 1 << 20;
	*buffer = aligned_alloc(8, *size);
	*max_records = 0;
}

static size_t kernels_seen;

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			       size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
		kernels_seen += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	free(buffer);
}

static double run(const char *label, long n, int handle_path)
{
	dim3 one = {1, 1, 1};
	cudaKernel_t h = NULL;
	uint64_t t0, dt;
	double rate;

	if (handle_path) {
		__cudaGetKernel(&h, (const void *)kernel);
		t0 = test_now_ns();
		for (long i = 0; i < n; i++)
			__cudaLaunchKernel(h, one, one, NULL, 0, 0);
	} else {
		t0 = test_now_ns();
		for (long i = 0; i < n; i++)
			cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0);
	}
	cudaDeviceSynchronize();
	dt = test_now_ns() - t0;
	rate = (double)n / ((double)dt / 1e9);
	printf("%-44s %9.0f launches/s (%.0f ns each)\n", label, rate, (double)dt / (double)n);
	return rate;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	CUpti_SubscriberHandle sub;

	/* No modelled device or launch time: what remains is gpusim's own work per launch. */
	setenv("GPUSIM_LAUNCH_US", "0", 1);
	setenv("GPUSIM_WAVE_US", "0", 1);
	setenv("GPUSIM_QUEUE_US", "0", 1);
	test_register_kernel((const void *)kernel, "_Z6kernelv");
	run("cudaLaunchKernel, no CUPTI", n, 0);
	run("__cudaLaunchKernel (nvcc stubs), no CUPTI", n, 1);
	if (cuptiSubscribe(&sub, on_callback, NULL) != CUPTI_SUCCESS)
		return 1;
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityRegisterCallbacks(requested, completed);
	run("__cudaLaunchKernel, callback + kernel records", n, 1);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("kernel records delivered: %zu of %ld\n", kernels_seen, n);
	return 0;
}
