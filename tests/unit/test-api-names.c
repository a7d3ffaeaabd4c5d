/* SPDX-License-Identifier: MIT */
/* CUDA API names: version suffixes, and every row of the capture's table found by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api-names.h"

#define GW_MEM_0 0

static size_t base_of(const char *s)
{
	return gw_api_base_len(s, strlen(s));
}

static void version_suffixes(void **state)
{
	(void)state;
	assert_int_equal(base_of("cudaLaunchKernel_v7000"), strlen("cudaLaunchKernel"));
	assert_int_equal(base_of("cudaMemcpy_ptds_v7000"), strlen("cudaMemcpy_ptds"));
	assert_int_equal(base_of("cudaMallocAsync_v11020"), strlen("cudaMallocAsync"));
	assert_int_equal(base_of("__cudaLaunchKernel_v13000"), strlen("__cudaLaunchKernel"));
	/* driver names keep their _v2: it is part of the symbol */
	assert_int_equal(base_of("cuMemAlloc_v2"), strlen("cuMemAlloc_v2"));
	assert_int_equal(base_of("cuMemcpyHtoDAsync_v2_ptsz"), strlen("cuMemcpyHtoDAsync_v2_ptsz"));
	/* no suffix, or not one */
	assert_int_equal(base_of("cudaMemcpy"), strlen("cudaMemcpy"));
	assert_int_equal(base_of("f_v123"), strlen("f_v123"));
	assert_int_equal(base_of("_v1234"), 0);
	assert_int_equal(base_of("v1234"), strlen("v1234"));
	assert_int_equal(base_of(""), 0);
}

/* Every row of include/gpuwhy/api-table.def is found under its own name and without its suffix, with the
 * row's classification; a query is no call of its own, as in a capture. */
static void table_rows(void **state)
{
	static const struct {
		const char *name;
		uint8_t category, sync_kind, mem_kind, domain;
	} rows[] = {
#define GW_RT(fn, cat, sync, mem, args)	 {#fn, GW_API_##cat, GW_SYNC_##sync, GW_MEM_##mem, 2},
#define GW_DRV(fn, cat, sync, mem, args) {#fn, GW_API_##cat, GW_SYNC_##sync, GW_MEM_##mem, 1},
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
	};
	struct gw_api_class c;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *n = rows[i].name;

		if (rows[i].category == GW_API_QUERY) {
			assert_false(gw_api_classify(n, strlen(n), &c));
			assert_false(gw_api_classify(n, base_of(n), &c));
			continue;
		}
		assert_true(gw_api_classify(n, strlen(n), &c));
		assert_int_equal(c.category, rows[i].category);
		assert_int_equal(c.sync_kind, rows[i].sync_kind);
		assert_int_equal(c.mem_kind, rows[i].mem_kind);
		assert_int_equal(c.domain, rows[i].domain);
		assert_true(gw_api_classify(n, base_of(n), &c));
		assert_int_equal(c.category, rows[i].category);
		assert_int_equal(c.sync_kind, rows[i].sync_kind);
	}
}

static void lookups(void **state)
{
	struct gw_api_class c;

	(void)state;
	/* as Nsight Systems and CUPTI's callbacks write them */
	assert_true(gw_api_classify("cudaDeviceSynchronize", 21, &c));
	assert_int_equal(c.category, GW_API_SYNC);
	assert_int_equal(c.sync_kind, GW_SYNC_EXPLICIT);
	assert_true(gw_api_classify("cudaFree_v3020", 14, &c));
	assert_int_equal(c.sync_kind, GW_SYNC_IMPLICIT);
	assert_int_equal(c.mem_kind, GW_MEM_DEVICE);
	assert_true(gw_api_classify("cudaMemcpyAsync", 15, &c));
	assert_int_equal(c.category, GW_API_MEMCPY);
	assert_int_equal(c.sync_kind, GW_SYNC_NONE);
	/* a name's prefix or extension is another name */
	assert_false(gw_api_classify("cudaMemcpyAsyncX", 16, &c));
	assert_false(gw_api_classify("cudaMemcp", 9, &c));
	assert_false(gw_api_classify("cudaGetDevice_v3020", 19, &c));
	assert_false(gw_api_classify("", 0, &c));
	/* only len bytes are read */
	assert_true(gw_api_classify("cuLaunchKernelXYZ", 14, &c));
	assert_int_equal(c.category, GW_API_LAUNCH);
	/* nvcc 13's <<<>>> stub and a peer copy, as other tools record them */
	assert_true(gw_api_classify("__cudaLaunchKernel", 18, &c));
	assert_int_equal(c.category, GW_API_LAUNCH);
	assert_true(gw_api_classify("cudaMemcpyPeer_v4000", 20, &c));
	assert_int_equal(c.sync_kind, GW_SYNC_COPY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_suffixes),
		cmocka_unit_test(table_rows),
		cmocka_unit_test(lookups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
