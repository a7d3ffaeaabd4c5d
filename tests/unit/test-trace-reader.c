/* SPDX-License-Identifier: MIT */
/* The reader on cut, corrupt, foreign and future files, and on records it does not know. */
#include <zstd.h>

#include "trace-test-util.h"
#include "trace-reader.h"
#include "trace-writer.h"

#define BATCHES	  4
#define PER_BATCH 5

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A file header built by hand from the format description: returns its length. */
static size_t make_file_header(uint8_t *buf, size_t cap, uint32_t version, uint64_t hdr_version)
{
	struct gw_codec_state cs;
	struct gw_rec_header h;
	int n;

	gw_test_header(&h);
	h.format_version = hdr_version;
	gw_codec_reset(&cs);
	n = gw_encode_record(&cs, GW_REC_HEADER, &h, buf + 20, cap - 20);
	assert_true(n > 0);
	put_le32(buf, GW_SKIPPABLE_MAGIC);
	put_le32(buf + 4, GW_FILE_MAGIC_LEN + 4 + (uint32_t)n);
	memcpy(buf + 8, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN);
	put_le32(buf + 16, version);
	return 20 + (size_t)n;
}

/* Appends one zstd frame of the given record bytes. */
static size_t append_frame(uint8_t *buf, size_t at, size_t cap, const uint8_t *src, size_t n)
{
	size_t z = ZSTD_compress(buf + at, cap - at, src, n, 3);

	assert_false(ZSTD_isError(z));
	return at + z;
}

static int count_records(const void *data, size_t size, struct gw_reader **ret)
{
	struct gw_record rec;
	int n = 0, k;

	k = gw_reader_open_memory(data, size, ret);
	if (k < 0)
		return k;
	while ((k = gw_reader_next(*ret, &rec)) > 0)
		n++;
	return k < 0 ? k : n;
}

/*
 * A trace of BATCHES frames of PER_BATCH records each, plus a last frame holding only the
 * footer (the writer frames on every flush), cut at every byte offset. The frame boundaries
 * come from zstd itself, so the expected count at a cut is what the complete frames hold.
 */
static void test_cut_everywhere(void **state)
{
	struct gw_writer_options opt = {.flush_interval_ns = 3600ull * 1000000000ull};
	size_t ends[BATCHES + 2], nframes = 0, size, pos;
	struct gw_rec_header hdr;
	char path[4096];
	uint8_t *file;

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	for (int b = 0; b < BATCHES; b++) {
		for (int i = 0; i < PER_BATCH; i++) {
			struct gw_rec_kernel k = {
				.correlation = (uint64_t)(b * PER_BATCH + i + 1),
				.start_ns = 1000000ull + 3000ull * (uint64_t)(b * PER_BATCH + i),
				.end_ns = 1002000ull + 3000ull * (uint64_t)(b * PER_BATCH + i),
				.name_id = 7,
			};

			assert_true(gw_emit(GW_REC_KERNEL, &k));
		}
		gw_writer_flush(10ull * 1000000000ull);
	}
	assert_int_equal(gw_writer_stop(true, 0), 0);
	file = gw_test_read_file(path, &size);
	unlink(path);

	/* the file header is a skippable frame, then the data frames */
	pos = ZSTD_findFrameCompressedSize(file, size);
	assert_false(ZSTD_isError(pos));
	ends[nframes++] = pos;
	while (pos < size) {
		size_t z = ZSTD_findFrameCompressedSize(file + pos, size - pos);

		assert_false(ZSTD_isError(z));
		pos += z;
		assert_true(nframes < BATCHES + 2);
		ends[nframes++] = pos;
	}
	assert_int_equal(nframes, BATCHES + 2);

	for (size_t cut = 0; cut <= size; cut++) {
		struct gw_reader *r = NULL;
		int want = 0, got;

		got = count_records(file, cut, &r);
		if (cut < ends[0]) {
			assert_int_equal(got, -EBADMSG);
			assert_null(r);
			continue;
		}
		for (size_t f = 1; f < nframes; f++)
			if (ends[f] <= cut)
				want += f <= BATCHES ? PER_BATCH : 1;
		if (got != want)
			fail_msg("cut at %zu of %zu: %d records, want %d", cut, size, got, want);
		assert_int_equal(gw_reader_truncated(r), cut != size);
		assert_int_equal(gw_reader_clean_exit(r), cut == size);
		gw_reader_free(r);
	}
	free(file);
}

/* A record type this reader does not know is skipped by its length; a newer version of a
 * known record with extra trailing bytes is read; an older, shorter one reads 0 for the rest. */
static void test_unknown_and_versions(void **state)
{
	uint8_t file[4096], recs[1024], *p = recs;
	struct gw_codec_state cs;
	struct gw_rec_sync s = {.correlation = 9, .start_ns = 500, .end_ns = 800, .type = 3};
	struct gw_rec_drops d = {.time_ns = 900, .source = GW_DROP_CUPTI, .count = 17};
	struct gw_reader *r = NULL;
	struct gw_record rec;
	size_t len;
	int n;

	(void)state;
	len = make_file_header(file, sizeof(file), GW_FORMAT_VERSION, GW_FORMAT_VERSION);

	/* type 200, unknown: 3 payload bytes */
	*p++ = 200;
	*p++ = 1;
	*p++ = 3;
	*p++ = 0xff;
	*p++ = 0xff;
	*p++ = 0xff;
	/* SYNC version 2: its fields, then 2 bytes a newer writer appended */
	gw_codec_reset(&cs);
	n = gw_encode_record(&cs, GW_REC_SYNC, &s, p, sizeof(recs) - 16);
	assert_true(n > 3 && p[2] < 126);
	p[1] = 2;
	p[2] += 2;
	p += n;
	*p++ = 0x81;
	*p++ = 0x01;
	/* DROPS version 1 cut to its first two fields (time_ns, source): count reads as 0 */
	*p++ = GW_REC_DROPS;
	*p++ = 1;
	*p++ = 3;
	p = gw_put_uleb(p, gw_zigzag(900));
	*p++ = GW_DROP_CUPTI;
	len = append_frame(file, len, sizeof(file), recs, (size_t)(p - recs));

	assert_int_equal(gw_reader_open_memory(file, len, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_SYNC);
	assert_int_equal(rec.version, 2);
	gw_test_assert_record_equal(GW_REC_SYNC, &s, &rec.sync);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_DROPS);
	d.count = 0;
	gw_test_assert_record_equal(GW_REC_DROPS, &d, &rec.drops);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_true(gw_reader_truncated(r)); /* no footer */
	gw_reader_free(r);
}

static void test_future_version(void **state)
{
	uint8_t file[1024];
	struct gw_reader *r = NULL;
	size_t len;

	(void)state;
	len = make_file_header(file, sizeof(file), GW_FORMAT_VERSION + 1, GW_FORMAT_VERSION + 1);
	assert_int_equal(gw_reader_open_memory(file, len, &r), -EPROTONOSUPPORT);
	assert_null(r);
	assert_non_null(strstr(gw_reader_strerror(-EPROTONOSUPPORT), "newer"));
	/* the header record alone saying so is enough */
	len = make_file_header(file, sizeof(file), GW_FORMAT_VERSION, GW_FORMAT_VERSION + 1);
	assert_int_equal(gw_reader_open_memory(file, len, &r), -EPROTONOSUPPORT);
}

static void test_not_a_trace(void **state)
{
	static const char text[] = "just some text, compressed by zstd like any other file\n";
	uint8_t buf[4096] = {0};
	struct gw_reader *r = NULL;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char path[4096];
	size_t z;
	int fd;

	(void)state;
	/* empty, in memory and on disk */
	assert_int_equal(gw_reader_open_memory(buf, 0, &r), -EBADMSG);
	fd = gw_test_tmpfile(path, sizeof(path));
	close(fd);
	assert_int_equal(gw_reader_open(path, &r), -EBADMSG);
	unlink(path);
	assert_int_equal(gw_reader_open("/nonexistent/gpuwhy.trace", &r), -ENOENT);
	assert_non_null(strstr(gw_reader_strerror(-EBADMSG), "not a gpuwhy trace"));

	/* random bytes */
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	assert_int_equal(gw_reader_open_memory(buf, sizeof(buf), &r), -EBADMSG);

	/* a plain zstd file */
	z = ZSTD_compress(buf, sizeof(buf), text, sizeof(text) - 1, 3);
	assert_false(ZSTD_isError(z));
	assert_int_equal(gw_reader_open_memory(buf, z, &r), -EBADMSG);
	assert_null(r);
}

/* A valid header followed by damage: bad frame bytes, a record running past its frame, a
 * LEB128 longer than 64 bits, a stack deeper than the limit. Each is -EBADMSG, and stays so. */
static void test_corrupt_frames(void **state)
{
	static const uint8_t past_end[] = {GW_REC_API, 1, 40, 1, 2, 3};
	static const uint8_t long_leb[] = {GW_REC_NOTE, 1,    12,   0x80, 0x80, 0x80, 0x80, 0x80,
					   0x80,	0x80, 0x80, 0x80, 0x80, 0x01, 0x00};
	static const uint8_t deep[] = {GW_REC_STACK, 1, 4, 1, 0x81, 0x01, 0};
	const struct {
		const uint8_t *p;
		size_t n;
	} cases[] = {
		{past_end, sizeof(past_end)}, {long_leb, sizeof(long_leb)}, {deep, sizeof(deep)}};
	uint8_t file[1024];
	struct gw_reader *r = NULL;
	struct gw_record rec;
	size_t hlen, len;

	(void)state;
	hlen = make_file_header(file, sizeof(file), GW_FORMAT_VERSION, GW_FORMAT_VERSION);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = append_frame(file, hlen, sizeof(file), cases[i].p, cases[i].n);
		assert_int_equal(gw_reader_open_memory(file, len, &r), 0);
		assert_int_equal(gw_reader_next(r, &rec), -EBADMSG);
		assert_int_equal(gw_reader_next(r, &rec), -EBADMSG);
		gw_reader_free(r);
	}
	/* bytes that are no zstd frame after the header */
	memset(file + hlen, 0x55, 64);
	assert_int_equal(gw_reader_open_memory(file, hlen + 64, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), -EBADMSG);
	gw_reader_free(r);
	gw_reader_free(NULL);
}

static int teardown(void **state)
{
	(void)state;
	gw_writer_stop(false, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cut_everywhere, teardown),
		cmocka_unit_test(test_unknown_and_versions),
		cmocka_unit_test(test_future_version),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_corrupt_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
