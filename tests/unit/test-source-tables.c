/* SPDX-License-Identifier: MIT */
/* The sources' tables: the grouped sort gives exactly the plain sort's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables.h"

struct item {
	uint64_t start, end;
	uint32_t group;
	uint32_t seq; /* the order it was added in: equal keys must keep it */
};

static int cmp_item(const void *x, const void *y)
{
	const struct item *p = x, *q = y;

	if (p->group != q->group)
		return p->group < q->group ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->end > q->end ? -1 : p->end < q->end;
}

/* Both sorts over one list; the plain one is glibc's qsort, a stable merge sort here, so the
 * grouped one must agree to the last byte, ties and all. */
static void check(size_t n, uint32_t groups, unsigned shuffle_percent, uint64_t seed)
{
	struct gw_src_vec a = {0}, b = {0};
	uint64_t x = seed | 1, clock = 0;

	for (size_t i = 0; i < n; i++) {
		struct item *p = gw_src_vec_push(&a, sizeof(*p));

		assert_non_null(p);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p->group = (uint32_t)(x % groups);
		/* mostly in time order, as a trace's events are; some out of it, some tied */
		clock += x % 3;
		p->start = x % 100 < shuffle_percent ? clock - (x >> 40) % (clock + 1) : clock;
		p->end = p->start + (x >> 20) % 4;
		p->seq = (uint32_t)i;
	}
	/* b: a copy, as a vector of items */
	assert_true(gw_src_vec_append(&b, a.data, a.len * sizeof(struct item)) >= 0);
	b.len = a.len;
	b.cap = a.len;
	gw_src_vec_sort(&a, sizeof(struct item), cmp_item);
	gw_src_vec_sort_grouped(&b, sizeof(struct item), offsetof(struct item, group), cmp_item);
	assert_int_equal(a.len, b.len);
	if (n)
		assert_memory_equal(a.data, b.data, n * sizeof(struct item));
	free(a.data);
	free(b.data);
}

static void test_grouped_sort(void **state)
{
	(void)state;
	check(0, 1, 0, 1);
	check(10, 3, 50, 2);	   /* under the grouped path's threshold */
	check(5000, 1, 0, 3);	   /* one thread, sorted */
	check(5000, 4, 0, 4);	   /* threads interleaved, each sorted */
	check(5000, 4, 30, 5);	   /* some events out of order */
	check(5000, 7, 100, 6);	   /* no order at all */
	check(200, 100000, 10, 7); /* group numbers beyond the count: the plain sort */
	check(100000, 3, 5, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grouped_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
