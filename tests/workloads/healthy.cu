/* SPDX-License-Identifier: MIT */
/* The healthy quadrant: memory nearly full and dense gemm kernels in full waves, back to back. */

/*
 * Shows: compute (the dominant_cause; memory high, compute high). The program takes
 * --mem-percent of the device's memory (cudaMemGetInfo's total) as a training job's weights,
 * optimizer state and activations would, then runs gemm kernels whose grids are exact
 * multiples of the device's resident-block capacity, queued back to back, with a single
 * cudaDeviceSynchronize at the end.
 *
 * Parameters: --iters N (default 200), --waves W (gemm 512 x 528*W x 512 = 1056*W blocks of
 * 256 threads, default 4), --mem-percent P (default 88), --chunks C (allocations beyond
 * the three gemm operands that make up the rest of the P%, default 4).
 *
 * gpusim: GPUSIM_KERNEL_US="gemm=50": each gemm is then W full waves (fill 1) of 50 us and
 * consecutive kernels are 1 us apart, so compute is W*50/(W*50+1) > 99% of the window.
 * The host queues a launch in 4 us against 200 us of kernel, so it stays ahead; its tests
 * also hold the device until the loop is queued (GPUSIM_HOLD_US) so that a host thread
 * descheduled for milliseconds on a busy machine cannot open a gap (0.897 seen without).
 * (Without it: W*5/(W*5+1), 95% at W = 4.)
 *
 * Counts (exact):
 *   launches = kernels = 2 + iters   (2 fills, then one gemm per iteration)
 *   allocations = 3 + chunks, frees = 3 + chunks
 *   host_syncs = 1 + 3 + chunks: explicit 1, implicit 3 + chunks (cudaFree)
 *   memcpy = 0, memset = 0
 *   peak live device bytes = total * P / 100 (integer division; total from cudaMemGetInfo,
 *   the device's memory_total_bytes)
 */
#include "common.h"

int main(int argc, char **argv)
{
	long iters = 200, waves = 4, mem_percent = 88, chunks = 4;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 10000000, NULL, "gemm kernels"},
		{"waves", &waves, NULL, 1, 64, NULL, "full waves per gemm"},
		{"mem-percent", &mem_percent, NULL, 1, 99, NULL, "share of device memory to hold"},
		{"chunks", &chunks, NULL, 1, 1024, NULL, "allocations holding the rest of it"},
	};
	size_t free_b, total_b;
	float *a, *b, *c;

	wl_parse(argc, argv, "dense gemms on a nearly full device (healthy: compute)", opts,
		 WL_ARRAY_SIZE(opts));
	long m = 512, n = 528 * waves, k = 512;
	size_t working = (size_t)(m * k + k * n + m * n) * sizeof(float);
	WL_CHECK(cudaMemGetInfo(&free_b, &total_b));
	size_t target = (size_t)((unsigned long long)total_b * mem_percent / 100);
	if (target < working || target > free_b) {
		fprintf(stderr, "%s: cannot hold %ld%% of %zu bytes: %zu bytes are free\n",
			wl_program, mem_percent, total_b, free_b);
		return EXIT_FAILURE;
	}
	void **ballast = (void **)calloc(chunks, sizeof(void *));
	if (!ballast)
		wl_die("out of host memory");
	WL_CHECK(cudaMalloc(&a, m * k * sizeof(float)));
	WL_CHECK(cudaMalloc(&b, k * n * sizeof(float)));
	WL_CHECK(cudaMalloc(&c, m * n * sizeof(float)));
	size_t rest = target - working, chunk = rest / chunks;
	for (long i = 0; i < chunks; i++)
		WL_CHECK(cudaMalloc(&ballast[i],
				    i + 1 < chunks ? chunk : rest - chunk * (chunks - 1)));
	wl_fill(a, m * k, 61, 0.1f, 0);
	wl_fill(b, k * n, 62, 0.1f, 0);

	for (long it = 0; it < iters; it++)
		wl_sgemm(a, b, c, m, n, k, 1.0f, it ? 0.5f : 0.0f, 0);
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(a));
	WL_CHECK(cudaFree(b));
	WL_CHECK(cudaFree(c));
	for (long i = 0; i < chunks; i++)
		WL_CHECK(cudaFree(ballast[i]));
	free(ballast);
	printf("healthy: %ld gemms of %ld waves with %zu of %zu device bytes held done\n", iters,
	       waves, target, total_b);
	return 0;
}
