/* SPDX-License-Identifier: MIT */
/* What the simulated cuBLAS and cuBLASLt share (blas.c, linked into libcublasLt.so.13 and
 * exported to libcublas.so.13 under the gw_sim_ prefix). */
#ifndef GW_SIM_BLAS_H
#define GW_SIM_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <library_types.h>

/* The arithmetic a GEMM runs on, which sets its peak rate in the cost model. */
enum gw_sim_blas_math {
	GW_SIM_BLAS_F64,
	GW_SIM_BLAS_F32,  /* FP32 on the CUDA cores */
	GW_SIM_BLAS_TF32, /* FP32 inputs on the tensor cores */
	GW_SIM_BLAS_F16,
	GW_SIM_BLAS_BF16,
	GW_SIM_BLAS_FP8,
	GW_SIM_BLAS_I8,
	GW_SIM_BLAS_C32, /* complex: four real products per product */
	GW_SIM_BLAS_C64,
};

/* The math of a cudaDataType (inputs), with tf32 for FP32 inputs run on tensor cores. */
enum gw_sim_blas_math gw_sim_blas_math_of(cudaDataType type, bool tf32);
unsigned gw_sim_blas_elem_bytes(enum gw_sim_blas_math math);

/*
 * Launches one GEMM (D[m x n] = op(A)[m x k] op(B)[k x n], batch of them) on stream as a
 * gpusim kernel: lt picks cuBLASLt's kernel family for the name (nvjet) over cuBLAS's (xmma);
 * ta and tb are 'N' or 'T'. Its duration is the cost model's (README.md). Returns a
 * cudaError_t of the launch.
 */
int gw_sim_blas_gemm(cudaStream_t stream, bool lt, char ta, char tb, int64_t m, int64_t n,
		     int64_t k, int64_t batch, enum gw_sim_blas_math math);
/* A matrix-vector product (y = op(A) x, A m x n): memory-bound in the cost model. */
int gw_sim_blas_gemv(cudaStream_t stream, char trans, int64_t m, int64_t n,
		     enum gw_sim_blas_math math);
/* Says once on stderr that a call is not simulated, naming it and what is. */
void gw_sim_blas_refuse(const char *name);

#endif
