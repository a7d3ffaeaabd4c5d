/* SPDX-License-Identifier: MIT */
/* libgpuwhy.so's entry points: the preload constructor and destructor, InitializeInjection, NVTX's
 * InitializeInjectionNvtx2, and the CUPTI calls of another client in the process, which it
 * interposes to say what they take. */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "lifecycle.h"
#include "nvtx.h"
#include "subscriber.h"

__attribute__((constructor)) static void preload_init(void)
{
	gw_lifecycle_preload();
}

__attribute__((destructor)) static void preload_fini(void)
{
	gw_lifecycle_exit();
}

/* The CUDA driver's injection entry point (CUDA_INJECTION64_PATH): called once, at CUDA
 * initialization, before the first context. Returns 1 always: 0 would make some drivers
 * abort CUDA initialization, and gpuwhy must never break the application. */
__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	gw_lifecycle_injection();
	return 1;
}

/* NVTX's injection entry point (NVTX_INJECTION64_PATH, which the constructor and `gpuwhy run`
 * set): called once by each NVTX instance of the process at its first NVTX call. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t));
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t))
{
	return gw_nvtx_attach(get);
}

/*
 * Another CUPTI client in the process (torch.profiler's Kineto, JAX's profiler) links libcupti
 * and calls these through the dynamic linker; preloaded, libgpuwhy.so comes first. Only
 * cuptiSubscribe is exclusive: re-registering the buffer callbacks takes every later GPU
 * record from gpuwhy, so the trace says so, then the call goes on to the process's libcupti
 * (gpuwhy's own calls go through its dlopen handle, never through these). Loaded through
 * CUDA_INJECTION64_PATH alone, the library is not in the global scope and these see nothing:
 * the flusher then infers a takeover from CUPTI's silence (hooks/cupti-activity.c).
 */
static const char *caller_of(const void *return_address)
{
	Dl_info di;
	const char *slash;

	if (!dladdr(return_address, &di) || !di.dli_fname)
		return NULL;
	slash = strrchr(di.dli_fname, '/');
	return slash ? slash + 1 : di.dli_fname;
}

/* The process's libcupti's function (the next definition after this library), else the one
 * of the libcupti gpuwhy loaded, else NULL. */
#define NEXT(fn) ((__typeof__(fn) *)next_of(#fn))
static void *next_of(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	return f ? f : gw_cupti_symbol(name);
}

#define EXPORT __attribute__((visibility("default")))

EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
			       CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	__typeof__(cuptiActivityRegisterCallbacks) *next = NEXT(cuptiActivityRegisterCallbacks);

	gw_cupti_foreign_call(GW_FOREIGN_BUFFERS, caller_of(__builtin_return_address(0)));
	return next ? next(funcBufferRequested, funcBufferCompleted) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	__typeof__(cuptiActivityRegisterTimestampCallback) *next =
		NEXT(cuptiActivityRegisterTimestampCallback);

	gw_cupti_foreign_call(GW_FOREIGN_TIMESTAMP, caller_of(__builtin_return_address(0)));
	return next ? next(funcTimestamp) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	static const CUpti_ActivityKind ours[] = {GW_CUPTI_ACTIVITY_KINDS};
	__typeof__(cuptiActivityDisable) *next = NEXT(cuptiActivityDisable);

	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (kind == ours[i])
			gw_cupti_foreign_call(GW_FOREIGN_DISABLE,
					      caller_of(__builtin_return_address(0)));
	return next ? next(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	__typeof__(cuptiFinalize) *next = NEXT(cuptiFinalize);

	gw_cupti_foreign_call(GW_FOREIGN_FINALIZE, caller_of(__builtin_return_address(0)));
	return next ? next() : CUPTI_ERROR_NOT_INITIALIZED;
}
