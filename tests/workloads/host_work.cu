/* SPDX-License-Identifier: MIT */
/* Host work: a CPU-side data loader decodes and augments each batch while the GPU starves. */

/*
 * Shows: host_work (not one of the six causes: the GPU waits for the CPU). Each iteration
 * the loader decodes and augments a batch of B images of 3x32x32 on the CPU for --load-us
 * (real work: run-length decode, flip, normalize), copies it to the device with a
 * synchronous cudaMemcpy from pageable memory, then runs a small convnet on it: two 3x3
 * convolutions with ReLU and a pooling + linear head.
 *
 * Parameters: --iters N (default 30), --batch B (default 32), --load-us U (default 2000).
 *
 * gpusim: GPUSIM_KERNEL_US="conv=20". The copy is 5 us + B*12 KiB at 25 GB/s (~21 us), the
 * convolutions 2 waves each; the GPU's ~110 us per iteration sits next to a gap of ~U that
 * is longer than 100 us and follows no sync debt (the copy found the device idle), so ~90%
 * of the window is host_work (design.md rule C.3).
 *
 * Counts (exact):
 *   launches = kernels = 2 + 3*iters     (2 fills: weights; conv1, conv2, head a step)
 *   allocations = 4, frees = 4
 *   memcpy = iters (H2D, B*3*32*32*4 bytes each)
 *   host_syncs = iters + 1 + 4: copy iters, explicit 1 (final cudaDeviceSynchronize),
 *     implicit 4 (cudaFree)
 *   memset = 0
 */
#include "common.h"

#define IMG    32
#define C1     16
#define NCLASS 10

/* out[b][co][y][x] = relu(sum_ci,ky,kx in[b][ci][y+ky-1][x+kx-1] * w[co][ci][ky][kx]). */
__global__ void conv2d_3x3_relu_kernel(const float *in, const float *w, float *out, int batch,
				       int cin, int cout)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	int x = idx % IMG, y = (idx / IMG) % IMG, co = (idx / (IMG * IMG)) % cout;
	int b = (int)(idx / ((long)IMG * IMG * cout));
	float acc = 0.0f;

	if (b >= batch)
		return;
	for (int ci = 0; ci < cin; ci++)
		for (int ky = 0; ky < 3; ky++)
			for (int kx = 0; kx < 3; kx++) {
				int yy = y + ky - 1, xx = x + kx - 1;
				if (yy < 0 || yy >= IMG || xx < 0 || xx >= IMG)
					continue;
				acc += in[(((long)b * cin + ci) * IMG + yy) * IMG + xx] *
				       w[((co * cin + ci) * 3 + ky) * 3 + kx];
			}
	out[idx] = fmaxf(acc, 0.0f);
}

/* One block per image: average over the image per channel, then a C1 x NCLASS linear. */
__global__ void pool_linear_head_kernel(const float *act, const float *w, float *logits)
{
	__shared__ float pooled[C1];
	const float *img = act + (long)blockIdx.x * C1 * IMG * IMG;

	if (threadIdx.x < C1) {
		float s = 0.0f;
		for (int i = 0; i < IMG * IMG; i++)
			s += img[threadIdx.x * IMG * IMG + i];
		pooled[threadIdx.x] = s / (IMG * IMG);
	}
	__syncthreads();
	if (threadIdx.x < NCLASS) {
		float s = 0.0f;
		for (int c = 0; c < C1; c++)
			s += pooled[c] * w[threadIdx.x * C1 + c];
		logits[blockIdx.x * NCLASS + threadIdx.x] = s;
	}
}

int main(int argc, char **argv)
{
	long iters = 30, batch = 32, load_us = 2000;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 1000000, NULL, "batches"},
		{"batch", &batch, NULL, 1, 4096, NULL, "images of 3x32x32 per batch"},
		{"load-us", &load_us, NULL, 0, 10000000, NULL,
		 "CPU decode/augment time per batch (us)"},
	};
	float *d_img, *d_weights, *d_act, *d_logits, *h_img;
	uint8_t *scratch;
	uint32_t check = 0;

	wl_parse(argc, argv, "a slow CPU data loader feeding a small convnet (cause: host_work)",
		 opts, WL_ARRAY_SIZE(opts));
	long img_elems = batch * 3 * IMG * IMG, act_elems = batch * C1 * IMG * IMG;
	long w1 = C1 * 3 * 9, w2 = C1 * C1 * 9, wh = NCLASS * C1;
	h_img = (float *)malloc(img_elems * sizeof(float));
	scratch = (uint8_t *)malloc(img_elems);
	if (!h_img || !scratch)
		wl_die("out of host memory");
	WL_CHECK(cudaMalloc(&d_img, img_elems * sizeof(float)));
	WL_CHECK(cudaMalloc(&d_weights, (w1 + w2 + wh) * sizeof(float)));
	WL_CHECK(cudaMalloc(&d_act, 2 * act_elems * sizeof(float)));
	WL_CHECK(cudaMalloc(&d_logits, batch * NCLASS * sizeof(float)));
	wl_fill(d_weights, w1 + w2, 51, 0.3f, 0);
	wl_fill(d_weights + w1 + w2, wh, 52, 0.5f, 0);

	unsigned blocks = (unsigned)WL_DIV_ROUND_UP(act_elems, 256);
	for (long it = 0; it < iters; it++) {
		check ^= wl_host_work_us(load_us, h_img, scratch, img_elems, (uint32_t)it);
		WL_CHECK(cudaMemcpy(d_img, h_img, img_elems * sizeof(float),
				    cudaMemcpyHostToDevice));
		conv2d_3x3_relu_kernel<<<blocks, 256>>>(d_img, d_weights, d_act, (int)batch, 3, C1);
		WL_CHECK_LAUNCH();
		conv2d_3x3_relu_kernel<<<blocks, 256>>>(d_act, d_weights + w1, d_act + act_elems,
							(int)batch, C1, C1);
		WL_CHECK_LAUNCH();
		pool_linear_head_kernel<<<(unsigned)batch, 32>>>(d_act + act_elems,
								 d_weights + w1 + w2, d_logits);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(d_img));
	WL_CHECK(cudaFree(d_weights));
	WL_CHECK(cudaFree(d_act));
	WL_CHECK(cudaFree(d_logits));
	free(h_img);
	free(scratch);
	printf("host_work: %ld batches of %ld images done (check %08x)\n", iters, batch, check);
	return 0;
}
