/* SPDX-License-Identifier: MIT */
/* Audit: the copies and waits no other program makes: peer-to-peer and batch copies, the driver
 * API's 2D/3D copies and memsets, an event-query polling loop, host functions and waits for a
 * value in stream order. */

/*
 * What it checks: how each is captured and attributed (doc/causes.md). One mode per run
 * (argv[1]); gpusim (a test double) costs, from its README: a copy or memset COPY_US = 5 us +
 * bytes / rate (host<->device 25 GB/s, device 1500 GB/s, between devices P2P 400 GB/s), a kernel
 * WAVE_US per wave (GPUSIM_KERNEL_US below), 1 us between queued operations of a stream, 4 us
 * of host time a launch. test-report-audit.py derives every expected number from these
 * constants and that model.
 *
 *   peer       GPUSIM_DEVICES=2, GPUSIM_HOLD_US (the device starts once the host has issued
 *              everything). On device 0's stream, ITERS times: k_peer (one full wave,
 *              250 us), then cudaMemcpyPeerAsync of PEER_BYTES to device 1; a stream sync; then
 *              one cudaMemcpyPeer (device 0 to 1) and a device sync. Every copy is a MEMCPY2 on
 *              device 0's stream naming both devices: data transfer on device 0 and on device
 *              1, ITERS + 1 copies of 5 + PEER_BYTES / 400e3 us each.
 *   batch      ITERS times: cudaMemcpyBatchAsync of BATCH copies of BATCH_BYTES from pinned
 *              memory to the device on a stream, then a stream sync: ITERS * BATCH copies of
 *              5 + BATCH_BYTES / 25e3 us, ITERS batch calls.
 *   driver     ITERS times, through the driver's entry points (cudaGetDriverEntryPoint):
 *              cuMemcpy2D (synchronous) of ROWS rows of ROW_BYTES from pinned host memory to a
 *              pitched device buffer, cuMemcpy3DAsync of the same rows as DEPTH slices of
 *              ROWS / DEPTH, cuMemsetD2D32Async of the buffer, cuMemsetD16 (synchronous) of
 *              its first ROW_BYTES; then a device sync. 2 * ITERS copies and 2 * ITERS memsets;
 *              the synchronous ones are copy syncs.
 *   eventpoll  ITERS times: k_poll (2 waves, 500 us), an event recorded after it, then
 *              cudaEventQuery until it answers cudaSuccess (20 us pauses): each loop one polling
 *              wait, host sync, as design.md's rule C.2 makes of a synchronizing call.
 *   hostfn     GPUSIM_HOLD_US. On a stream, ITERS times: k_host (one wave, 100 us), then a host
 *              function that spins HOST_US = 300 us on the host (cudaLaunchHostFunc,
 *              cudaStreamAddCallback and the driver's cuLaunchHostFunc in turn), all issued at
 *              once; a stream sync. Each kernel after the first was queued behind a host
 *              function: the gap before it (the function's 300 us and more) is host work, by
 *              the host function's site.
 *   waitvalue  on a stream, ITERS times: k_wait (one wave, 100 us), cuStreamWaitValue32 for
 *              i + 1 on a word of pinned memory, k_wait again (queued behind the wait), then
 *              the host spins HOST_US = 300 us, writes i + 1 and syncs the stream. The second
 *              kernel waited for the write: the gap before it, at least 300 - 100 = 200 us, is
 *              blocked (queued work held by a wait), named by the wait.
 */
#include <cuda.h>
#include <unistd.h>

#include "../../workloads/common.h"

#define ITERS	    30
#define CAP	    (132 * 8)
#define PEER_BYTES  (256 << 10)
#define BATCH	    8
#define BATCH_BYTES (1 << 20)
#define ROWS	    64
#define ROW_BYTES   4096
#define DEPTH	    4
#define HOST_US	    300

__global__ void k_peer(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

__global__ void k_poll(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

__global__ void k_host(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

__global__ void k_wait(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

/* The host's own work: a spin of us microseconds on the thread's clock. */
static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *entry(const char *name)
{
	enum cudaDriverEntryPointQueryResult st;
	void *fn = NULL;

	WL_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 13000, cudaEnableDefault, &st));
	if (!fn || st != cudaDriverEntryPointSuccess)
		wl_die(name);
	return fn;
}

static void drv(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS)
		wl_die(what);
}

static void peer(void)
{
	float *a, *b;
	cudaStream_t s;
	int n = 0, ok = 0;

	WL_CHECK(cudaGetDeviceCount(&n));
	if (n < 2)
		wl_die("peer needs 2 devices (GPUSIM_DEVICES=2)");
	WL_CHECK(cudaDeviceCanAccessPeer(&ok, 0, 1));
	if (!ok)
		wl_die("device 0 cannot reach device 1");
	WL_CHECK(cudaSetDevice(1));
	WL_CHECK(cudaMalloc(&b, PEER_BYTES));
	WL_CHECK(cudaSetDevice(0));
	WL_CHECK(cudaDeviceEnablePeerAccess(1, 0));
	WL_CHECK(cudaMalloc(&a, PEER_BYTES < CAP * 256 * 4 ? CAP * 256 * 4 : PEER_BYTES));
	WL_CHECK(cudaStreamCreate(&s));
	for (int i = 0; i < ITERS; i++) {
		k_peer<<<CAP, 256, 0, s>>>(a);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaMemcpyPeerAsync(b, 1, a, 0, PEER_BYTES, s));
	}
	WL_CHECK(cudaStreamSynchronize(s));
	WL_CHECK(cudaMemcpyPeer(b, 1, a, 0, PEER_BYTES));
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaStreamDestroy(s));
}

static void batch(void)
{
	void *dsts[BATCH], *srcs[BATCH];
	size_t sizes[BATCH];
	struct cudaMemcpyAttributes attr = {};
	size_t attr_idx = 0;
	char *dev, *host;
	cudaStream_t s;

	WL_CHECK(cudaMalloc(&dev, (size_t)BATCH * BATCH_BYTES));
	WL_CHECK(cudaMallocHost(&host, (size_t)BATCH * BATCH_BYTES));
	WL_CHECK(cudaStreamCreate(&s));
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	for (int k = 0; k < BATCH; k++) {
		dsts[k] = dev + (size_t)k * BATCH_BYTES;
		srcs[k] = host + (size_t)k * BATCH_BYTES;
		sizes[k] = BATCH_BYTES;
	}
	for (int i = 0; i < ITERS; i++) {
		WL_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, BATCH, &attr, &attr_idx, 1, s));
		WL_CHECK(cudaStreamSynchronize(s));
	}
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFreeHost(host));
	WL_CHECK(cudaFree(dev));
}

typedef CUresult (*memcpy2d_fn)(const CUDA_MEMCPY2D *);
typedef CUresult (*memcpy3d_async_fn)(const CUDA_MEMCPY3D *, CUstream);
typedef CUresult (*memset2d32_async_fn)(CUdeviceptr, size_t, unsigned int, size_t, size_t,
					CUstream);
typedef CUresult (*memset16_fn)(CUdeviceptr, unsigned short, size_t);

static void driver(void)
{
	memcpy2d_fn copy2d = (memcpy2d_fn)entry("cuMemcpy2D");
	memcpy3d_async_fn copy3d = (memcpy3d_async_fn)entry("cuMemcpy3DAsync");
	memset2d32_async_fn set2d = (memset2d32_async_fn)entry("cuMemsetD2D32Async");
	memset16_fn set16 = (memset16_fn)entry("cuMemsetD16");
	CUDA_MEMCPY2D c2 = {};
	CUDA_MEMCPY3D c3 = {};
	size_t pitch;
	char *host;
	void *dev;
	cudaStream_t s;

	WL_CHECK(cudaMallocPitch(&dev, &pitch, ROW_BYTES, ROWS));
	WL_CHECK(cudaMallocHost(&host, (size_t)ROWS * ROW_BYTES));
	WL_CHECK(cudaStreamCreate(&s));
	c2.srcMemoryType = CU_MEMORYTYPE_HOST;
	c2.srcHost = host;
	c2.srcPitch = ROW_BYTES;
	c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c2.dstDevice = (CUdeviceptr)dev;
	c2.dstPitch = pitch;
	c2.WidthInBytes = ROW_BYTES;
	c2.Height = ROWS;
	c3.srcMemoryType = CU_MEMORYTYPE_HOST;
	c3.srcHost = host;
	c3.srcPitch = ROW_BYTES;
	c3.srcHeight = ROWS / DEPTH;
	c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c3.dstDevice = (CUdeviceptr)dev;
	c3.dstPitch = pitch;
	c3.dstHeight = ROWS / DEPTH;
	c3.WidthInBytes = ROW_BYTES;
	c3.Height = ROWS / DEPTH;
	c3.Depth = DEPTH;
	for (int i = 0; i < ITERS; i++) {
		drv(copy2d(&c2), "cuMemcpy2D");
		drv(copy3d(&c3, (CUstream)s), "cuMemcpy3DAsync");
		drv(set2d((CUdeviceptr)dev, pitch, 0x3f800000u, ROW_BYTES / 4, ROWS, (CUstream)s),
		    "cuMemsetD2D32Async");
		drv(set16((CUdeviceptr)dev, 0, ROW_BYTES / 2), "cuMemsetD16");
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFreeHost(host));
	WL_CHECK(cudaFree(dev));
}

static void eventpoll(void)
{
	cudaEvent_t ev;
	float *x;

	WL_CHECK(cudaMalloc(&x, (size_t)2 * CAP * 256 * sizeof(float)));
	WL_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	for (int i = 0; i < ITERS; i++) {
		cudaError_t e;

		k_poll<<<2 * CAP, 256>>>(x);
		WL_CHECK_LAUNCH();
		WL_CHECK(cudaEventRecord(ev, 0));
		while ((e = cudaEventQuery(ev)) == cudaErrorNotReady)
			usleep(20);
		WL_CHECK(e);
	}
	WL_CHECK(cudaEventDestroy(ev));
	WL_CHECK(cudaFree(x));
}

static void CUDART_CB host_fn(void *arg)
{
	(void)arg;
	spin_us(HOST_US);
}

static void CUDART_CB host_callback(cudaStream_t stream, cudaError_t status, void *arg)
{
	(void)stream;
	(void)status;
	(void)arg;
	spin_us(HOST_US);
}

typedef CUresult (*launch_host_fn)(CUstream, CUhostFn, void *);

static void hostfn(void)
{
	launch_host_fn launch = (launch_host_fn)entry("cuLaunchHostFunc");
	cudaStream_t s;
	float *x;

	WL_CHECK(cudaMalloc(&x, (size_t)CAP * 256 * sizeof(float)));
	WL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < ITERS; i++) {
		k_host<<<CAP, 256, 0, s>>>(x);
		WL_CHECK_LAUNCH();
		if (i % 3 == 0)
			WL_CHECK(cudaLaunchHostFunc(s, host_fn, NULL));
		else if (i % 3 == 1)
			WL_CHECK(cudaStreamAddCallback(s, host_callback, NULL, 0));
		else
			drv(launch((CUstream)s, host_fn, NULL), "cuLaunchHostFunc");
	}
	WL_CHECK(cudaStreamSynchronize(s));
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFree(x));
}

typedef CUresult (*wait_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

static void waitvalue(void)
{
	wait_value_fn wait = (wait_value_fn)entry("cuStreamWaitValue32");
	unsigned int *flag;
	cudaStream_t s;
	float *x;

	WL_CHECK(cudaMalloc(&x, (size_t)CAP * 256 * sizeof(float)));
	WL_CHECK(cudaMallocHost(&flag, sizeof(*flag)));
	*flag = 0;
	WL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < ITERS; i++) {
		k_wait<<<CAP, 256, 0, s>>>(x);
		WL_CHECK_LAUNCH();
		drv(wait((CUstream)s, (CUdeviceptr)flag, (cuuint32_t)(i + 1), CU_STREAM_WAIT_VALUE_GEQ),
		    "cuStreamWaitValue32");
		k_wait<<<CAP, 256, 0, s>>>(x);
		WL_CHECK_LAUNCH();
		spin_us(HOST_US);
		__atomic_store_n(flag, (unsigned int)(i + 1), __ATOMIC_RELEASE);
		WL_CHECK(cudaStreamSynchronize(s));
	}
	WL_CHECK(cudaStreamDestroy(s));
	WL_CHECK(cudaFreeHost(flag));
	WL_CHECK(cudaFree(x));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	wl_program = argv[0];
	if (!strcmp(mode, "peer"))
		peer();
	else if (!strcmp(mode, "batch"))
		batch();
	else if (!strcmp(mode, "driver"))
		driver();
	else if (!strcmp(mode, "eventpoll"))
		eventpoll();
	else if (!strcmp(mode, "hostfn"))
		hostfn();
	else if (!strcmp(mode, "waitvalue"))
		waitvalue();
	else
		wl_die("usage: copies_waits peer|batch|driver|eventpoll|hostfn|waitvalue");
	return 0;
}
