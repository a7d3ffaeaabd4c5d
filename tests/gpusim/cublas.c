/* SPDX-License-Identifier: MIT */
/*
 * libcublas.so.13: a simulated cuBLAS (a test double; no arithmetic is done). A handle keeps
 * its stream, workspace and modes; the GEMMs and GEMVs PyTorch calls are launched on the
 * handle's stream as gpusim kernels (blas.c). Every other call PyTorch links against is in
 * cublas-unsupported.def and answers CUBLAS_STATUS_NOT_SUPPORTED.
 */
#include <stdlib.h>

#include <cublas_v2.h>

#include "blas.h"

#define HANDLE_MAGIC 0x63626c61u

struct cublasContext {
	uint32_t magic;
	cudaStream_t stream;
	cublasMath_t math;
	cublasPointerMode_t pointer_mode;
	void *workspace;
	size_t workspace_bytes;
	int sm_count_target;
};

static bool valid(cublasHandle_t h)
{
	return h && h->magic == HANDLE_MAGIC;
}

cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
	cublasHandle_t h;
	int device;

	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	/* as cuBLAS does: a handle needs a device, and initializes it */
	if (cudaGetDevice(&device) != cudaSuccess)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = HANDLE_MAGIC;
	h->math = CUBLAS_DEFAULT_MATH;
	h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->magic = 0;
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t streamId)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = streamId;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace,
				  size_t workspaceSizeInBytes)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (workspaceSizeInBytes && !workspace)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->workspace = workspace;
	handle->workspace_bytes = workspaceSizeInBytes;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->math;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->pointer_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t *mode)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->pointer_mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget)
{
	if (!valid(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (smCountTarget < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->sm_count_target = smCountTarget;
	return CUBLAS_STATUS_SUCCESS;
}

static char op_letter(cublasOperation_t op)
{
	return op == CUBLAS_OP_N ? 'N' : 'T';
}

static bool tf32_math(cublasHandle_t h)
{
	return (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH;
}

static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
			   int64_t n, int64_t k, int64_t batch, enum gw_sim_blas_math math)
{
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (m < 0 || n < 0 || k < 0 || batch < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	return gw_sim_blas_gemm(h->stream, false, op_letter(ta), op_letter(tb), m, n, k, batch,
				math) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}

static enum gw_sim_blas_math compute_math(cublasHandle_t h, cudaDataType a,
					  cublasComputeType_t compute)
{
	bool tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
		    (valid(h) && tf32_math(h) && compute == CUBLAS_COMPUTE_32F);

	if (compute == CUBLAS_COMPUTE_32F_FAST_16F)
		return GW_SIM_BLAS_F16;
	if (compute == CUBLAS_COMPUTE_32F_FAST_16BF)
		return GW_SIM_BLAS_BF16;
	return gw_sim_blas_math_of(a, tf32);
}

/* The typed GEMMs: S, D, C and Z; single, strided-batched and pointer-array batched. */
#define TYPED_GEMMS(P, T, MATH)                                                                    \
	cublasStatus_t cublas##P##gemm_v2(cublasHandle_t handle, cublasOperation_t transa,         \
					  cublasOperation_t transb, int m, int n, int k,           \
					  const T *alpha, const T *A, int lda, const T *B,         \
					  int ldb, const T *beta, T *C, int ldc)                   \
	{                                                                                          \
		(void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,          \
			(void)ldc;                                                                 \
		return gemm(handle, transa, transb, m, n, k, 1, MATH);                             \
	}                                                                                          \
	cublasStatus_t cublas##P##gemmStridedBatched(                                              \
		cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,  \
		int n, int k, const T *alpha, const T *A, int lda, long long int strideA,          \
		const T *B, int ldb, long long int strideB, const T *beta, T *C, int ldc,          \
		long long int strideC, int batchCount)                                             \
	{                                                                                          \
		(void)alpha, (void)A, (void)lda, (void)strideA, (void)B, (void)ldb, (void)strideB; \
		(void)beta, (void)C, (void)ldc, (void)strideC;                                     \
		return gemm(handle, transa, transb, m, n, k, batchCount, MATH);                    \
	}                                                                                          \
	cublasStatus_t cublas##P##gemmBatched(cublasHandle_t handle, cublasOperation_t transa,     \
					      cublasOperation_t transb, int m, int n, int k,       \
					      const T *alpha, const T *const Aarray[], int lda,    \
					      const T *const Barray[], int ldb, const T *beta,     \
					      T *const Carray[], int ldc, int batchCount)          \
	{                                                                                          \
		(void)alpha, (void)Aarray, (void)lda, (void)Barray, (void)ldb, (void)beta;         \
		(void)Carray, (void)ldc;                                                           \
		return gemm(handle, transa, transb, m, n, k, batchCount, MATH);                    \
	}

TYPED_GEMMS(S, float, tf32_math(handle) ? GW_SIM_BLAS_TF32 : GW_SIM_BLAS_F32)
TYPED_GEMMS(D, double, GW_SIM_BLAS_F64)
TYPED_GEMMS(C, cuComplex, GW_SIM_BLAS_C32)
TYPED_GEMMS(Z, cuDoubleComplex, GW_SIM_BLAS_C64)

cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa,
			     cublasOperation_t transb, int m, int n, int k, const float *alpha,
			     const void *A, cudaDataType Atype, int lda, const void *B,
			     cudaDataType Btype, int ldb, const float *beta, void *C,
			     cudaDataType Ctype, int ldc)
{
	(void)alpha, (void)A, (void)lda, (void)B, (void)Btype, (void)ldb, (void)beta, (void)C;
	(void)Ctype, (void)ldc;
	return gemm(handle, transa, transb, m, n, k, 1,
		    gw_sim_blas_math_of(Atype, valid(handle) && tf32_math(handle)));
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
			    cublasOperation_t transb, int m, int n, int k, const void *alpha,
			    const void *A, cudaDataType Atype, int lda, const void *B,
			    cudaDataType Btype, int ldb, const void *beta, void *C,
			    cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
			    cublasGemmAlgo_t algo)
{
	(void)alpha, (void)A, (void)lda, (void)B, (void)Btype, (void)ldb, (void)beta, (void)C;
	(void)Ctype, (void)ldc, (void)algo;
	return gemm(handle, transa, transb, m, n, k, 1, compute_math(handle, Atype, computeType));
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
					  cublasOperation_t transb, int m, int n, int k,
					  const void *alpha, const void *A, cudaDataType Atype,
					  int lda, long long int strideA, const void *B,
					  cudaDataType Btype, int ldb, long long int strideB,
					  const void *beta, void *C, cudaDataType Ctype, int ldc,
					  long long int strideC, int batchCount,
					  cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)alpha, (void)A, (void)lda, (void)strideA, (void)B, (void)Btype, (void)ldb;
	(void)strideB, (void)beta, (void)C, (void)Ctype, (void)ldc, (void)strideC, (void)algo;
	return gemm(handle, transa, transb, m, n, k, batchCount,
		    compute_math(handle, Atype, computeType));
}

static cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n,
			   enum gw_sim_blas_math math)
{
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (m < 0 || n < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	return gw_sim_blas_gemv(h->stream, op_letter(trans), m, n, math) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}

#define TYPED_GEMV(P, T, MATH)                                                                     \
	cublasStatus_t cublas##P##gemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m,   \
					  int n, const T *alpha, const T *A, int lda, const T *x,  \
					  int incx, const T *beta, T *y, int incy)                 \
	{                                                                                          \
		(void)alpha, (void)A, (void)lda, (void)x, (void)incx, (void)beta, (void)y;         \
		(void)incy;                                                                        \
		return gemv(handle, trans, m, n, MATH);                                            \
	}

TYPED_GEMV(S, float, GW_SIM_BLAS_F32)
TYPED_GEMV(D, double, GW_SIM_BLAS_F64)
TYPED_GEMV(C, cuComplex, GW_SIM_BLAS_C32)
TYPED_GEMV(Z, cuDoubleComplex, GW_SIM_BLAS_C64)

/* For cublas-unsupported.c (the calls without their prototypes, as in unsupported.c). */
int gw_sim_cublas_refuse(const char *name);
int gw_sim_cublas_refuse(const char *name)
{
	gw_sim_blas_refuse(name);
	return CUBLAS_STATUS_NOT_SUPPORTED;
}
