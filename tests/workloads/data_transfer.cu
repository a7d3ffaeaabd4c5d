/* SPDX-License-Identifier: MIT */
/* Data transfer: large host-to-device and device-to-host copies with little compute between. */

/*
 * Shows: data_transfer (not one of the six causes: only copies run). Each iteration clears an
 * output buffer (synchronous cudaMemset), uploads --mb MiB from pageable host memory, runs
 * one elementwise scale-and-bias kernel over it and downloads the result: an offload pattern
 * whose arithmetic is negligible next to its PCIe traffic.
 *
 * Parameters: --iters N (default 4), --mb M (MiB each way per iteration, default 16).
 *
 * gpusim: GPUSIM_H2D_GBPS=0.5 GPUSIM_D2H_GBPS=0.5, slower than a real pageable copy (3-10
 * GB/s): gpusim moves the real bytes on the host inside the copy call before the virtual
 * copy starts, and that time is a gap inside an API call (launch_overhead to the analysis);
 * on a slow, loaded CI machine that memmove runs at 1-3 GB/s. At 0.5 GB/s each copy is 5 us
 * + ~33.6 ms of virtual time against one kernel of M*1024 blocks (80 us at M = 16), so the
 * copies stay ~85% of the window or more even there.
 *
 * Counts (exact):
 *   launches = kernels = iters
 *   allocations = 2, frees = 2
 *   memcpy = 2*iters (iters H2D + iters D2H, M MiB each), memset = iters (synchronous)
 *   host_syncs = 3*iters + 1 + 2: copy 3*iters (2 cudaMemcpy + 1 cudaMemset a step),
 *     explicit 1 (final cudaDeviceSynchronize), implicit 2 (cudaFree)
 */
#include "common.h"

__global__ void elementwise_scale_bias_kernel(const float *in, float *out, float s, float b, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i] * s + b;
}

int main(int argc, char **argv)
{
	long iters = 4, mb = 16;
	const struct wl_opt opts[] = {
		{"iters", &iters, NULL, 1, 100000, NULL, "round trips"},
		{"mb", &mb, NULL, 1, 65536, NULL, "MiB copied each way per round trip"},
	};
	float *d_in, *d_out, *h_buf;
	double sum = 0.0;

	wl_parse(argc, argv, "large copies, little compute (cause: data_transfer)", opts,
		 WL_ARRAY_SIZE(opts));
	size_t bytes = (size_t)mb << 20;
	long n = (long)(bytes / sizeof(float));
	h_buf = (float *)malloc(bytes);
	if (!h_buf)
		wl_die("out of host memory");
	for (long i = 0; i < n; i++)
		h_buf[i] = (float)(i % 1000) * 0.001f;
	WL_CHECK(cudaMalloc(&d_in, bytes));
	WL_CHECK(cudaMalloc(&d_out, bytes));

	for (long it = 0; it < iters; it++) {
		WL_CHECK(cudaMemset(d_out, 0, bytes));
		WL_CHECK(cudaMemcpy(d_in, h_buf, bytes, cudaMemcpyHostToDevice));
		elementwise_scale_bias_kernel<<<(unsigned)WL_DIV_ROUND_UP(n, 256), 256>>>(
			d_in, d_out, 0.5f, 1.0f, n);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaMemcpy(h_buf, d_out, bytes, cudaMemcpyDeviceToHost));
		sum += h_buf[n - 1];
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(d_in));
	WL_CHECK(cudaFree(d_out));
	free(h_buf);
	printf("data_transfer: %ld round trips of %ld MiB done (last %g)\n", iters, mb, sum);
	return 0;
}
