/* SPDX-License-Identifier: MIT */
/* Helpers for the gpusim tests: register kernels the way nvcc's host stubs do, read the clock. */
#ifndef GW_SIM_TEST_H
#define GW_SIM_TEST_H

#include <stdint.h>
#include <time.h>

#include <cuda_runtime_api.h>

/* Declared by the toolkit only in C++ (crt/host_runtime.h); these are the same signatures. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
		       const char *deviceName, int ext, size_t size, int constant, int global);
/* Declared in crt/device_functions.h (C++ only): what nvcc's host stubs launch through. */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);

static inline uint64_t test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Registers host_fun as a kernel named name, as an nvcc module constructor would. */
static inline void test_register_kernel(const void *host_fun, const char *name)
{
	static int fatbin;
	void **h = __cudaRegisterFatBinary(&fatbin);

	__cudaRegisterFunction(h, (const char *)host_fun, (char *)name, name, -1, NULL, NULL, NULL,
			       NULL, NULL);
	__cudaRegisterFatBinaryEnd(h);
}

static inline dim3 test_dim(unsigned int x)
{
	dim3 d = {x, 1, 1};

	return d;
}

/* Launches kernel with `blocks` blocks of `threads` threads on stream. */
static inline cudaError_t test_launch(const void *kernel, unsigned int blocks, unsigned int threads,
				      cudaStream_t stream)
{
	return cudaLaunchKernel(kernel, test_dim(blocks), test_dim(threads), NULL, 0, stream);
}

#endif
