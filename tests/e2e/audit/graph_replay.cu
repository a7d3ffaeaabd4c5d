/* SPDX-License-Identifier: MIT */
/* Audit: a CUDA Graph of 10 one-block kernels, captured once and replayed 200 times. */

/*
 * What it checks: launches vs kernels under graphs, tiny kernels, the gap rule for queued
 * work (C.1), and that a period-10 name sequence is neither a chain (period 1-4) nor a
 * fusion candidate (2-8 kernels).
 *
 * REPLAYS graph launches of one graph of NODES kernels (st0..st9, one block of 256 threads
 * each) on a blocking stream, one cudaStreamSynchronize at the end.
 * gpusim (defaults): each kernel is 1 wave = GPUSIM_WAVE_US = 5 us, tiny (< 10 us); a graph
 * launch costs the host 4 us and the device 10 x (5 + 1) us, so the host stays ahead, and the
 * test holds the device until every replay is queued (GPUSIM_HOLD_US, GPUSIM_QUEUE_DEPTH over
 * 2000) so that it stays ahead however the host thread is scheduled; every kernel but the
 * first was queued when the one before it ended: the window is exactly
 * REPLAYS*NODES*5 + (REPLAYS*NODES - 1)*1 us (QUEUE_US gaps), every gap is launch_overhead,
 * and a kernel's fill is 1/(132*8) (256 threads: 8 blocks per SM): the rest is small_batch.
 *
 * Counts (exact): kernels = tiny_kernels = REPLAYS*NODES; launches = REPLAYS graph launches;
 * captured_launches = NODES (launch calls made while the stream recorded the graph: they ran
 * nothing then);
 * host_syncs = 1 + 1 (the final stream sync, cudaFree); allocations = frees = 1.
 */
#include "../../workloads/common.h"

#define NODES	10
#define REPLAYS 200

#define STAGE(n)                                                                                   \
	__global__ void st##n(float *x)                                                            \
	{                                                                                          \
		x[threadIdx.x] = x[threadIdx.x] * 0.5f + (float)(n);                               \
	}
STAGE(0)
STAGE(1)
STAGE(2)
STAGE(3)
STAGE(4)
STAGE(5)
STAGE(6)
STAGE(7)
STAGE(8)
STAGE(9)

int main(int argc, char **argv)
{
	void (*stages[NODES])(float *) = {st0, st1, st2, st3, st4, st5, st6, st7, st8, st9};
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *x;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&x, 256 * sizeof(float)));
	WL_CHECK(cudaStreamCreate(&s));
	WL_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < NODES; k++) {
		stages[k]<<<1, 256, 0, s>>>(x);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaStreamEndCapture(s, &g));
	WL_CHECK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < REPLAYS; r++)
		WL_CHECK(cudaGraphLaunch(ge, s));
	WL_CHECK(cudaStreamSynchronize(s));
	WL_CHECK(cudaGraphExecDestroy(ge));
	WL_CHECK(cudaGraphDestroy(g));
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFree(x));
	return 0;
}
