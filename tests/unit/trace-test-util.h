/* SPDX-License-Identifier: MIT */
/* Helpers shared by the trace tests: temp files, whole-file reads, record comparison. */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpuwhy/trace-codec.h"

/* A fresh temp file: its path in path (PATH_MAX), its fd returned (the writer takes it). */
static inline int gw_test_tmpfile(char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, size, "%s/gw-trace-test-XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

static inline uint8_t *gw_test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static inline void gw_test_header(struct gw_rec_header *h)
{
	static const char cmd[] = "app\0--flag";

	memset(h, 0, sizeof(*h));
	h->format_version = GW_FORMAT_VERSION;
	h->pid = 4242;
	h->ppid = 1;
	h->rank = -1;
	h->clock_id = 4;
	h->start_ns = 1000000000ull;
	h->capture_mode = GW_CAPTURE_CUPTI;
	h->host = (struct gw_bytes){(const uint8_t *)"node-7", 6};
	h->command = (struct gw_bytes){(const uint8_t *)cmd, sizeof(cmd) - 1};
}

/* Field-by-field equality of two records of one type, through the codec's table; IPS deeper
 * than GW_MAX_STACK_DEPTH in want compare by their innermost GW_MAX_STACK_DEPTH entries. */
static inline void gw_test_assert_record_equal(unsigned type, const void *want, const void *got)
{
	const struct gw_record_info *info = gw_record_info(type);

	assert_non_null(info);
	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		const uint8_t *a = (const uint8_t *)want + f->offset;
		const uint8_t *b = (const uint8_t *)got + f->offset;

		if (f->kind == GW_FIELD_BYTES) {
			struct gw_bytes x, y;

			memcpy(&x, a, sizeof(x));
			memcpy(&y, b, sizeof(y));
			assert_int_equal(x.len, y.len);
			if (x.len)
				assert_memory_equal(x.data, y.data, x.len);
		} else if (f->kind == GW_FIELD_IPS) {
			struct gw_ips x, y;
			uint32_t d;

			memcpy(&x, a, sizeof(x));
			memcpy(&y, b, sizeof(y));
			d = x.depth < GW_MAX_STACK_DEPTH ? x.depth : GW_MAX_STACK_DEPTH;
			assert_int_equal(d, y.depth);
			if (d)
				assert_memory_equal(x.ips, y.ips, 8 * (size_t)d);
		} else {
			uint64_t x, y;

			memcpy(&x, a, 8);
			memcpy(&y, b, 8);
			if (x != y)
				fail_msg("%s.%s: want %llu got %llu", info->lname, f->name,
					 (unsigned long long)x, (unsigned long long)y);
		}
	}
}
