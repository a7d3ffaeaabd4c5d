/* SPDX-License-Identifier: MIT */
/*
 * libcublasLt.so.13: a simulated cuBLASLt (a test double; no arithmetic is done). The matmul
 * descriptors and layouts keep what the cost model needs (compute type, transposes, rows,
 * columns, batch); the heuristic offers one algorithm needing no workspace; cublasLtMatmul
 * launches one GEMM on its stream (blas.c). The other calls PyTorch links against answer
 * CUBLAS_STATUS_NOT_SUPPORTED (cublaslt-unsupported.def).
 */
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "blas.h"

/* What the descriptors hold, behind NVIDIA's opaque handle types (allocated here, never
 * the caller's). */
struct desc {
	cublasComputeType_t compute;
	cublasOperation_t transa, transb;
};

struct layout {
	cudaDataType type;
	uint64_t rows, cols;
	int32_t batch;
};

struct preference {
	uint64_t max_workspace;
};

size_t cublasLtGetVersion(void)
{
	return CUBLAS_VERSION;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
					cublasComputeType_t computeType, cudaDataType_t scaleType)
{
	struct desc *d;

	(void)scaleType;
	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	d = calloc(1, sizeof(*d));
	if (!d)
		return CUBLAS_STATUS_ALLOC_FAILED;
	d->compute = computeType;
	d->transa = d->transb = CUBLAS_OP_N;
	*matmulDesc = (cublasLtMatmulDesc_t)(void *)d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	free(matmulDesc);
	return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t read_i32(const void *buf, size_t size, int32_t *ret)
{
	if (!buf || size != sizeof(int32_t))
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(ret, buf, sizeof(*ret));
	return CUBLAS_STATUS_SUCCESS;
}

/* Attributes the cost model does not use (epilogues, pointers, scales) are accepted. */
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
					      cublasLtMatmulDescAttributes_t attr, const void *buf,
					      size_t sizeInBytes)
{
	struct desc *d = (struct desc *)(void *)matmulDesc;
	int32_t v = 0;

	if (!d || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr != CUBLASLT_MATMUL_DESC_COMPUTE_TYPE && attr != CUBLASLT_MATMUL_DESC_TRANSA &&
	    attr != CUBLASLT_MATMUL_DESC_TRANSB)
		return CUBLAS_STATUS_SUCCESS;
	if (read_i32(buf, sizeInBytes, &v) != CUBLAS_STATUS_SUCCESS)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE)
		d->compute = (cublasComputeType_t)v;
	else if (attr == CUBLASLT_MATMUL_DESC_TRANSA)
		d->transa = (cublasOperation_t)v;
	else
		d->transb = (cublasOperation_t)v;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
					  uint64_t rows, uint64_t cols, int64_t ld)
{
	struct layout *l;

	(void)ld;
	if (!matLayout)
		return CUBLAS_STATUS_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*l = (struct layout){type, rows, cols, 1};
	*matLayout = (cublasLtMatrixLayout_t)(void *)l;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
	free(matLayout);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
						cublasLtMatrixLayoutAttribute_t attr,
						const void *buf, size_t sizeInBytes)
{
	struct layout *l = (struct layout *)(void *)matLayout;
	int32_t v = 0;

	if (!l || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr != CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
		return CUBLAS_STATUS_SUCCESS;
	if (read_i32(buf, sizeInBytes, &v) != CUBLAS_STATUS_SUCCESS || v < 1)
		return CUBLAS_STATUS_INVALID_VALUE;
	l->batch = v;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	struct preference *p;

	if (!pref)
		return CUBLAS_STATUS_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*pref = (cublasLtMatmulPreference_t)(void *)p;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	free(pref);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
						    cublasLtMatmulPreferenceAttributes_t attr,
						    const void *buf, size_t sizeInBytes)
{
	struct preference *p = (struct preference *)(void *)pref;

	if (!p || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && sizeInBytes == sizeof(uint64_t))
		memcpy(&p->max_workspace, buf, sizeof(uint64_t));
	return CUBLAS_STATUS_SUCCESS;
}

/* One algorithm for every problem: the simulated GEMM needs no workspace. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
	cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
	cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
	cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference, int requestedAlgoCount,
	cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount)
{
	(void)lightHandle, (void)Bdesc, (void)Cdesc, (void)preference;
	if (!operationDesc || !Adesc || !Ddesc || requestedAlgoCount < 1 ||
	    !heuristicResultsArray || !returnAlgoCount)
		return CUBLAS_STATUS_INVALID_VALUE;
	memset(&heuristicResultsArray[0], 0, sizeof(heuristicResultsArray[0]));
	heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
	heuristicResultsArray[0].wavesCount = 1.0f;
	*returnAlgoCount = 1;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
			      const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
			      const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
			      const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
			      cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
			      void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
	const struct desc *d = (const struct desc *)(const void *)computeDesc;
	const struct layout *a = (const struct layout *)(const void *)Adesc;
	const struct layout *out = (const struct layout *)(const void *)Ddesc;
	enum gw_sim_blas_math math;
	uint64_t k;

	(void)lightHandle, (void)alpha, (void)A, (void)B, (void)Bdesc, (void)beta, (void)C;
	(void)Cdesc, (void)D, (void)algo, (void)workspace, (void)workspaceSizeInBytes;
	if (!d || !a || !out)
		return CUBLAS_STATUS_INVALID_VALUE;
	/* D is m x n; op(A) is m x k */
	k = d->transa == CUBLAS_OP_N ? a->cols : a->rows;
	if (d->compute == CUBLAS_COMPUTE_32F_FAST_16F)
		math = GW_SIM_BLAS_F16;
	else if (d->compute == CUBLAS_COMPUTE_32F_FAST_16BF)
		math = GW_SIM_BLAS_BF16;
	else
		math = gw_sim_blas_math_of(a->type, d->compute == CUBLAS_COMPUTE_32F_FAST_TF32);
	return gw_sim_blas_gemm(stream, true, d->transa == CUBLAS_OP_N ? 'N' : 'T',
				d->transb == CUBLAS_OP_N ? 'N' : 'T', (int64_t)out->rows,
				(int64_t)out->cols, (int64_t)k, out->batch, math) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}

int gw_sim_cublaslt_refuse(const char *name);
int gw_sim_cublaslt_refuse(const char *name)
{
	gw_sim_blas_refuse(name);
	return CUBLAS_STATUS_NOT_SUPPORTED;
}
