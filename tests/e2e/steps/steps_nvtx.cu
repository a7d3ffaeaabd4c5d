/* SPDX-License-Identifier: MIT */
/* A training loop that marks its steps with NVTX ranges, one step made slow on purpose. */

/*
 * Each of --steps N steps is one NVTX push/pop range "step <i>" (the header-only NVTX of the
 * CUDA toolkit, as torch.cuda.nvtx.range_push does) on the main thread. Inside it: a "forward"
 * range around K gemm launches and a one-block loss reduction; with --sync 1 a 4-byte
 * synchronous read-back of the loss (loss.item()); then --decide-us U of real CPU work (the
 * host's part of a step: the data loader, a loss-scale decision). Step --slow-step S also
 * synchronizes the device after its kernels (cudaDeviceSynchronize, a checkpoint's
 * "wait for the GPU") and then does --slow-us X more CPU work (saving the checkpoint).
 * Outside the steps: fills before the loop, a final synchronize and the frees after it.
 * A domain range ("gpuwhy-test" domain, registered name "setup") and a start/end range wrap
 * the setup, so the capture of domains, registered strings and start/end is exercised.
 *
 * gpusim (GPUSIM_KERNEL_US="gemm=1000"): each gemm is one full wave of 1 ms. With --sync 1 a
 * step's read-back waits for its K ms of queued gemms (the debt, K ms, exceeds the gap after
 * it), so the gap of ~U us before the next step's first kernel is host_sync; the step takes
 * ~K ms + U us. With --sync 0 nothing waits: the host (U us a step) runs ahead of the GPU (K
 * ms a step), the kernels queue back to back and a step's gaps vanish. In step S the device
 * synchronize pays the debt; the X us after it exceed it by far: host_work that follows
 * cudaDeviceSynchronize, and step S is ~X us slower than the others.
 *
 * Counts (exact): launches = kernels = 2 + N*(K + 1); NVTX ranges: N steps, N "forward", one
 * "setup" (domain), one start/end "allocate".
 */
#include "../../workloads/common.h"

#include <nvtx3/nvToolsExt.h>

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
	long steps = 20, kernels = 4, sync = 1, decide_us = 1000, slow_step = -1, slow_us = 30000;
	const struct wl_opt opts[] = {
		{"steps", &steps, NULL, 1, 1000000, NULL, "steps (NVTX ranges)"},
		{"kernels", &kernels, NULL, 1, 1000, NULL, "gemm kernels per step"},
		{"sync", &sync, NULL, 0, 1, NULL, "4-byte D2H read-back per step"},
		{"decide-us", &decide_us, NULL, 0, 1000000, NULL, "host CPU time per step (us)"},
		{"slow-step", &slow_step, NULL, -1, 1000000, NULL,
		 "this step synchronizes and works on the host longer (-1 none)"},
		{"slow-us", &slow_us, NULL, 0, 10000000, NULL, "the slow step's extra CPU time (us)"},
	};
	float *a, *b, *c, *loss, *host_out;
	uint8_t *scratch;
	float h_loss = 0.0f;
	uint32_t check = 0;
	char name[32];

	wl_parse(argc, argv, "NVTX-marked training steps, one of them slow", opts,
		 WL_ARRAY_SIZE(opts));
	long m = 512, n = 528, k = 8192;
	host_out = (float *)malloc(4096 * sizeof(float));
	scratch = (uint8_t *)malloc(4096);
	if (!host_out || !scratch)
		wl_die("out of host memory");

	nvtxDomainHandle_t domain = nvtxDomainCreateA("gpuwhy-test");
	nvtxEventAttributes_t setup = {};
	setup.version = NVTX_VERSION;
	setup.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	setup.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	setup.message.registered = nvtxDomainRegisterStringA(domain, "setup");
	nvtxDomainRangePushEx(domain, &setup);
	nvtxRangeId_t alloc = nvtxRangeStartA("allocate");
	WL_CHECK(cudaMalloc(&a, m * k * sizeof(float)));
	WL_CHECK(cudaMalloc(&b, k * n * sizeof(float)));
	WL_CHECK(cudaMalloc(&c, m * n * sizeof(float)));
	WL_CHECK(cudaMalloc(&loss, sizeof(float)));
	nvtxRangeEnd(alloc);
	wl_fill(a, m * k, 41, 0.1f, 0);
	wl_fill(b, k * n, 42, 0.1f, 0);
	nvtxDomainRangePop(domain);

	for (long s = 0; s < steps; s++) {
		snprintf(name, sizeof(name), "step %ld", s);
		nvtxRangePushA(name);
		nvtxRangePushA("forward");
		for (long j = 0; j < kernels; j++)
			wl_sgemm(a, b, c, m, n, k, 1.0f, j ? 1.0f : 0.0f, 0);
		loss_reduce_sum_kernel<<<1, 256>>>(c, m * n, loss);
		WL_CHECK_LAUNCH();
		nvtxRangePop();
		if (s == slow_step) {
			/* a checkpoint: wait for the GPU, then save on the host */
			WL_CHECK(cudaDeviceSynchronize());
			check ^= wl_host_work_us(slow_us, host_out, scratch, 4096, (uint32_t)s);
		}
		if (sync)
			WL_CHECK(cudaMemcpy(&h_loss, loss, sizeof(float), cudaMemcpyDeviceToHost));
		check ^= wl_host_work_us(decide_us, host_out, scratch, 4096, (uint32_t)s);
		nvtxRangePop();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(a));
	WL_CHECK(cudaFree(b));
	WL_CHECK(cudaFree(c));
	WL_CHECK(cudaFree(loss));
	free(host_out);
	free(scratch);
	printf("steps_nvtx: %ld steps done (loss %g, check %08x)\n", steps, h_loss, check);
	return 0;
}
