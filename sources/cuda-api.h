/* SPDX-License-Identifier: MIT */
/* CUDA API calls by name, classified by hooks/api-table.def as gpuwhy's capture classifies them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The category (enum gw_api_category) and sync kind (enum gw_sync_kind) of the CUDA call
 * another profiler's trace names: "cudaLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync".
 * A name matches a row of hooks/api-table.def of its domain (driver or runtime) with or
 * without the row's version suffixes ("_v7000", "_v2"). Returns true for a call gpuwhy's own
 * capture records, false for one it does not (a trace import leaves those out too).
 */
bool gw_cuda_api_lookup(const char *name, size_t len, bool driver, uint8_t *ret_category,
			uint8_t *ret_sync_kind);
