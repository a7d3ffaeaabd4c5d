/* SPDX-License-Identifier: MIT */
/*
 * What frameworks (PyTorch) need of gpusim beyond nvcc programs: the capture queries, the
 * driver entry-point lookup, the calls refused as not supported, the libcuda.so.1
 * stub, the simulated cuBLAS and cuBLASLt (GEMM durations from the cost model of README.md,
 * worked out here from m, n, k and the peak rates) and GPUSIM_STATS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn_graph.h>

#include "../gpusim.h"
#include "sim-test.h"

#define BUSY_NS	 (30 * 1000000ull) /* GPUSIM_KERNEL_US=busy_kernel=30000, one wave */
#define SMS	 132
#define HBM	 3.35e12
#define FIXED_NS 2000.0

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr);

static void busy_kernel(void)
{
}

/* The cost model of a GEMM (README.md), from first principles. */
static double gemm_ns(double m, double n, double k, double batch, double peak, double elem)
{
	double tiles = ((int64_t)(m + 127) / 128) * ((int64_t)(n + 127) / 128) * batch;
	double waves = (double)(((int64_t)tiles + SMS - 1) / SMS);
	double compute = waves * 2.0 * 128 * 128 * k / (peak / SMS);
	double memory = batch * (m * k + k * n + 2 * m * n) * elem / HBM;

	return FIXED_NS + 1e9 * (compute > memory ? compute : memory);
}

/* Time from event a to event b on the device, in ns (events are exact on gpusim). */
static double elapsed_ns(cudaEvent_t a, cudaEvent_t b)
{
	float ms;

	assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
	assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
	return ms * 1e6;
}

static void test_capture_info(void **state)
{
	enum cudaStreamCaptureStatus st;
	unsigned long long id = 0;
	cudaGraph_t graph = NULL, ended;
	cudaStream_t s;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL),
			 cudaSuccess);
	assert_int_equal(st, cudaStreamCaptureStatusNone);
	assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	assert_int_equal(cudaStreamGetCaptureInfo(s, &st, &id, &graph, NULL, NULL, NULL),
			 cudaSuccess);
	assert_int_equal(st, cudaStreamCaptureStatusActive);
	assert_non_null(graph);
	assert_int_equal(cudaStreamEndCapture(s, &ended), cudaSuccess);
	assert_ptr_equal(ended, graph);
	assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL),
			 cudaSuccess);
	assert_int_equal(st, cudaStreamCaptureStatusNone);
	assert_int_equal(cudaGraphDestroy(ended), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void test_capture_mode_exchange(void **state)
{
	enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;

	(void)state;
	assert_int_equal(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
	assert_int_equal(mode, cudaStreamCaptureModeGlobal);
	mode = cudaStreamCaptureModeGlobal;
	assert_int_equal(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
	assert_int_equal(mode, cudaStreamCaptureModeRelaxed);
}

static void test_entry_point_refused(void **state)
{
	enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
	void *fn = &status;

	(void)state;
	assert_int_equal(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 13000,
							  cudaEnableDefault, &status),
			 cudaSuccess);
	assert_null(fn);
	assert_int_equal(status, cudaDriverEntryPointSymbolNotFound);
}

static void test_unsupported_sets_error(void **state)
{
	cudaIpcMemHandle_t h;

	(void)state;
	assert_int_equal(cudaIpcGetMemHandle(&h, NULL), cudaErrorNotSupported);
	assert_int_equal(cudaGetLastError(), cudaErrorNotSupported);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
}

static void test_libcuda_stub(void **state)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	unsigned int flags = 1;
	CUcontext ctx = NULL;
	const void *table = &st;
	void *fn = &st;
	int active = 0, sms = 0;
	CUuuid id = {{0}};

	(void)state;
	assert_int_equal(cudaFree(NULL), cudaSuccess); /* the runtime initializes the device */
	assert_int_equal(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
	assert_int_equal(active, 1);
	assert_int_equal(flags, 0);
	assert_int_equal(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
	assert_ptr_equal(ctx, gw_sim_context());
	assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	assert_int_equal(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
			 CUDA_SUCCESS);
	assert_int_equal(sms, SMS);
	assert_int_equal(cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 0, &st),
			 CUDA_ERROR_NOT_FOUND);
	assert_null(fn);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_int_equal(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
	assert_null(table);
	assert_int_equal(cuModuleLoadData(NULL, NULL), CUDA_ERROR_NOT_SUPPORTED);
}

/* cuBLAS GEMMs on the handle's stream last what the cost model says. */
static void test_cublas_gemm(void **state)
{
	cublasHandle_t h;
	cudaStream_t s;
	cudaEvent_t a, b;
	double m = 1024, n = 1024, k = 4096;

	(void)state;
	assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaEventCreate(&a), cudaSuccess);
	assert_int_equal(cudaEventCreate(&b), cudaSuccess);
	assert_int_equal(cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);

	/* FP32 on the CUDA cores: 67 TFLOP/s; the stream is busy first, so the GEMM starts at
	 * event a exactly (GPUSIM_QUEUE_US=0) */
	assert_int_equal(test_launch(busy_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
	assert_int_equal(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, (int)m, (int)n, (int)k, NULL,
				     NULL, (int)m, NULL, (int)n, NULL, NULL, (int)m),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
	assert_float_equal(elapsed_ns(a, b), gemm_ns(m, n, k, 1, 67e12, 4), 1000);

	/* TF32 tensor cores, batched: 494.7 TFLOP/s, 200 tiles of 128 x 128 = 2 waves */
	assert_int_equal(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(test_launch(busy_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
	assert_int_equal(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 640, 640, 512,
						    NULL, NULL, CUDA_R_32F, 640, 0, NULL,
						    CUDA_R_32F, 512, 0, NULL, NULL, CUDA_R_32F, 640,
						    0, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
	assert_float_equal(elapsed_ns(a, b), gemm_ns(640, 640, 512, 8, 494.7e12, 4), 1000);

	/* GEMV: memory-bound, the matrix and both vectors once */
	assert_int_equal(test_launch(busy_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
	assert_int_equal(
		cublasSgemv(h, CUBLAS_OP_T, 8192, 4096, NULL, NULL, 8192, NULL, 1, NULL, NULL, 1),
		CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
	assert_float_equal(elapsed_ns(a, b),
			   FIXED_NS + 1e9 * (8192.0 * 4096 + 8192 + 4096) * 4 / HBM, 1000);

	/* refused, with a status, not a crash */
	assert_int_equal(cublasSdot(h, 16, NULL, 1, NULL, 1, NULL), CUBLAS_STATUS_NOT_SUPPORTED);
	assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventDestroy(a), cudaSuccess);
	assert_int_equal(cudaEventDestroy(b), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* cuBLASLt: the transposes and the layouts give m, n and k; BF16 runs at 989.4 TFLOP/s. */
static void test_cublaslt_matmul(void **state)
{
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t result;
	int32_t trans_a = CUBLAS_OP_T, batch = 4;
	int n_results = 0;
	cudaStream_t s;
	cudaEvent_t a, b;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaEventCreate(&a), cudaSuccess);
	assert_int_equal(cudaEventCreate(&b), cudaSuccess);
	assert_int_equal(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
							sizeof(trans_a)),
			 CUBLAS_STATUS_SUCCESS);
	/* op(A) = A^T is 2048 x 3072: A is stored 3072 x 2048 */
	assert_int_equal(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 3072, 2048, 3072),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 3072, 1024, 3072),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, 2048, 1024, 2048),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
							  &batch, sizeof(batch)),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatmulAlgoGetHeuristic(NULL, desc, la, lb, ld, ld, pref, 1,
							&result, &n_results),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(n_results, 1);
	assert_int_equal(result.state, CUBLAS_STATUS_SUCCESS);
	assert_int_equal(test_launch(busy_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
	assert_int_equal(cublasLtMatmul(NULL, desc, NULL, NULL, la, NULL, lb, NULL, NULL, ld, NULL,
					ld, &result.algo, NULL, 0, s),
			 CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
	/* 16 x 8 tiles x 4 = 512 tiles: 4 waves of 132 SMs */
	assert_float_equal(elapsed_ns(a, b), gemm_ns(2048, 1024, 3072, 4, 989.4e12, 2), 1000);
	assert_int_equal(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutDestroy(la), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutDestroy(lb), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatrixLayoutDestroy(ld), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(cudaEventDestroy(a), cudaSuccess);
	assert_int_equal(cudaEventDestroy(b), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* GPUSIM_STATS: a child does known work and exits; its file counts exactly that (the test runs
 * first, so the parent has counted nothing the child inherits). */
static void test_stats(void **state)
{
	char path[] = "/tmp/gpusim-stats-XXXXXX", buf[512];
	unsigned long long kernels, gemms, syncs, allocs, bytes;
	int fd = mkstemp(path), status;
	FILE *f;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cublasHandle_t h;
		void *p;
		int ok = 1;

		setenv("GPUSIM_STATS", path, 1);
		ok &= cublasCreate(&h) == CUBLAS_STATUS_SUCCESS;
		for (int i = 0; i < 3; i++)
			ok &= test_launch(busy_kernel, 1, 32, 0) == cudaSuccess;
		ok &= cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, NULL, NULL, 64, NULL, 64,
				  NULL, NULL, 64) == CUBLAS_STATUS_SUCCESS;
		ok &= cudaMalloc(&p, 1 << 20) == cudaSuccess;
		ok &= cudaDeviceSynchronize() == cudaSuccess;
		ok &= cudaStreamSynchronize(0) == cudaSuccess;
		exit(ok ? 0 : 1); /* not _exit: GPUSIM_STATS is written at exit */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(path);
	assert_int_equal(sscanf(buf,
				"{\"kernels\": %llu, \"gemms\": %llu, \"memcpys\": %*u, "
				"\"memsets\": %*u, \"syncs\": %llu, \"queries\": %*u, "
				"\"allocations\": %llu, \"frees\": %*u, \"allocated_bytes\": %llu",
				&kernels, &gemms, &syncs, &allocs, &bytes),
			 5);
	assert_int_equal(kernels, 4); /* three launches and the GEMM */
	assert_int_equal(gemms, 1);
	assert_int_equal(syncs, 2);
	assert_int_equal(allocs, 1);
	assert_int_equal(bytes, 1 << 20);
}

/* cuDNN is refused at the handle, with a version PyTorch's check accepts (major 9). */
static void test_cudnn_refused(void **state)
{
	cudnnHandle_t h = (cudnnHandle_t)state;

	assert_int_equal(cudnnGetVersion() / 10000, 9);
	assert_int_equal(cudnnCreate(&h), CUDNN_STATUS_NOT_SUPPORTED);
	assert_null(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_capture_info),
		cmocka_unit_test(test_capture_mode_exchange),
		cmocka_unit_test(test_entry_point_refused),
		cmocka_unit_test(test_unsupported_sets_error),
		cmocka_unit_test(test_libcuda_stub),
		cmocka_unit_test(test_cublas_gemm),
		cmocka_unit_test(test_cublaslt_matmul),
		cmocka_unit_test(test_cudnn_refused),
	};

	setenv("GPUSIM_SMS", "132", 1);
	setenv("GPUSIM_QUEUE_US", "0", 1);
	setenv("GPUSIM_KERNEL_US", "busy_kernel=30000", 1);
	unsetenv("GPUSIM_STATS");
	test_register_kernel(busy_kernel, "_Z11busy_kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
