/* SPDX-License-Identifier: MIT */
/*
 * libcupti-floor.so: what CUPTI itself costs a program, with nothing of gpuwhy's on top. It
 * loads and subscribes CUPTI through gpuwhy's own loader (hooks/cupti-loader.c), so it enables
 * exactly gpuwhy's callback ids and activity kinds and registers the same timestamp callback;
 * but its callback returns at once, and it only walks the activity buffers CUPTI hands back.
 * A run under it against a plain run is the floor any CUPTI-based tool pays on that program;
 * gpuwhy against it is gpuwhy's own share (bench-capture.sh, benchmarks/gpu/validate.py).
 *
 * Loaded like libgpuwhy.so: LD_PRELOAD (it subscribes in its constructor when libcudart is
 * already loaded, else it names itself in CUDA_INJECTION64_PATH) or CUDA_INJECTION64_PATH.
 * GPUWHY_CUPTI_PATH picks the CUPTI library as for gpuwhy. CUPTI_FLOOR_VERBOSE=1 prints the
 * records walked at exit. A benchmark tool, not part of gpuwhy's product.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subscriber.h"

#define BUFFER_BYTES (1u << 20) /* as gpuwhy's activity buffers */
#define BUFFER_ALIGN 8

static atomic_bool started;
static _Atomic uint64_t records_walked;

void CUPTIAPI gw_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	(void)domain;
	(void)cbid;
	(void)data;
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
	atexit(at_exit);
}

/* As libgpuwhy.so: CUPTI before the first CUDA context, so now when libcudart is loaded,
 * else at the driver's injection hook. */
__attribute__((constructor)) static void floor_init(void)
{
	const char *injection = getenv("CUDA_INJECTION64_PATH");
	char *self = NULL, *named = injection ? realpath(injection, NULL) : NULL;
	Dl_info di;

	if (dladdr((void *)floor_init, &di) && di.dli_fname)
		self = realpath(di.dli_fname, NULL);
	if (injection && self && named && !strcmp(self, named))
		; /* InitializeInjection will come */
	else if (injection || gw_cudart_loaded())
		start(); /* another tool owns the variable, or libcudart is here */
	else if (self)
		setenv("CUDA_INJECTION64_PATH", self, 0);
	free(self);
	free(named);
}

__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	start();
	return 1;
}
