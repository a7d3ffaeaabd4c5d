/* SPDX-License-Identifier: MIT */
/* Copies and memsets move real bytes; allocations are accounted in cudaMemGetInfo; copy time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim-test.h"

#define N (1 << 20)

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

static void test_round_trip(void **state)
{
	unsigned char *host = malloc(N), *back = malloc(N);
	void *d1, *d2;

	(void)state;
	for (size_t i = 0; i < N; i++)
		host[i] = pattern(i);
	assert_int_equal(cudaMalloc(&d1, N), cudaSuccess);
	assert_int_equal(cudaMalloc(&d2, N), cudaSuccess);
	assert_int_equal(cudaMemcpy(d1, host, N, cudaMemcpyHostToDevice), cudaSuccess);
	assert_int_equal(cudaMemcpy(d2, d1, N, cudaMemcpyDeviceToDevice), cudaSuccess);
	memset(back, 0, N);
	assert_int_equal(cudaMemcpy(back, d2, N, cudaMemcpyDeviceToHost), cudaSuccess);
	assert_memory_equal(back, host, N);

	/* memset, then a D2H copy of a sub-range with cudaMemcpyDefault */
	assert_int_equal(cudaMemset((char *)d2 + 100, 0xab, 1000), cudaSuccess);
	assert_int_equal(cudaMemcpy(back, d2, 2000, cudaMemcpyDefault), cudaSuccess);
	for (size_t i = 0; i < 2000; i++)
		assert_int_equal(back[i], i >= 100 && i < 1100 ? 0xab : pattern(i));

	assert_int_equal(cudaFree(d1), cudaSuccess);
	assert_int_equal(cudaFree(d2), cudaSuccess);
	free(host);
	free(back);
}

static void test_async_pinned_managed(void **state)
{
	unsigned char *pinned, *managed, *back;
	cudaStream_t s;
	void *d;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaMallocHost((void **)&pinned, 4096), cudaSuccess);
	assert_int_equal(cudaHostAlloc((void **)&back, 4096, cudaHostAllocDefault), cudaSuccess);
	assert_int_equal(cudaMallocManaged((void **)&managed, 4096, cudaMemAttachGlobal),
			 cudaSuccess);
	assert_int_equal(cudaMallocAsync(&d, 4096, s), cudaSuccess);
	for (int i = 0; i < 4096; i++)
		pinned[i] = pattern((size_t)i);
	assert_int_equal(cudaMemcpyAsync(d, pinned, 4096, cudaMemcpyHostToDevice, s), cudaSuccess);
	assert_int_equal(cudaMemsetAsync(managed, 0x5a, 4096, s), cudaSuccess);
	assert_int_equal(cudaMemcpyAsync(managed, d, 2048, cudaMemcpyDeviceToDevice, s),
			 cudaSuccess);
	assert_int_equal(cudaMemcpyAsync(back, managed, 4096, cudaMemcpyDefault, s), cudaSuccess);
	assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(back[i], i < 2048 ? pattern((size_t)i) : 0x5a);
	assert_int_equal(cudaFreeAsync(d, s), cudaSuccess);
	assert_int_equal(cudaFree(managed), cudaSuccess);
	assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
	assert_int_equal(cudaFreeHost(back), cudaSuccess);
	assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void test_2d(void **state)
{
	unsigned char src[8][16], dst[8][16];
	void *d;
	size_t pitch = 64;

	(void)state;
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 16; c++)
			src[r][c] = (unsigned char)(r * 16 + c);
	memset(dst, 0, sizeof(dst));
	assert_int_equal(cudaMalloc(&d, pitch * 8), cudaSuccess);
	assert_int_equal(cudaMemcpy2D(d, pitch, src, 16, 16, 8, cudaMemcpyHostToDevice),
			 cudaSuccess);
	assert_int_equal(cudaMemcpy2D(dst, 16, d, pitch, 16, 8, cudaMemcpyDeviceToHost),
			 cudaSuccess);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(cudaMemcpy2D(d, 8, src, 16, 16, 8, cudaMemcpyHostToDevice),
			 cudaErrorInvalidPitchValue);
	assert_int_equal(cudaFree(d), cudaSuccess);
	cudaGetLastError();
}

/* A 4 x 3 x 2 volume through a device buffer with row pitch 8 and 3 rows per slice. */
static void test_3d(void **state)
{
	unsigned char src[2][3][4], back[2][3][4];
	struct cudaMemcpy3DParms up = {0}, down = {0};
	struct cudaExtent extent = {4, 3, 2};
	void *d;

	(void)state;
	for (int z = 0; z < 2; z++)
		for (int y = 0; y < 3; y++)
			for (int x = 0; x < 4; x++)
				src[z][y][x] = (unsigned char)(z * 100 + y * 10 + x);
	memset(back, 0, sizeof(back));
	assert_int_equal(cudaMalloc(&d, 8 * 3 * 2), cudaSuccess);
	assert_int_equal(cudaMemset(d, 0xee, 8 * 3 * 2), cudaSuccess);
	up.srcPtr = (struct cudaPitchedPtr){src, 4, 4, 3};
	up.dstPtr = (struct cudaPitchedPtr){d, 8, 4, 3};
	up.extent = extent;
	up.kind = cudaMemcpyHostToDevice;
	assert_int_equal(cudaMemcpy3D(&up), cudaSuccess);
	down.srcPtr = up.dstPtr;
	down.dstPtr = (struct cudaPitchedPtr){back, 4, 4, 3};
	down.extent = extent;
	down.kind = cudaMemcpyDeviceToHost;
	assert_int_equal(cudaMemcpy3D(&down), cudaSuccess);
	assert_memory_equal(back, src, sizeof(src));
	/* the padding of each pitched row was not written */
	assert_int_equal(cudaMemcpy(back, (char *)d + 4, 4, cudaMemcpyDeviceToHost), cudaSuccess);
	assert_int_equal(back[0][0][0], 0xee);
	assert_int_equal(cudaFree(d), cudaSuccess);
}

static int device_var = 11;

static void test_symbols(void **state)
{
	int v = 42, out = 0;
	void *addr;

	(void)state;
	/* the device copy starts from the host initializer, like a loaded module */
	assert_int_equal(
		cudaMemcpyFromSymbol(&out, &device_var, sizeof(out), 0, cudaMemcpyDeviceToHost),
		cudaSuccess);
	assert_int_equal(out, 11);
	assert_int_equal(cudaMemcpyToSymbol(&device_var, &v, sizeof(v), 0, cudaMemcpyHostToDevice),
			 cudaSuccess);
	assert_int_equal(device_var, 11); /* the host shadow is a different variable */
	assert_int_equal(
		cudaMemcpyFromSymbol(&out, &device_var, sizeof(out), 0, cudaMemcpyDeviceToHost),
		cudaSuccess);
	assert_int_equal(out, 42);
	assert_int_equal(cudaGetSymbolAddress(&addr, &device_var), cudaSuccess);
	assert_int_equal(cudaMemcpyToSymbol(&device_var, &v, sizeof(v), 1, cudaMemcpyHostToDevice),
			 cudaErrorInvalidValue);
	assert_int_equal(cudaMemcpyToSymbol(&v, &v, sizeof(v), 0, cudaMemcpyHostToDevice),
			 cudaErrorInvalidSymbol);
	cudaGetLastError();
}

static void test_mem_get_info(void **state)
{
	size_t free0, free1, total;
	void *d;

	(void)state;
	assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
	assert_int_equal(total, 80ull << 30); /* GPUSIM_MEM_GB default */
	assert_int_equal(cudaMalloc(&d, 256u << 20), cudaSuccess);
	assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
	assert_int_equal(free0 - free1, 256u << 20);
	assert_int_equal(cudaFree(d), cudaSuccess);
	assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
	assert_int_equal(free1, free0);
}

static void test_pointer_attributes(void **state)
{
	struct cudaPointerAttributes a;
	int stack = 0;
	void *d, *h;

	(void)state;
	assert_int_equal(cudaMalloc(&d, 64), cudaSuccess);
	assert_int_equal(cudaMallocHost(&h, 64), cudaSuccess);
	assert_int_equal(cudaPointerGetAttributes(&a, (char *)d + 10), cudaSuccess);
	assert_int_equal(a.type, cudaMemoryTypeDevice);
	assert_int_equal(cudaPointerGetAttributes(&a, h), cudaSuccess);
	assert_int_equal(a.type, cudaMemoryTypeHost);
	assert_int_equal(cudaPointerGetAttributes(&a, &stack), cudaSuccess);
	assert_int_equal(a.type, cudaMemoryTypeUnregistered);
	cudaFree(d);
	cudaFreeHost(h);
}

static void test_host_register(void **state)
{
	struct cudaPointerAttributes a;
	char *buf = malloc(8192);
	void *dev = NULL, *d;

	(void)state;
	assert_int_equal(cudaHostRegister(buf, 8192, cudaHostRegisterDefault), cudaSuccess);
	assert_int_equal(cudaHostRegister(buf + 4096, 16, cudaHostRegisterDefault),
			 cudaErrorHostMemoryAlreadyRegistered);
	assert_int_equal(cudaPointerGetAttributes(&a, buf + 100), cudaSuccess);
	assert_int_equal(a.type, cudaMemoryTypeHost);
	assert_int_equal(cudaHostGetDevicePointer(&dev, buf, 0), cudaSuccess);
	assert_ptr_equal(dev, buf);
	/* registered memory copies like pinned memory, and the bytes arrive */
	memset(buf, 0x3c, 8192);
	assert_int_equal(cudaMalloc(&d, 8192), cudaSuccess);
	assert_int_equal(cudaMemcpyAsync(d, buf, 8192, cudaMemcpyHostToDevice, 0), cudaSuccess);
	memset(buf, 0, 8192);
	assert_int_equal(cudaMemcpy(buf, d, 8192, cudaMemcpyDeviceToHost), cudaSuccess);
	for (int i = 0; i < 8192; i++)
		assert_int_equal((unsigned char)buf[i], 0x3c);
	assert_int_equal(cudaFree(d), cudaSuccess);
	assert_int_equal(cudaHostUnregister(buf), cudaSuccess);
	assert_int_equal(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
	assert_int_equal(cudaPointerGetAttributes(&a, buf), cudaSuccess);
	assert_int_equal(a.type, cudaMemoryTypeUnregistered);
	cudaGetLastError();
	free(buf);
}

/* A synchronous 2.5 MB H2D copy at 2.5 GB/s: 5 µs + 1 ms of device time, waited for. The bytes
 * really move first (page faults included), so the upper bound is loose; test-cupti checks the
 * modelled duration exactly. */
static void test_copy_time(void **state)
{
	const size_t bytes = 2500u * 1000;
	void *d, *h = calloc(1, bytes);
	uint64_t t0, dt;

	(void)state;
	assert_int_equal(cudaMalloc(&d, bytes), cudaSuccess);
	t0 = test_now_ns();
	assert_int_equal(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess);
	dt = test_now_ns() - t0;
	assert_true(dt >= 1005000);
	assert_true(dt < 1005000 + 250000000);
	cudaFree(d);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_async_pinned_managed),
		cmocka_unit_test(test_2d),
		cmocka_unit_test(test_3d),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_mem_get_info),
		cmocka_unit_test(test_pointer_attributes),
		cmocka_unit_test(test_copy_time),
		cmocka_unit_test(test_host_register),
	};
	static int fatbin;
	void **h = __cudaRegisterFatBinary(&fatbin);

	unsetenv("GPUSIM_MEM_GB");
	setenv("GPUSIM_COPY_US", "5", 1);
	setenv("GPUSIM_H2D_GBPS", "2.5", 1);
	__cudaRegisterVar(h, (char *)&device_var, (char *)"device_var", "device_var", 0,
			  sizeof(device_var), 0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
