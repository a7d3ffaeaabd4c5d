/* SPDX-License-Identifier: MIT */
/* Real-GPU check: design.md's capture-cost target, a launch-bound loop of one-block kernels. */

/*
 * Launches ITERS (default 50000) one-block kernels of 256 threads back to back on the default
 * stream, then one cudaDeviceSynchronize. Each kernel runs for about a microsecond, less than
 * a launch takes on the host, so the loop's time is the host's launch rate: exactly what a
 * per-launch capture cost slows down. Warms up with 100 launches and a synchronize first, so
 * that module loading is outside the timed loop. Prints one line ending in loop_ms=T, the
 * loop's wall time including the final synchronize. Trace counts: launches = kernels =
 * ITERS + 100, explicit syncs 2. Usage: tiny_loop [ITERS]. Build: nvcc -O2 -arch=sm_90.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "gpu-check.h"

#define WARMUP 100

__global__ void tiny_loop_step_kernel(float *x)
{
	x[threadIdx.x] = x[threadIdx.x] * 0.5f + 1.0f;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 50000;
	float *x;

	if (iters < 1) {
		fprintf(stderr, "usage: tiny_loop [ITERS >= 1]\n");
		return 2;
	}
	CHECK(cudaMalloc(&x, 256 * sizeof(float)));
	for (int i = 0; i < WARMUP; i++)
		tiny_loop_step_kernel<<<1, 256>>>(x);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	double t0 = now_ms();
	for (long i = 0; i < iters; i++)
		tiny_loop_step_kernel<<<1, 256>>>(x);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	double loop_ms = now_ms() - t0;
	printf("tiny_loop: %ld launches done, %.2f us each, loop_ms=%.3f\n", iters,
	       loop_ms * 1e3 / (double)iters, loop_ms);
	return 0;
}
