/* SPDX-License-Identifier: MIT */
/* Cause 5, frequent tiny launches: thousands of few-block, microsecond kernels. */

/*
 * Shows: launch_overhead. Each iteration updates a 256-element state with three tiny kernels
 * (bias add, scalar multiply, clamp), one block each, the way an unfused optimizer or a
 * Python loop over small tensors does. The GPU finishes each kernel faster than the host can
 * launch the next, so the device sits in short gaps between launches. The three kernels
 * repeat as a sequence: design.md's fusion candidate.
 *
 * Parameters: --iters N (default 2000), --n ELEMENTS (state size, default 256; each kernel
 * has ceil(n/256) blocks of 256 threads).
 *
 * gpusim: GPUSIM_KERNEL_US="tiny_=1": a one-block kernel runs ~1-2 us on a real GPU. Launches
 * then come every 4 us (GPUSIM_LAUNCH_US) while each kernel lasts 1 us, so ~3/4 of the window
 * is short (< 100 us) starved gaps between launches: launch_overhead. With the default 5 us
 * wave the device would outrun the host and the cause would be hidden.
 *
 * Counts (exact):
 *   launches = kernels = 1 + 3*iters     (1 fill, then add, mul, clamp per iteration)
 *   tiny_kernels (< 10 us): all 3*iters step kernels on gpusim with the setting above
 *   allocations = 1, frees = 1
 *   host_syncs = 2: explicit 1 (cudaDeviceSynchronize at the end), implicit 1 (cudaFree)
 *   memcpy = 0, memset = 0
 */
#include "common.h"

__global__ void tiny_bias_add_kernel(float *x, const float *bias, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += bias[i];
}

__global__ void tiny_scalar_mul_kernel(float *x, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= s;
}

__global__ void tiny_clamp_kernel(float *x, float lo, float hi, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = fminf(fmaxf(x[i], lo), hi);
}

int main(int argc, char **argv)
{
	long iters = 2000, n = 256;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 10000000, NULL, "iterations of three tiny kernels"},
		{"n", &n, NULL, 1, 1L << 20, NULL, "elements of the state"},
	};
	float *x;

	wl_parse(argc, argv, "thousands of tiny kernels (cause: launch_overhead)", opts,
		 WL_ARRAY_SIZE(opts));
	/* the state, then its bias */
	WL_CHECK(cudaMalloc(&x, 2 * n * sizeof(float)));
	wl_fill(x, 2 * n, 31, 1.0f, 0);

	unsigned blocks = (unsigned)WL_DIV_ROUND_UP(n, 256);
	for (long it = 0; it < iters; it++) {
		tiny_bias_add_kernel<<<blocks, 256>>>(x, x + n, (int)n);
		WL_CHECK_LAUNCH();
		tiny_scalar_mul_kernel<<<blocks, 256>>>(x, 0.999f, (int)n);
		WL_CHECK_LAUNCH();
		tiny_clamp_kernel<<<blocks, 256>>>(x, -4.0f, 4.0f, (int)n);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	printf("tiny_kernels: %ld iterations of 3 kernels over %ld elements done\n", iters, n);
	return 0;
}
