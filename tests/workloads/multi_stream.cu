/* SPDX-License-Identifier: MIT */
/* Several host threads, each serving small requests on its own stream, launching and syncing. */

/*
 * Shows: small_batch across streams. --threads host threads each own a stream (threads with
 * an odd index a non-blocking one) and serve batch-1 requests: per iteration --kernels
 * matrix-vector layers alternating serve_fc_relu / serve_fc_logits (one warp per output
 * feature, 512 features: 64 blocks), then wait for their own stream: even threads with
 * cudaStreamSynchronize, odd threads with cudaEventRecord + cudaEventSynchronize. Kernels of
 * different streams overlap, so no chain forms (design.md: no kernel of another stream may
 * overlap a chain) and the unfilled share of the device is small_batch.
 *
 * Parameters: --threads T (default 4), --iters N (per thread, default 25), --kernels K
 * (per iteration, default 4).
 *
 * gpusim: GPUSIM_KERNEL_US="serve_=2000" (a request's layer of a larger model). Each kernel is
 * 1 wave of 2 ms with a fill of 64/1056, and each thread queues K of them (8 ms) before it
 * waits, so the T streams' kernels overlap whatever the host threads' scheduling (a loaded CI
 * machine preempts them for milliseconds: at 500 us a kernel, 2 ms queued a thread, a suite
 * run beside another profiled program once left the device idle for a third of the window); the device fill is then about T*0.06, and each
 * thread's short sync gap is covered by the other streams' kernels, so about 1 - T*0.06 of
 * the window (~75% at T = 4) is small_batch. With short kernels the host threads cannot keep
 * the streams overlapping, and each stream's kernels form chains.
 *
 * Counts (exact):
 *   launches = kernels = 1 + threads*iters*kernels  (1 fill of the weights on the legacy
 *                                                    default stream first)
 *   allocations = 1 + threads, frees = 1 + threads
 *   memset = threads (one cudaMemsetAsync per thread, not synchronizing)
 *   host_syncs = threads*iters + 1 + 1 + threads: explicit threads*iters (stream or event
 *     synchronize) + 1 (cudaDeviceSynchronize after the fill) + 1 (one after the threads
 *     join), implicit 1 + threads (cudaFree)
 *   memcpy = 0
 */
#include "common.h"

#include <pthread.h>

#define IN_FEATS  1024
#define OUT_FEATS 512

/* y[o] = act(w[o] . x): one warp per output feature, 8 features per block of 256. */
__device__ __forceinline__ float serve_dot(const float *w, const float *x)
{
	int o = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
	float acc = 0.0f;

	for (int k = lane; k < IN_FEATS; k += 32)
		acc += w[(long)o * IN_FEATS + k] * x[k];
	for (int off = 16; off > 0; off /= 2)
		acc += __shfl_down_sync(0xffffffffu, acc, off);
	return acc;
}

__global__ void serve_fc_relu_kernel(const float *w, const float *x, float *y)
{
	float v = serve_dot(w, x);

	if (threadIdx.x % 32 == 0)
		y[blockIdx.x * 8 + threadIdx.x / 32] = fmaxf(v, 0.0f);
}

__global__ void serve_fc_logits_kernel(const float *w, const float *x, float *y)
{
	float v = serve_dot(w, x);

	if (threadIdx.x % 32 == 0)
		y[blockIdx.x * 8 + threadIdx.x / 32] = v;
}

struct worker {
	pthread_t thread;
	long index, iters, kernels;
	cudaStream_t stream;
	cudaEvent_t done;
	const float *weights;
	float *act; /* two vectors of IN_FEATS floats: a layer reads one and writes the other */
};

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	float *in = w->act, *out = w->act + IN_FEATS;

	WL_CHECK(cudaMemsetAsync(w->act, 0, 2 * IN_FEATS * sizeof(float), w->stream));
	for (long it = 0; it < w->iters; it++) {
		for (long k = 0; k < w->kernels; k++) {
			/* 512 outputs of a layer are the first half of the next one's input */
			if (k % 2 == 0)
				serve_fc_relu_kernel<<<OUT_FEATS / 8, 256, 0, w->stream>>>(
					w->weights, in, out);
			else
				serve_fc_logits_kernel<<<OUT_FEATS / 8, 256, 0, w->stream>>>(
					w->weights, out, in);
			WL_CHECK_LAUNCH();
		}
		if (w->index % 2 == 0) {
			WL_CHECK(cudaStreamSynchronize(w->stream));
		} else {
			WL_CHECK(cudaEventRecord(w->done, w->stream));
			WL_CHECK(cudaEventSynchronize(w->done));
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = 4, iters = 25, kernels = 4;
	const struct wl_opt opts[] = {
		{"threads", &threads, NULL, 1, 64, NULL, "host threads, one stream each"},
		{"iters", &iters, NULL, 1, 1000000, NULL, "requests per thread"},
		{"kernels", &kernels, NULL, 1, 1000, NULL, "layers per request"},
	};
	float *weights;

	wl_parse(argc, argv,
		 "threads serving batch-1 requests on their own streams (cause: "
		 "small_batch)",
		 opts, WL_ARRAY_SIZE(opts));
	struct worker *workers = (struct worker *)calloc(threads, sizeof(*workers));
	if (!workers)
		wl_die("out of host memory");
	/* one 512x1024 weight matrix shared by the layers */
	WL_CHECK(cudaMalloc(&weights, (long)IN_FEATS * OUT_FEATS * sizeof(float)));
	wl_fill(weights, (long)IN_FEATS * OUT_FEATS, 91, 0.06f, 0);
	WL_CHECK(cudaDeviceSynchronize());
	for (long i = 0; i < threads; i++) {
		struct worker *w = &workers[i];
		w->index = i;
		w->iters = iters;
		w->kernels = kernels;
		w->weights = weights;
		WL_CHECK(cudaStreamCreateWithFlags(&w->stream, i % 2 ? cudaStreamNonBlocking
								     : cudaStreamDefault));
		WL_CHECK(cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming));
		WL_CHECK(cudaMalloc(&w->act, 2 * IN_FEATS * sizeof(float)));
	}
	for (long i = 0; i < threads; i++)
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			wl_die("pthread_create failed");
	for (long i = 0; i < threads; i++)
		pthread_join(workers[i].thread, NULL);
	WL_CHECK(cudaDeviceSynchronize());
	for (long i = 0; i < threads; i++) {
		WL_CHECK(cudaEventDestroy(workers[i].done));
		WL_CHECK(cudaStreamDestroy(workers[i].stream));
		WL_CHECK(cudaFree(workers[i].act));
	}
	WL_CHECK(cudaFree(weights));
	free(workers);
	printf("multi_stream: %ld threads x %ld requests x %ld layers done\n", threads, iters,
	       kernels);
	return 0;
}
