/* SPDX-License-Identifier: MIT */
/* Audit: programs at the edges: no GPU work at all, allocations only, a 0-byte copy, an exit
 * with a kernel still queued. */

/*
 * What it checks: a report of a trace with no GPU operation, or only degenerate ones, is still
 * a report: exit 0, valid JSON (no NaN or infinity), a breakdown that sums to 1 or is all 0.
 * One mode per run (argv[1]):
 *   idle      cudaGetDeviceCount and cudaMemGetInfo only: no allocation, no GPU operation;
 *   alloc     cudaMalloc of 1 GiB and cudaFree: 1 allocation, 1 free, no GPU operation;
 *   zerocopy  cudaMalloc, a 0-byte cudaMemcpy H2D, cudaFree: the call is made and recorded
 *             (a synchronizing call of kind copy), but there is nothing to copy, so the device
 *             runs nothing (gpusim returns at once, as CUDA does): no GPU operation;
 *   queued    one 1-wave kernel exit_tail (GPUSIM_KERNEL_US="exit_tail=50000": 50 ms) launched,
 *             then return from main without a sync: CUDA finishes queued work at teardown, so
 *             the kernel is in the trace, the window is that one kernel and clean_exit holds.
 */
#include "../../workloads/common.h"

__global__ void exit_tail(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	float *x = NULL;

	wl_program = argv[0];
	if (!strcmp(mode, "idle")) {
		size_t free_b, total_b;
		int n;

		WL_CHECK(cudaGetDeviceCount(&n));
		WL_CHECK(cudaMemGetInfo(&free_b, &total_b));
		return n < 1;
	}
	if (!strcmp(mode, "alloc")) {
		WL_CHECK(cudaMalloc(&x, 1ull << 30));
		WL_CHECK(cudaFree(x));
		return 0;
	}
	if (!strcmp(mode, "zerocopy")) {
		float h = 0;

		WL_CHECK(cudaMalloc(&x, sizeof(float)));
		WL_CHECK(cudaMemcpy(x, &h, 0, cudaMemcpyHostToDevice));
		WL_CHECK(cudaFree(x));
		return 0;
	}
	if (!strcmp(mode, "queued")) {
		WL_CHECK(cudaMalloc(&x, 132 * 8 * 256 * sizeof(float)));
		exit_tail<<<132 * 8, 256>>>(x);
		WL_CHECK_LAUNCH();
		return 0;
	}
	wl_die("usage: edge_cases idle|alloc|zerocopy|queued");
	return 2;
}
