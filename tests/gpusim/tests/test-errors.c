/* SPDX-License-Identifier: MIT */
/* CUDA's error codes for bad arguments and exhausted memory, and last-error semantics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim-test.h"

static void kernel(void)
{
}
static void unregistered(void)
{
}

/* GPUSIM_MEM_GB=1: 2 GiB cannot be had; the error is reported once by cudaGetLastError. */
static void test_capacity(void **state)
{
	size_t free0, free1, total;
	void *p = (void *)1, *q;

	(void)state;
	assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
	assert_int_equal(total, 1ull << 30);
	assert_int_equal(cudaMalloc(&p, 2ull << 30), cudaErrorMemoryAllocation);
	assert_int_equal(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
	assert_int_equal(free1, free0);

	/* 768 MiB fits, a second 512 MiB does not: the limit counts what is allocated */
	assert_int_equal(cudaMalloc(&q, 768u << 20), cudaSuccess);
	assert_int_equal(cudaMallocManaged(&p, 512u << 20, cudaMemAttachGlobal),
			 cudaErrorMemoryAllocation);
	assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaFree(q), cudaSuccess);
	assert_int_equal(cudaMalloc(&q, 1ull << 30), cudaSuccess);
	assert_int_equal(cudaFree(q), cudaSuccess);
	/* a later success does not clear the last error, a read does */
	assert_int_equal(cudaMalloc(&q, 4ull << 30), cudaErrorMemoryAllocation);
	assert_int_equal(cudaMalloc(&q, 16), cudaSuccess);
	assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaFree(q), cudaSuccess);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
}

static void test_invalid_values(void **state)
{
	int host[4] = {0};
	void *d;

	(void)state;
	assert_int_equal(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
	assert_int_equal(cudaFree(host), cudaErrorInvalidValue);
	assert_int_equal(cudaMalloc(&d, 16), cudaSuccess);
	assert_int_equal(cudaFree((char *)d + 1), cudaErrorInvalidValue);
	/* wrong direction, out of range, host pointer as device pointer, bad kind */
	assert_int_equal(cudaMemcpy(host, host, 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	assert_int_equal(cudaMemcpy(d, host, 32, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	assert_int_equal(cudaMemcpy(host, host, 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
	assert_int_equal(cudaMemcpy(d, host, 16, (enum cudaMemcpyKind)7),
			 cudaErrorInvalidMemcpyDirection);
	assert_int_equal(cudaMemset(host, 0, 16), cudaErrorInvalidValue);
	assert_int_equal(cudaMemset(d, 0, 17), cudaErrorInvalidValue);
	assert_int_equal(cudaSetDevice(1), cudaErrorInvalidDevice);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
	assert_int_equal(cudaFree(d), cudaSuccess);
}

static void test_invalid_handles(void **state)
{
	cudaStream_t s;
	cudaEvent_t e;
	float ms;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
	/* gpusim recycles destroyed handles, so using one stays defined behaviour here */
	assert_int_equal(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
	assert_int_equal(test_launch(kernel, 1, 32, s), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaStreamDestroy(0), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaEventCreate(&e), cudaSuccess);
	assert_int_equal(cudaEventDestroy(e), cudaSuccess);
	assert_int_equal(cudaEventRecord(e, 0), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaEventSynchronize(e), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

static void test_launch_errors(void **state)
{
	dim3 grid = {1, 1, 1}, big = {2048, 1, 1}, zero = {0, 1, 1};

	(void)state;
	assert_int_equal(cudaLaunchKernel(kernel, grid, big, NULL, 0, 0),
			 cudaErrorInvalidConfiguration);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
	assert_int_equal(cudaLaunchKernel(kernel, zero, grid, NULL, 0, 0),
			 cudaErrorInvalidConfiguration);
	assert_int_equal(cudaLaunchKernel(kernel, grid, grid, NULL, 300 * 1024, 0),
			 cudaErrorInvalidValue);
	assert_int_equal(cudaLaunchKernel(unregistered, grid, grid, NULL, 0, 0),
			 cudaErrorInvalidDeviceFunction);
	assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidDeviceFunction);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_int_equal(cudaLaunchKernel(kernel, grid, grid, NULL, 0, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

/* A cooperative grid must fit on the device at once: 132 SMs x 8 blocks of 256 threads. */
static void test_cooperative(void **state)
{
	dim3 fits = {132 * 8, 1, 1}, too_big = {132 * 8 + 1, 1, 1}, block = {256, 1, 1};

	(void)state;
	assert_int_equal(cudaLaunchCooperativeKernel(kernel, fits, block, NULL, 0, 0), cudaSuccess);
	assert_int_equal(cudaLaunchCooperativeKernel(kernel, too_big, block, NULL, 0, 0),
			 cudaErrorCooperativeLaunchTooLarge);
	assert_int_equal(cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

static void test_error_strings(void **state)
{
	(void)state;
	assert_string_equal(cudaGetErrorName(cudaErrorMemoryAllocation),
			    "cudaErrorMemoryAllocation");
	assert_string_equal(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
	assert_string_equal(cudaGetErrorString(cudaSuccess), "no error");
	assert_string_equal(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
	assert_string_equal(cudaGetErrorString((cudaError_t)123456), "unrecognized error code");
}

static void test_device_queries(void **state)
{
	struct cudaDeviceProp p;
	int n = 0, v = 0;

	(void)state;
	assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
	assert_int_equal(n, 1);
	assert_int_equal(cudaGetDeviceProperties(&p, 0), cudaSuccess);
	assert_int_equal(p.multiProcessorCount, 132);
	assert_int_equal(p.major * 10 + p.minor, 90);
	assert_int_equal(p.totalGlobalMem, 1ull << 30);
	assert_int_equal(p.maxBlocksPerMultiProcessor, 32);
	assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, 0),
			 cudaSuccess);
	assert_int_equal(v, 2048);
	assert_int_equal(cudaGetDeviceProperties(&p, 1), cudaErrorInvalidDevice);
	cudaGetLastError();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity),	cmocka_unit_test(test_invalid_values),
		cmocka_unit_test(test_invalid_handles), cmocka_unit_test(test_launch_errors),
		cmocka_unit_test(test_cooperative),	cmocka_unit_test(test_error_strings),
		cmocka_unit_test(test_device_queries),
	};

	setenv("GPUSIM_MEM_GB", "1", 1);
	setenv("GPUSIM_SMS", "132", 1);
	test_register_kernel(kernel, "_Z6kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
