/* SPDX-License-Identifier: MIT */
/* Audit: occupancy as the hardware allocates it: register granularity, the shared memory every
 * block reserves, thread-block clusters and green contexts. */

/*
 * What it checks: design.md "Attribution" A with the CUDA occupancy calculator's rules, end to
 * end: the kernel record's registers, shared memory, carveout, cluster and context reach the
 * analysis, and each kernel's fill is what those rules give (test-occupancy.py works the
 * numbers out). gpusim (a test double) sizes its waves by the same rules.
 *
 * ITERS steps of three kernels on the legacy stream, then one cudaDeviceSynchronize:
 *   regs_tile <<<792, 256>>> at 33 registers a thread (GPUSIM_KERNEL_REGS=regs_tile=33);
 *   smem_tile <<<1716, 128, 16 KiB>>>;
 *   cluster_tile, 264 blocks of 1024 threads at 64 registers in clusters of 8
 *     (cudaLaunchKernelEx, cudaLaunchAttributeClusterDimension).
 *
 * Counts (exact): kernels = launches = 3 * ITERS; host_syncs = 2 (the sync, cudaFree);
 * allocations = frees = 1.
 */
#include "../../workloads/common.h"

#define ITERS 10

__global__ void regs_tile(float *x)
{
	x[threadIdx.x] += 1.0f;
}

__global__ void smem_tile(float *x)
{
	extern __shared__ float s[];

	s[threadIdx.x] = x[threadIdx.x];
	__syncthreads();
	x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void cluster_tile(float *x)
{
	x[threadIdx.x] *= 2.0f;
}

int main(int argc, char **argv)
{
	cudaLaunchAttribute cluster = {};
	cudaLaunchConfig_t config = {};
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&x, 1 << 20));
	cluster.id = cudaLaunchAttributeClusterDimension;
	cluster.val.clusterDim.x = 8;
	cluster.val.clusterDim.y = 1;
	cluster.val.clusterDim.z = 1;
	config.gridDim = dim3(264);
	config.blockDim = dim3(1024);
	config.attrs = &cluster;
	config.numAttrs = 1;
	for (int i = 0; i < ITERS; i++) {
		regs_tile<<<792, 256>>>(x);
		WL_CHECK_LAUNCH();
		smem_tile<<<1716, 128, 16 << 10>>>(x);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaLaunchKernelEx(&config, cluster_tile, x));
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	return 0;
}
