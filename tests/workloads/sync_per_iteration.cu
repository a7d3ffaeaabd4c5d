/* SPDX-License-Identifier: MIT */
/* Cause 6, CPU-GPU synchronization: a `.item()` read-back and a host decision every step. */

/*
 * Shows: host_sync. Each iteration queues K dense gemm kernels and a loss reduction, then
 * reads the 4-byte loss back with a synchronous cudaMemcpy (what `loss.item()` does) and/or
 * calls cudaDeviceSynchronize, then makes a host decision with it (a loss-scale schedule:
 * the next iteration's alpha) that costs --decide-us of real CPU work. The read-back drains
 * the queue, so the host's decision and its next launch happen while the GPU has nothing.
 *
 * Parameters: --iters N (default 100), --kernels K (gemm kernels per iteration, default 4),
 * --item 0|1 (4-byte D2H copy per iteration, default 1), --device-sync 0|1
 * (cudaDeviceSynchronize per iteration, before the copy, default 0), --decide-us U (host
 * decision time, default 1000), --waves W (each gemm is 512 x 528*W, k 8192: W full waves).
 *
 * gpusim: GPUSIM_KERNEL_US="gemm=1000": a 512x528x8192 sgemm (4.4 GFLOP) takes about a
 * millisecond on a real GPU. The synchronizing call then waits for ~K ms of queued work, a
 * debt far larger than the gap that follows it (decide-us + one launch), so that whole gap
 * is host_sync (design.md rule C.2): ~1 of ~5 ms per iteration at the defaults; the gemms are
 * compute; the copy data_transfer (5 us); the one-block reduction small_batch (5 us). The
 * millisecond scale keeps the picture when a loaded CI machine preempts the host for
 * milliseconds: the queued gemms cover the host's absence.
 *
 * Counts (exact):
 *   launches = kernels = 2 + iters*(kernels + 1)   (2 fills; K gemms + 1 reduction a step)
 *   allocations = 4, frees = 4
 *   memcpy = iters*item (D2H, 4 bytes each)
 *   host_syncs = iters*(item + device_sync) + 1 + 4:
 *     copy iters*item, explicit iters*device_sync + 1 (the final cudaDeviceSynchronize),
 *     implicit 4 (cudaFree)
 *   memset = 0
 */
#include "common.h"

/* One block: loss = mean(c) over n elements. */
__global__ void loss_reduce_sum_kernel(const float *c, long n, float *loss)
{
	__shared__ float partial[256];
	float acc = 0.0f;

	for (long i = threadIdx.x; i < n; i += blockDim.x)
		acc += c[i];
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
	long iters = 100, kernels = 4, item = 1, device_sync = 0, decide_us = 1000, waves = 1;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 1000000, NULL, "iterations"},
		{"kernels", &kernels, NULL, 1, 1000, NULL, "gemm kernels per iteration"},
		{"item", &item, NULL, 0, 1, NULL, "4-byte D2H read-back per iteration"},
		{"device-sync", &device_sync, NULL, 0, 1, NULL,
		 "cudaDeviceSynchronize per iteration"},
		{"decide-us", &decide_us, NULL, 0, 1000000, NULL, "host decision CPU time (us)"},
		{"waves", &waves, NULL, 1, 64, NULL, "full waves per gemm"},
	};
	float *a, *b, *c, *loss, *host_out;
	uint8_t *scratch;
	float alpha = 1.0f, h_loss = 0.0f;
	uint32_t check = 0;

	wl_parse(argc, argv, "a read-back and a host decision every iteration (cause: host_sync)",
		 opts, WL_ARRAY_SIZE(opts));
	long m = 512, n = 528 * waves, k = 8192;
	host_out = (float *)malloc(4096 * sizeof(float));
	scratch = (uint8_t *)malloc(4096);
	if (!host_out || !scratch)
		wl_die("out of host memory");
	WL_CHECK(cudaMalloc(&a, m * k * sizeof(float)));
	WL_CHECK(cudaMalloc(&b, k * n * sizeof(float)));
	WL_CHECK(cudaMalloc(&c, m * n * sizeof(float)));
	WL_CHECK(cudaMalloc(&loss, sizeof(float)));
	wl_fill(a, m * k, 41, 0.1f, 0);
	wl_fill(b, k * n, 42, 0.1f, 0);

	for (long it = 0; it < iters; it++) {
		for (long j = 0; j < kernels; j++)
			wl_sgemm(a, b, c, m, n, k, alpha, j ? 1.0f : 0.0f, 0);
		loss_reduce_sum_kernel<<<1, 256>>>(c, m * n, loss);
		WL_CHECK_LAUNCH();
		if (device_sync)
			WL_CHECK(cudaDeviceSynchronize());
		if (item)
			WL_CHECK(cudaMemcpy(&h_loss, loss, sizeof(float), cudaMemcpyDeviceToHost));
		/* the decision: a dynamic loss-scale schedule, after some host bookkeeping */
		check ^= wl_host_work_us(decide_us, host_out, scratch, 4096, (uint32_t)it);
		alpha = h_loss > 1.0f || h_loss != h_loss ? alpha * 0.5f
							  : fminf(alpha * 1.01f, 1.0f);
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(a));
	WL_CHECK(cudaFree(b));
	WL_CHECK(cudaFree(c));
	WL_CHECK(cudaFree(loss));
	free(host_out);
	free(scratch);
	printf("sync_per_iteration: %ld iterations done (alpha %g, check %08x)\n", iters, alpha,
	       check);
	return 0;
}
