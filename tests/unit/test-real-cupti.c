/* SPDX-License-Identifier: MIT */
/* include/gpuwhy/api-table.def against the real libcupti of the CUDA toolkit (no driver
 * needed): every row names the callback id CUPTI names so, and every launch, copy, memset,
 * synchronization, allocation and free CUPTI knows is hooked or on hooks/api-ignored.def with a
 * reason. */
#include <dlfcn.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cupti.h>

struct row {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	const char *name;
};

static const struct row rows[] = {
#define GW_RT(fn, cat, sync, mem, args)                                                            \
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##fn, #fn},
#define GW_DRV(fn, cat, sync, mem, args)                                                           \
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn, #fn},
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
};

#define GW_WHY(key, text) static const char why_##key[] = text;
#define GW_IGNORED(name, key)
#include "api-ignored.def"
#undef GW_WHY
#undef GW_IGNORED

static const struct {
	const char *name;
	const char *why;
} ignored[] = {
#define GW_WHY(key, text)
#define GW_IGNORED(name, key) {#name, why_##key},
#include "api-ignored.def"
#undef GW_WHY
#undef GW_IGNORED
	{NULL, NULL},
};

static __typeof__(cuptiGetCallbackName) *callback_name;
static __typeof__(cuptiGetVersion) *get_version;

/* The CUPTI call names that issue or wait for GPU work, allocate or free (probes/coverage.c of
 * the review that asked for this test): what a new CUDA must not add unnoticed. */
#define WATCHED                                                                                    \
	"Launch|Memcpy|Memset|Synchronize|Malloc|MemAlloc|Free|EventRecord|WaitEvent|StreamQuery|" \
	"EventQuery|MemHostAlloc|HostAlloc|MemCreate|MemRelease|MemMap|HostRegister|Prefetch|"     \
	"WaitValue|AddCallback|BatchMemOp"

static bool watched(const regex_t *re, const char *name)
{
	if (regexec(re, name, 0, NULL, 0))
		return false;
	/* building a graph is not running one; getters, setters and occupancy queries do nothing */
	if (strstr(name, "Graph") && !strstr(name, "GraphLaunch"))
		return false;
	return !strstr(name, "Get") && !strstr(name, "Set") && !strstr(name, "Occupancy") &&
	       !strstr(name, "Attribute");
}

static bool hooked(CUpti_CallbackDomain domain, const char *name)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].domain == domain && !strcmp(rows[i].name, name))
			return true;
	return false;
}

static const char *ignore_reason(const char *name)
{
	for (size_t i = 0; ignored[i].name; i++)
		if (!strcmp(ignored[i].name, name))
			return ignored[i].why;
	return NULL;
}

/* Every row resolves, in this CUPTI, to the name the table gives it. */
static void test_rows_named_alike(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *name = NULL;
		CUptiResult r = callback_name(rows[i].domain, rows[i].cbid, &name);

		if (r != CUPTI_SUCCESS || !name || strcmp(name, rows[i].name)) {
			print_error("%s cbid %u (%s): CUPTI says %d %s\n",
				    rows[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime"
										  : "driver",
				    rows[i].cbid, rows[i].name, (int)r, name ? name : "-");
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Every watched id CUPTI knows is hooked or ignored for a reason; no id is both. */
static void test_every_watched_id_decided(void **state)
{
	static const struct {
		CUpti_CallbackDomain domain;
		unsigned int size;
	} domains[] = {
		{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
		{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
	};
	unsigned int seen = 0, undecided = 0, both = 0;
	regex_t re;

	(void)state;
	assert_int_equal(regcomp(&re, WATCHED, REG_EXTENDED | REG_NOSUB), 0);
	for (size_t d = 0; d < sizeof(domains) / sizeof(domains[0]); d++) {
		/* ids past the headers' count too: a newer libcupti than its headers */
		for (unsigned int id = 1; id < domains[d].size + 512; id++) {
			const char *name = NULL;
			bool in_table;

			if (callback_name(domains[d].domain, id, &name) != CUPTI_SUCCESS || !name ||
			    !watched(&re, name))
				continue;
			seen++;
			in_table = hooked(domains[d].domain, name);
			if (!in_table && !ignore_reason(name)) {
				print_error("%s(%u): neither hooked (include/gpuwhy/api-table.def) "
					    "nor ignored with a reason (hooks/api-ignored.def)\n",
					    name, id);
				undecided++;
			}
			if (in_table && ignore_reason(name)) {
				print_error("%s: both hooked and ignored\n", name);
				both++;
			}
		}
	}
	regfree(&re);
	print_message("%u watched callback ids in this CUPTI\n", seen);
	assert_true(seen > 100);
	assert_int_equal(undecided, 0);
	assert_int_equal(both, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_named_alike),
		cmocka_unit_test(test_every_watched_id_decided),
	};
	const char *path = getenv("GW_REAL_CUPTI") ? getenv("GW_REAL_CUPTI") : GW_REAL_CUPTI;
	uint32_t version = 0;
	void *h;

	if (access(path, R_OK)) {
		printf("no CUDA toolkit libcupti at %s: skipped\n", path);
		return 77;
	}
	/* CUPTI loads no driver until it is subscribed: the names need none. */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("cannot load %s: %s\n", path, dlerror());
		return 1;
	}
	*(void **)&callback_name = dlsym(h, "cuptiGetCallbackName");
	*(void **)&get_version = dlsym(h, "cuptiGetVersion");
	if (!callback_name || !get_version || get_version(&version) != CUPTI_SUCCESS) {
		printf("%s lacks cuptiGetCallbackName or cuptiGetVersion\n", path);
		return 1;
	}
	printf("real CUPTI: %s, API version %u\n", path, version);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
