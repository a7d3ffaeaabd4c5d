/* SPDX-License-Identifier: MIT */
/* Real-GPU check: a cuBLAS SGEMM loop, whose kernels come from inside the library. */

/*
 * Kernels launched inside cuBLAS reach the driver through cuGetProcAddress, not through an
 * exported cudart symbol: only CUPTI sees them. Runs --iters cublasSgemm calls on m x n x k
 * matrices (default 4096^3) on the default stream, then one cudaDeviceSynchronize. cuBLAS may
 * launch more than one kernel per call (split-K), so the check is kernels >= iters, a multiple
 * of iters, and every kernel name in the compute class. Usage: cublas_gemm [ITERS] [SIZE].
 * Prints one line ending in loop_ms=T, the loop's wall time including the final
 * synchronize. Build: nvcc -O2 -arch=sm_90 cublas_gemm.cu -lcublas.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "gpu-check.h"

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100;
	int m = argc > 2 ? atoi(argv[2]) : 4096, n = m, k = m;
	float *a, *b, *c, alpha = 1.0f, beta = 0.0f;
	cublasHandle_t h;

	CHECK(cudaMalloc(&a, (size_t)m * k * sizeof(float)));
	CHECK(cudaMalloc(&b, (size_t)k * n * sizeof(float)));
	CHECK(cudaMalloc(&c, (size_t)m * n * sizeof(float)));
	CHECK(cudaMemset(a, 0, (size_t)m * k * sizeof(float)));
	CHECK(cudaMemset(b, 0, (size_t)k * n * sizeof(float)));
	CHECK(cublasCreate(&h));
	double t0 = now_ms();
	for (int i = 0; i < iters; i++)
		CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k, &beta,
				  c, m));
	CHECK(cudaDeviceSynchronize());
	CHECK(cublasDestroy(h));
	double loop_ms = now_ms() - t0;
	printf("cublas_gemm: %d calls of %dx%dx%d done, loop_ms=%.3f\n", iters, m, n, k, loop_ms);
	return 0;
}
