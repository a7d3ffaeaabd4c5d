/* SPDX-License-Identifier: MIT */
/* GPUWHY_* settings: defaults, accepted spellings, invalid values, and the doc's table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

static void clear_env(void)
{
	for (unsigned i = 0; i < gw_settings_count; i++)
		unsetenv(gw_settings[i].name);
}

static void test_defaults(void **state)
{
	struct gw_config c;

	(void)state;
	clear_env();
	assert_int_equal(gw_config_from_env(&c, NULL), 0);
	assert_false(c.disable);
	assert_string_equal(c.output, "gpuwhy-%p.trace.zst");
	assert_true(c.stacks);
	assert_false(c.quiet);
	assert_int_equal(c.debug, 0);
	assert_null(c.cupti_path);
}

static void test_spellings(void **state)
{
	struct gw_config c;

	(void)state;
	clear_env();
	setenv("GPUWHY_DISABLE", "yes", 1);
	setenv("GPUWHY_STACKS", "OFF", 1);
	setenv("GPUWHY_QUIET", "True", 1);
	setenv("GPUWHY_DEBUG", "3", 1);
	setenv("GPUWHY_OUTPUT", "/tmp/t-%p-%r.zst", 1);
	setenv("GPUWHY_CUPTI_PATH", "/opt/libcupti.so.13", 1);
	assert_int_equal(gw_config_from_env(&c, NULL), 0);
	assert_true(c.disable);
	assert_false(c.stacks);
	assert_true(c.quiet);
	assert_int_equal(c.debug, 3);
	assert_string_equal(c.output, "/tmp/t-%p-%r.zst");
	assert_string_equal(c.cupti_path, "/opt/libcupti.so.13");
}

static void test_invalid_keeps_default(void **state)
{
	static const struct {
		const char *name, *value;
	} bad[] = {
		{"GPUWHY_STACKS", "maybe"}, {"GPUWHY_DEBUG", "-1"}, {"GPUWHY_DEBUG", "2x"},
		{"GPUWHY_OUTPUT", ""},	    {"GPUWHY_QUIET", "2"},
	};
	struct gw_config c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *invalid = NULL;

		clear_env();
		setenv(bad[i].name, bad[i].value, 1);
		assert_int_equal(gw_config_from_env(&c, &invalid), -EINVAL);
		assert_non_null(invalid);
		assert_string_equal(invalid, bad[i].name);
		/* Everything, the bad one included, is at its documented default. */
		assert_true(c.stacks);
		assert_int_equal(c.debug, 0);
		assert_false(c.quiet);
		assert_string_equal(c.output, "gpuwhy-%p.trace.zst");
	}
}

/* Every invalid setting is named, not only the last one read. */
static void test_invalid_all_named(void **state)
{
	const char *names[8];
	struct gw_config c;

	(void)state;
	clear_env();
	assert_int_equal(gw_config_invalid(names, 8), 0);
	setenv("GPUWHY_STACKS", "maybe", 1);
	setenv("GPUWHY_QUIET", "1", 1);
	setenv("GPUWHY_DEBUG", "x", 1);
	assert_int_equal(gw_config_from_env(&c, NULL), -EINVAL);
	/* in the table's order (settings.def), the valid GPUWHY_QUIET left out */
	assert_int_equal(gw_config_invalid(names, 8), 2);
	assert_string_equal(names[0], "GPUWHY_STACKS");
	assert_string_equal(names[1], "GPUWHY_DEBUG");
	assert_int_equal(gw_config_invalid(names, 1), 1);
	clear_env();
}

static void test_parse_bool(void **state)
{
	bool b = false;

	(void)state;
	assert_int_equal(gw_parse_bool("1", &b), 0);
	assert_true(b);
	assert_int_equal(gw_parse_bool("no", &b), 0);
	assert_false(b);
	b = true;
	assert_int_equal(gw_parse_bool("", &b), -EINVAL);
	assert_true(b);
	assert_int_equal(gw_parse_bool("yess", &b), -EINVAL);
}

static char *read_doc(void)
{
	FILE *f = fopen(GW_SOURCE_ROOT "/doc/capture.md", "r");
	static char buf[1 << 17];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The settings table and the hooked-API table are documented, row by row. */
static void test_doc_lists_tables(void **state)
{
	static const char *const apis[] = {
#define GW_RT(fn, cat, sync, mem, args)	 #fn,
#define GW_DRV(fn, cat, sync, mem, args) #fn,
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
	};
	const char *doc = read_doc();
	char needle[128];

	(void)state;
	assert_non_null(doc);
	assert_int_equal(gw_settings_count, 10);
	for (unsigned i = 0; i < gw_settings_count; i++) {
		snprintf(needle, sizeof(needle), "`%s`", gw_settings[i].name);
		if (!strstr(doc, needle))
			fail_msg("doc/capture.md does not document %s", gw_settings[i].name);
	}
	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
		snprintf(needle, sizeof(needle), "`%s`", apis[i]);
		if (!strstr(doc, needle))
			fail_msg("doc/capture.md does not list %s", apis[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_invalid_keeps_default),
		cmocka_unit_test(test_invalid_all_named),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_doc_lists_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
