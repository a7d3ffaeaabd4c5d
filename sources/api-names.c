/* SPDX-License-Identifier: MIT */
/* The capture's table of CUDA API calls (include/gpuwhy/api-table.def) looked up by function name. */
#include <string.h>

#include "api-names.h"

struct api_name {
	const char *name; /* CUPTI's callback id name, version suffix included */
	struct gw_api_class cls;
};

#define GW_MEM_0       0
/* CUpti_CallbackDomain */
#define DOMAIN_DRIVER  1
#define DOMAIN_RUNTIME 2

static const struct api_name table[] = {
#define GW_RT(fn, cat, sync, mem, args)                                                            \
	{#fn, {GW_API_##cat, GW_SYNC_##sync, GW_MEM_##mem, DOMAIN_RUNTIME}},
#define GW_DRV(fn, cat, sync, mem, args)                                                           \
	{#fn, {GW_API_##cat, GW_SYNC_##sync, GW_MEM_##mem, DOMAIN_DRIVER}},
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
};

/*
 * Calls that other tools' traces hold and the capture does not hook, each classified by the
 * table's own rules (a copy or memset without "Async" waits for the GPU). Launch forms first: a
 * kernel whose launch call is unknown loses its launch in the report.
 */
static const struct api_name extra[] = {
	/* nvcc 13's <<<>>> stub (CUPTI callback ids 505 and 506) */
	{"__cudaLaunchKernel_v13000", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"__cudaLaunchKernel_ptsz_v13000", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	/* the runtime's launch before CUDA 7, and the driver's legacy launches */
	{"cudaLaunch_v3020", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cudaLaunch_ptsz_v7000", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cuLaunch", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	{"cuLaunchGrid", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	{"cuLaunchGridAsync", {GW_API_LAUNCH, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	/* peer, array and 2D/3D copies and memsets */
	{"cudaMemcpyPeer_v4000", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpyPeerAsync_v4000", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpyToArray_v3020", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpyFromArray_v3020", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpy2DToArray_v3020", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpy2DFromArray_v3020", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpy2DToArrayAsync_v3020", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cudaMemcpy2DFromArrayAsync_v3020", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cuMemcpyPeer", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_DRIVER}},
	{"cuMemcpyPeerAsync", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	{"cuMemcpy2D_v2", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_DRIVER}},
	{"cuMemcpy2DAsync_v2", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	{"cuMemcpy3D_v2", {GW_API_MEMCPY, GW_SYNC_COPY, 0, DOMAIN_DRIVER}},
	{"cuMemcpy3DAsync_v2", {GW_API_MEMCPY, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
	{"cudaMemset2D_v3020", {GW_API_MEMSET, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemset3D_v3020", {GW_API_MEMSET, GW_SYNC_COPY, 0, DOMAIN_RUNTIME}},
	{"cudaMemset2DAsync_v3020", {GW_API_MEMSET, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cudaMemset3DAsync_v3020", {GW_API_MEMSET, GW_SYNC_NONE, 0, DOMAIN_RUNTIME}},
	{"cuMemsetD16_v2", {GW_API_MEMSET, GW_SYNC_COPY, 0, DOMAIN_DRIVER}},
	{"cuMemsetD16Async", {GW_API_MEMSET, GW_SYNC_NONE, 0, DOMAIN_DRIVER}},
};

size_t gw_api_base_len(const char *name, size_t len)
{
	size_t digits = 0;

	while (digits < len && name[len - 1 - digits] >= '0' && name[len - 1 - digits] <= '9')
		digits++;
	if (digits >= 4 && len >= digits + 2 && name[len - digits - 1] == 'v' &&
	    name[len - digits - 2] == '_')
		return len - digits - 2;
	return len;
}

static bool find(const struct api_name *v, size_t n, const char *name, size_t base,
		 struct gw_api_class *ret)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i].name);

		if (gw_api_base_len(v[i].name, l) == base && memcmp(v[i].name, name, base) == 0) {
			*ret = v[i].cls;
			return true;
		}
	}
	return false;
}

bool gw_api_classify(const char *name, size_t len, struct gw_api_class *ret)
{
	size_t base = gw_api_base_len(name, len);

	return find(table, sizeof(table) / sizeof(table[0]), name, base, ret) ||
	       find(extra, sizeof(extra) / sizeof(extra[0]), name, base, ret);
}
