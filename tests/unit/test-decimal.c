/* SPDX-License-Identifier: MIT */
/* JSON number text to integers: exact where a double is not, rounding, range, malformed text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "decimal.h"

static int parse(const char *s, unsigned scale, bool exact, int64_t *v)
{
	return gw_decimal_parse(s, strlen(s), scale, exact, v);
}

static void expect_parsed(const char *s, unsigned scale, int64_t want)
{
	int64_t v = -1;

	assert_int_equal(parse(s, scale, false, &v), 0);
	assert_true(v == want);
}

/* Epoch microseconds with a fraction: 17 significant digits, more than a double holds. */
static void test_exact_timestamps(void **state)
{
	(void)state;
	expect_parsed("1712195495505543.2", 3, 1712195495505543200);
	expect_parsed("1707417525512145", 3, 1707417525512145000);
	expect_parsed("1419247333072.495", 3, 1419247333072495);
	expect_parsed("1707417525512145.123", 3, 1707417525512145123);
	expect_parsed("0.001", 3, 1);
	expect_parsed("0", 3, 0);
	expect_parsed("-0", 3, 0);
	expect_parsed("12", 0, 12);
}

/* Epoch microseconds with nanoseconds fill all 19 digits an int64_t has: any value up to
 * INT64_MAX, written as µs with three decimals, comes back exactly, either sign. */
static void test_nineteen_digits(void **state)
{
	char text[32];
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	expect_parsed("9223372036854775.807", 3, INT64_MAX);
	expect_parsed("-9223372036854775.808", 3, INT64_MIN);
	expect_parsed("1712195495519689.047", 3, 1712195495519689047);
	expect_parsed("999999999999999999", 0, 999999999999999999);
	for (int i = 0; i < 10000; i++) {
		int64_t want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		want = (int64_t)(x >> (1 + i % 40)) * (i & 1 ? -1 : 1);
		snprintf(text, sizeof(text), "%s%llu.%03llu", want < 0 ? "-" : "",
			 (unsigned long long)(want < 0 ? -want : want) / 1000,
			 (unsigned long long)(want < 0 ? -want : want) % 1000);
		expect_parsed(text, 3, want);
	}
}

/* Beyond nanoseconds: half away from zero, and digits past the 19th only break ties. */
static void test_rounding(void **state)
{
	(void)state;
	expect_parsed("1.0004", 3, 1000);
	expect_parsed("1.0005", 3, 1001);
	expect_parsed("-1.0005", 3, -1001);
	expect_parsed("0.0004999999999999999999999", 3, 0);
	expect_parsed("2.00050000000000000000001", 3, 2001);
	expect_parsed("1e-30", 3, 0);
	expect_parsed("1.5e3", 0, 1500);
	expect_parsed("15E-1", 3, 1500);
	expect_parsed("123456789012345678901234567890e-20", 3, 1234567890123);
}

static void test_whole_numbers(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(parse("7.0", 0, true, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(parse("7.5", 0, true, &v), -EDOM);
	assert_int_equal(parse("1e-1", 0, true, &v), -EDOM);
	assert_int_equal(parse("2e2", 0, true, &v), 0);
	assert_int_equal(v, 200);
}

static void test_range(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(parse("9223372036854775807", 0, true, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(parse("-9223372036854775808", 0, true, &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(parse("9223372036854775808", 0, true, &v), -ERANGE);
	assert_int_equal(parse("9223372036854775.808", 3, false, &v), -ERANGE);
	assert_int_equal(parse("1e400", 3, false, &v), -ERANGE);
	assert_int_equal(parse("1e99999999999999999999", 0, false, &v), -ERANGE);
	assert_int_equal(parse("99999999999999999999999999999999999999", 3, false, &v), -ERANGE);
	assert_int_equal(parse("0e99999999999", 3, false, &v), 0);
	assert_int_equal(v, 0);
}

static void test_not_numbers(void **state)
{
	static const char *const bad[] = {"",	"-",  "+",    ".5",  "5.",  "1e",  "1e+",  "0x10",
					  "1 ", " 1", "1..2", "nan", "inf", "--1", "1e5.5"};
	int64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], 3, false, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_timestamps),
		cmocka_unit_test(test_nineteen_digits),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_whole_numbers),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_not_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
