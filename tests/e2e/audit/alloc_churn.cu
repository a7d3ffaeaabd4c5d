/* SPDX-License-Identifier: MIT */
/* Audit: cudaMallocAsync/cudaFreeAsync every step, a slow leak, and a pinned staging buffer. */

/*
 * What it checks: memory accounting (design.md "Memory"): stream-ordered allocations are device
 * memory, pinned host memory is counted apart, the peak, the final bytes, the never-freed
 * site and the growth rate of a slow leak under a fast churn.
 *
 * ITERS steps on a created stream: cudaMallocAsync of STEP_BYTES, a one-wave kernel
 * (churn_step: 132*8 blocks of 256 threads) on it, cudaFreeAsync, cudaStreamSynchronize;
 * every LEAK_EVERY-th step (from the first) also a cudaMalloc of LEAK_BYTES that is never
 * freed. One cudaMallocHost of PINNED_BYTES, freed at the end (cudaFreeHost).
 * Expected: leaks = ITERS / LEAK_EVERY = 20; peak device bytes = STEP_BYTES + 20*LEAK_BYTES
 * (the last step's allocation with every leak live); final = 20*LEAK_BYTES; the leak site
 * has 20 never-freed allocations of 20*LEAK_BYTES; pinned peak = PINNED_BYTES, apart.
 * Growth: the steps are evenly spaced (each ends in a stream sync, so the GPU's window is
 * the host's working span), so live bytes grow by LEAK_BYTES every LEAK_EVERY steps: the
 * slope is the leaked bytes over the window; the sawtooth (STEP_BYTES on and off every step)
 * averages out. The leak is large next to the sawtooth so that the slope does not hang on
 * where in a step the fit starts. A host stall bends the staircase (this run lasts ~15 ms: on a
 * busy machine 0.3-2x that slope was seen), so the test checks that growth is positive and
 * equals the rule worked out from the trace's own allocation and launch times.
 *
 * Counts (exact): allocations = ITERS + 20 + 1; frees = ITERS + 1; kernels = launches =
 * ITERS; host_syncs = ITERS stream syncs + cudaFreeHost (implicit).
 */
#include "../../workloads/common.h"

#define ITERS	     400
#define LEAK_EVERY   20
#define STEP_BYTES   (16ull << 20)
#define LEAK_BYTES   (8ull << 20)
#define PINNED_BYTES (8ull << 20)
#define CAP	     (132 * 8)

__global__ void churn_step(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f;
}

int main(int argc, char **argv)
{
	cudaStream_t s;
	void *pinned, *leak;
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaStreamCreate(&s));
	WL_CHECK(cudaMallocHost(&pinned, PINNED_BYTES));
	for (int i = 0; i < ITERS; i++) {
		if (i % LEAK_EVERY == 0)
			WL_CHECK(cudaMalloc(&leak, LEAK_BYTES));
		WL_CHECK(cudaMallocAsync((void **)&x, STEP_BYTES, s));
		churn_step<<<CAP, 256, 0, s>>>(x);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaFreeAsync(x, s));
		WL_CHECK(cudaStreamSynchronize(s));
	}
	WL_CHECK(cudaFreeHost(pinned));
	WL_CHECK(cudaStreamDestroy(s));
	return 0;
}
