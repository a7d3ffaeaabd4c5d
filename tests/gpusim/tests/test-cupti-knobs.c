/* SPDX-License-Identifier: MIT */
/* The CUPTI stand-in's knobs, one scenario per process (argv[1]; meson sets the knobs): where
 * the real CUPTI differs from an ideal one, and what each knob makes of it. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cupti.h>

#include "sim-test.h"

#define MAX_CALLS   256
#define MAX_RECORDS 1024
#define LONG_NS	    50000000ull /* GPUSIM_KERNEL_US=long=50000 */

struct call {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	CUpti_ApiCallbackSite site;
	uint32_t correlation;
};

static struct call calls[MAX_CALLS];
static size_t n_calls;
static CUpti_ActivitySynchronization2 syncs[MAX_RECORDS];
static CUpti_ActivityKernel10 kernels[MAX_RECORDS];
static size_t n_syncs, n_kernels, n_devices, n_completed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle sub;

static void kernel(void)
{
}
static void long_kernel(void)
{
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *d = data;

	(void)userdata;
	pthread_mutex_lock(&lock);
	if (n_calls < MAX_CALLS)
		calls[n_calls++] = (struct call){domain, cbid, d->callbackSite, d->correlationId};
	pthread_mutex_unlock(&lock);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 64 * 1024;
	*buffer = aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	pthread_mutex_lock(&lock);
	n_completed++;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && n_syncs < MAX_RECORDS)
			syncs[n_syncs++] = *(CUpti_ActivitySynchronization2 *)r;
		else if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
			 n_kernels < MAX_RECORDS)
			kernels[n_kernels++] = *(CUpti_ActivityKernel10 *)r;
		else if (r->kind == CUPTI_ACTIVITY_KIND_DEVICE)
			n_devices++;
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
}

/* Subscribes to every runtime and driver callback and enables the kinds gpuwhy uses. */
static void subscribe(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE,	     CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,	     CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};

	assert_int_equal(cuptiSubscribe(&sub, on_callback, NULL), CUPTI_SUCCESS);
	assert_int_equal(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
	assert_int_equal(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
			 CUPTI_SUCCESS);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		assert_int_equal(cuptiActivityEnable(kinds[i]), CUPTI_SUCCESS);
}

static const struct call *find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < n_calls; i++)
		if (calls[i].domain == domain && calls[i].cbid == cbid &&
		    calls[i].site == CUPTI_API_ENTER)
			return &calls[i];
	return NULL;
}

/* One kernel; returns the correlation ids of cudaLaunchKernel and of the cuLaunchKernel inside
 * it (0 when that callback did not fire), and the kernel record's. */
static void launch_one(uint32_t *rt, uint32_t *drv, uint32_t *gpu)
{
	const struct call *c;

	n_calls = 0;
	assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	c = find(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	assert_non_null(c);
	*rt = c->correlation;
	c = find(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	*drv = c ? c->correlation : 0;
	assert_int_equal(n_kernels, 1);
	*gpu = kernels[0].correlationId;
}

/* Default: nested calls have ids of their own; the GPU record carries the runtime call's. */
static void test_correlation_default(void **state)
{
	uint32_t rt, drv, gpu;

	(void)state;
	subscribe();
	launch_one(&rt, &drv, &gpu);
	assert_true(drv && drv != rt);
	assert_int_equal(gpu, rt);
}

/* GPUSIM_NESTED_CORRELATION=shared: the nested call shares the runtime call's id. */
static void test_correlation_shared(void **state)
{
	uint32_t rt, drv, gpu;

	(void)state;
	subscribe();
	launch_one(&rt, &drv, &gpu);
	assert_int_equal(drv, rt);
	assert_int_equal(gpu, rt);
}

/* GPUSIM_GPU_CORRELATION=driver: the GPU record carries the driver call's id. */
static void test_correlation_driver(void **state)
{
	uint32_t rt, drv, gpu;

	(void)state;
	subscribe();
	launch_one(&rt, &drv, &gpu);
	assert_true(drv && drv != rt);
	assert_int_equal(gpu, drv);
}

/* GPUSIM_NESTED_CALLBACKS=0: no driver callback fires inside a runtime call. */
static void test_no_nested_callbacks(void **state)
{
	uint32_t rt, drv, gpu;

	(void)state;
	subscribe();
	launch_one(&rt, &drv, &gpu);
	assert_int_equal(drv, 0);
	assert_int_equal(gpu, rt);
}

/* GPUSIM_CUPTI_FLUSH=split, GPUSIM_CUPTI_FORCED=wait: a finished record goes out while an
 * unfinished one waits, and a forced flush waits for the device. */
static void test_split_flush(void **state)
{
	uint64_t t0;

	(void)state;
	subscribe();
	t0 = test_now_ns();
	assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(test_launch(long_kernel, 1, 32, 0), cudaSuccess);
	while (test_now_ns() - t0 < 5000000)
		;
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	assert_int_equal(n_kernels, 1);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	assert_true(test_now_ns() - t0 >= LONG_NS);
	assert_int_equal(n_kernels, 2);
	assert_true(kernels[1].end - kernels[1].start == LONG_NS);
}

/* Default: a record for every query, its returnValue CUDA_ERROR_NOT_READY while the work is
 * unfinished; cuptiActivityEnableAllSyncRecords(0) leaves those out. */
static void test_sync_queries(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(test_launch(long_kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
	assert_int_equal(cuptiActivityEnableAllSyncRecords(0), CUPTI_SUCCESS);
	assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cudaStreamQuery(0), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	/* the first query, the device sync, the last query */
	assert_int_equal(n_syncs, 3);
	assert_int_equal(syncs[0].returnValue, CUDA_ERROR_NOT_READY);
	assert_int_equal(syncs[1].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
	assert_int_equal(syncs[2].returnValue, CUDA_SUCCESS);
}

/* GPUSIM_SYNC_QUERIES=0: no query records at all. */
static void test_no_sync_queries(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(cudaStreamQuery(0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	assert_int_equal(n_syncs, 1);
}

/* Default: cuptiSubscribe initializes the device, so a knob set after it is not read (as a
 * CUDA_VISIBLE_DEVICES set after CUDA initialized is not). GPUSIM_CUPTI_INIT=none: it is. */
static void device_sms(int *ret)
{
	struct cudaDeviceProp p;

	assert_int_equal(cudaGetDeviceProperties(&p, 0), cudaSuccess);
	*ret = p.multiProcessorCount;
}

static void test_init_by_subscribe(void **state)
{
	int sms;

	(void)state;
	setenv("GPUSIM_SMS", "132", 1);
	subscribe();
	setenv("GPUSIM_SMS", "64", 1);
	device_sms(&sms);
	assert_int_equal(sms, 132);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	assert_int_equal(n_devices, 1);
}

static void *flush_thread(void *arg)
{
	__atomic_store_n((int *)arg, cuptiActivityFlushAll(0) == CUPTI_SUCCESS ? 1 : 2,
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/* True when a cuptiActivityFlushAll on a thread of its own has not returned after 300 ms (the
 * thread is left blocked: the process ends with it). */
static bool flush_blocks(void)
{
	static int result;
	pthread_t t;

	result = 0;
	assert_int_equal(pthread_create(&t, NULL, flush_thread, &result), 0);
	usleep(300000);
	if (!__atomic_load_n(&result, __ATOMIC_SEQ_CST)) {
		pthread_detach(t);
		return true;
	}
	pthread_join(t, NULL);
	return false;
}

static void test_init_none(void **state)
{
	int sms;

	(void)state;
	setenv("GPUSIM_SMS", "132", 1);
	subscribe();
	setenv("GPUSIM_SMS", "64", 1);
	/* GPUSIM_CUPTI_FLUSH_HANG=nocontext (the default): no device yet, the flush hangs */
	assert_true(flush_blocks());
	device_sms(&sms);
	assert_int_equal(sms, 64);
	assert_false(flush_blocks());
}

/* GPUSIM_CUPTI_FLUSH_HANG=always: a flush never returns, even with work done. */
static void test_flush_hang(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_true(flush_blocks());
}

/* GPUSIM_CUPTI_DEVICE=never: no DEVICE record. */
static void test_device_never(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	assert_int_equal(n_kernels, 1);
	assert_int_equal(n_devices, 0);
}

/* GPUSIM_CUPTI_API=12: the version and callback ids of a CUPTI 12. */
static void test_api12(void **state)
{
	const char *name;
	uint32_t v = 0;

	(void)state;
	subscribe();
	assert_int_equal(cuptiGetVersion(&v), CUPTI_SUCCESS);
	assert_int_equal(v, 26);
	assert_int_not_equal(
		cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
				     CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &name),
		CUPTI_SUCCESS);
	assert_int_not_equal(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
						 CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2),
			     CUPTI_SUCCESS);
	assert_int_equal(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
					      &name),
			 CUPTI_SUCCESS);
	assert_string_equal(name, "cudaLaunchKernel_v7000");
}

/* A CUPTI call in a fork child of a process that used CUPTI: blocks (default), fails
 * (GPUSIM_CUPTI_FORK=fail) or works (repair). The child reports through its exit status;
 * one that has not ended after 500 ms is blocked. */
static int child_flush_status(void)
{
	int st = 0;
	pid_t pid;

	assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *name;

		/* what needs no CUPTI state still works */
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
					 CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
					 &name) != CUPTI_SUCCESS)
			_exit(9);
		switch (cuptiActivityFlushAll(0)) {
		case CUPTI_SUCCESS:
			_exit(0);
		case CUPTI_ERROR_NOT_INITIALIZED:
			_exit(1);
		default:
			_exit(2);
		}
	}
	for (int i = 0; i < 50; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -2; /* blocked */
}

static void test_fork_hang(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(child_flush_status(), -2);
}

static void test_fork_fail(void **state)
{
	(void)state;
	subscribe();
	assert_int_equal(child_flush_status(), 1);
}

static void test_fork_repair(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	/* the repaired child starts CUPTI's thread again: ThreadSanitizer cannot follow a
	 * multi-threaded process's child that starts threads */
	skip();
#endif
	subscribe();
	assert_int_equal(child_flush_status(), 0);
}

/* GPUSIM_SECOND_CLIENT=3:2: at the third kernel another client registers its buffers (so no
 * buffer comes back to this one), at the fifth it disables the kinds it enabled. */
static void test_second_client(void **state)
{
	size_t completed;

	(void)state;
	subscribe();
	for (int i = 0; i < 2; i++)
		assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	assert_int_equal(n_kernels, 2);
	completed = n_completed;
	for (int i = 0; i < 4; i++)
		assert_int_equal(test_launch(kernel, 1, 32, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	assert_int_equal(n_completed, completed);
	assert_int_equal(n_kernels, 2);
	/* callbacks still come: only cuptiSubscribe is exclusive */
	assert_non_null(
		find(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		struct CMUnitTest test;
	} scenarios[] = {
		{"correlation-default", cmocka_unit_test(test_correlation_default)},
		{"correlation-shared", cmocka_unit_test(test_correlation_shared)},
		{"correlation-driver", cmocka_unit_test(test_correlation_driver)},
		{"no-nested-callbacks", cmocka_unit_test(test_no_nested_callbacks)},
		{"split-flush", cmocka_unit_test(test_split_flush)},
		{"sync-queries", cmocka_unit_test(test_sync_queries)},
		{"no-sync-queries", cmocka_unit_test(test_no_sync_queries)},
		{"init-by-subscribe", cmocka_unit_test(test_init_by_subscribe)},
		{"init-none", cmocka_unit_test(test_init_none)},
		{"flush-hang", cmocka_unit_test(test_flush_hang)},
		{"device-never", cmocka_unit_test(test_device_never)},
		{"api12", cmocka_unit_test(test_api12)},
		{"fork-hang", cmocka_unit_test(test_fork_hang)},
		{"fork-fail", cmocka_unit_test(test_fork_fail)},
		{"fork-repair", cmocka_unit_test(test_fork_repair)},
		{"second-client", cmocka_unit_test(test_second_client)},
	};

	setenv("GPUSIM_KERNEL_US", "long=50000", 1);
	setenv("GPUSIM_QUEUE_US", "1", 1);
	test_register_kernel(kernel, "_Z6kernelv");
	test_register_kernel(long_kernel, "_Z11long_kernelv");
	for (size_t i = 0; argc > 1 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name))
			return _cmocka_run_group_tests(scenarios[i].name, &scenarios[i].test, 1,
						       NULL, NULL);
	return 2;
}
