/* SPDX-License-Identifier: MIT */
/* The founding example: a slow loader, an upload, many small kernels and a `.item()` per step. */

/*
 * Shows: host_work first, then host_sync, small_batch and launch_overhead: the mixture a
 * real training step of a small model has. Each iteration: the CPU loader decodes and
 * augments a batch for --load-us (real work), a synchronous H2D cudaMemcpy of --n floats,
 * --kernels small elementwise kernels (six different names in turn: add, mul, bias_add_relu,
 * vectorized scale, axpy, cast to bf16 precision; n/256 blocks each, a quarter of the device
 * at the default n), a one-block loss reduction, a 4-byte D2H read of the loss (`.item()`),
 * and a host decision on it for --decide-us (early stopping / logging). Before the loop it
 * takes --resident-percent of the device's memory (cudaMemGetInfo's total) in one allocation:
 * the weights, optimizer state and allocator cache that keep a real job's memory curve near
 * the top while compute sits idle — the brief's "memory full, compute idle" picture.
 *
 * Parameters: --iters N (default 50), --kernels K (default 24), --n ELEMENTS (default
 * 65536), --load-us U (default 1000), --decide-us D (default 20), --resident-percent P
 * (default 85; 0 for none).
 *
 * gpusim: no GPUSIM_KERNEL_US needed. Per iteration the device is busy ~(K+1)*6 us + two
 * copies, the host launches K+1 kernels in (K+1)*4 us and then waits: the read-back's wait
 * (~K*2 us) is the sync debt that the next gap pays first as host_sync; the rest of that
 * ~U+D us gap is host_work (design.md rule C.3), ~80% of the window at the defaults.
 *
 * Counts (exact):
 *   launches = kernels = 1 + iters*(kernels + 1)   (1 fill; K elementwise + 1 reduction)
 *   allocations = 3 + (P > 0), frees = 3 + (P > 0)
 *   memcpy = 2*iters (H2D n*4 bytes, D2H 4 bytes)
 *   host_syncs = 2*iters + 1 + 3 + (P > 0): copy 2*iters, explicit 1 (final
 *     cudaDeviceSynchronize), implicit 3 + (P > 0) (cudaFree)
 *   peak live device bytes = total * P / 100 (integer division) when that exceeds the
 *     working set of (4*n + 1) floats, else the working set + 256 (when P > 0)
 *   memset = 0
 */
#include "common.h"

__global__ void elementwise_add_kernel(const float *a, const float *b, float *c, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void elementwise_mul_kernel(const float *a, const float *b, float *c, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] * b[i];
}

__global__ void bias_add_relu_kernel(float *x, const float *bias, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = fmaxf(x[i] + bias[i % 256], 0.0f);
}

__global__ void vectorized_scale_kernel(float *x, float s, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= s;
}

__global__ void axpy_kernel(float a, const float *x, float *y, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

/* Rounds to bfloat16 precision (truncating the low 16 bits), as an autocast would. */
__global__ void cast_fp32_to_bf16_kernel(const float *in, float *out, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = __uint_as_float(__float_as_uint(in[i]) & 0xffff0000u);
}

/* One block: loss = mean of squares. */
__global__ void loss_reduce_sum_kernel(const float *x, long n, float *loss)
{
	__shared__ float partial[256];
	float acc = 0.0f;

	for (long i = threadIdx.x; i < n; i += blockDim.x)
		acc += x[i] * x[i];
	partial[threadIdx.x] = acc;
	__syncthreads();
	for (int s = 128; s > 0; s /= 2) {
		if (threadIdx.x < s)
			partial[threadIdx.x] += partial[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*loss = partial[0] / n;
}

int main(int argc, char **argv)
{
	long iters = 50, kernels = 24, n = 65536, load_us = 1000, decide_us = 20;
	long resident_percent = 85;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 1000000, NULL, "training steps"},
		{"kernels", &kernels, NULL, 1, 100000, NULL, "small elementwise kernels per step"},
		{"n", &n, NULL, 256, 1L << 28, NULL, "elements per batch and per kernel"},
		{"load-us", &load_us, NULL, 0, 10000000, NULL, "CPU loader time per step (us)"},
		{"decide-us", &decide_us, NULL, 0, 10000000, NULL, "host decision time (us)"},
		{"resident-percent", &resident_percent, NULL, 0, 95, NULL,
		 "share of device memory held by weights and allocator cache"},
	};
	float *d_batch, *d_state, *d_loss, *h_batch, h_loss = 0.0f, lr = 0.1f;
	void *d_resident = NULL;
	size_t free_b, total_b;
	uint8_t *scratch;
	uint32_t check = 0;
	long stalls = 0;

	wl_parse(argc, argv, "loader, upload, small kernels, .item() (cause: host_work)", opts,
		 WL_ARRAY_SIZE(opts));
	h_batch = (float *)malloc(n * sizeof(float));
	scratch = (uint8_t *)malloc(n);
	if (!h_batch || !scratch)
		wl_die("out of host memory");
	WL_CHECK(cudaMalloc(&d_batch, n * sizeof(float)));
	WL_CHECK(cudaMalloc(&d_state, 3 * n * sizeof(float))); /* x, y, bias */
	WL_CHECK(cudaMalloc(&d_loss, sizeof(float)));
	if (resident_percent > 0) {
		size_t working = (size_t)(4 * n + 1) * sizeof(float);
		size_t target;

		WL_CHECK(cudaMemGetInfo(&free_b, &total_b));
		target = (size_t)((unsigned long long)total_b * resident_percent / 100);
		if (target > working) {
			if (target - working > free_b) {
				fprintf(stderr,
					"%s: cannot hold %ld%% of %zu bytes: %zu are free\n",
					wl_program, resident_percent, total_b, free_b);
				return EXIT_FAILURE;
			}
			WL_CHECK(cudaMalloc(&d_resident, target - working));
		} else {
			WL_CHECK(cudaMalloc(&d_resident, 256));
		}
	}
	wl_fill(d_state, 3 * n, 81, 1.0f, 0);

	float *x = d_state, *y = d_state + n, *bias = d_state + 2 * n;
	unsigned blocks = (unsigned)WL_DIV_ROUND_UP(n, 256);
	for (long it = 0; it < iters; it++) {
		check ^= wl_host_work_us(load_us, h_batch, scratch, n, (uint32_t)it);
		WL_CHECK(cudaMemcpy(d_batch, h_batch, n * sizeof(float), cudaMemcpyHostToDevice));
		for (long k = 0; k < kernels; k++) {
			switch (k % 6) {
			case 0:
				elementwise_add_kernel<<<blocks, 256>>>(x, d_batch, y, n);
				break;
			case 1:
				elementwise_mul_kernel<<<blocks, 256>>>(y, d_batch, x, n);
				break;
			case 2:
				bias_add_relu_kernel<<<blocks, 256>>>(x, bias, n);
				break;
			case 3:
				vectorized_scale_kernel<<<blocks, 256>>>(x, 1.0f - lr, n);
				break;
			case 4:
				axpy_kernel<<<blocks, 256>>>(lr, d_batch, x, n);
				break;
			default:
				cast_fp32_to_bf16_kernel<<<blocks, 256>>>(x, y, n);
				break;
			}
			WL_CHECK_LAUNCH();
		}
		loss_reduce_sum_kernel<<<1, 256>>>(x, n, d_loss);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaMemcpy(&h_loss, d_loss, sizeof(float), cudaMemcpyDeviceToHost));
		/* the decision: a plateau schedule on the loss, after the logging work */
		check ^= wl_host_work_us(decide_us, h_batch, scratch, n < 4096 ? n : 4096,
					 (uint32_t)~it);
		if (!(h_loss < 1e3f)) {
			lr *= 0.5f;
			stalls++;
		}
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(d_batch));
	WL_CHECK(cudaFree(d_state));
	WL_CHECK(cudaFree(d_loss));
	if (d_resident)
		WL_CHECK(cudaFree(d_resident));
	free(h_batch);
	free(scratch);
	printf("mixed_training: %ld steps done (lr %g after %ld cuts, check %08x)\n", iters, lr,
	       stalls, check);
	return 0;
}
