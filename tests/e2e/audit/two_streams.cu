/* SPDX-License-Identifier: MIT */
/* Audit: two host threads, each feeding its own stream, joined by cudaStreamWaitEvent every step. */

/*
 * What it checks: state A with two overlapping kernels whose fills add past 1 (the device's
 * fill is min(1, sum), design.md "Attribution" A), and that overlapped under-filled kernels on
 * two streams are not a chain.
 *
 * Two threads, each with a cudaStreamNonBlocking stream and an event. ITERS steps each: launch
 * half_step (792 blocks of 256 threads: 792/1056 = 0.75 of the SMs, one wave) on its stream,
 * record its event, meet the other thread (a pthread barrier), make its stream wait for the
 * other's event, meet again. The host never waits for the GPU until the final
 * cudaStreamSynchronize of each thread, so it runs ahead and the device is queued; the test
 * holds the device until both threads have queued every step (GPUSIM_HOLD_US), so that a
 * descheduled thread on a busy machine cannot let the device catch up and split a step.
 * gpusim: GPUSIM_KERNEL_US="half_step=200": 200 us a kernel. Both kernels of the first step
 * start when the hold ends; both kernels of step i wait for both of step i-1 and start
 * together, 1 us (QUEUE_US) after them: fill min(1, 0.75 + 0.75) = 1 for 200 us, then a 1 us
 * queued gap (launch_overhead). Unclassified names are compute: compute = ITERS*200 us,
 * launch_overhead = (ITERS - 1)*1 us, small_batch 0 (no kernel runs alone), and the window
 * ITERS*200 + (ITERS - 1)*1 us.
 *
 * Counts (exact): kernels = launches = 2*ITERS; host_syncs = 2 stream syncs + 1 cudaFree;
 * allocations = frees = 1.
 */
#include <pthread.h>

#include "../../workloads/common.h"

#define ITERS  150
#define BLOCKS 792

__global__ void half_step(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] *= 0.5f;
}

static pthread_barrier_t meet;
static cudaEvent_t done[2];
static float *buf;

static void *feeder(void *arg)
{
	int me = (int)(intptr_t)arg;
	cudaStream_t s;

	WL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < ITERS; i++) {
		half_step<<<BLOCKS, 256, 0, s>>>(buf + (size_t)me * BLOCKS * 256);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaEventRecord(done[me], s));
		pthread_barrier_wait(&meet);
		WL_CHECK(cudaStreamWaitEvent(s, done[1 - me], 0));
		/* the other thread records its next step's event only after this wait */
		pthread_barrier_wait(&meet);
	}
	WL_CHECK(cudaStreamSynchronize(s));
	WL_CHECK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	(void)argc;
	wl_program = argv[0];
	WL_CHECK(cudaMalloc(&buf, 2ull * BLOCKS * 256 * sizeof(float)));
	for (int k = 0; k < 2; k++)
		WL_CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
	pthread_barrier_init(&meet, NULL, 2);
	for (int k = 0; k < 2; k++)
		if (pthread_create(&t[k], NULL, feeder, (void *)(intptr_t)k))
			wl_die("pthread_create failed");
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < 2; k++)
		WL_CHECK(cudaEventDestroy(done[k]));
	WL_CHECK(cudaFree(buf));
	return 0;
}
