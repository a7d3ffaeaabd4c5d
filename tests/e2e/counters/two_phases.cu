/* SPDX-License-Identifier: MIT */
/* A bandwidth-bound phase and a compute phase, for the measured counters (NVML). */

/*
 * Phases, each a run of one-wave kernels (1056 blocks of 256 threads: 132 SMs x 8 blocks)
 * back to back on the default stream, then a cudaDeviceSynchronize:
 *   1. elementwise_add_kernel            (name: bandwidth_bound)
 *   2. fused_update_kernel               (name: none of the rules, so compute)
 *   3. sgemm_tile_kernel                 (name: compute)
 *   4. attention_score_kernel and softmax_rows_kernel in turn, always one of each (names:
 *      compute and low_intensity): the windows cannot tell the two apart.
 *
 * On a GPU, 1 and 2 stream three buffers (bandwidth-bound whatever their names), 3 is a
 * register-tiled matrix product. On gpusim (a test double) the kernels are not run: each
 * lasts GPUSIM_KERNEL_US per wave, and what the simulated NVML reports for it comes from the
 * GPUSIM_KERNEL_DRAM / _SM knobs the test sets (tests/e2e/test-counters.py).
 *
 * Parameters: --kernels N (kernels per phase, default 1000; phase 4 runs N/2 pairs),
 * --n ELEMENTS (floats per buffer, default 1048576).
 * Counts: kernels = launches = 3*kernels + 2*(kernels/2); host_syncs = 4 explicit + 3
 * implicit (frees); allocations = 3.
 */
#include "../../workloads/common.h"

#define BLOCKS	1056
#define THREADS 256

__global__ void elementwise_add_kernel(const float *a, const float *b, float *c, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		c[i] = a[i] + b[i];
}

__global__ void fused_update_kernel(float *w, const float *g, float *m, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x) {
		m[i] = 0.9f * m[i] + 0.1f * g[i];
		w[i] -= 0.01f * m[i];
	}
}

/* A 16x16-tiled product of 512 x 512 matrices held in the buffers' first 256 Ki floats. */
__global__ void sgemm_tile_kernel(const float *a, const float *b, float *c)
{
	__shared__ float ta[16][16], tb[16][16];
	int tile = blockIdx.x % 1024, row = (tile / 32) * 16 + threadIdx.x / 16;
	int col = (tile % 32) * 16 + threadIdx.x % 16;
	float acc = 0;

	for (int k0 = 0; k0 < 512; k0 += 16) {
		ta[threadIdx.x / 16][threadIdx.x % 16] = a[row * 512 + k0 + threadIdx.x % 16];
		tb[threadIdx.x / 16][threadIdx.x % 16] = b[(k0 + threadIdx.x / 16) * 512 + col];
		__syncthreads();
		for (int k = 0; k < 16; k++)
			acc += ta[threadIdx.x / 16][k] * tb[k][threadIdx.x % 16];
		__syncthreads();
	}
	if (blockIdx.x < 1024)
		c[row * 512 + col] = acc;
}

__global__ void attention_score_kernel(const float *q, const float *k, float *s, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		s[i] = q[i] * k[(i * 7) % n];
}

__global__ void softmax_rows_kernel(float *s, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		s[i] = __expf(s[i]);
}

int main(int argc, char **argv)
{
	long kernels = 1000, n = 1048576;
	const struct wl_opt opts[] = {
		{"kernels", &kernels, NULL, 2, 1000000, NULL, "kernels per phase"},
		{"n", &n, NULL, 262144, 1L << 28, NULL, "floats per buffer"},
	};
	float *x, *y, *z;

	wl_parse(argc, argv, "a bandwidth-bound phase and a compute phase", opts,
		 WL_ARRAY_SIZE(opts));
	WL_CHECK(cudaMalloc(&x, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&y, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&z, n * sizeof(float)));
	for (long i = 0; i < kernels; i++) {
		elementwise_add_kernel<<<BLOCKS, THREADS>>>(x, y, z, n);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	for (long i = 0; i < kernels; i++) {
		fused_update_kernel<<<BLOCKS, THREADS>>>(x, y, z, n);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	for (long i = 0; i < kernels; i++) {
		sgemm_tile_kernel<<<BLOCKS, THREADS>>>(x, y, z);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	for (long i = 0; i < kernels / 2; i++) {
		attention_score_kernel<<<BLOCKS, THREADS>>>(x, y, z, n);
		WL_CHECK_LAUNCH();
		softmax_rows_kernel<<<BLOCKS, THREADS>>>(z, n);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	WL_CHECK(cudaFree(y));
	WL_CHECK(cudaFree(z));
	printf("two_phases: %ld kernels a phase done\n", kernels);
	return 0;
}
