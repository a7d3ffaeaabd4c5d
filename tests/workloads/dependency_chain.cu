/* SPDX-License-Identifier: MIT */
/* Cause 4, serial dependency chain: an Elman RNN, one time step after another on one stream. */

/*
 * Shows: dependency_chain. h_t = tanh(W_h h_{t-1} + x_t W_x^T + b) with hidden size H and
 * batch 1: step t reads the h that step t-1 wrote, so the steps cannot overlap and each is a
 * matrix-vector product over H x H weights (H/8 blocks: one warp per hidden unit) followed by
 * an activation (H/256 blocks). The input projection of all T steps is one gemm up front,
 * as cuDNN does. Per step the name sequence (rnn_cell_gemv, rnn_cell_tanh) repeats with
 * period 2, T >= 16 times, each grid far under half the device: design.md's chain.
 *
 * Parameters: --hidden H (default 1024, a multiple of 256), --steps T (default 256),
 * --seqs S (sequences run one after the other, default 4).
 *
 * gpusim: GPUSIM_KERNEL_US="rnn_cell=50" (a step of a larger RNN; a hidden size of 4096 reads
 * 64 MiB of weights per step, tens of us on a real GPU). Each step kernel is then 1 wave of
 * 50 us with a fill of H/8/1056 (0.12) or H/256/1056, queued 1 us apart: the host's launch
 * cost (4 us, more under gpuwhy on a loaded machine) stays far below the device's, so ~90%
 * of the window is the unfilled share of chained kernels. With the default 5 us waves the
 * host's own launch cost can exceed the device's and the gaps become launch_overhead.
 *
 * Counts (exact):
 *   launches = kernels = 2 + seqs*(1 + 2*steps)   (2 fills; per sequence one input gemm,
 *                                                  then gemv + tanh per step)
 *   allocations = 5, frees = 5
 *   host_syncs = 6: explicit 1 (cudaDeviceSynchronize at the end), implicit 5 (cudaFree)
 *   memcpy = 0, memset = 0
 */
#include "common.h"

/* xproj[t][j] = sum_k x[t][k] * wx[j][k], 16x16 tiles. */
__global__ void rnn_input_proj_gemm_kernel(const float *x, const float *wx, float *xproj, int t,
					   int h)
{
	__shared__ float xs[16][17], ws[16][17];
	int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
	float acc = 0.0f;

	for (int k0 = 0; k0 < h; k0 += 16) {
		xs[threadIdx.y][threadIdx.x] = row < t ? x[(long)row * h + k0 + threadIdx.x] : 0.0f;
		ws[threadIdx.y][threadIdx.x] =
			wx[(long)(blockIdx.x * 16 + threadIdx.y) * h + k0 + threadIdx.x];
		__syncthreads();
		for (int k = 0; k < 16; k++)
			acc += xs[threadIdx.y][k] * ws[threadIdx.x][k];
		__syncthreads();
	}
	if (row < t && col < h)
		xproj[(long)row * h + col] = acc;
}

/* pre[j] = sum_k wh[j][k] * h[k] + xproj_t[j]: one warp per hidden unit j. */
__global__ void rnn_cell_gemv_kernel(const float *wh, const float *h, const float *xproj_t,
				     float *pre, int hidden)
{
	int j = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
	float acc = 0.0f;

	if (j >= hidden)
		return;
	for (int k = lane; k < hidden; k += 32)
		acc += wh[(long)j * hidden + k] * h[k];
	for (int off = 16; off > 0; off /= 2)
		acc += __shfl_down_sync(0xffffffffu, acc, off);
	if (lane == 0)
		pre[j] = acc + xproj_t[j];
}

__global__ void rnn_cell_tanh_kernel(const float *pre, const float *bias, float *h_next, int hidden)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j < hidden)
		h_next[j] = tanhf(pre[j] + bias[j]);
}

int main(int argc, char **argv)
{
	long hidden = 1024, steps = 256, seqs = 4;
	const struct wl_opt opts[] = {
		{"hidden", &hidden, NULL, 256, 16384, NULL, "hidden units (a multiple of 256)"},
		{"steps", &steps, NULL, 1, 100000, NULL, "time steps per sequence"},
		{"seqs", &seqs, NULL, 1, 100000, NULL, "sequences, one after the other"},
	};
	float *weights, *x, *xproj, *hbuf, *pre;

	wl_parse(argc, argv, "an RNN over time steps (cause: dependency_chain)", opts,
		 WL_ARRAY_SIZE(opts));
	if (hidden % 256)
		wl_die("--hidden must be a multiple of 256");
	long hh = hidden * hidden;
	/* weights: W_h, W_x, bias; hbuf: h_0 .. h_T of one sequence */
	WL_CHECK(cudaMalloc(&weights, (2 * hh + hidden) * sizeof(float)));
	WL_CHECK(cudaMalloc(&x, steps * hidden * sizeof(float)));
	WL_CHECK(cudaMalloc(&xproj, steps * hidden * sizeof(float)));
	WL_CHECK(cudaMalloc(&hbuf, (steps + 1) * hidden * sizeof(float)));
	WL_CHECK(cudaMalloc(&pre, hidden * sizeof(float)));
	wl_fill(weights, 2 * hh + hidden, 21, 2.0f / 32.0f, 0);
	wl_fill(x, steps * hidden, 22, 2.0f, 0);

	const float *wh = weights, *wx = weights + hh, *bias = weights + 2 * hh;
	dim3 pgrid((unsigned)(hidden / 16), (unsigned)WL_DIV_ROUND_UP(steps, 16)), pblock(16, 16);
	for (long s = 0; s < seqs; s++) {
		rnn_input_proj_gemm_kernel<<<pgrid, pblock>>>(x, wx, xproj, (int)steps,
							      (int)hidden);
		WL_CHECK_LAUNCH();
		for (long t = 0; t < steps; t++) {
			float *h_prev = hbuf + t * hidden, *h_next = h_prev + hidden;
			rnn_cell_gemv_kernel<<<(unsigned)(hidden / 8), 256>>>(
				wh, h_prev, xproj + t * hidden, pre, (int)hidden);
			WL_CHECK_LAUNCH();
			rnn_cell_tanh_kernel<<<(unsigned)(hidden / 256), 256>>>(pre, bias, h_next,
										(int)hidden);
			WL_CHECK_LAUNCH();
		}
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(weights));
	WL_CHECK(cudaFree(x));
	WL_CHECK(cudaFree(xproj));
	WL_CHECK(cudaFree(hbuf));
	WL_CHECK(cudaFree(pre));
	printf("dependency_chain: %ld sequences of %ld steps, hidden %ld done\n", seqs, steps,
	       hidden);
	return 0;
}
