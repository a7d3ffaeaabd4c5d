/* SPDX-License-Identifier: MIT */
/* Cause 2, low arithmetic intensity: transposes, layer-norm statistics, dropout masks. */

/*
 * Shows: low_intensity. A tiled transpose does no arithmetic at all, layer-norm statistics a
 * few flops per element followed by block reductions, a dropout mask a counter-based RNG
 * (philox-like) and a compare per element: the SMs are neither compute- nor DRAM-saturated.
 * The names (transpose, norm, dropout/philox) are in design.md's low_intensity class.
 *
 * Parameters: --rows R (default 4096), --cols C (default 4096, a multiple of 32; R too),
 * --iters N (default 10).
 *
 * gpusim: no GPUSIM_KERNEL_US needed: transpose_tiled_kernel has (C/32)*(R/32) blocks of 256
 * threads (15.5 waves at the defaults), layer_norm_stats_kernel R blocks of 256 (3.9 waves),
 * dropout_mask_philox_kernel R*C/4/256 blocks (15.5 waves): all ~fill 0.97..1, 5 us a wave.
 *
 * Counts (exact):
 *   launches = kernels = 1 + 3*iters     (1 fill, then transpose, stats, dropout)
 *   allocations = 5, frees = 5
 *   host_syncs = 6: explicit 1 (cudaDeviceSynchronize at the end), implicit 5 (cudaFree)
 *   memcpy = 0, memset = 0
 *   live device bytes at peak = 9*R*C + 8*R
 */
#include "common.h"

#define TILE 32

__global__ void transpose_tiled_kernel(const float *in, float *out, int rows, int cols)
{
	__shared__ float tile[TILE][TILE + 1];
	int x = blockIdx.x * TILE + threadIdx.x;
	int y = blockIdx.y * TILE + threadIdx.y;

	for (int j = 0; j < TILE; j += 8)
		if (x < cols && y + j < rows)
			tile[threadIdx.y + j][threadIdx.x] = in[(long)(y + j) * cols + x];
	__syncthreads();
	x = blockIdx.y * TILE + threadIdx.x;
	y = blockIdx.x * TILE + threadIdx.y;
	for (int j = 0; j < TILE; j += 8)
		if (x < rows && y + j < cols)
			out[(long)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

/* One block of 256 threads per row: mean and reciprocal standard deviation. */
__global__ void layer_norm_stats_kernel(const float *x, float *mean, float *rstd, int cols,
					float eps)
{
	__shared__ float s_sum[8], s_sq[8];
	const float *row = x + (long)blockIdx.x * cols;
	float sum = 0.0f, sq = 0.0f;

	for (int c = threadIdx.x; c < cols; c += blockDim.x) {
		float v = row[c];
		sum += v;
		sq += v * v;
	}
	for (int off = 16; off > 0; off /= 2) {
		sum += __shfl_down_sync(0xffffffffu, sum, off);
		sq += __shfl_down_sync(0xffffffffu, sq, off);
	}
	if (threadIdx.x % 32 == 0) {
		s_sum[threadIdx.x / 32] = sum;
		s_sq[threadIdx.x / 32] = sq;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		sum = 0.0f;
		sq = 0.0f;
		for (int w = 0; w < 8; w++) {
			sum += s_sum[w];
			sq += s_sq[w];
		}
		float m = sum / cols;
		mean[blockIdx.x] = m;
		rstd[blockIdx.x] = rsqrtf(fmaxf(sq / cols - m * m, 0.0f) + eps);
	}
}

/* A 4-round counter-based generator in the spirit of Philox-4x32 (one 32-bit word out). */
__device__ __forceinline__ uint32_t philox_like(uint32_t ctr, uint32_t key)
{
	uint32_t lo = ctr, hi = key;

	for (int r = 0; r < 4; r++) {
		uint32_t prod_hi = __umulhi(0xD2511F53u, lo);
		uint32_t prod_lo = 0xD2511F53u * lo;
		lo = prod_hi ^ hi ^ key;
		hi = prod_lo;
		key += 0x9E3779B9u;
	}
	return lo;
}

/* Four elements per thread: mask byte and the scaled kept value. */
__global__ void dropout_mask_philox_kernel(const float *x, float *y, uint8_t *mask, long n,
					   uint32_t seed, float keep_prob)
{
	long i = ((long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
	uint32_t threshold = (uint32_t)(keep_prob * 4294967295.0f);

	for (int k = 0; k < 4 && i + k < n; k++) {
		uint8_t keep = philox_like((uint32_t)(i + k), seed) <= threshold;
		mask[i + k] = keep;
		y[i + k] = keep ? x[i + k] / keep_prob : 0.0f;
	}
}

int main(int argc, char **argv)
{
	long rows = 4096, cols = 4096, iters = 10;
	const struct wl_opt opts[] = {
		{"rows", &rows, NULL, 32, 1L << 20, NULL, "matrix rows (a multiple of 32)"},
		{"cols", &cols, NULL, 32, 1L << 20, NULL, "matrix columns (a multiple of 32)"},
		{"iters", &iters, NULL, 1, 1000000, NULL,
		 "iterations of transpose, stats, dropout"},
	};
	float *in, *out, *mean, *rstd;
	uint8_t *mask;

	wl_parse(argc, argv, "transpose, layer-norm statistics, dropout (cause: low_intensity)",
		 opts, WL_ARRAY_SIZE(opts));
	if (rows % TILE || cols % TILE)
		wl_die("--rows and --cols must be multiples of 32");
	long n = rows * cols;
	WL_CHECK(cudaMalloc(&in, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&out, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&mean, rows * sizeof(float)));
	WL_CHECK(cudaMalloc(&rstd, rows * sizeof(float)));
	WL_CHECK(cudaMalloc(&mask, n));
	wl_fill(in, n, 7, 4.0f, 0);

	dim3 tgrid((unsigned)(cols / TILE), (unsigned)(rows / TILE)), tblock(TILE, 8);
	unsigned dblocks = (unsigned)WL_DIV_ROUND_UP(n / 4, 256);
	for (long it = 0; it < iters; it++) {
		transpose_tiled_kernel<<<tgrid, tblock>>>(in, out, (int)rows, (int)cols);
		WL_CHECK_LAUNCH();
		layer_norm_stats_kernel<<<(unsigned)rows, 256>>>(in, mean, rstd, (int)cols, 1e-5f);
		WL_CHECK_LAUNCH();
		dropout_mask_philox_kernel<<<dblocks, 256>>>(out, in, mask, n, (uint32_t)it, 0.9f);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(in));
	WL_CHECK(cudaFree(out));
	WL_CHECK(cudaFree(mean));
	WL_CHECK(cudaFree(rstd));
	WL_CHECK(cudaFree(mask));
	printf("low_intensity: %ld iterations over %ldx%ld done\n", iters, rows, cols);
	return 0;
}
