/* SPDX-License-Identifier: MIT */
/* CUDA API functions by name, classified as the capture classifies them (include/gpuwhy/api-table.def). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"

/* What a CUDA API call is to the analysis. */
struct gw_api_class {
	uint8_t category;  /* enum gw_api_category */
	uint8_t sync_kind; /* enum gw_sync_kind */
	uint8_t mem_kind;  /* enum gw_mem_kind for allocations and frees, else 0 */
	uint8_t domain;	   /* CUpti_CallbackDomain: 1 driver, 2 runtime */
};

/*
 * Length of name[0, len) without a runtime API version suffix: "_v" and four or more digits
 * ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cudaMemcpy_ptds_v7000" -> "cudaMemcpy_ptds").
 * Driver names keep "_v2": it is part of the exported symbol (cuMemAlloc_v2). This is the name
 * CUPTI's callbacks give, and so the one gpuwhy's own traces carry.
 */
size_t gw_api_base_len(const char *name, size_t len);

/*
 * The class of the CUDA API function name[0, len) (with or without a version suffix, as
 * Nsight Systems, Kineto and CUPTI write it): true and *ret when the capture's table
 * (include/gpuwhy/api-table.def) has it. False for every other name: a call that neither issues
 * GPU work nor waits for it (include/gpuwhy/api-table.def holds every launch, copy, memset, wait,
 * allocation and free the real libcupti knows, or hooks/api-ignored.def says why not), and for
 * a stream or event query (the capture records none). A linear search of about 250 names:
 * callers that see a name many times cache the answer per name. Thread-safe.
 */
bool gw_api_classify(const char *name, size_t len, struct gw_api_class *ret);
