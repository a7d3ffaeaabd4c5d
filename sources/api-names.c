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
/* every row, whatever CUDA built gpuwhy: a trace may come from any */
#define GW_API_TABLE_BY_NAME
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
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
	struct gw_api_class c;

	/* A query is no call of its own in a capture either (it folds a polling loop into one
	 * SYNC record, by each query's answer, which imported traces do not carry). */
	if (!find(table, sizeof(table) / sizeof(table[0]), name, base, &c) ||
	    c.category == GW_API_QUERY)
		return false;
	*ret = c;
	return true;
}
