/* SPDX-License-Identifier: MIT */
/* CUDA API calls by name, classified by hooks/api-table.def as gpuwhy's capture classifies them. */
#include <string.h>

#include "cuda-api.h"
#include "gpuwhy/trace-format.h"

static const struct {
	const char *name; /* CUPTI's callback name: "cudaLaunchKernel_v7000" */
	bool driver;
	uint8_t category, sync_kind;
} rows[] = {
#define GW_RT(fn, cat, sync, mem, args)	 {#fn, false, GW_API_##cat, GW_SYNC_##sync},
#define GW_DRV(fn, cat, sync, mem, args) {#fn, true, GW_API_##cat, GW_SYNC_##sync},
#include "api-table.def"
#undef GW_RT
#undef GW_DRV
};

/* True when a[0, an) equals the row name b with its "_v<digits>" parts left out. */
static bool same_unversioned(const char *a, size_t an, const char *b)
{
	size_t i = 0;

	while (*b) {
		if (b[0] == '_' && b[1] == 'v' && b[2] >= '0' && b[2] <= '9') {
			b += 2;
			while (*b >= '0' && *b <= '9')
				b++;
			continue;
		}
		if (i >= an || a[i] != *b)
			return false;
		i++;
		b++;
	}
	return i == an;
}

bool gw_cuda_api_lookup(const char *name, size_t len, bool driver, uint8_t *ret_category,
			uint8_t *ret_sync_kind)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].driver != driver)
			continue;
		if ((strlen(rows[i].name) == len && memcmp(rows[i].name, name, len) == 0) ||
		    same_unversioned(name, len, rows[i].name)) {
			*ret_category = rows[i].category;
			*ret_sync_kind = rows[i].sync_kind;
			return true;
		}
	}
	return false;
}
