/* SPDX-License-Identifier: MIT */
/* Audit: 2 ms of CPU work between 100 us kernels, with a 4-byte read-back every 10th step. */

/*
 * What it checks: host work (design.md rule C.3) and the sync debt's limit: the read-back's
 * debt covers only what it waited for, the host work after it stays host_work, and the
 * report names the read-back as the sync that host work followed.
 *
 * ITERS steps: tile_matmul (one full wave: 132*8 blocks of 256 threads, fill 1, class compute
 * by its name), every EVERY-th step a synchronous cudaMemcpy D2H of 4 bytes, then HOST_US of
 * real CPU work (a busy loop on the clock), then the next step.
 * gpusim: GPUSIM_KERNEL_US="tile_matmul=100": 100 us a kernel; the read-back copy takes
 * 5 us + 4 B / 25 GB/s. compute is exactly ITERS*100 us of the window. Each read-back
 * waits from its call (a few us after the launch) to the copy's end, W <= 100 + 1 + 5 us,
 * and the gap after it (>= HOST_US) pays that debt: host_sync is at most ITERS/EVERY * 106 us
 * and at least ITERS/EVERY * 90 us; the rest of the ~2 ms gaps is host_work except the
 * 4 us launch calls inside them (launch_overhead, in launch calls).
 *
 * Counts (exact): kernels = launches = ITERS; memcpy = ITERS/EVERY; host_syncs = ITERS/EVERY
 * (copy) + 1 final cudaDeviceSynchronize + 1 cudaFree.
 */
#include "../../workloads/common.h"

#define ITERS	60
#define EVERY	10
#define HOST_US 2000
#define CAP	(132 * 8)

__global__ void tile_matmul(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

int main(int argc, char **argv)
{
	volatile uint64_t spin = 0;
	float *x, v = 0;

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&x, (size_t)CAP * 256 * sizeof(float)));
	for (int i = 0; i < ITERS; i++) {
		uint64_t end;

		tile_matmul<<<CAP, 256>>>(x);
		WL_CHECK_LAUNCH();
		if (i % EVERY == EVERY - 1)
			WL_CHECK(cudaMemcpy(&v, x, sizeof(v), cudaMemcpyDeviceToHost));
		end = wl_now_ns() + HOST_US * 1000ull;
		while (wl_now_ns() < end)
			spin = spin + 1;
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	return v != v; /* a NaN read back would be a broken copy */
}
