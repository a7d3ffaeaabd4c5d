/* SPDX-License-Identifier: MIT */
/* Memory growth: a decode loop that allocates a new KV-cache block every step and never frees. */

/*
 * Shows: device memory growing linearly (memory.growth_bytes_per_s > 0, never-freed
 * allocations at one site), and, for the compute side, dependency_chain: token t+1 needs
 * token t. Each step cudaMallocs the K and V of the new token (a naive cache without a block
 * pool), then runs three one-wave kernels with small grids: append (writes K, V and the
 * block's address into the block table), decode attention over all cached tokens (one block
 * per head, online softmax), and an argmax that picks the next token on the device (no
 * read-back, as a CUDA-graph decoder does).
 *
 * Parameters: --steps T (default 256), --heads H (default 32), --head-dim D (default 128, a
 * multiple of 32, <= 1024), --vocab V (embedding rows, default 8192).
 *
 * gpusim: GPUSIM_KERNEL_US="attention=200" (a decode step's attention over a long cache, plus
 * the layers it stands for). Each step is then 3 one-wave kernels of 5, 200 and 5 us with
 * fills of H/1056, H/1056 and 1/1056, queued 1 us apart, far longer than the host's cudaMalloc
 * and 3 launches; the name sequence (append, attention, argmax) repeats T times with period 3,
 * so ~90% of the window is dependency_chain. With 5 us waves only, the host's cost per step
 * can exceed the device's and the gaps become launch_overhead.
 *
 * Counts (exact):
 *   launches = kernels = 1 + 3*steps    (1 fill of the embedding; 3 kernels a step)
 *   allocations = 4 + steps, frees = 0
 *   host_syncs = 1: explicit 1 (final cudaDeviceSynchronize)
 *   memcpy = 0, memset = 0
 *   final (= peak) live device bytes = 4*V*H*D + 8*T + 8*H*D + 4 + T*8*H*D
 *     (embedding, block table, q and attention output, token, then 2*H*D floats per step)
 */
#include "common.h"

/* The new token's K and V (its embedding row, V scaled), and its query. */
__global__ void kv_cache_append_copy_kernel(const float *embedding, const int *token, float *block,
					    float **block_table, float *q, int step)
{
	int h = blockIdx.x, d = threadIdx.x, hd = gridDim.x * blockDim.x;
	/* step 0 starts from token 0: the token buffer is not written before then */
	const float *x = embedding + (long)(step ? *token : 0) * hd;
	int i = h * blockDim.x + d;

	block[i] = x[i];
	block[hd + i] = x[i] * 0.5f + 0.01f * (step % 7);
	q[i] = x[i];
	if (i == 0)
		block_table[step] = block;
}

/* One block per head, one thread per dimension: out = softmax(q K^T / sqrt(D)) V. */
__global__ void decode_attention_kernel(float *const *block_table, const float *q, float *out,
					int ntok)
{
	__shared__ float warp_sums[32];
	__shared__ float score;
	int h = blockIdx.x, d = threadIdx.x, hd = gridDim.x * blockDim.x;
	int i = h * blockDim.x + d, nwarps = blockDim.x / 32;
	float qd = q[i], m = -INFINITY, l = 0.0f, acc = 0.0f;
	float scale = rsqrtf((float)blockDim.x);

	for (int t = 0; t < ntok; t++) {
		const float *kv = block_table[t];
		float p = qd * kv[i];
		for (int off = 16; off > 0; off /= 2)
			p += __shfl_down_sync(0xffffffffu, p, off);
		if (d % 32 == 0)
			warp_sums[d / 32] = p;
		__syncthreads();
		if (d == 0) {
			float s = 0.0f;
			for (int w = 0; w < nwarps; w++)
				s += warp_sums[w];
			score = s * scale;
		}
		__syncthreads();
		float s = score, m_new = fmaxf(m, s), corr = __expf(m - m_new),
		      e = __expf(s - m_new);
		l = l * corr + e;
		acc = acc * corr + e * kv[hd + i];
		m = m_new;
		__syncthreads();
	}
	out[i] = acc / l;
}

/* One block: the next token is the index of the largest output, folded into the vocabulary. */
__global__ void topk_argmax_kernel(const float *out, int n, int vocab, int *token)
{
	__shared__ float best_v[256];
	__shared__ int best_i[256];
	float bv = -INFINITY;
	int bi = 0;

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		if (out[i] > bv) {
			bv = out[i];
			bi = i;
		}
	best_v[threadIdx.x] = bv;
	best_i[threadIdx.x] = bi;
	__syncthreads();
	for (int s = 128; s > 0; s /= 2) {
		if (threadIdx.x < s && best_v[threadIdx.x + s] > best_v[threadIdx.x]) {
			best_v[threadIdx.x] = best_v[threadIdx.x + s];
			best_i[threadIdx.x] = best_i[threadIdx.x + s];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*token = best_i[0] % vocab;
}

int main(int argc, char **argv)
{
	long steps = 256, heads = 32, head_dim = 128, vocab = 8192;
	const struct wl_opt opts[] = {
		{"steps", &steps, NULL, 1, 1000000, NULL, "decode steps (one KV block each)"},
		{"heads", &heads, NULL, 1, 1024, NULL, "attention heads"},
		{"head-dim", &head_dim, NULL, 32, 1024, NULL,
		 "dimensions per head (multiple of 32)"},
		{"vocab", &vocab, NULL, 1, 1000000, NULL, "embedding rows"},
	};
	float *embedding, **block_table, *qo;
	int *token;

	wl_parse(argc, argv, "a decode loop whose KV cache is never freed (memory growth)", opts,
		 WL_ARRAY_SIZE(opts));
	if (head_dim % 32)
		wl_die("--head-dim must be a multiple of 32");
	long hd = heads * head_dim;
	WL_CHECK(cudaMalloc(&embedding, vocab * hd * sizeof(float)));
	WL_CHECK(cudaMalloc(&block_table, steps * sizeof(float *)));
	WL_CHECK(cudaMalloc(&qo, 2 * hd * sizeof(float)));
	WL_CHECK(cudaMalloc(&token, sizeof(int)));
	wl_fill(embedding, vocab * hd, 71, 1.0f, 0);

	for (long t = 0; t < steps; t++) {
		float *block;
		WL_CHECK(cudaMalloc(&block, 2 * hd * sizeof(float)));
		kv_cache_append_copy_kernel<<<(unsigned)heads, (unsigned)head_dim>>>(
			embedding, token, block, block_table, qo, (int)t);
		WL_CHECK_LAUNCH();
		decode_attention_kernel<<<(unsigned)heads, (unsigned)head_dim>>>(
			block_table, qo, qo + hd, (int)t + 1);
		WL_CHECK_LAUNCH();
		topk_argmax_kernel<<<1, 256>>>(qo + hd, (int)hd, (int)vocab, token);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	printf("kv_cache_growth: %ld steps, %ld bytes of KV cache never freed\n", steps,
	       steps * 2 * hd * (long)sizeof(float));
	return 0;
}
