/* SPDX-License-Identifier: MIT */
/* Real-GPU check: one CUDA Graph of K kernels, captured once and replayed R times. */

/*
 * A replayed graph launches K kernels per cudaGraphLaunch without any cudaLaunchKernel call:
 * the kernel records (graph_id != 0) are the only trace of them. Usage: graph_replay [R] [K].
 * Expected: kernels = K*R (captured launches do not run), graph launches = R, launch API
 * calls = K (during capture), explicit syncs = 2 (one cudaStreamSynchronize after the
 * replays, one cudaDeviceSynchronize at the end). Prints one line ending in loop_ms=T, the
 * replays' wall time including the stream synchronize.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "gpu-check.h"

__global__ void graph_node_axpy_kernel(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
	int replays = argc > 1 ? atoi(argv[1]) : 1000, kernels = argc > 2 ? atoi(argv[2]) : 8;
	int n = 1 << 16;
	float *x, *y;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;

	CHECK(cudaMalloc(&x, 2 * n * sizeof(float)));
	y = x + n;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < kernels; k++)
		graph_node_axpy_kernel<<<n / 256, 256, 0, s>>>(0.5f, x, y, n);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	double t0 = now_ms();
	for (int r = 0; r < replays; r++)
		CHECK(cudaGraphLaunch(ge, s));
	CHECK(cudaStreamSynchronize(s));
	double loop_ms = now_ms() - t0;
	CHECK(cudaDeviceSynchronize());
	printf("graph_replay: %d replays of %d kernels done, loop_ms=%.3f\n", replays, kernels,
	       loop_ms);
	return 0;
}
