/* SPDX-License-Identifier: MIT */
/* Cause 1, memory-bandwidth-bound kernels: big elementwise add / scale / axpy back to back. */

/*
 * Shows: bandwidth_bound. Each kernel moves 8-12 bytes per 1-2 flops over buffers far larger
 * than L2, so a real GPU's SMs wait for DRAM; the names (elementwise, vectorized, axpy, fill)
 * are in design.md's bandwidth_bound class.
 *
 * Parameters: --n ELEMENTS (floats per buffer, default 16777216), --iters N (default 20).
 *
 * gpusim: no GPUSIM_KERNEL_US needed. A kernel of n/256 blocks of 256 threads runs
 * ceil(n/256 / 1056) waves of 5 us (132 SMs x 8 blocks of 256 threads at 32 registers), so
 * each kernel is ~310 us at the default n and fills the device to waves/ceil(waves) > 0.98;
 * the 1 us queue gaps between queued kernels are the only other share.
 *
 * Counts (exact):
 *   launches = kernels = 2 + 3*iters     (2 fills, then add, scale, axpy per iteration)
 *   allocations = 3, frees = 3
 *   host_syncs = 4: explicit 1 (cudaDeviceSynchronize at the end), implicit 3 (cudaFree)
 *   memcpy = 0, memset = 0
 *   live device bytes at peak = 12*n
 */
#include "common.h"

__global__ void elementwise_add_kernel(const float *a, const float *b, float *c, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void vectorized_scale_kernel(float4 *x, float s, long n4)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n4) {
		float4 v = x[i];
		v.x *= s;
		v.y *= s;
		v.z *= s;
		v.w *= s;
		x[i] = v;
	}
}

__global__ void axpy_kernel(float a, const float *x, float *y, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
	long n = 16777216, iters = 20;
	const struct wl_opt opts[] = {
		{"n", &n, NULL, 1024, 1L << 30, NULL, "floats per buffer (a multiple of 4)"},
		{"iters", &iters, NULL, 1, 1000000, NULL, "iterations of add, scale, axpy"},
	};
	float *x, *y, *z;

	wl_parse(argc, argv, "big elementwise kernels back to back (cause: bandwidth_bound)", opts,
		 WL_ARRAY_SIZE(opts));
	if (n % 4)
		wl_die("--n must be a multiple of 4");
	WL_CHECK(cudaMalloc(&x, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&y, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&z, n * sizeof(float)));
	wl_fill(x, n, 1, 2.0f, 0);
	wl_fill(y, n, 2, 2.0f, 0);

	unsigned blocks = (unsigned)WL_DIV_ROUND_UP(n, 256);
	unsigned blocks4 = (unsigned)WL_DIV_ROUND_UP(n / 4, 256);
	for (long it = 0; it < iters; it++) {
		elementwise_add_kernel<<<blocks, 256>>>(x, y, z, n);
		WL_CHECK_LAUNCH();
		vectorized_scale_kernel<<<blocks4, 256>>>((float4 *)z, 0.5f, n / 4);
		WL_CHECK_LAUNCH();
		axpy_kernel<<<blocks, 256>>>(0.25f, z, y, n);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	WL_CHECK(cudaFree(y));
	WL_CHECK(cudaFree(z));
	printf("bandwidth_bound: %ld iterations over %ld floats done\n", iters, n);
	return 0;
}
