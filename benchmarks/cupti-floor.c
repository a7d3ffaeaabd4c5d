/* SPDX-License-Identifier: MIT */
/*
 * libcupti-floor.so: what CUPTI itself costs a program, with nothing of gpuwhy's on top. It
 * loads and subscribes CUPTI through gpuwhy's own loader (hooks/cupti-loader.c), so it enables
 * exactly gpuwhy's callback ids and activity kinds and registers the same timestamp callback;
 * but its callback returns at once, and it only walks the activity buffers CUPTI hands back.
 * A run under it against a plain run is the floor any CUPTI-based tool pays on that program;
 * gpuwhy against it is gpuwhy's own share (bench-capture.sh, benchmarks/gpu/validate.py).
 *
 * Loaded like libgpuwhy.so, and as careful: LD_PRELOAD names it in CUDA_INJECTION64_PATH
 * (its constructor makes no CUDA or CUPTI call), and it subscribes at the driver's
 * InitializeInjection; at exit it flushes CUPTI only after the program's first CUDA call and
 * never in a fork child (cuptiActivityFlushAll may block for ever in a process without GPU
 * work, and CUPTI has no fork support). When another tool owns CUDA_INJECTION64_PATH it
 * measures nothing and says so.
 * GPUWHY_CUPTI_PATH picks the CUPTI library as for gpuwhy. CUPTI_FLOOR_VERBOSE=1 prints the
 * records walked at exit. A benchmark tool, not part of gpuwhy's product.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "subscriber.h"

#define BUFFER_BYTES (1u << 20) /* as gpuwhy's activity buffers */
#define BUFFER_ALIGN 8

static atomic_bool started;
static _Atomic uint64_t records_walked;
static atomic_bool cuda_seen; /* a callback fired: the program made a CUDA call */
static pid_t subscribed_pid;

void CUPTIAPI gw_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	(void)domain;
	(void)cbid;
	(void)data;
	/* a load first: the store, once, is all this costs a call beyond CUPTI's own */
	if (!atomic_load_explicit(&cuda_seen, memory_order_relaxed))
		atomic_store_explicit(&cuda_seen, true, memory_order_relaxed);
}

void CUPTIAPI gw_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
}

void CUPTIAPI gw_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid_size)
{
	CUpti_Activity *rec = NULL;
	uint64_t n = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	/* Any tool must at least step through the records to use them. */
	while (valid_size &&
	       gw_cupti.cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS)
		n++;
	atomic_fetch_add(&records_walked, n);
	free(buffer);
}

static void at_exit(void)
{
	const char *verbose = getenv("CUPTI_FLOOR_VERBOSE");

	if (atomic_load(&cuda_seen) && getpid() == subscribed_pid)
		gw_cupti_flush(true);
	if (verbose && *verbose == '1')
		fprintf(stderr, "cupti-floor: %llu activity records walked\n",
			(unsigned long long)atomic_load(&records_walked));
}

static void start(void)
{
	char why[512] = "";

	if (atomic_exchange(&started, true))
		return;
	if (gw_cupti_load(getenv("GPUWHY_CUPTI_PATH"), why, sizeof(why)) < 0 ||
	    gw_cupti_subscribe(why, sizeof(why)) < 0) {
		fprintf(stderr, "cupti-floor: %s: not measuring\n", why);
		return;
	}
	if (gw_cupti_enable())
		fprintf(stderr, "cupti-floor: CUPTI refused some callbacks or activity kinds\n");
	subscribed_pid = getpid();
	atexit(at_exit);
}

/* As libgpuwhy.so: no CUDA or CUPTI call here (CUPTI may initialize the driver before the
 * program set CUDA_VISIBLE_DEVICES or forked); the driver calls InitializeInjection before
 * the first context, however CUDA is loaded. */
__attribute__((constructor)) static void floor_init(void)
{
	const char *injection = getenv("CUDA_INJECTION64_PATH");
	char *self = NULL, *named = injection ? realpath(injection, NULL) : NULL;
	Dl_info di;

	if (dladdr((void *)floor_init, &di) && di.dli_fname)
		self = realpath(di.dli_fname, NULL);
	if (injection && *injection && !(self && named && !strcmp(self, named)))
		fprintf(stderr,
			"cupti-floor: CUDA_INJECTION64_PATH=%s belongs to another tool: "
			"not measuring\n",
			injection);
	else if ((!injection || !*injection) && self)
		setenv("CUDA_INJECTION64_PATH", self, 1);
	free(self);
	free(named);
}

__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	start();
	return 1;
}
