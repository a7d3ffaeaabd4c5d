/* SPDX-License-Identifier: MIT */
/* Audit: cudaMemcpyAsync from pinned memory, then from pageable memory, into one device buffer. */

/*
 * What it checks: an async copy from pageable memory is a synchronizing call (design.md
 * "Synchronizing calls", kind copy) and an async copy from pinned memory is not; pinned host
 * memory (cudaMallocHost) is counted apart from device memory.
 *
 * COPIES cudaMemcpyAsync H2D of BYTES from a cudaMallocHost buffer on a created stream, one
 * cudaStreamSynchronize, then COPIES of BYTES from a malloc'd (pageable) buffer on the same
 * stream, one cudaStreamSynchronize.
 * gpusim (defaults): a copy takes COPY_US + BYTES / H2D_GBPS = 5 + 4194304 / 25000 =
 * 172.77 us. The pinned copies are queued back to back (1 us QUEUE_US gaps: launch_overhead,
 * queued); each pageable copy waits for itself, so its gap is paid by its own debt: host_sync.
 * No kernel runs: data_transfer is exactly 2*COPIES*172.77 us of the window.
 *
 * Counts (exact): memcpy = 2*COPIES; kernels = launches = 0; host_syncs = COPIES (copy) +
 * 2 stream syncs + cudaFreeHost + cudaFree (explicit 2, copy COPIES, implicit 2);
 * allocations = frees = 2. Memory: device peak = final + BYTES = BYTES, final 0; pinned peak
 * BYTES.
 */
#include "../../workloads/common.h"

#define COPIES 50
#define BYTES  (4u << 20)

int main(int argc, char **argv)
{
	cudaStream_t s;
	void *dev, *pinned, *pageable;

	(void)argc;
	wl_program = argv[0];
	pageable = malloc(BYTES);
	if (!pageable)
		wl_die("out of memory");
	memset(pageable, 1, BYTES);
	WL_CHECK(cudaMalloc(&dev, BYTES));
	WL_CHECK(cudaMallocHost(&pinned, BYTES));
	memset(pinned, 2, BYTES);
	WL_CHECK(cudaStreamCreate(&s));
	for (int i = 0; i < COPIES; i++)
		WL_CHECK(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, s));
	WL_CHECK(cudaStreamSynchronize(s));
	for (int i = 0; i < COPIES; i++)
		WL_CHECK(cudaMemcpyAsync(dev, pageable, BYTES, cudaMemcpyHostToDevice, s));
	WL_CHECK(cudaStreamSynchronize(s));
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFreeHost(pinned));
	WL_CHECK(cudaFree(dev));
	free(pageable);
	return 0;
}
