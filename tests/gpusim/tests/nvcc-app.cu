// SPDX-License-Identifier: MIT
// An unmodified CUDA program built with `nvcc -cudart shared`: checks, on the simulated GPU, what
// nvcc-generated code relies on (registration, <<<>>> launches, __device__ symbols, errors).
#include <cstdio>
#include <cuda_runtime.h>

__device__ int dev_counter = 5;

__global__ void wave_kernel(float *a)
{
	a[threadIdx.x] = 1.0f;
}

__global__ void long_kernel()
{
}

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,            \
				     cudaGetErrorName(e_));                                        \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define EXPECT(c)                                                                                  \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c);      \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

// Run with GPUSIM_WAVE_US=1000 GPUSIM_QUEUE_US=1 GPUSIM_KERNEL_US=long_kernel=20000.
int main()
{
	float *d, ms = 0;
	cudaEvent_t a, b;
	int v = 0;

	CHECK(cudaMalloc(&d, 4096));
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	// Behind a 20 ms kernel, so both events take device times: b - a = 1 µs gap + 3 waves.
	long_kernel<<<1, 32>>>();
	CHECK(cudaEventRecord(a));
	wave_kernel<<<3 * 132 * 8, 256>>>(d); // 8 blocks of 256 threads per SM: 3 waves
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(b));
	CHECK(cudaEventSynchronize(b));
	CHECK(cudaEventElapsedTime(&ms, a, b));
	EXPECT(ms > 3.0005f && ms < 3.0015f);

	// The initial value lives in the device image, which gpusim does not read: only round trips.
	v = 9;
	CHECK(cudaMemcpyToSymbol(dev_counter, &v, sizeof(v)));
	v = 0;
	CHECK(cudaMemcpyFromSymbol(&v, dev_counter, sizeof(v)));
	EXPECT(v == 9);

	wave_kernel<<<1, 2048>>>(d); // more threads than a block may have
	EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
	EXPECT(cudaGetLastError() == cudaSuccess);

	CHECK(cudaFree(d));
	CHECK(cudaDeviceSynchronize());
	std::printf("nvcc-app: ok\n");
	return 0;
}
