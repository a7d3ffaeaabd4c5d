/* SPDX-License-Identifier: MIT */
/* The CUPTI callback handler fed hand-made callback data: one API record per application call
 * (nested driver calls folded in), parameters decoded per include/gpuwhy/api-table.def, MEMORY records
 * only for successful allocations and frees of a real pointer; and the activity record layouts
 * gpuwhy relies on across CUPTI 12 and 13. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "intern.h"
#include "capture-state.h"
#include "correlation.h"
#include "config.h"
#include "subscriber.h"
#include "trace-reader.h"
#include "trace-writer.h"

#include "capture-test-util.h"

#define MAX_RECS 256

static char trace_path[64];
static struct gw_rec_api apis[MAX_RECS];
static struct gw_rec_memory mems[MAX_RECS];
static struct gw_rec_sync syncs[MAX_RECS];
static struct gw_rec_stream_op sops[MAX_RECS];
static unsigned napi, nmem, nsync, nsop;

static void start(void)
{
	gw_test_capture_start(trace_path, sizeof(trace_path), "callbacks");
}

static void finish(void)
{
	struct gw_reader *r;
	struct gw_record rec;

	atomic_store(&gw_capture_on, false);
	assert_int_equal(gw_writer_stop(true, 0), 0);
	assert_int_equal(gw_reader_open(trace_path, &r), 0);
	napi = nmem = nsync = nsop = 0;
	while (gw_reader_next(r, &rec) == 1) {
		if (rec.type == GW_REC_API && napi < MAX_RECS)
			apis[napi++] = rec.api;
		else if (rec.type == GW_REC_MEMORY && nmem < MAX_RECS)
			mems[nmem++] = rec.memory;
		else if (rec.type == GW_REC_SYNC && nsync < MAX_RECS)
			syncs[nsync++] = rec.sync;
		else if (rec.type == GW_REC_STREAM_OP && nsop < MAX_RECS)
			sops[nsop++] = rec.stream_op;
	}
	gw_reader_free(r);
	unlink(trace_path);
}

static void call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
		 const void *params, void *ret, uint32_t correlation)
{
	CUpti_CallbackData cb = {
		.callbackSite = site,
		.functionParams = params,
		.functionReturnValue = ret,
		.correlationId = correlation,
	};

	gw_cupti_on_callback(NULL, domain, cbid, &cb);
}

#define RT  CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static void test_nested_driver_call_folded(void **state)
{
	void *ptr = (void *)0x7f0000001000;
	CUdeviceptr dptr = 0x7f0000001000;
	cudaMalloc_v3020_params rt = {.devPtr = &ptr, .size = 4096};
	cuMemAlloc_v2_params drv = {.dptr = &dptr, .bytesize = 4096};
	cudaError_t ok = cudaSuccess;
	CUresult drv_ok = CUDA_SUCCESS;

	(void)state;
	start();
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rt, &ok, 7);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &drv, &drv_ok, 7);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &drv, &drv_ok, 7);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rt, &ok, 7);
	/* The same driver call made by the application itself is recorded. */
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &drv, &drv_ok, 8);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &drv, &drv_ok, 8);
	finish();

	assert_int_equal(napi, 2);
	assert_int_equal(apis[0].domain, RT);
	assert_int_equal(apis[0].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
	assert_int_equal(apis[0].category, GW_API_ALLOC);
	assert_int_equal(apis[0].sync_kind, GW_SYNC_NONE);
	assert_int_equal(apis[0].correlation, 7);
	assert_int_equal(apis[0].bytes, 4096);
	assert_int_equal(apis[0].dst, 0x7f0000001000);
	assert_true(apis[0].end_ns >= apis[0].start_ns);
	assert_int_equal(apis[1].domain, DRV);
	assert_int_equal(apis[1].correlation, 8);
	assert_int_equal(nmem, 2);
	assert_int_equal(mems[0].op, GW_MEMORY_ALLOC);
	assert_int_equal(mems[0].mem_kind, GW_MEM_DEVICE);
	assert_int_equal(mems[0].address, 0x7f0000001000);
	assert_int_equal(mems[0].bytes, 4096);
	assert_int_equal(mems[0].correlation, 7);
	/* Allocations always get a stack (GPUWHY_STACKS defaults on), and both records share it. */
	assert_true(mems[0].stack_id != 0);
	assert_int_equal(mems[0].stack_id, apis[0].stack_id);
}

/* A call inside the recorded one has its own correlation id (as every CUDA call does on the
 * real CUPTI): it is aliased to the recorded call's, so GPU work carrying either id joins it.
 * nvcc 13's <<<>>> (__cudaLaunchKernel) is recorded without reading its unpublished
 * parameters: a guessed layout would read the poison here as a grid. */
static void test_inner_ids_aliased(void **state)
{
	uint64_t poison[16];
	cuLaunchKernel_params lk = {.gridDimX = 4, .blockDimX = 64};
	cudaError_t ok = cudaSuccess;
	CUresult drv_ok = CUDA_SUCCESS;

	(void)state;
	memset(poison, 0xee, sizeof(poison));
	assert_int_equal(gw_corr_init(), 0);
	start();
	call(RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_ENTER, poison, &ok,
	     100);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &lk, &drv_ok, 101);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &lk, &drv_ok, 101);
	call(RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_EXIT, poison, &ok,
	     100);
	finish();

	assert_int_equal(napi, 1);
	assert_int_equal(apis[0].cbid, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
	assert_int_equal(apis[0].category, GW_API_LAUNCH);
	assert_int_equal(apis[0].correlation, 100);
	assert_int_equal(apis[0].grid_x, 0);
	assert_int_equal(apis[0].block_x, 0);
	assert_int_equal(gw_corr_resolve(101), 100);
	assert_int_equal(gw_corr_resolve(100), 100);
	assert_int_equal(gw_corr_resolve(102), 102);
}

static void test_failures_and_null_frees(void **state)
{
	void *ptr = NULL;
	cudaMalloc_v3020_params m = {.devPtr = &ptr, .size = 1ull << 40};
	cudaFree_v3020_params f = {.devPtr = NULL};
	cudaError_t oom = cudaErrorMemoryAllocation, ok = cudaSuccess;

	(void)state;
	start();
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &m, &oom, 1);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &m, &oom, 1);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_ENTER, &f, &ok, 2);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_EXIT, &f, &ok, 2);
	/* An exit whose enter was never seen (capture began inside the call): ignored. */
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_API_EXIT, &f, &ok, 3);
	finish();

	assert_int_equal(napi, 2);
	assert_int_equal(apis[0].status, cudaErrorMemoryAllocation);
	assert_int_equal(apis[1].category, GW_API_FREE);
	assert_int_equal(apis[1].sync_kind, GW_SYNC_IMPLICIT);
	assert_int_equal(nmem, 0);
}

static void test_parameters(void **state)
{
	cudaMemcpy_v3020_params cp = {.dst = (void *)0x1000,
				      .src = (void *)0x2000,
				      .count = 65536,
				      .kind = cudaMemcpyDeviceToHost};
	cudaMemcpyAsync_v3020_params acp = {.dst = (void *)0x3000,
					    .src = (void *)0x4000,
					    .count = 512,
					    .kind = cudaMemcpyHostToDevice,
					    .stream = (cudaStream_t)0x55};
	cuLaunchKernel_params lk = {.gridDimX = 132,
				    .gridDimY = 2,
				    .gridDimZ = 1,
				    .blockDimX = 256,
				    .blockDimY = 1,
				    .blockDimZ = 1,
				    .sharedMemBytes = 1024,
				    .hStream = (CUstream)0x66};
	cudaStreamSynchronize_v3020_params ss = {.stream = (cudaStream_t)0x77};
	cuMemsetD32_v2_params ms = {.dstDevice = 0x8000, .ui = 0, .N = 100};
	cudaError_t ok = cudaSuccess;
	CUresult drv_ok = CUDA_SUCCESS;

	(void)state;
	start();
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_API_ENTER, &cp, &ok, 1);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_API_EXIT, &cp, &ok, 1);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, CUPTI_API_ENTER, &acp, &ok, 2);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, CUPTI_API_EXIT, &acp, &ok, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &lk, &drv_ok, 3);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &lk, &drv_ok, 3);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, CUPTI_API_ENTER, &ss, &ok,
	     4);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, CUPTI_API_EXIT, &ss, &ok, 4);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, CUPTI_API_ENTER, &ms, &drv_ok, 5);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, CUPTI_API_EXIT, &ms, &drv_ok, 5);
	/* Not in the table: nothing. */
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_API_ENTER, NULL, &ok, 6);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_API_EXIT, NULL, &ok, 6);
	finish();

	assert_int_equal(napi, 5);
	assert_int_equal(apis[0].category, GW_API_MEMCPY);
	assert_int_equal(apis[0].sync_kind, GW_SYNC_COPY);
	assert_int_equal(apis[0].bytes, 65536);
	assert_int_equal(apis[0].copy_kind, cudaMemcpyDeviceToHost);
	assert_int_equal(apis[0].dst, 0x1000);
	assert_int_equal(apis[0].src, 0x2000);
	assert_int_equal(apis[1].sync_kind, GW_SYNC_NONE);
	assert_int_equal(apis[1].stream, 0x55);
	assert_int_equal(apis[1].copy_kind, cudaMemcpyHostToDevice);
	assert_int_equal(apis[2].category, GW_API_LAUNCH);
	assert_int_equal(apis[2].grid_x, 132);
	assert_int_equal(apis[2].grid_y, 2);
	assert_int_equal(apis[2].block_x, 256);
	assert_int_equal(apis[2].shared_mem_bytes, 1024);
	assert_int_equal(apis[2].stream, 0x66);
	assert_int_equal(apis[3].category, GW_API_SYNC);
	assert_int_equal(apis[3].sync_kind, GW_SYNC_EXPLICIT);
	assert_int_equal(apis[3].stream, 0x77);
	assert_true(apis[3].stack_id != 0);
	assert_int_equal(apis[4].category, GW_API_MEMSET);
	assert_int_equal(apis[4].bytes, 400); /* 100 32-bit words */
	assert_int_equal(apis[4].dst, 0x8000);
}

/* Every row of the table decodes a zeroed parameter block without crashing, and its record
 * carries the row's category and sync kind; a query that found its work done at once is no
 * record at all. */
static void test_every_row(void **state)
{
	static uint8_t zeros[512];
	cudaError_t ok = cudaSuccess;
	unsigned want = 0, k = 0;

	(void)state;
	start();
	for (unsigned i = 0; i < gw_api_rows_count; i++) {
		call(gw_api_rows[i].domain, gw_api_rows[i].cbid, CUPTI_API_ENTER, zeros, &ok,
		     i + 1);
		call(gw_api_rows[i].domain, gw_api_rows[i].cbid, CUPTI_API_EXIT, zeros, &ok, i + 1);
		want += gw_api_rows[i].category != GW_API_QUERY;
	}
	finish();
	assert_true(want < gw_api_rows_count);
	assert_int_equal(napi, want > MAX_RECS ? MAX_RECS : want);
	assert_int_equal(nsync, 0);
	for (unsigned i = 0; i < gw_api_rows_count && k < napi; i++) {
		if (gw_api_rows[i].category == GW_API_QUERY)
			continue;
		assert_int_equal(apis[k].cbid, gw_api_rows[i].cbid);
		assert_int_equal(apis[k].category, gw_api_rows[i].category);
		assert_int_equal(apis[k].sync_kind, gw_api_rows[i].sync_kind);
		k++;
	}
}

/* One query returning: enter, exit with the answer. */
static void query(CUpti_CallbackId cbid, const void *params, cudaError_t answer, uint32_t corr)
{
	call(RT, cbid, CUPTI_API_ENTER, params, &answer, corr);
	call(RT, cbid, CUPTI_API_EXIT, params, &answer, corr);
}

/*
 * Polling: a thread's queries of one stream or event, from the first that found the work
 * unfinished to the one that found it done, are one SYNC record (doc/capture.md) carrying the
 * count and the last query's id; nothing else of a query is recorded.
 */
static void test_polling_folded(void **state)
{
	cudaStreamQuery_v3020_params sq = {.stream = (cudaStream_t)0x51};
	cudaStreamQuery_v3020_params sq2 = {.stream = (cudaStream_t)0x52};
	cudaEventQuery_v3020_params eq = {.event = (cudaEvent_t)0xe1};
	cudaLaunchKernel_v7000_params launch = {.stream = (cudaStream_t)0x51};
	cuStreamQuery_params dq = {.hStream = (CUstream)0x51};
	const CUpti_CallbackId SQ = CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020;
	const CUpti_CallbackId EQ = CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020;
	const cudaError_t OK = cudaSuccess;
	cudaError_t ok = cudaSuccess, NR = cudaErrorNotReady;
	CUresult drv_nr = CUDA_ERROR_NOT_READY;
	uint64_t t0, t1;

	(void)state;
	start();
	/* 1: three unfinished answers, then done: one wait of four queries, spanning them */
	t0 = gw_now_ns();
	query(SQ, &sq, NR, 10);
	query(SQ, &sq, NR, 11);
	query(SQ, &sq, NR, 12);
	query(SQ, &sq, OK, 13);
	t1 = gw_now_ns();
	/* 2: done at the first query: the host never waited */
	query(SQ, &sq, OK, 14);
	/* 3: another call between the queries: the host was not spinning */
	query(SQ, &sq, NR, 15);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, &launch, &ok,
	     16);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, &launch, &ok, 16);
	query(SQ, &sq, OK, 17);
	/* 4: two streams and an event polled in turn: three waits of their own */
	query(SQ, &sq, NR, 20);
	query(EQ, &eq, NR, 21);
	query(SQ, &sq2, NR, 22);
	query(EQ, &eq, NR, 23);
	query(SQ, &sq, OK, 24);
	query(SQ, &sq2, OK, 25);
	query(EQ, &eq, OK, 26);
	/* 5: the runtime query's nested driver query is the same query */
	call(RT, SQ, CUPTI_API_ENTER, &sq, &NR, 30);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, CUPTI_API_ENTER, &dq, &drv_nr, 31);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, CUPTI_API_EXIT, &dq, &drv_nr, 31);
	call(RT, SQ, CUPTI_API_EXIT, &sq, &NR, 30);
	query(SQ, &sq, OK, 32);
	/* 6: a pause of more than 10 ms between two queries: the wait starts again after it */
	query(SQ, &sq, NR, 40);
	usleep(11000);
	query(SQ, &sq, NR, 41);
	query(SQ, &sq, OK, 42);
	finish();

	assert_int_equal(napi, 1); /* the launch */
	assert_int_equal(nsync, 6);
	assert_int_equal(syncs[0].queries, 4);
	assert_int_equal(syncs[0].correlation, 13);
	assert_true(syncs[0].start_ns >= t0 && syncs[0].end_ns <= t1 &&
		    syncs[0].start_ns < syncs[0].end_ns);
	assert_int_equal(syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	assert_int_equal(syncs[0].tid, apis[0].tid);
	/* case 4, in the order they ended */
	assert_int_equal(syncs[1].correlation, 24);
	assert_int_equal(syncs[1].queries, 2);
	assert_int_equal(syncs[2].correlation, 25);
	assert_int_equal(syncs[2].queries, 2);
	assert_int_equal(syncs[3].correlation, 26);
	assert_int_equal(syncs[3].queries, 3);
	assert_int_equal(syncs[3].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
	assert_true(syncs[1].start_ns < syncs[3].start_ns && syncs[3].start_ns < syncs[2].start_ns);
	/* case 5: two queries, not three */
	assert_int_equal(syncs[4].correlation, 32);
	assert_int_equal(syncs[4].queries, 2);
	/* case 6 */
	assert_int_equal(syncs[5].correlation, 42);
	assert_int_equal(syncs[5].queries, 2);
	assert_true(syncs[5].end_ns - syncs[5].start_ns < 11000000);
}

static void host_fn(void *arg)
{
	(void)arg;
}

/* Host functions and waits for a value: their API record, and a STREAM_OP record saying what
 * holds the stream; a batch of memory operations holds it only when it has a wait. */
static void test_stream_ops(void **state)
{
	cudaLaunchHostFunc_v10000_params hf = {
		.stream = (cudaStream_t)0x61, .fn = host_fn, .userData = (void *)0x99};
	cuStreamWaitValue32_v2_params wv = {.stream = (CUstream)0x62,
					    .addr = 0xd000,
					    .value = 7,
					    .flags = CU_STREAM_WAIT_VALUE_GEQ};
	CUstreamBatchMemOpParams ops[2] = {0}, writes[1] = {0};
	cuStreamBatchMemOp_v2_params batch = {
		.stream = (CUstream)0x63, .count = 2, .paramArray = ops};
	cuStreamBatchMemOp_v2_params wbatch = {
		.stream = (CUstream)0x63, .count = 1, .paramArray = writes};
	cudaError_t ok = cudaSuccess, bad = cudaErrorInvalidValue;
	CUresult drv_ok = CUDA_SUCCESS;

	(void)state;
	ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	ops[0].writeValue.address = 0xa000;
	ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
	ops[1].waitValue.address = 0xb000;
	ops[1].waitValue.value64 = 1ull << 40;
	ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
	writes[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	start();
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, CUPTI_API_ENTER, &hf, &ok, 1);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, CUPTI_API_EXIT, &hf, &ok, 1);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, CUPTI_API_ENTER, &wv, &drv_ok, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, CUPTI_API_EXIT, &wv, &drv_ok, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, CUPTI_API_ENTER, &batch, &drv_ok,
	     3);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, CUPTI_API_EXIT, &batch, &drv_ok,
	     3);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, CUPTI_API_ENTER, &wbatch, &drv_ok,
	     4);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, CUPTI_API_EXIT, &wbatch, &drv_ok,
	     4);
	/* a failed call holds nothing */
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, CUPTI_API_ENTER, &hf, &bad, 5);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, CUPTI_API_EXIT, &hf, &bad, 5);
	finish();

	assert_int_equal(napi, 5);
	assert_int_equal(apis[0].category, GW_API_HOST_FUNC);
	assert_int_equal(apis[0].stream, 0x61);
	assert_int_equal(apis[0].dst, (uint64_t)(uintptr_t)host_fn);
	assert_int_equal(apis[0].src, 0x99);
	assert_int_equal(apis[1].category, GW_API_STREAM_WAIT);
	assert_int_equal(apis[1].stream, 0x62);
	assert_int_equal(nsop, 3);
	assert_int_equal(sops[0].kind, GW_STREAM_OP_HOST_FUNC);
	assert_int_equal(sops[0].correlation, 1);
	assert_int_equal(sops[0].address, (uint64_t)(uintptr_t)host_fn);
	assert_int_equal(sops[0].tid, apis[0].tid);
	assert_int_equal(sops[1].kind, GW_STREAM_OP_WAIT_VALUE);
	assert_int_equal(sops[1].correlation, 2);
	assert_int_equal(sops[1].address, 0xd000);
	assert_int_equal(sops[1].value, 7);
	assert_int_equal(sops[1].flags, CU_STREAM_WAIT_VALUE_GEQ);
	assert_int_equal(sops[2].kind, GW_STREAM_OP_WAIT_VALUE);
	assert_int_equal(sops[2].correlation, 3);
	assert_int_equal(sops[2].address, 0xb000);
	assert_int_equal(sops[2].value, 1ull << 40);
	assert_int_equal(sops[2].flags, CU_STREAM_WAIT_VALUE_EQ);
}

/*
 * hooks/cupti-activity.c reads CUPTI 13's record versions (Kernel10, Memcpy6, Memset4,
 * Synchronization2, Device5). A CUPTI 12 (PyTorch's wheels ship one) delivers the versions
 * before them; gpuwhy reads them through the same structs, which holds because every field it
 * reads sits at the same offset in both. Checked here, against the toolkit's headers.
 */
#define SAME_OFFSET(old, new, f)                                                                   \
	_Static_assert(offsetof(old, f) == offsetof(new, f), #old " and " #new " differ at " #f)
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, start);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, end);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, deviceId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, streamId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, correlationId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridX);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridY);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridZ);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockX);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockY);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockZ);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, registersPerThread);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, staticSharedMemory);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, dynamicSharedMemory);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, graphId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, sharedMemoryExecuted);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, shmemLimitConfig);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, contextId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, clusterX);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, clusterY);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, clusterZ);
/* The oldest records a CUPTI gpuwhy accepts delivers: the carveout, opt-in and context since
 * Kernel5 (GW_CUPTI_MIN_API), clusters since Kernel8 (GW_CUPTI_API_CLUSTERS), a green
 * context's SMs since Context2 (GW_CUPTI_API_GREEN_CONTEXTS); the first context record's ids. */
SAME_OFFSET(CUpti_ActivityKernel5, CUpti_ActivityKernel10, sharedMemoryExecuted);
SAME_OFFSET(CUpti_ActivityKernel5, CUpti_ActivityKernel10, shmemLimitConfig);
SAME_OFFSET(CUpti_ActivityKernel5, CUpti_ActivityKernel10, contextId);
SAME_OFFSET(CUpti_ActivityKernel5, CUpti_ActivityKernel10, registersPerThread);
SAME_OFFSET(CUpti_ActivityKernel5, CUpti_ActivityKernel10, graphId);
SAME_OFFSET(CUpti_ActivityKernel8, CUpti_ActivityKernel10, clusterX);
SAME_OFFSET(CUpti_ActivityKernel8, CUpti_ActivityKernel10, clusterY);
SAME_OFFSET(CUpti_ActivityKernel8, CUpti_ActivityKernel10, clusterZ);
SAME_OFFSET(CUpti_ActivityContext, CUpti_ActivityContext3, contextId);
SAME_OFFSET(CUpti_ActivityContext, CUpti_ActivityContext3, deviceId);
SAME_OFFSET(CUpti_ActivityContext2, CUpti_ActivityContext3, isGreenContext);
SAME_OFFSET(CUpti_ActivityContext2, CUpti_ActivityContext3, numMultiprocessors);
SAME_OFFSET(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, overheadKind);
SAME_OFFSET(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, objectKind);
SAME_OFFSET(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, objectId);
SAME_OFFSET(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, start);
SAME_OFFSET(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, end);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, copyKind);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, srcKind);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, dstKind);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, flags);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, bytes);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, start);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, end);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, deviceId);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, streamId);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, graphId);
/* Peer-to-peer copies (MEMCPY2): every version since the first. */
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, copyKind);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, srcKind);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, dstKind);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, flags);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, bytes);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, start);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, end);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, deviceId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, streamId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, srcDeviceId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, dstDeviceId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, correlationId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, value);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, bytes);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, start);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, end);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, deviceId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, streamId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, correlationId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, flags);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, memoryKind);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, graphId);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, type);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, start);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, end);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, correlationId);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, streamId);
SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, cudaEventId);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, globalMemoryBandwidth);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, globalMemorySize);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxThreadsPerBlock);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxRegistersPerBlock);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxSharedMemoryPerBlock);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, numMultiprocessors);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxBlocksPerMultiprocessor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxWarpsPerMultiprocessor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxRegistersPerMultiprocessor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxSharedMemoryPerMultiprocessor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, computeCapabilityMajor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, computeCapabilityMinor);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, id);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, uuid);
SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, name);

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_driver_call_folded),
		cmocka_unit_test(test_inner_ids_aliased),
		cmocka_unit_test(test_failures_and_null_frees),
		cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_every_row),
		cmocka_unit_test(test_polling_folded),
		cmocka_unit_test(test_stream_ops),
	};

	struct gw_config cfg;
	const char *invalid;

	gw_config_from_env(&cfg, &invalid);
	gw_stacks_on = cfg.stacks;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
