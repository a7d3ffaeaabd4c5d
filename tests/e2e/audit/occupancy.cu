/* SPDX-License-Identifier: MIT */
/* Audit: SM fill limited by dynamic shared memory, by 1024-thread blocks, and with 2-D/3-D shapes. */

/*
 * What it checks: the occupancy rule of design.md "Attribution" A (blocks per SM from threads,
 * registers and shared memory; fill = waves, or waves / ceil(waves)) on launch shapes the
 * cause workloads never use (they launch 1-D grids of 256-thread blocks without shared
 * memory).
 *
 * ITERS steps, each four one-wave kernels on the legacy stream, then one cudaDeviceSynchronize:
 *   smem_tile <<<264, 256, 100 KiB>>>: floor(233472 / 102400) = 2 blocks per SM, capacity
 *     264: fill 1;
 *   smem_tile <<<132, 256, 100 KiB>>>: fill 132 / 264 = 0.5;
 *   wide_tile <<<(12, 11), (32, 32)>>>: 132 blocks of 1024 threads, 2048 / 1024 = 2 per SM
 *     (65536 registers / (32 x 1024) = 2 too), capacity 264: fill 0.5;
 *   wide_tile <<<(33, 12), (16, 16, 2)>>>: 396 blocks of 512 threads, 4 per SM, capacity
 *     528: fill 0.75.
 * gpusim: GPUSIM_KERNEL_US="smem_tile=100,wide_tile=100": every kernel is one wave of 100 us
 * (gpusim uses the same rule), so compute is exactly ITERS * (1 + 0.5 + 0.5 + 0.75) * 100 us
 * and small_batch ITERS * (0 + 0.5 + 0.5 + 0.25) * 100 us (no chain: the
 * fill-1 kernel ends every run of under-filled kernels after 3, far under 16 repeats).
 *
 * Counts (exact): kernels = launches = 4 * ITERS; host_syncs = 2 (the sync, cudaFree);
 * allocations = frees = 1.
 */
#include "../../workloads/common.h"

#define ITERS 20
#define SMEM  (100 << 10)

__global__ void smem_tile(float *x)
{
	extern __shared__ float s[];

	s[threadIdx.x] = x[threadIdx.x];
	__syncthreads();
	x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void wide_tile(float *x)
{
	x[threadIdx.y * blockDim.x + threadIdx.x] += 1.0f;
}

int main(int argc, char **argv)
{
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&x, 1 << 20));
	WL_CHECK(
		cudaFuncSetAttribute(smem_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
	for (int i = 0; i < ITERS; i++) {
		smem_tile<<<264, 256, SMEM>>>(x);
		WL_CHECK_LAUNCH();
		smem_tile<<<132, 256, SMEM>>>(x);
		WL_CHECK_LAUNCH();
		wide_tile<<<dim3(12, 11), dim3(32, 32)>>>(x);
		WL_CHECK_LAUNCH();
		wide_tile<<<dim3(33, 12), dim3(16, 16, 2)>>>(x);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	return 0;
}
