/* SPDX-License-Identifier: MIT */
/* The capture's table of CUDA API calls (include/gpuwhy/api-table.def) looked up by function name. */
#include <pthread.h>
#include <stdint.h>
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

/* Each row's name without its version suffix, measured once: a lookup compares lengths and
 * first bytes before any text (an imported trace classifies every runtime call it holds). */
#define N_ROWS (sizeof(table) / sizeof(table[0]))
static uint16_t base_lens[N_ROWS];
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void measure_bases(void)
{
	for (size_t i = 0; i < N_ROWS; i++)
		base_lens[i] = (uint16_t)gw_api_base_len(table[i].name, strlen(table[i].name));
}

static bool find(const char *name, size_t base, struct gw_api_class *ret)
{
	pthread_once(&base_once, measure_bases);
	for (size_t i = 0; i < N_ROWS; i++) {
		if (base_lens[i] == base && table[i].name[0] == name[0] &&
		    memcmp(table[i].name, name, base) == 0) {
			*ret = table[i].cls;
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
	if (!base || !find(name, base, &c) || c.category == GW_API_QUERY)
		return false;
	*ret = c;
	return true;
}
