/* SPDX-License-Identifier: MIT */
/* The rows of include/gpuwhy/api-table.def as data: what the subscriber enables (also in the CUPTI-only
 * floor benchmark, which enables exactly what gpuwhy does) and what the doc test reads. */
#include <gpuwhy/trace-format.h>

#include "subscriber.h"

const struct gw_api_row gw_api_rows[] = {
#define GW_RT(fn, cat, sync, mem, args)                                                            \
	{CUPTI_CB_DOMAIN_RUNTIME_API,                                                              \
	 CUPTI_RUNTIME_TRACE_CBID_##fn,                                                            \
	 #fn,                                                                                      \
	 GW_API_##cat,                                                                             \
	 GW_SYNC_##sync,                                                                           \
	 GW_MEM_##mem},
#define GW_DRV(fn, cat, sync, mem, args)                                                           \
	{CUPTI_CB_DOMAIN_DRIVER_API,                                                               \
	 CUPTI_DRIVER_TRACE_CBID_##fn,                                                             \
	 #fn,                                                                                      \
	 GW_API_##cat,                                                                             \
	 GW_SYNC_##sync,                                                                           \
	 GW_MEM_##mem},
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
};

const unsigned gw_api_rows_count = sizeof(gw_api_rows) / sizeof(gw_api_rows[0]);
