/* SPDX-License-Identifier: MIT */
/* Cause 3, batch too small: an MLP forward whose per-layer grids cannot fill 132 SMs. */

/*
 * Shows: small_batch. A 6-kernel MLP forward (1024 -> 4096 -> 4096 -> 1024 -> 1024 -> 1000
 * classes, then log-softmax) over a batch of B rows. Each fully-connected kernel gives one
 * block of 256 threads to 32 output features of one batch row, so its grid is (out/32) x B
 * blocks: 64..128 blocks per row of the batch, against 1056 resident blocks on 132 SMs.
 * Every layer has its own kernel name (period 6 > 4), so design.md's chain rule does not apply
 * and the unfilled share is small_batch.
 *
 * Parameters: --batch B (default 2), --iters N (forward passes, default 200).
 *
 * gpusim: GPUSIM_KERNEL_US="mlp_=40": a small-batch layer is bound by reading its weights
 * (4-64 MiB), ~5-25 us on a real GPU; 40 us keeps the device's time well above the host's
 * launch cost on a loaded machine. Each layer is then 1 wave of 40 us with a fill of at most
 * 128*B/1056, queued 1 us apart, so (1 - fill) of ~95% of the window is small_batch.
 *
 * Counts (exact):
 *   launches = kernels = 2 + 6*iters     (2 fills: parameters, input; 6 kernels a pass)
 *   allocations = 5, frees = 5
 *   host_syncs = 6: explicit 1 (cudaDeviceSynchronize at the end), implicit 5 (cudaFree)
 *   memcpy = 0, memset = 0
 */
#include "common.h"

#define FEATS_PER_BLOCK 32
#define KSPLIT		8 /* 256 threads = 32 features x 8 slices of the input dimension */

enum { ACT_RELU, ACT_GELU, ACT_SILU, ACT_TANH, ACT_NONE };

/* y[b][o] = act(sum_k x[b][k] * w[o][k] + bias[o]) for 32 features o of batch row b. */
__device__ __forceinline__ void fc_forward(const float *x, const float *w, const float *bias,
					   float *y, int in, int out, int act)
{
	__shared__ float partial[KSPLIT][FEATS_PER_BLOCK];
	int f = threadIdx.x % FEATS_PER_BLOCK, slice = threadIdx.x / FEATS_PER_BLOCK;
	int o = blockIdx.x * FEATS_PER_BLOCK + f, b = blockIdx.y;
	float acc = 0.0f;

	if (o < out)
		for (int k = slice; k < in; k += KSPLIT)
			acc += x[(long)b * in + k] * w[(long)o * in + k];
	partial[slice][f] = acc;
	__syncthreads();
	if (slice || o >= out)
		return;
	for (int s = 1; s < KSPLIT; s++)
		acc += partial[s][f];
	acc += bias[o];
	switch (act) {
	case ACT_RELU:
		acc = fmaxf(acc, 0.0f);
		break;
	case ACT_GELU:
		acc = 0.5f * acc *
		      (1.0f + tanhf(0.7978845608f * (acc + 0.044715f * acc * acc * acc)));
		break;
	case ACT_SILU:
		acc = acc / (1.0f + __expf(-acc));
		break;
	case ACT_TANH:
		acc = tanhf(acc);
		break;
	}
	y[(long)b * out + o] = acc;
}

#define FC_KERNEL(name, act)                                                                       \
	__global__ void name(const float *x, const float *w, const float *bias, float *y, int in,  \
			     int out)                                                              \
	{                                                                                          \
		fc_forward(x, w, bias, y, in, out, act);                                           \
	}
FC_KERNEL(mlp_fc1_bias_relu_kernel, ACT_RELU)
FC_KERNEL(mlp_fc2_bias_gelu_kernel, ACT_GELU)
FC_KERNEL(mlp_fc3_bias_silu_kernel, ACT_SILU)
FC_KERNEL(mlp_fc4_bias_tanh_kernel, ACT_TANH)
FC_KERNEL(mlp_head_logits_kernel, ACT_NONE)

/* One block per batch row: out = x - log(sum(exp(x))). */
__global__ void mlp_head_log_softmax_kernel(const float *x, float *y, int n)
{
	__shared__ float s_max, s_sum;
	const float *row = x + (long)blockIdx.x * n;

	if (threadIdx.x == 0) {
		float m = -INFINITY, s = 0.0f;
		for (int i = 0; i < n; i++)
			m = fmaxf(m, row[i]);
		for (int i = 0; i < n; i++)
			s += __expf(row[i] - m);
		s_max = m;
		s_sum = __logf(s);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		y[(long)blockIdx.x * n + i] = row[i] - s_max - s_sum;
}

static const int dims[] = {1024, 4096, 4096, 1024, 1024, 1000};

int main(int argc, char **argv)
{
	long batch = 2, iters = 200;
	const struct wl_opt opts[] = {
		{"batch", &batch, NULL, 1, 4096, NULL, "rows per forward pass"},
		{"iters", &iters, NULL, 1, 1000000, NULL, "forward passes"},
	};
	void (*const layers[])(const float *, const float *, const float *, float *, int, int) = {
		mlp_fc1_bias_relu_kernel, mlp_fc2_bias_gelu_kernel, mlp_fc3_bias_silu_kernel,
		mlp_fc4_bias_tanh_kernel, mlp_head_logits_kernel,
	};
	float *params, *input, *act[2], *logprobs;
	long n_params = 0, widest = 0;

	wl_parse(argc, argv, "small-batch MLP forward passes (cause: small_batch)", opts,
		 WL_ARRAY_SIZE(opts));
	for (size_t l = 0; l + 1 < WL_ARRAY_SIZE(dims); l++)
		n_params += (long)dims[l] * dims[l + 1] + dims[l + 1];
	for (size_t l = 0; l < WL_ARRAY_SIZE(dims); l++)
		widest = dims[l] > widest ? dims[l] : widest;
	WL_CHECK(cudaMalloc(&params, n_params * sizeof(float)));
	WL_CHECK(cudaMalloc(&input, batch * dims[0] * sizeof(float)));
	WL_CHECK(cudaMalloc(&act[0], batch * widest * sizeof(float)));
	WL_CHECK(cudaMalloc(&act[1], batch * widest * sizeof(float)));
	WL_CHECK(cudaMalloc(&logprobs, batch * dims[5] * sizeof(float)));
	wl_fill(params, n_params, 11, 0.05f, 0);
	wl_fill(input, batch * dims[0], 12, 2.0f, 0);

	for (long it = 0; it < iters; it++) {
		const float *x = input, *w = params;
		for (size_t l = 0; l < WL_ARRAY_SIZE(layers); l++) {
			int in = dims[l], out = dims[l + 1];
			dim3 grid((unsigned)WL_DIV_ROUND_UP(out, FEATS_PER_BLOCK), (unsigned)batch);
			layers[l]<<<grid, 256>>>(x, w, w + (long)in * out, act[l % 2], in, out);
			WL_CHECK_LAUNCH();
			x = act[l % 2];
			w += (long)in * out + out;
		}
		mlp_head_log_softmax_kernel<<<(unsigned)batch, 256>>>(x, logprobs, dims[5]);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(params));
	WL_CHECK(cudaFree(input));
	WL_CHECK(cudaFree(act[0]));
	WL_CHECK(cudaFree(act[1]));
	WL_CHECK(cudaFree(logprobs));
	printf("small_batch: %ld forward passes at batch %ld done\n", iters, batch);
	return 0;
}
