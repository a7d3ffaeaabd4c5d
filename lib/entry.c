/* SPDX-License-Identifier: MIT */
/* libgpuwhy.so's entry points: the preload constructor and destructor, and InitializeInjection. */
#include "lifecycle.h"

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
