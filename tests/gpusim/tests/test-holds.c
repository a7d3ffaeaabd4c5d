/* SPDX-License-Identifier: MIT */
/* Host functions and waits for a value in stream order, two devices and peer copies, batch
 * copies, the driver's 2D copies and memsets through cudaGetDriverEntryPoint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda.h>
#include <cupti.h>

#include "sim-test.h"

#define SHORT_NS (1 * 1000000ull)  /* GPUSIM_WAVE_US=1000 */
#define LONG_NS	 (50 * 1000000ull) /* GPUSIM_KERNEL_US=long_kernel=50000 */
#define HOST_NS	 (20 * 1000000ull) /* what the host functions below take */
#define SLACK_NS (40 * 1000000ull) /* scheduling noise allowed above the model */

static void short_kernel(void)
{
}
static void long_kernel(void)
{
}

/* --- CUPTI records of copies, collected as a client would --- */

#define MAX_RECS 64
static CUpti_ActivityMemcpyPtoP4 peer_recs[MAX_RECS];
static CUpti_ActivityMemcpy6 copy_recs[MAX_RECS];
static size_t n_peer, n_copy;
static uint8_t buffer[1 << 16] __attribute__((aligned(8)));

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = buffer;
	*size = sizeof(buffer);
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			       size_t valid)
{
	CUpti_Activity *a = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
		if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY2 && n_peer < MAX_RECS)
			memcpy(&peer_recs[n_peer++], a, sizeof(peer_recs[0]));
		else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY && n_copy < MAX_RECS)
			memcpy(&copy_recs[n_copy++], a, sizeof(copy_recs[0]));
	}
}

static void records(void)
{
	n_peer = n_copy = 0;
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
}

/* --- host functions --- */

/* Written by gpusim's thread, read by the test's: atomics, as the only order between them
 * is the simulated timeline's (a synchronize sleeps until the work's end time). */
static uint64_t fn_start, fn_end;
static int cb_status = -1;

#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define LOAD(x)	    __atomic_load_n(&(x), __ATOMIC_SEQ_CST)

static void CUDART_CB host_fn(void *arg)
{
	STORE(fn_start, test_now_ns());
	usleep(HOST_NS / 1000);
	__atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
	STORE(fn_end, test_now_ns());
}

static void CUDART_CB stream_cb(cudaStream_t stream, cudaError_t status, void *arg)
{
	(void)stream;
	STORE(cb_status, (int)status);
	__atomic_add_fetch((int *)arg, 10, __ATOMIC_SEQ_CST);
}

/*
 * A host function runs when its stream reaches it, on another thread, and the work issued
 * after it waits for it: the launch calls return at once, the function starts after the long
 * kernel, the short kernel and the event after the function; queries answer not ready until
 * then, and a stream callback runs after that in turn.
 */
static void test_host_function_order(void **state)
{
	cudaStream_t s;
	cudaEvent_t e0, e1;
	uint64_t t0 = test_now_ns();
	float ms = 0;
	int ran = 0;

	(void)state;
	assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	assert_int_equal(cudaEventCreate(&e0), cudaSuccess);
	assert_int_equal(cudaEventCreate(&e1), cudaSuccess);
	assert_int_equal(cudaEventRecord(e0, s), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaLaunchHostFunc(s, host_fn, &ran), cudaSuccess);
	assert_int_equal(test_launch(short_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(cudaStreamAddCallback(s, stream_cb, &ran, 0), cudaSuccess);
	assert_int_equal(cudaEventRecord(e1, s), cudaSuccess);
	assert_true(test_now_ns() - t0 < LONG_NS / 2); /* the calls did not wait */
	assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
	assert_int_equal(cudaEventQuery(e1), cudaErrorNotReady);
	assert_int_equal(LOAD(ran), 0);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_int_equal(LOAD(ran), 11);
	assert_int_equal(LOAD(cb_status), cudaSuccess);
	assert_true(LOAD(fn_start) >= t0 + LONG_NS);
	assert_true(test_now_ns() >= LOAD(fn_end) + SHORT_NS);
	assert_int_equal(cudaEventQuery(e1), cudaSuccess);
	assert_int_equal(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
	assert_true(ms * 1e6 >= (double)(LONG_NS + HOST_NS + SHORT_NS));
	assert_true(ms * 1e6 < (double)(LONG_NS + HOST_NS + SHORT_NS + SLACK_NS));
	assert_int_equal(cudaEventDestroy(e0), cudaSuccess);
	assert_int_equal(cudaEventDestroy(e1), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* A wait for a value holds its stream until the host writes the word. */
static void test_wait_value(void **state)
{
	CUresult (*wait)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = NULL;
	enum cudaDriverEntryPointQueryResult st;
	unsigned int *word;
	cudaStream_t s;
	uint64_t t0;

	(void)state;
	assert_int_equal(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", (void **)&wait,
							  13000, cudaEnableDefault, &st),
			 cudaSuccess);
	assert_int_equal(st, cudaDriverEntryPointSuccess);
	assert_non_null(wait);
	assert_int_equal(cudaMallocHost((void **)&word, sizeof(*word)), cudaSuccess);
	*word = 0;
	assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	t0 = test_now_ns();
	assert_int_equal(wait((CUstream)s, (CUdeviceptr)word, 2, CU_STREAM_WAIT_VALUE_GEQ),
			 CUDA_SUCCESS);
	assert_int_equal(test_launch(short_kernel, 1, 32, s), cudaSuccess);
	usleep(HOST_NS / 1000);
	__atomic_store_n(word, 1, __ATOMIC_RELEASE); /* below the value: still held */
	usleep(HOST_NS / 1000);
	assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
	__atomic_store_n(word, 2, __ATOMIC_RELEASE);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_true(test_now_ns() - t0 >= 2 * HOST_NS + SHORT_NS);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
	assert_int_equal(cudaFreeHost(word), cudaSuccess);
}

/* Two devices: each its own stream and properties; a peer copy moves the bytes and is a
 * MEMCPY2 record naming both devices, never a MEMCPY. */
static void test_peer_copy(void **state)
{
	const size_t n = 1 << 20;
	char *a, *b, *h = malloc(n);
	cudaStream_t s1;
	int count = 0, dev = -1, ok = 0;

	(void)state;
	assert_int_equal(cudaGetDeviceCount(&count), cudaSuccess);
	assert_int_equal(count, 2);
	assert_int_equal(cudaDeviceCanAccessPeer(&ok, 0, 1), cudaSuccess);
	assert_int_equal(ok, 1);
	assert_int_equal(cudaSetDevice(1), cudaSuccess);
	assert_int_equal(cudaMalloc((void **)&b, n), cudaSuccess);
	assert_int_equal(cudaStreamCreate(&s1), cudaSuccess);
	assert_int_equal(cudaStreamGetDevice(s1, &dev), cudaSuccess);
	assert_int_equal(dev, 1);
	assert_int_equal(cudaSetDevice(0), cudaSuccess);
	assert_int_equal(cudaMalloc((void **)&a, n), cudaSuccess);
	for (size_t i = 0; i < n; i++)
		h[i] = (char)(i * 7);
	assert_int_equal(cudaMemcpy(a, h, n, cudaMemcpyHostToDevice), cudaSuccess);
	records();
	assert_int_equal(cudaMemcpyPeer(b, 1, a, 0, n), cudaSuccess);
	assert_int_equal(cudaMemcpyPeerAsync(a, 0, b, 1, n / 2, s1), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cudaSetDevice(1), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cudaSetDevice(0), cudaSuccess);
	memset(h, 0, n);
	assert_int_equal(cudaMemcpy(h, b, n, cudaMemcpyDeviceToHost), cudaSuccess);
	for (size_t i = 0; i < n; i++)
		if (h[i] != (char)(i * 7))
			fail_msg("byte %zu not copied", i);
	records();
	assert_int_equal(n_peer, 2);
	assert_int_equal(n_copy, 1); /* the copy back to the host */
	assert_int_equal(peer_recs[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	assert_int_equal(peer_recs[0].bytes, n);
	assert_int_equal(peer_recs[0].deviceId, 0);
	assert_int_equal(peer_recs[0].srcDeviceId, 0);
	assert_int_equal(peer_recs[0].dstDeviceId, 1);
	assert_int_equal(peer_recs[0].srcContextId, 1);
	assert_int_equal(peer_recs[0].dstContextId, 2);
	assert_int_equal(peer_recs[1].bytes, n / 2);
	assert_int_equal(peer_recs[1].deviceId, 1); /* the stream's device */
	assert_int_equal(peer_recs[1].srcDeviceId, 1);
	assert_int_equal(peer_recs[1].dstDeviceId, 0);
	/* 5 us + n / 400 GB/s (GPUSIM_P2P_GBPS) */
	assert_int_equal(peer_recs[0].end - peer_recs[0].start, 5000 + (uint64_t)(n / 400.0 + 0.5));
	assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
	assert_int_equal(cudaFree(a), cudaSuccess);
	assert_int_equal(cudaFree(b), cudaSuccess);
	free(h);
}

/* A batch of copies: the bytes move, one MEMCPY record each, all with the call's id, back to
 * back on the stream. */
static void test_batch(void **state)
{
	enum { N = 4, SIZE = 4096 };
	void *dsts[N];
	const void *srcs[N];
	size_t sizes[N], idx = 0;
	struct cudaMemcpyAttributes attr = {.srcAccessOrder = cudaMemcpySrcAccessOrderStream};
	char *dev, *host, back[N * SIZE];
	cudaStream_t s;

	(void)state;
	assert_int_equal(cudaMalloc((void **)&dev, N * SIZE), cudaSuccess);
	assert_int_equal(cudaMallocHost((void **)&host, N * SIZE), cudaSuccess);
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	for (int k = 0; k < N; k++) {
		memset(host + k * SIZE, 'a' + k, SIZE);
		dsts[k] = dev + k * SIZE;
		srcs[k] = host + k * SIZE;
		sizes[k] = SIZE;
	}
	records();
	assert_int_equal(cudaMemcpyBatchAsync(dsts, srcs, sizes, N, &attr, &idx, 1, s),
			 cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	assert_int_equal(cudaMemcpy(back, dev, N * SIZE, cudaMemcpyDeviceToHost), cudaSuccess);
	for (int k = 0; k < N; k++)
		assert_int_equal(back[k * SIZE + SIZE - 1], 'a' + k);
	records();
	assert_int_equal(n_copy, N + 1);
	for (int k = 1; k < N; k++) {
		assert_int_equal(copy_recs[k].correlationId, copy_recs[0].correlationId);
		assert_int_equal(copy_recs[k].start, copy_recs[k - 1].end + 1000); /* QUEUE_US */
		assert_int_equal(copy_recs[k].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	}
	assert_int_not_equal(copy_recs[N].correlationId, copy_recs[0].correlationId);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
	assert_int_equal(cudaFreeHost(host), cudaSuccess);
	assert_int_equal(cudaFree(dev), cudaSuccess);
}

/* The driver's 2D copy and 2D memset, through the entry points a program without libcuda
 * gets. */
static void test_driver_2d(void **state)
{
	CUresult (*copy2d)(const CUDA_MEMCPY2D *) = NULL;
	CUresult (*set2d)(CUdeviceptr, size_t, unsigned int, size_t, size_t) = NULL;
	enum { ROWS = 8, ROW = 256 };
	char host[ROWS * ROW], back[ROWS * 512];
	CUDA_MEMCPY2D c = {0};
	size_t pitch = 0;
	void *dev;

	(void)state;
	assert_int_equal(cudaGetDriverEntryPointByVersion("cuMemcpy2D", (void **)&copy2d, 13000,
							  cudaEnableDefault, NULL),
			 cudaSuccess);
	assert_int_equal(cudaGetDriverEntryPointByVersion("cuMemsetD2D32", (void **)&set2d, 13000,
							  cudaEnableDefault, NULL),
			 cudaSuccess);
	assert_non_null(copy2d);
	assert_non_null(set2d);
	assert_int_equal(cudaMallocPitch(&dev, &pitch, ROW, ROWS), cudaSuccess);
	assert_int_equal(pitch, 512);
	for (int i = 0; i < ROWS * ROW; i++)
		host[i] = (char)i;
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = host;
	c.srcPitch = ROW;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = (CUdeviceptr)dev;
	c.dstPitch = pitch;
	c.WidthInBytes = ROW;
	c.Height = ROWS;
	assert_int_equal(copy2d(&c), CUDA_SUCCESS);
	assert_int_equal(cudaMemcpy(back, dev, sizeof(back), cudaMemcpyDeviceToHost), cudaSuccess);
	assert_int_equal(back[3 * 512 + 5], (char)(3 * ROW + 5));
	assert_int_equal(set2d((CUdeviceptr)dev, pitch, 0x01020304u, 2, ROWS), CUDA_SUCCESS);
	assert_int_equal(cudaMemcpy(back, dev, sizeof(back), cudaMemcpyDeviceToHost), cudaSuccess);
	assert_int_equal(back[7 * 512 + 4], 0x04); /* little-endian 32-bit elements */
	assert_int_equal(back[7 * 512 + 7], 0x01);
	assert_int_equal(back[7 * 512 + 8], (char)(7 * ROW + 8)); /* past the 2 elements */
	assert_int_equal(cudaFree(dev), cudaSuccess);
}

static int setup(void **state)
{
	(void)state;
	if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2) != CUPTI_SUCCESS)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_function_order), cmocka_unit_test(test_wait_value),
		cmocka_unit_test(test_peer_copy),	    cmocka_unit_test(test_batch),
		cmocka_unit_test(test_driver_2d),
	};

	setenv("GPUSIM_DEVICES", "2", 1);
	setenv("GPUSIM_WAVE_US", "1000", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	setenv("GPUSIM_KERNEL_US", "long_kernel=50000", 1);
	test_register_kernel(short_kernel, "_Z12short_kernelv");
	test_register_kernel(long_kernel, "_Z11long_kernelv");
	return cmocka_run_group_tests(tests, setup, NULL);
}
