/* SPDX-License-Identifier: MIT */
/* Stream order, CUDA's legacy default-stream rules, non-blocking streams, events and graphs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim-test.h"

#define SHORT_NS (1 * 1000000ull)  /* GPUSIM_WAVE_US=1000 */
#define LONG_NS	 (50 * 1000000ull) /* GPUSIM_KERNEL_US=long_kernel=50000 */
#define SLACK_NS (50 * 1000000ull) /* scheduling noise allowed above the model */

static void short_kernel(void)
{
}
static void long_kernel(void)
{
}

static uint64_t since(uint64_t t0)
{
	return test_now_ns() - t0;
}

/* Two kernels on one stream run one after the other. */
static void test_stream_order(void **state)
{
	cudaStream_t s;
	uint64_t t0 = test_now_ns();

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_true(since(t0) >= LONG_NS + SHORT_NS);
	assert_int_equal(cudaStreamQuery(s), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* Work on the legacy default stream waits for earlier work on blocking streams. */
static void test_legacy_waits_for_blocking(void **state)
{
	cudaStream_t s;
	uint64_t t0 = test_now_ns();

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
	assert_true(since(t0) >= LONG_NS + SHORT_NS);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* And work on a blocking stream waits for earlier work on the legacy default stream. */
static void test_blocking_waits_for_legacy(void **state)
{
	cudaStream_t s;
	uint64_t t0 = test_now_ns();

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, cudaStreamLegacy), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_true(since(t0) >= LONG_NS + SHORT_NS);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* A non-blocking stream does neither: its kernel overlaps the long one. */
static void test_nonblocking_overlaps(void **state)
{
	cudaStream_t nb;
	uint64_t t0 = test_now_ns(), dt;

	(void)state;
	assert_int_equal(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, nb), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(nb), cudaSuccess);
	dt = since(t0);
	assert_true(dt >= SHORT_NS);
	assert_true(dt < LONG_NS);
	assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_true(since(t0) >= LONG_NS);
	assert_int_equal(cudaStreamDestroy(nb), cudaSuccess);
}

/* Two blocking streams do not wait for each other; the per-thread stream neither. */
static void test_blocking_streams_overlap(void **state)
{
	cudaStream_t a, b;
	uint64_t t0 = test_now_ns(), dt;

	(void)state;
	assert_int_equal(cudaStreamCreate(&a), cudaSuccess);
	assert_int_equal(cudaStreamCreate(&b), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, a), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, b), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, cudaStreamPerThread), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(b), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
	dt = since(t0);
	assert_true(dt >= SHORT_NS);
	assert_true(dt < LONG_NS);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(a), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(b), cudaSuccess);
}

/* Events: elapsed time is the modelled kernel time, queries and syncs follow the timeline. */
static void test_events(void **state)
{
	cudaEvent_t a, b, c, untimed;
	cudaStream_t s;
	float ms = 0;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaEventCreate(&a), cudaSuccess);
	assert_int_equal(cudaEventCreate(&b), cudaSuccess);
	assert_int_equal(cudaEventCreate(&c), cudaSuccess);
	assert_int_equal(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
	assert_int_equal(cudaEventQuery(c), cudaSuccess); /* never recorded */
	assert_int_equal(cudaEventElapsedTime(&ms, a, c), cudaErrorInvalidResourceHandle);

	assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
	assert_int_equal(cudaEventRecord(untimed, s), cudaSuccess);
	assert_int_equal(cudaEventQuery(b), cudaErrorNotReady);
	assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
	assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
	assert_int_equal(cudaEventQuery(b), cudaSuccess);
	/* a is the long kernel's end, b the short one's: GPUSIM_QUEUE_US (1 µs) + 1 ms apart */
	assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
	assert_float_equal(ms, 1.001f, 0.00005f);
	assert_int_equal(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);

	assert_int_equal(cudaEventDestroy(a), cudaSuccess);
	assert_int_equal(cudaEventDestroy(b), cudaSuccess);
	assert_int_equal(cudaEventDestroy(c), cudaSuccess);
	assert_int_equal(cudaEventDestroy(untimed), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* cudaStreamWaitEvent makes a non-blocking stream wait for another stream's work. */
static void test_stream_wait_event(void **state)
{
	cudaStream_t a, nb;
	cudaEvent_t e;
	uint64_t t0 = test_now_ns();

	(void)state;
	assert_int_equal(cudaStreamCreate(&a), cudaSuccess);
	assert_int_equal(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), cudaSuccess);
	assert_int_equal(cudaEventCreate(&e), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, a), cudaSuccess);
	assert_int_equal(cudaEventRecord(e, a), cudaSuccess);
	assert_int_equal(cudaStreamWaitEvent(nb, e, 0), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, nb), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(nb), cudaSuccess);
	assert_true(since(t0) >= LONG_NS + SHORT_NS);
	cudaEventDestroy(e);
	cudaStreamDestroy(a);
	cudaStreamDestroy(nb);
}

/* A captured sequence of launches replays in order when the graph is launched. */
static void test_graph_replay(void **state)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;
	enum cudaStreamCaptureStatus st;
	uint64_t t0;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
	assert_int_equal(st, cudaStreamCaptureStatusActive);
	t0 = test_now_ns();
	for (int i = 0; i < 3; i++)
		assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
	assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
	/* capturing ran nothing */
	assert_int_equal(cudaStreamQuery(s), cudaSuccess);
	assert_true(since(t0) < LONG_NS);
	assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	t0 = test_now_ns();
	assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
	assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_true(since(t0) >= 6 * LONG_NS);
	assert_true(since(t0) < 6 * LONG_NS + SLACK_NS);
	assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
	assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
	assert_int_equal(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
			 cudaErrorStreamCaptureUnsupported);
	cudaGetLastError();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_order),
		cmocka_unit_test(test_legacy_waits_for_blocking),
		cmocka_unit_test(test_blocking_waits_for_legacy),
		cmocka_unit_test(test_nonblocking_overlaps),
		cmocka_unit_test(test_blocking_streams_overlap),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_stream_wait_event),
		cmocka_unit_test(test_graph_replay),
	};

	setenv("GPUSIM_WAVE_US", "1000", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	setenv("GPUSIM_KERNEL_US", "long_kernel=50000", 1);
	test_register_kernel(short_kernel, "_Z12short_kernelv");
	test_register_kernel(long_kernel, "_Z11long_kernelv");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
