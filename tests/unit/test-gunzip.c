/* SPDX-License-Identifier: MIT */
/* gzip files decompressed ahead and inline: the same bytes, members back to back, a cut file,
 * corrupt data, a reader that stops early. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "gunzip.h"

/* n bytes of text that compresses, but not to nothing: numbered lines */
static uint8_t *make_text(size_t n)
{
	uint8_t *t = malloc(n);
	size_t at = 0;

	assert_non_null(t);
	for (unsigned line = 0; at < n; line++) {
		char buf[64];
		int len = snprintf(buf, sizeof(buf), "{\"ts\": %u, \"x\": %u},\n", line * 7919u,
				   (line * 2654435761u) >> 7);

		for (int i = 0; i < len && at < n; i++)
			t[at++] = (uint8_t)buf[i];
	}
	return t;
}

/* One gzip member of data, appended to out (grown). */
static void gzip_member(const uint8_t *data, size_t n, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = compressBound(n) + 64;

	*out = realloc(*out, *out_len + cap);
	assert_non_null(*out);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
			 Z_OK);
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)n;
	z.next_out = *out + *out_len;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len += cap - z.avail_out;
	deflateEnd(&z);
}

/* A file holding bytes, open for reading at its start (already unlinked). */
static int file_of(const uint8_t *bytes, size_t n)
{
	char path[] = "/tmp/gw-gunzip-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, bytes, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

struct result {
	uint8_t *data;
	size_t len;
	enum gw_gunzip_state state;
	int err;
	uint64_t file_read;
	char what[160];
};

/* Everything the file gives, up to max bytes (then the reader stops early). */
static struct result read_all(const uint8_t *gz, size_t gz_len, bool ahead, size_t max)
{
	struct result r = {0};
	struct gw_gunzip *g;
	int fd = file_of(gz, gz_len);

	assert_int_equal(gw_gunzip_open(fd, ahead, &g), 0);
	for (;;) {
		struct gw_gunzip_chunk c;

		gw_gunzip_next(g, &c);
		r.data = realloc(r.data, r.len + c.len + 1);
		assert_non_null(r.data);
		memcpy(r.data + r.len, c.data, c.len);
		r.len += c.len;
		r.state = c.state;
		r.err = c.err;
		r.file_read = c.file_read;
		snprintf(r.what, sizeof(r.what), "%s", c.what);
		if (c.state != GW_GUNZIP_MORE || r.len >= max)
			break;
	}
	gw_gunzip_free(g);
	close(fd);
	return r;
}

/* Several MB (the ring of four 256 KiB chunks goes round many times), in two members. */
static void test_same_bytes(void **state)
{
	size_t n = 5 * 1024 * 1024 + 12345, gz_len = 0;
	uint8_t *text = make_text(n), *gz = NULL;

	(void)state;
	gzip_member(text, n / 3, &gz, &gz_len);
	gzip_member(text + n / 3, n - n / 3, &gz, &gz_len);
	for (int ahead = 0; ahead <= 1; ahead++) {
		struct result r = read_all(gz, gz_len, ahead, SIZE_MAX);

		assert_int_equal(r.state, GW_GUNZIP_END);
		assert_int_equal(r.len, n);
		assert_memory_equal(r.data, text, n);
		assert_int_equal(r.file_read, gz_len);
		free(r.data);
	}
	free(text);
	free(gz);
}

/* Cut in the middle: the bytes before the cut, then where it was cut. */
static void test_cut(void **state)
{
	size_t n = 1024 * 1024, gz_len = 0;
	uint8_t *text = make_text(n), *gz = NULL;

	(void)state;
	gzip_member(text, n, &gz, &gz_len);
	for (int ahead = 0; ahead <= 1; ahead++) {
		struct result r = read_all(gz, gz_len / 2, ahead, SIZE_MAX);
		char want[64];

		assert_int_equal(r.state, GW_GUNZIP_CUT);
		assert_true(r.len > 0 && r.len < n);
		assert_memory_equal(r.data, text, r.len);
		snprintf(want, sizeof(want), "byte %zu: the gzip data ends early", gz_len / 2);
		assert_non_null(strstr(r.what, want));
		free(r.data);
	}
	free(text);
	free(gz);
}

/* Corrupt deflate data: an error naming the byte, never a hang or a crash; and trailing
 * bytes that are no gzip member are ignored. */
static void test_corrupt_and_trailing(void **state)
{
	size_t n = 300000, gz_len = 0;
	uint8_t *text = make_text(n), *gz = NULL;

	(void)state;
	gzip_member(text, n, &gz, &gz_len);
	gz = realloc(gz, gz_len + 4);
	memcpy(gz + gz_len, "\n\n\n\n", 4); /* trailing garbage after the member */
	for (int ahead = 0; ahead <= 1; ahead++) {
		struct result r = read_all(gz, gz_len + 4, ahead, SIZE_MAX);

		assert_int_equal(r.state, GW_GUNZIP_END);
		assert_int_equal(r.len, n);
		free(r.data);
	}
	memset(gz + 20, 0xff, 64); /* inside the deflate data */
	for (int ahead = 0; ahead <= 1; ahead++) {
		struct result r = read_all(gz, gz_len, ahead, SIZE_MAX);

		assert_int_equal(r.state, GW_GUNZIP_CORRUPT);
		assert_int_equal(r.err, -EBADMSG);
		assert_non_null(strstr(r.what, "corrupt gzip data"));
		free(r.data);
	}
	free(text);
	free(gz);
}

/* The reader stops after the first chunk, with the thread still decompressing ahead: freeing
 * stops it (a hang here is the test's timeout). */
static void test_stop_early(void **state)
{
	size_t n = 8 * 1024 * 1024, gz_len = 0;
	uint8_t *text = make_text(n), *gz = NULL;

	(void)state;
	gzip_member(text, n, &gz, &gz_len);
	for (int i = 0; i < 20; i++) {
		struct result r = read_all(gz, gz_len, true, 1);

		assert_int_equal(r.state, GW_GUNZIP_MORE);
		assert_memory_equal(r.data, text, r.len);
		free(r.data);
	}
	free(text);
	free(gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_corrupt_and_trailing),
		cmocka_unit_test(test_stop_early),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
