/* SPDX-License-Identifier: MIT */
/*
 * GEMMs of the simulated cuBLAS and cuBLASLt as gpusim kernels: each launched through the
 * driver's cuLaunchKernel on the caller's stream (as the real libraries' static runtimes
 * launch their kernels), with a name of the real libraries' form and a duration from a cost
 * model of m, n, k and the math (README.md). Not NVIDIA's: a test double, no arithmetic is
 * done.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "blas.h"
#include "gpusim.h"

/* The kernels by name: gpusim knows a kernel by a host address registered with its name, as
 * nvcc's registration code does it. */
#define MAX_KERNELS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char host_stubs[MAX_KERNELS];
static char *names[MAX_KERNELS];
static CUfunction functions[MAX_KERNELS];
static unsigned n_kernels;
static void **fatbin;

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);

static CUfunction kernel_named(const char *name)
{
	CUfunction f = NULL;
	unsigned i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n_kernels; i++)
		if (!strcmp(names[i], name)) {
			f = functions[i];
			goto out;
		}
	if (n_kernels == MAX_KERNELS || !(names[i] = strdup(name)))
		goto out;
	if (!fatbin)
		fatbin = __cudaRegisterFatBinary(NULL);
	__cudaRegisterFunction(fatbin, &host_stubs[i], names[i], names[i], -1, NULL, NULL, NULL,
			       NULL, NULL);
	if (cudaGetFuncBySymbol((cudaFunction_t *)&f, &host_stubs[i]) != cudaSuccess) {
		free(names[i]);
		f = NULL;
		goto out;
	}
	functions[i] = f;
	n_kernels++;
out:
	pthread_mutex_unlock(&lock);
	return f;
}

enum gw_sim_blas_math gw_sim_blas_math_of(cudaDataType type, bool tf32)
{
	switch (type) {
	case CUDA_R_64F:
		return GW_SIM_BLAS_F64;
	case CUDA_R_16F:
		return GW_SIM_BLAS_F16;
	case CUDA_R_16BF:
		return GW_SIM_BLAS_BF16;
	case CUDA_R_8F_E4M3:
	case CUDA_R_8F_E5M2:
		return GW_SIM_BLAS_FP8;
	case CUDA_R_8I:
		return GW_SIM_BLAS_I8;
	case CUDA_C_32F:
		return GW_SIM_BLAS_C32;
	case CUDA_C_64F:
		return GW_SIM_BLAS_C64;
	default:
		return tf32 ? GW_SIM_BLAS_TF32 : GW_SIM_BLAS_F32;
	}
}

unsigned gw_sim_blas_elem_bytes(enum gw_sim_blas_math math)
{
	static const unsigned bytes[] = {8, 4, 4, 2, 2, 1, 1, 8, 16};

	return bytes[math];
}

/* Dense peak rates of an H100 SXM (NVIDIA's datasheet, without sparsity), in flop/s, and its
 * memory bandwidth: the simulated device is H100-like (README.md). */
static double peak_flops(enum gw_sim_blas_math math)
{
	static const double peak[] = {67e12,	 67e12,	    494.7e12, 989.4e12, 989.4e12,
				      1978.9e12, 1978.9e12, 67e12,    67e12};

	return peak[math];
}

#define GEMM_TILE     128
#define HBM_BYTES_S   3.35e12
#define GEMM_FIXED_NS 2000 /* prologue and epilogue of a GEMM kernel */

static const char *math_name(enum gw_sim_blas_math math)
{
	static const char *const n[] = {
		"f64f64_f64f64_f64", "f32f32_f32f32_f32",    "f32f32_tf32f32_f32",
		"f16f16_f16f32_f32", "bf16bf16_bf16f32_f32", "e4m3e4m3_e4m3f32_f32",
		"s8s8_s8s32_s32",    "c32c32_c32c32_c32",    "c64c64_c64c64_c64"};

	return n[math];
}

static void gemm_name(char *out, size_t size, bool lt, char ta, char tb, enum gw_sim_blas_math math)
{
	if (lt)
		snprintf(out, size, "nvjet_tst_128x128_64x4_2x1_v_bz_%c%cN", ta, tb);
	else
		snprintf(out, size,
			 "sm90_xmma_gemm_%s_%c%c_n_tilesize128x128x32_warpgroupsize1x1x1_"
			 "execute_segment_k_off_kernel__5x_cublas",
			 math_name(math), ta == 'N' ? 'n' : 't', tb == 'N' ? 'n' : 't');
}

static int launch(const char *name, cudaStream_t stream, unsigned gx, unsigned gy, unsigned gz,
		  uint64_t dur_ns)
{
	CUfunction f = kernel_named(name);

	if (!f)
		return cudaErrorLaunchOutOfResources;
	gw_sim_stats_gemm();
	gw_sim_set_next_kernel_ns(dur_ns);
	return cuLaunchKernel(f, gx, gy, gz, 256, 1, 1, 0, (CUstream)stream, NULL, NULL) ==
			       CUDA_SUCCESS
		       ? cudaSuccess
		       : cudaErrorInvalidValue;
}

static unsigned clamp_grid(int64_t v, unsigned max)
{
	return v < 1 ? 1 : v > max ? max : (unsigned)v;
}

int gw_sim_blas_gemm(cudaStream_t stream, bool lt, char ta, char tb, int64_t m, int64_t n,
		     int64_t k, int64_t batch, enum gw_sim_blas_math math)
{
	uint32_t sms = gw_sim_config()->sms;
	int64_t tm = (m + GEMM_TILE - 1) / GEMM_TILE, tn = (n + GEMM_TILE - 1) / GEMM_TILE;
	int64_t tiles = tm * tn * batch, waves = (tiles + sms - 1) / sms;
	double real_products = math >= GW_SIM_BLAS_C32 ? 4 : 1;
	double tile_flops = 2.0 * GEMM_TILE * GEMM_TILE * (double)k * real_products;
	double compute_s = (double)waves * tile_flops / (peak_flops(math) / sms);
	double bytes = (double)batch * ((double)m * k + (double)k * n + 2.0 * m * n) *
		       gw_sim_blas_elem_bytes(math);
	double memory_s = bytes / HBM_BYTES_S;
	char name[160];

	if (m <= 0 || n <= 0 || batch <= 0)
		return cudaSuccess; /* nothing to compute: cuBLAS launches nothing */
	gemm_name(name, sizeof(name), lt, ta, tb, math);
	return launch(name, stream, clamp_grid(tm, 0x7fffffffu), clamp_grid(tn, 65535),
		      clamp_grid(batch, 65535),
		      GEMM_FIXED_NS +
			      (uint64_t)(1e9 * (compute_s > memory_s ? compute_s : memory_s)));
}

int gw_sim_blas_gemv(cudaStream_t stream, char trans, int64_t m, int64_t n,
		     enum gw_sim_blas_math math)
{
	double bytes = ((double)m * n + m + n) * gw_sim_blas_elem_bytes(math);

	if (m <= 0 || n <= 0)
		return cudaSuccess;
	return launch(trans == 'N' ? "gemv2N_kernel" : "gemv2T_kernel_val", stream,
		      clamp_grid((m + 127) / 128, 0x7fffffffu), 1, 1,
		      GEMM_FIXED_NS + (uint64_t)(1e9 * bytes / HBM_BYTES_S));
}

void gw_sim_blas_refuse(const char *name)
{
	static _Atomic int told;

	if (!told++)
		fprintf(stderr,
			"gpusim: %s is not simulated (gpusim's cuBLAS, a test double, runs GEMMs "
			"and GEMVs only): CUBLAS_STATUS_NOT_SUPPORTED\n",
			name);
}
