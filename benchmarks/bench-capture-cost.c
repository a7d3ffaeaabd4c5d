/* SPDX-License-Identifier: MIT */
/* The cost of one CUPTI callback pair (enter + exit) as libgpuwhy.so handles it, of one stack
 * capture, and of one NVTX range (push + pop, start + end), measured by calling gpuwhy's real
 * code with a live writer. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "intern.h"
#include "capture-state.h"
#include "nvtx.h"
#include "config.h"
#include "stacks.h"
#include "subscriber.h"
#include "clock.h"
#include "trace-writer.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 9

/* Median over ROUNDS of the mean cost of one call of fn over n calls, in ns. */
static double measure(void (*fn)(void), unsigned n)
{
	uint64_t per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = gw_now_ns();

		for (unsigned i = 0; i < n; i++)
			fn();
		per[r] = (gw_now_ns() - t0) * 1000 / n;
		/* Keep the writer's ring from filling: what is measured is the hot path. */
		gw_writer_flush(1000000000ull);
	}
	qsort(per, ROUNDS, sizeof(per[0]), cmp_u64);
	return per[ROUNDS / 2] / 1000.0;
}

static cudaLaunchKernel_v7000_params launch_params = {
	.gridDim = {1, 1, 1},
	.blockDim = {32, 1, 1},
};
static cudaStreamSynchronize_v3020_params sync_params;
static cudaError_t status = cudaSuccess;

static void callback_pair(CUpti_CallbackId cbid, const void *params, const char *function,
			  const char *symbol)
{
	CUpti_CallbackData cb = {
		.callbackSite = CUPTI_API_ENTER,
		.functionName = function,
		.functionParams = params,
		.functionReturnValue = &status,
		.symbolName = symbol,
		.correlationId = 1,
	};

	gw_cupti_on_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &cb);
	cb.callbackSite = CUPTI_API_EXIT;
	gw_cupti_on_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &cb);
}

static void launch(void)
{
	callback_pair(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch_params,
		      "cudaLaunchKernel", "_Z19step_counter_kernelPii");
}

/* A CUTLASS- or Triton-sized mangled name (real ones run to several KB): the interning
 * cache confirms every hit by comparing the whole text. */
static char long_name[4096];

static void launch_long_name(void)
{
	callback_pair(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch_params,
		      "cudaLaunchKernel", long_name);
}

static void sync_call(void)
{
	callback_pair(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &sync_params,
		      "cudaStreamSynchronize", NULL);
}

static void ignored(void)
{
	/* A callback gpuwhy did not subscribe to, if CUPTI delivered one: the floor. */
	callback_pair(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, NULL, "cudaGetDevice", NULL);
}

static void capture(void)
{
	gw_stack_capture();
}

/* A stand-in NVTX instance: the function tables InitializeInjectionNvtx2 fills. */
static NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer *core_slots[NVTX_CBID_CORE_SIZE];

static int NVTX_API get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned *size)
{
	if (m != NVTX_CB_MODULE_CORE)
		return 0;
	for (unsigned i = 0; i < NVTX_CBID_CORE_SIZE; i++)
		core_slots[i] = &core[i];
	*out = core_slots;
	*size = NVTX_CBID_CORE_SIZE;
	return 1;
}

static const NvtxExportTableCallbacks nvtx_callbacks = {sizeof(nvtx_callbacks), get_module};

static const void *NVTX_API nvtx_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &nvtx_callbacks : NULL;
}

static const char long_range_name[] =
	"aten::convolution_backward, op_id = 1234, sizes = [[64, 256, 56, "
	"56], [256, 64, 1, 1]], input_dtypes = [float]";

static void push_pop(void)
{
	((nvtxRangePushA_impl_fntype)core[NVTX_CBID_CORE_RangePushA])("step 17");
	((nvtxRangePop_impl_fntype)core[NVTX_CBID_CORE_RangePop])();
}

static void push_pop_long(void)
{
	((nvtxRangePushA_impl_fntype)core[NVTX_CBID_CORE_RangePushA])(long_range_name);
	((nvtxRangePop_impl_fntype)core[NVTX_CBID_CORE_RangePop])();
}

static void start_end(void)
{
	nvtxRangeId_t id = ((nvtxRangeStartA_impl_fntype)core[NVTX_CBID_CORE_RangeStartA])("load");

	((nvtxRangeEnd_impl_fntype)core[NVTX_CBID_CORE_RangeEnd])(id);
}

static volatile uint64_t clock_sink;

static void clock_read(void)
{
	clock_sink += gw_now_ns();
}

/* A launch with a range around it: what a framework that names every operator (emit_nvtx)
 * pays per launch. */
static void launch_in_range(void)
{
	push_pop();
	launch();
}

static __attribute__((noinline)) void nest(int depth, void (*fn)(void), unsigned n, double *ret)
{
	if (depth > 0) {
		nest(depth - 1, fn, n, ret);
		__asm__ volatile("" ::: "memory"); /* no tail call: each level is a frame */
		return;
	}
	*ret = measure(fn, n);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/gw-bench-capture-XXXXXX";
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION};
	unsigned n = argc > 1 && !strcmp(argv[1], "--quick") ? 20000 : 200000;
	double launch_ns, long_ns, sync_ns, ignored_ns, stack10_ns, stack30_ns;
	double range_ns, range_long_ns, start_end_ns, launch_range_ns, clock_ns;
	const char *invalid;
	struct gw_config cfg;

	gw_config_from_env(&cfg, &invalid); /* GPUWHY_STACKS as set, default on */
	gw_stacks_on = cfg.stacks;
	opt.fd = mkstemp(path);
	if (opt.fd < 0 || gw_intern_init() < 0 || gw_writer_start(&opt, &hdr) < 0) {
		perror("bench-capture-cost: setup");
		return 1;
	}
	unlink(path);
	/* libunwind's pipe made and watched, as the library's start does: a stack checks it */
	if (cfg.stacks && gw_stacks_init() < 0) {
		perror("bench-capture-cost: libunwind's pipe");
		return 1;
	}
	atomic_store(&gw_capture_on, true);

	ignored_ns = measure(ignored, n);
	launch_ns = measure(launch, n);
	memset(long_name, 'T', sizeof(long_name) - 1);
	memcpy(long_name, "_ZN7cutlass6KernelI", 19);
	long_ns = measure(launch_long_name, n);
	sync_ns = measure(sync_call, n / 10);
	nest(10, capture, n / 10, &stack10_ns);
	nest(30, capture, n / 10, &stack30_ns);
	clock_ns = measure(clock_read, n);
	gw_nvtx_attach(nvtx_table);
	range_ns = measure(push_pop, n);
	range_long_ns = measure(push_pop_long, n);
	start_end_ns = measure(start_end, n);
	launch_range_ns = measure(launch_in_range, n);
	gw_writer_stop(true, 0);

	printf("callback pair, launch (kernel name interned, stack on 1 in %d): %.0f ns\n",
	       GW_STACK_LAUNCH_EVERY, launch_ns);
	printf("callback pair, launch of a kernel with a 4 KB name: %.0f ns (%.2fx the short "
	       "one)\n",
	       long_ns, long_ns / launch_ns);
	printf("callback pair, stream synchronize (with its stack): %.0f ns\n", sync_ns);
	printf("callback pair, unsubscribed id (floor): %.0f ns\n", ignored_ns);
	printf("stack capture, about 10 frames deep (unw_backtrace + dedup): %.0f ns\n",
	       stack10_ns);
	printf("stack capture, about 30 frames deep: %.0f ns\n", stack30_ns);
	printf("clock read (CLOCK_MONOTONIC_RAW; a range takes two): %.0f ns\n", clock_ns);
	printf("NVTX push/pop pair, a 7-byte name (one RANGE record): %.0f ns\n", range_ns);
	printf("NVTX push/pop pair, a %zu-byte name (cut at 128): %.0f ns\n",
	       sizeof(long_range_name) - 1, range_long_ns);
	printf("NVTX start/end pair: %.0f ns\n", start_end_ns);
	printf("launch callback pair inside a push/pop range: %.0f ns, %.2fx the launch alone\n",
	       launch_range_ns, launch_range_ns / launch_ns);
	return 0;
}
