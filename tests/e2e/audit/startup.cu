/* SPDX-License-Identifier: MIT */
/* Audit: CUDA's start-up (context creation, lazy kernel loading) is not one of the causes. */

/*
 * What it checks: design.md "Attribution" C, rule 0. The program warms up with cudaFree(0)
 * (the idiom that creates the context), then runs ITERS steps of two kernels and a device
 * synchronize. Run with GPUSIM_INIT_MS (context creation inside the first call) and
 * GPUSIM_MODULE_LOAD_US (a kernel's first launch loads it): gpusim (a test double) reports
 * them as CUPTI does, by the context-created callback and overhead records.
 *
 * The first operation, step_a's first run, starts the window after its own load: only
 * step_b's load (MODULE_LOAD_US) falls inside it, in the gap before step_b's first run, and
 * is startup; context creation is before the window, in the start-up totals only, and the
 * cudaFree(0) that did it waited for no GPU work, so no advice names it.
 *
 * Counts (exact): kernels = launches = 2 * ITERS; host_syncs = ITERS + 2 (the synchronizes,
 * cudaFree(0), the final cudaFree); allocations = frees = 1.
 */
#include "../../workloads/common.h"

#define ITERS 20

__global__ void step_a(float *x)
{
	x[threadIdx.x] += 1.0f;
}

__global__ void step_b(float *x)
{
	x[threadIdx.x] *= 0.5f;
}

int main(int argc, char **argv)
{
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaFree(0)); /* warm-up: creates the context */
	WL_CHECK(cudaMalloc(&x, 1 << 20));
	for (int i = 0; i < ITERS; i++) {
		step_a<<<132, 256>>>(x);
		WL_CHECK_LAUNCH();
		step_b<<<132, 256>>>(x);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaDeviceSynchronize());
	}
	WL_CHECK(cudaFree(x));
	return 0;
}
