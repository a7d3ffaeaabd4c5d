/* SPDX-License-Identifier: MIT */
/* Subscribes to the CUPTI stand-in as a profiler does: callbacks, records, correlation. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cupti.h>

#include "sim-test.h"

#define WAVE_NS	    10000000ull	     /* GPUSIM_WAVE_US=10000: long enough to queue behind */
#define QUEUE_NS    1000ull	     /* GPUSIM_QUEUE_US=1 */
#define COPY_NS	    5000ull	     /* GPUSIM_COPY_US=5 */
#define LONG_NS	    20000000ull	     /* GPUSIM_KERNEL_US=long=20000 */
#define HUGE_NS	    200000000ull     /* GPUSIM_KERNEL_US=huge=200000 */
#define CLIENT_OFF  1000000000000ull /* the client's clock runs this far ahead of ours */
#define BYTES	    (1u << 20)
#define MAX_CALLS   4096
#define MAX_RECORDS 16384

struct call {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	CUpti_ApiCallbackSite site;
	uint32_t correlation;
	char symbol[64];
	size_t malloc_size;
	cudaError_t ret;
	uint64_t data_at_exit;
};

union rec {
	CUpti_Activity base;
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemcpy6 memcpy;
	CUpti_ActivityMemset4 memset;
	CUpti_ActivityMemory4 memory;
	CUpti_ActivityAPI api;
	CUpti_ActivityDevice5 device;
	CUpti_ActivitySynchronization2 sync;
};

static struct call calls[MAX_CALLS];
static size_t n_calls;
static union rec recs[MAX_RECORDS];
static char rec_names[MAX_RECORDS][64];
static size_t n_recs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t main_thread;
static int completed_on_main;
static CUpti_SubscriberHandle sub;

static void kernel(void)
{
}
static void long_kernel(void)
{
}
static void huge_kernel(void)
{
}
static void tiny_kernel(void)
{
}
static void short_kernel(void)
{
}

static uint64_t client_clock(void)
{
	return test_now_ns() + CLIENT_OFF;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *d = data;
	struct call *c;

	(void)userdata;
	pthread_mutex_lock(&lock);
	if (n_calls == MAX_CALLS) {
		pthread_mutex_unlock(&lock);
		return;
	}
	c = &calls[n_calls++];
	memset(c, 0, sizeof(*c));
	c->domain = domain;
	c->cbid = cbid;
	c->site = d->callbackSite;
	c->correlation = d->correlationId;
	if (d->symbolName)
		strncpy(c->symbol, d->symbolName, sizeof(c->symbol) - 1);
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020)
		c->malloc_size = ((const cudaMalloc_v3020_params *)d->functionParams)->size;
	if (d->callbackSite == CUPTI_API_ENTER)
		*d->correlationData = 0x5eed0000u + d->correlationId;
	else {
		c->ret = *(const cudaError_t *)d->functionReturnValue;
		c->data_at_exit = *d->correlationData;
	}
	pthread_mutex_unlock(&lock);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 16 * 1024;
	*buffer = aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	pthread_mutex_lock(&lock);
	if (pthread_equal(pthread_self(), main_thread))
		completed_on_main++;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS &&
	       n_recs < MAX_RECORDS) {
		/* the union may be larger than the record: copy no further than the data */
		size_t left = (size_t)(buffer + valid - (uint8_t *)r);

		memcpy(&recs[n_recs], r, left < sizeof(union rec) ? left : sizeof(union rec));
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			strncpy(rec_names[n_recs], ((CUpti_ActivityKernel10 *)r)->name, 63);
		n_recs++;
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
}

static const struct call *find_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				    CUpti_ApiCallbackSite site, size_t from)
{
	for (size_t i = from; i < n_calls; i++)
		if (calls[i].domain == domain && calls[i].cbid == cbid && calls[i].site == site)
			return &calls[i];
	return NULL;
}

static const union rec *find_kernel(const char *name, size_t nth)
{
	for (size_t i = 0; i < n_recs; i++)
		if (recs[i].base.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    !strcmp(rec_names[i], name) && !nth--)
			return &recs[i];
	return NULL;
}

static const union rec *find_kind_corr(CUpti_ActivityKind kind, uint32_t corr)
{
	for (size_t i = 0; i < n_recs; i++) {
		const union rec *r = &recs[i];
		uint32_t c;

		if (r->base.kind != kind)
			continue;
		switch (kind) {
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			c = r->memcpy.correlationId;
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			c = r->memset.correlationId;
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER:
			c = r->api.correlationId;
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			c = r->sync.correlationId;
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			c = r->memory.correlationId;
			break;
		default:
			c = 0;
		}
		if (c == corr)
			return r;
	}
	return NULL;
}

static int setup(void **state)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE,   CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_MEMORY2,  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_RUNTIME,  CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
	};
	CUpti_SubscriberHandle second;

	(void)state;
	main_thread = pthread_self();
	if (cuptiSubscribe(&sub, on_callback, NULL) != CUPTI_SUCCESS)
		return -1;
	if (cuptiSubscribe(&second, on_callback, NULL) !=
	    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return -1;
	if (cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
				CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
				CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) != CUPTI_SUCCESS)
		return -1;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
			return -1;
	if (cuptiActivityRegisterTimestampCallback(client_clock) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
		return -1;
	return 0;
}

static void test_unsupported_kind(void **state)
{
	(void)state;
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING),
			 CUPTI_ERROR_NOT_COMPATIBLE);
}

static void test_names(void **state)
{
	const char *s = NULL;

	(void)state;
	assert_int_equal(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					      CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &s),
			 CUPTI_SUCCESS);
	assert_string_equal(s, "cudaMalloc_v3020");
	assert_int_equal(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
					      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &s),
			 CUPTI_SUCCESS);
	assert_string_equal(s, "cuLaunchKernel");
	assert_int_equal(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &s),
			 CUPTI_SUCCESS);
	assert_string_equal(s, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
}

/* The profiler's view of: malloc, H2D copy, a two-wave kernel, memset, device sync, free. */
static void test_workload(void **state)
{
	const struct call *m_in, *m_out, *d_in, *l_in, *l_out, *dl_in, *c_in, *s_in;
	const union rec *k, *cp, *ms, *api, *sync, *mem, *dev = NULL, *drv;
	unsigned char *host = calloc(1, BYTES);
	uint32_t legacy_id = 0;
	uint64_t t_a, t_b;
	size_t dropped = 1;
	void *d;

	(void)state;
	t_a = test_now_ns();
	assert_int_equal(cudaMalloc(&d, BYTES), cudaSuccess);
	assert_int_equal(cudaMemcpy(d, host, BYTES, cudaMemcpyHostToDevice), cudaSuccess);
	/* 256 threads: 8 blocks per SM, 1056 per wave on 132 SMs: 2112 blocks = 2 waves */
	assert_int_equal(test_launch(kernel, 2 * 132 * 8, 256, 0), cudaSuccess);
	assert_int_equal(cudaMemsetAsync(d, 0, BYTES, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	t_b = test_now_ns();
	assert_int_equal(cudaFree(d), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	free(host);

	/* callbacks: enter and exit, real parameter structs, shared correlation data */
	m_in = find_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
			 CUPTI_API_ENTER, 0);
	m_out = find_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
			  CUPTI_API_EXIT, 0);
	assert_non_null(m_in);
	assert_non_null(m_out);
	assert_int_equal(m_in->malloc_size, BYTES);
	assert_int_equal(m_out->ret, cudaSuccess);
	assert_int_equal(m_in->correlation, m_out->correlation);
	assert_int_equal(m_out->data_at_exit, 0x5eed0000u + m_in->correlation);
	/* the driver call nested inside it, with a correlation id of its own */
	d_in = find_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
			 CUPTI_API_ENTER, 0);
	assert_non_null(d_in);
	assert_true(d_in > m_in && d_in < m_out);
	assert_int_not_equal(d_in->correlation, m_in->correlation);

	l_in = find_call(CUPTI_CB_DOMAIN_RUNTIME_API,
			 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, 0);
	l_out = find_call(CUPTI_CB_DOMAIN_RUNTIME_API,
			  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, 0);
	assert_non_null(l_in);
	assert_non_null(l_out);
	assert_string_equal(l_in->symbol, "_Z6kernelv");
	dl_in = find_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			  CUPTI_API_ENTER, 0);
	assert_non_null(dl_in);
	assert_int_not_equal(dl_in->correlation, l_in->correlation);
	assert_true(m_in->correlation != l_in->correlation);
	c_in = find_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
			 CUPTI_API_ENTER, 0);
	s_in = find_call(CUPTI_CB_DOMAIN_RUNTIME_API,
			 CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_ENTER, 0);
	assert_non_null(c_in);
	assert_non_null(s_in);
	/* driver callbacks not enabled do not fire */
	assert_null(find_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
			      CUPTI_API_ENTER, 0));

	/* activity: the kernel, joined to the application's launch call by its id */
	k = find_kernel("_Z6kernelv", 0);
	assert_non_null(k);
	assert_int_equal(k->kernel.correlationId, l_in->correlation);
	assert_int_equal(k->kernel.end - k->kernel.start, 2 * WAVE_NS);
	assert_int_equal(k->kernel.gridX, 2 * 132 * 8);
	assert_int_equal(k->kernel.blockX, 256);
	assert_int_equal(k->kernel.registersPerThread, 32);
	assert_int_equal(cuptiGetStreamId(NULL, NULL, &legacy_id), CUPTI_SUCCESS);
	assert_int_equal(k->kernel.streamId, legacy_id);
	/* times are on the client's clock */
	assert_true(k->kernel.start >= t_a + CLIENT_OFF && k->kernel.end <= t_b + CLIENT_OFF);

	cp = find_kind_corr(CUPTI_ACTIVITY_KIND_MEMCPY, c_in->correlation);
	assert_non_null(cp);
	assert_int_equal(cp->memcpy.bytes, BYTES);
	assert_int_equal(cp->memcpy.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	assert_int_equal(cp->memcpy.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
	assert_int_equal(cp->memcpy.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	/* 5 µs + 1048576 B / 25 B/ns = 5000 + 41943.04 ns */
	assert_int_equal(cp->memcpy.end - cp->memcpy.start, COPY_NS + 41943);
	/* same stream: the kernel starts no earlier than one queue gap after the copy */
	assert_true(k->kernel.start >= cp->memcpy.end + QUEUE_NS);

	ms = find_kind_corr(CUPTI_ACTIVITY_KIND_MEMSET,
			    find_call(CUPTI_CB_DOMAIN_RUNTIME_API,
				      CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
				      CUPTI_API_ENTER, 0)
				    ->correlation);
	assert_non_null(ms);
	assert_int_equal(ms->memset.bytes, BYTES);
	/* queued behind the kernel: starts exactly one gap after it */
	assert_int_equal(ms->memset.start, k->kernel.end + QUEUE_NS);

	/* the launch's runtime API record brackets the kernel's start (the device was idle) */
	api = find_kind_corr(CUPTI_ACTIVITY_KIND_RUNTIME, l_in->correlation);
	assert_non_null(api);
	assert_int_equal(api->api.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	assert_true(api->api.start <= k->kernel.start && k->kernel.start <= api->api.end);
	assert_null(find_kind_corr(CUPTI_ACTIVITY_KIND_DRIVER, l_in->correlation));
	drv = find_kind_corr(CUPTI_ACTIVITY_KIND_DRIVER, dl_in->correlation);
	assert_non_null(drv);
	assert_int_equal(drv->api.cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);

	sync = find_kind_corr(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, s_in->correlation);
	assert_non_null(sync);
	assert_int_equal(sync->sync.type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
	assert_true(sync->sync.end >= ms->memset.end);

	mem = find_kind_corr(CUPTI_ACTIVITY_KIND_MEMORY2, m_in->correlation);
	assert_non_null(mem);
	assert_int_equal(mem->memory.memoryOperationType,
			 CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
	assert_int_equal(mem->memory.address, (uint64_t)(uintptr_t)d);
	assert_int_equal(mem->memory.bytes, BYTES);
	assert_int_equal(mem->memory.memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);

	for (size_t i = 0; i < n_recs; i++)
		if (recs[i].base.kind == CUPTI_ACTIVITY_KIND_DEVICE)
			dev = &recs[i];
	assert_non_null(dev);
	assert_int_equal(dev->device.numMultiprocessors, 132);
	assert_int_equal(dev->device.globalMemorySize, 80ull << 30);
	assert_int_equal(dev->device.computeCapabilityMajor, 9);
	assert_string_equal(dev->device.name, "gpusim (simulated H100-like GPU)");

	assert_int_equal(completed_on_main, 0);
	assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	assert_int_equal(dropped, 0);
}

/* Kernels on a non-blocking stream overlap a blocking stream's on the activity timeline. */
static void test_overlap(void **state)
{
	cudaStream_t s, nb;
	const union rec *a, *b;

	(void)state;
	assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
	assert_int_equal(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, s), cudaSuccess);
	assert_int_equal(test_launch(kernel, 1, 32, nb), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	a = find_kernel("_Z11long_kernelv", 0);
	b = find_kernel("_Z6kernelv", 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->kernel.end - a->kernel.start, LONG_NS);
	assert_true(a->kernel.streamId != b->kernel.streamId);
	assert_true(b->kernel.start < a->kernel.end && a->kernel.start < b->kernel.end);
	/* the legacy stream's kernel waited for the blocking stream's */
	b = find_kernel("_Z11long_kernelv", 1);
	assert_non_null(b);
	assert_int_equal(b->kernel.start, a->kernel.end + QUEUE_NS);
	cudaStreamDestroy(s);
	cudaStreamDestroy(nb);
}

/*
 * CUPTI's flush semantics: a default flush holds back a buffer while any record in it is
 * incomplete (a finished kernel in the same buffer as an unfinished one waits too); a forced
 * flush returns at once, the unfinished record with zero timestamps, never delivered again.
 */
static void test_flush_semantics(void **state)
{
	const union rec *k, *t;
	uint64_t t0;

	(void)state;
	t0 = test_now_ns();
	assert_int_equal(test_launch(short_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(test_launch(huge_kernel, 1, 32, 0), cudaSuccess);
	while (test_now_ns() - t0 < 5000000) /* the short kernel has long finished */
		;
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	assert_null(find_kernel("_Z12short_kernelv", 0));
	assert_null(find_kernel("_Z11huge_kernelv", 0));
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	assert_true(test_now_ns() - t0 < HUGE_NS);
	t = find_kernel("_Z12short_kernelv", 0);
	k = find_kernel("_Z11huge_kernelv", 0);
	assert_non_null(t);
	assert_non_null(k);
	assert_true(t->kernel.start > 0 && t->kernel.end > t->kernel.start);
	assert_int_equal(k->kernel.start, 0);
	assert_int_equal(k->kernel.end, 0);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	assert_null(find_kernel("_Z11huge_kernelv", 1));
}

#define THREADS	   4
#define PER_THREAD 250

static void *launcher(void *arg)
{
	cudaStream_t s;
	intptr_t ok = 1;

	(void)arg;
	ok &= cudaStreamCreate(&s) == cudaSuccess;
	for (int i = 0; i < PER_THREAD; i++)
		ok &= test_launch(tiny_kernel, 1, 32, s) == cudaSuccess;
	ok &= cudaStreamSynchronize(s) == cudaSuccess;
	ok &= cudaStreamQuery(s) == cudaSuccess;
	ok &= cudaStreamDestroy(s) == cudaSuccess;
	return (void *)ok;
}

/* Host threads launching and synchronizing at once: every launch gets its own correlation id
 * and record, and each stream's kernels stay in order, one queue gap apart at least. */
static void test_threads(void **state)
{
	pthread_t t[THREADS];
	uint32_t streams[THREADS];
	uint64_t last_end[THREADS];
	size_t n = 0, n_streams = 0, m;

	(void)state;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, launcher, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		void *ok;

		assert_int_equal(pthread_join(t[i], &ok), 0);
		assert_true(ok == (void *)1);
	}
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	/* records of one stream arrive in stream order: each starts after the previous ends */
	for (size_t i = 0; i < n_recs; i++) {
		const CUpti_ActivityKernel10 *k = &recs[i].kernel;

		if (recs[i].base.kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    strcmp(rec_names[i], "_Z11tiny_kernelv"))
			continue;
		n++;
		for (size_t j = 0; j < i; j++)
			if (recs[j].base.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
			    !strcmp(rec_names[j], "_Z11tiny_kernelv"))
				assert_true(recs[j].kernel.correlationId != k->correlationId);
		for (m = 0; m < n_streams && streams[m] != k->streamId; m++)
			;
		if (m == n_streams) {
			assert_true(n_streams < THREADS);
			streams[n_streams++] = k->streamId;
		} else {
			assert_true(k->start >= last_end[m] + QUEUE_NS);
		}
		last_end[m] = k->end;
	}
	assert_int_equal(n_streams, THREADS);
	assert_int_equal(n, THREADS * PER_THREAD);
}

static pthread_barrier_t both_ready;

static void *per_thread_launcher(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both_ready); /* launch together, well within one kernel's 20 ms */
	if (test_launch(long_kernel, 1, 32, cudaStreamPerThread) != cudaSuccess ||
	    cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess)
		return NULL;
	return (void *)1;
}

/* cudaStreamPerThread is one stream per host thread: two threads' kernels overlap. */
static void test_per_thread_streams(void **state)
{
	const union rec *a, *b;
	pthread_t t[2];
	size_t first = 0;

	(void)state;
	while (find_kernel("_Z11long_kernelv", first))
		first++;
	assert_int_equal(pthread_barrier_init(&both_ready, NULL, 2), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, per_thread_launcher, NULL), 0);
	for (int i = 0; i < 2; i++) {
		void *ok;

		assert_int_equal(pthread_join(t[i], &ok), 0);
		assert_true(ok == (void *)1);
	}
	pthread_barrier_destroy(&both_ready);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	a = find_kernel("_Z11long_kernelv", first);
	b = find_kernel("_Z11long_kernelv", first + 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a->kernel.streamId != b->kernel.streamId);
	assert_true(a->kernel.start < b->kernel.end && b->kernel.start < a->kernel.end);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsupported_kind),   cmocka_unit_test(test_names),
		cmocka_unit_test(test_workload),	   cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_flush_semantics),	   cmocka_unit_test(test_threads),
		cmocka_unit_test(test_per_thread_streams),
	};

	setenv("GPUSIM_SMS", "132", 1);
	setenv("GPUSIM_MEM_GB", "80", 1);
	setenv("GPUSIM_WAVE_US", "10000", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	setenv("GPUSIM_COPY_US", "5", 1);
	setenv("GPUSIM_H2D_GBPS", "25", 1);
	setenv("GPUSIM_D2D_GBPS", "1500", 1);
	setenv("GPUSIM_KERNEL_US", "long=20000,huge=200000,tiny=1,short=1", 1);
	unsetenv("GPUSIM_CUPTI_BUSY");
	test_register_kernel(kernel, "_Z6kernelv");
	test_register_kernel(long_kernel, "_Z11long_kernelv");
	test_register_kernel(huge_kernel, "_Z11huge_kernelv");
	test_register_kernel(tiny_kernel, "_Z11tiny_kernelv");
	test_register_kernel(short_kernel, "_Z12short_kernelv");
	return cmocka_run_group_tests(tests, setup, NULL);
}
