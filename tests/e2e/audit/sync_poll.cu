/* SPDX-License-Identifier: MIT */
/* Audit: a medium kernel waited for after every launch, by cudaEventSynchronize, then by
 * polling. */

/*
 * What it checks: the sync debt (design.md rule C.2) of a synchronizing call that waits for the
 * whole of a medium kernel, and of a cudaStreamQuery polling loop, which waits just as long:
 * capture folds each loop's queries into one polling wait (a SYNC record), a synchronizing call
 * of kind poll from its first unfinished query to the one that found the kernel done.
 *
 * Phase 1, ITERS times: one full-wave kernel tile_step (WAVES waves of 132*8 blocks of 256
 * threads, fill 1), cudaEventRecord, cudaEventSynchronize. Phase 2, ITERS times: the same
 * kernel, then cudaStreamQuery in a loop until it returns cudaSuccess (with a 20 us pause).
 * gpusim: GPUSIM_KERNEL_US="tile_step=250": 2 waves = 500 us a kernel. The event sync waits
 * W (from its call to the kernel's end: 500 us less the few us between the launch and the
 * call) and the next gap (the sync's return plus a 4 us launch: tens of us) is far under W:
 * each phase-1 gap is host_sync. Phase 2 the same: the first query comes right after the
 * launch, with 500 us of kernel left, so each loop is one polling wait of W up to 500 us,
 * and the gap after it (the rest of a 20 us pause, the last query, a 4 us launch) is paid by
 * that debt: host_sync too. Unclassified names count as compute: compute is exactly
 * 2*ITERS*500 us of the window.
 *
 * Counts (exact): kernels = launches = 2*ITERS; host_syncs = ITERS event syncs + ITERS polling
 * waits + 1 final cudaDeviceSynchronize + 1 cudaFree = 2*ITERS + 2 (explicit ITERS + 1, poll
 * ITERS, implicit 1); each polling wait folds at least 2 queries (one unfinished, the last).
 */
#include <unistd.h>

#include "../../workloads/common.h"

#define ITERS 100
#define WAVES 2
#define CAP   (132 * 8)

__global__ void tile_step(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] *= 0.999f;
}

int main(int argc, char **argv)
{
	cudaEvent_t ev;
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&x, (size_t)WAVES * CAP * 256 * sizeof(float)));
	WL_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	for (int i = 0; i < ITERS; i++) {
		tile_step<<<WAVES * CAP, 256>>>(x);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaEventRecord(ev, 0));
		WL_CHECK(cudaEventSynchronize(ev));
	}
	for (int i = 0; i < ITERS; i++) {
		cudaError_t e;

		tile_step<<<WAVES * CAP, 256>>>(x);
		WL_CHECK_LAUNCH();
		while ((e = cudaStreamQuery(0)) == cudaErrorNotReady)
			usleep(20);
		WL_CHECK(e);
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaEventDestroy(ev));
	WL_CHECK(cudaFree(x));
	return 0;
}
