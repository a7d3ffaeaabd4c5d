/* SPDX-License-Identifier: MIT */
/* The reader on cut, corrupt, foreign and future files, unknown records, and with its thread. */
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

static int count_records(const void *data, size_t size, enum gw_reader_mode mode,
			 struct gw_reader **ret)
{
	struct gw_record rec;
	int n = 0, k;

	k = gw_reader_open_memory_mode(data, size, mode, ret);
	if (k < 0)
		return k;
	while ((k = gw_reader_next(*ret, &rec)) > 0)
		n++;
	return k < 0 ? k : n;
}

/*
 * A trace of BATCHES frames of PER_BATCH records each, plus a last frame holding only the
 * footer (the writer frames on every flush), cut at every byte offset, read inline and with
 * the decompression thread. The frame boundaries come from zstd itself, so the expected count
 * at a cut is what the complete frames hold.
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

	for (size_t i = 0; i <= 2 * size + 1; i++) {
		enum gw_reader_mode mode = i % 2 ? GW_READER_THREADED : GW_READER_INLINE;
		size_t cut = i / 2;
		struct gw_reader *r = NULL;
		int want = 0, got;

		got = count_records(file, cut, mode, &r);
		if (cut < ends[0]) {
			assert_int_equal(got, -EBADMSG);
			assert_null(r);
			continue;
		}
		for (size_t f = 1; f < nframes; f++)
			if (ends[f] <= cut)
				want += f <= BATCHES ? PER_BATCH : 1;
		if (got != want)
			fail_msg("cut at %zu of %zu (mode %d): %d records, want %d", cut, size,
				 mode, got, want);
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

/* A valid header followed by damage: a record running past its frame, a LEB128 longer than
 * 64 bits, a stack deeper than the limit, each in a frame of its own, then a good frame. The
 * damaged frame is passed over (its records are lost), the good one after it is read: frames
 * decode alone. Bytes that are no zstd frame at all: passed over to the end. */
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
	/* a DROPS record: type, version 1, payload of 3 one-byte fields */
	static const uint8_t good[] = {GW_REC_DROPS, 1, 3, 5, 1, 7};
	uint8_t file[1024];
	struct gw_reader *r = NULL;
	struct gw_record rec;
	const char *why;
	size_t hlen, len;

	(void)state;
	hlen = make_file_header(file, sizeof(file), GW_FORMAT_VERSION, GW_FORMAT_VERSION);
	for (size_t i = 0; i < 2 * sizeof(cases) / sizeof(cases[0]); i++) {
		enum gw_reader_mode mode = i % 2 ? GW_READER_THREADED : GW_READER_INLINE;

		len = append_frame(file, hlen, sizeof(file), cases[i / 2].p, cases[i / 2].n);
		len = append_frame(file, len, sizeof(file), good, sizeof(good));
		assert_int_equal(gw_reader_open_memory_mode(file, len, mode, &r), 0);
		assert_int_equal(gw_reader_next(r, &rec), 1);
		assert_int_equal(rec.type, GW_REC_DROPS);
		assert_int_equal(rec.drops.count, 7);
		assert_int_equal(gw_reader_next(r, &rec), 0);
		assert_int_equal(gw_reader_skipped(r, &why), 1);
		assert_non_null(strstr(why, "bad record"));
		gw_reader_free(r);
	}
	/* bytes that are no zstd frame after the header: nothing to read, one stretch skipped */
	memset(file + hlen, 0x55, 64);
	assert_int_equal(gw_reader_open_memory(file, hlen + 64, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_int_equal(gw_reader_skipped(r, &why), 1);
	assert_non_null(strstr(why, "bad frame"));
	gw_reader_free(r);
	/* and the good frame found again after them */
	len = append_frame(file, hlen + 64, sizeof(file), good, sizeof(good));
	assert_int_equal(gw_reader_open_memory(file, len, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_DROPS);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_int_equal(gw_reader_skipped(r, NULL), 1);
	gw_reader_free(r);
	gw_reader_free(NULL);
}

/* Kernel records over FRAMES frames: frame 1 holds BIG_FRAME of them, more than the reader's
 * first frame buffer (it must grow), the others SMALL_FRAME; each frame ends with a NOTE. */
#define FRAMES	    5
#define BIG_FRAME   40000
#define SMALL_FRAME 300

static uint8_t *write_frames(size_t *size)
{
	struct gw_writer_options opt = {
		.flush_interval_ns = 3600ull * 1000000000ull,
		.thread_buffer_bytes = 16u << 20,
		.frame_bytes = 32u << 20,
	};
	struct gw_rec_header hdr;
	uint64_t x = 0x2545f4914f6cdd1dull, t = 1000000;
	char path[4096];
	uint8_t *file;

	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	for (int f = 0; f < FRAMES; f++) {
		int n = f == 1 ? BIG_FRAME : SMALL_FRAME;
		struct gw_rec_note note = {.time_ns = t, .level = 1};
		char text[32];

		for (int i = 0; i < n; i++) {
			struct gw_rec_kernel k = {.name_id = (uint64_t)(i % 97),
						  .grid_x = x % 4096};

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			k.correlation = (uint64_t)(f * BIG_FRAME + i + 1);
			k.start_ns = t += x % 5000;
			k.end_ns = t += 1000 + x % 3000;
			assert_true(gw_emit(GW_REC_KERNEL, &k));
		}
		snprintf(text, sizeof(text), "frame %d", f);
		note.text = (struct gw_bytes){(const uint8_t *)text, (uint32_t)strlen(text)};
		assert_true(gw_emit(GW_REC_NOTE, &note));
		gw_writer_flush(10ull * 1000000000ull);
	}
	assert_int_equal(gw_writer_stop(true, 0), 0);
	file = gw_test_read_file(path, size);
	unlink(path);
	return file;
}

/*
 * Reads the same bytes inline and threaded in lockstep: every call returns the same value,
 * record, error text and byte count, and the flags agree at the end. Returns the records read.
 */
static size_t assert_modes_agree(const uint8_t *data, size_t size, const char *what)
{
	struct gw_reader *a = NULL, *b = NULL, *c = NULL;
	struct gw_record ra, rb;
	size_t n = 0;
	int ka, kb;

	ka = gw_reader_open_memory_mode(data, size, GW_READER_INLINE, &a);
	kb = gw_reader_open_memory_mode(data, size, GW_READER_THREADED, &b);
	assert_int_equal(ka, kb);
	if (ka < 0)
		return 0;
	do {
		char reason[160];

		ka = gw_reader_next(a, &ra);
		snprintf(reason, sizeof(reason), "%s", gw_reader_strerror(ka));
		/* the reason is per thread: overwrite it, so b must set its own */
		assert_int_equal(gw_reader_open_memory(NULL, 0, &c), -EBADMSG);
		kb = gw_reader_next(b, &rb);
		if (ka != kb || strcmp(reason, gw_reader_strerror(kb)))
			fail_msg("%s, record %zu: inline %d (%s), threaded %d (%s)", what, n, ka,
				 reason, kb, gw_reader_strerror(kb));
		assert_int_equal(gw_reader_bytes_read(a), gw_reader_bytes_read(b));
		if (ka == 1) {
			assert_int_equal(ra.type, rb.type);
			assert_int_equal(ra.version, rb.version);
			gw_test_assert_record_equal(ra.type, &ra.api, &rb.api);
			n++;
		}
	} while (ka == 1);
	/* an error or the end stays */
	assert_int_equal(gw_reader_next(a, &ra), ka);
	assert_int_equal(gw_reader_next(b, &rb), ka);
	assert_int_equal(gw_reader_truncated(a), gw_reader_truncated(b));
	assert_int_equal(gw_reader_clean_exit(a), gw_reader_clean_exit(b));
	assert_int_equal(gw_reader_skipped(a, NULL), gw_reader_skipped(b, NULL));
	gw_reader_free(a);
	gw_reader_free(b);
	return n;
}

/* The threaded reader yields what the inline one does on the whole file, on cuts (inside and
 * at the ends of frames) and on a flipped byte anywhere (a corrupt frame, or a checksum error
 * when zstd decodes the damage), in every frame. */
static void test_threaded_matches_inline(void **state)
{
	size_t size, full, ends[FRAMES + 2], nframes = 0, pos;
	uint8_t *file, *copy;

	(void)state;
	file = write_frames(&size);
	full = assert_modes_agree(file, size, "whole file");
	/* every kernel, a note per frame, the footer */
	assert_int_equal(full, BIG_FRAME + (FRAMES - 1) * SMALL_FRAME + FRAMES + 1);

	pos = ZSTD_findFrameCompressedSize(file, size);
	while (!ZSTD_isError(pos) && pos < size && nframes < FRAMES + 2) {
		size_t z = ZSTD_findFrameCompressedSize(file + pos, size - pos);

		assert_false(ZSTD_isError(z));
		pos += z;
		ends[nframes++] = pos;
	}
	assert_int_equal(nframes, FRAMES + 1);
	for (size_t f = 0; f < nframes; f++) {
		assert_modes_agree(file, ends[f] - 1, "cut before a frame end");
		assert_modes_agree(file, ends[f], "cut at a frame end");
	}
	for (size_t step = 0; step < 64; step++)
		assert_modes_agree(file, size * step / 64 + step, "cut");

	copy = malloc(size);
	assert_non_null(copy);
	for (size_t step = 0; step < 96; step++) {
		size_t at = 40 + (size - 40) * step / 96;
		char what[64];

		memcpy(copy, file, size);
		copy[at] ^= (uint8_t)(0x5a + step);
		snprintf(what, sizeof(what), "byte %zu of %zu flipped", at, size);
		assert_modes_agree(copy, size, what);
	}
	free(copy);
	free(file);
}

/* A file read through the thread and freed at any point: mid-frame, between frames, after the
 * end, right after opening (the sanitizer builds see a leak or a race if the join is wrong). */
static void test_threaded_free_anywhere(void **state)
{
	static const size_t stops[] = {0, 1, SMALL_FRAME + 1, SMALL_FRAME + 5000, (size_t)-1};
	uint8_t *file;
	char path[4096];
	size_t size;
	int fd;

	(void)state;
	file = write_frames(&size);
	fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(write(fd, file, size), (ssize_t)size);
	close(fd);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		struct gw_reader *r = NULL;
		struct gw_record rec;
		size_t n = 0;
		int k = 1;

		assert_int_equal(gw_reader_open_mode(path, GW_READER_THREADED, &r), 0);
		while (n < stops[i] && (k = gw_reader_next(r, &rec)) > 0)
			n++;
		if (stops[i] == (size_t)-1) {
			assert_int_equal(k, 0);
			assert_int_equal(n, BIG_FRAME + (FRAMES - 1) * SMALL_FRAME + FRAMES + 1);
			assert_true(gw_reader_clean_exit(r));
			assert_int_equal(gw_reader_bytes_read(r), size);
		}
		gw_reader_free(r);
	}
	unlink(path);
	free(file);
}

/* Reads a whole file through each path (memory and file, inline and threaded): the records,
 * what the last call returned, and the corrupt frames passed over (their reason: a checksum). */
static void read_all_paths(const uint8_t *file, size_t size, int want_records, int want_end,
			   uint64_t want_skipped)
{
	char path[4096];
	int fd;

	fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(write(fd, file, size), (ssize_t)size);
	close(fd);
	for (int i = 0; i < 4; i++) {
		enum gw_reader_mode mode = i % 2 ? GW_READER_THREADED : GW_READER_INLINE;
		struct gw_reader *r = NULL;
		struct gw_record rec;
		int n = 0, k;

		if (i < 2)
			assert_int_equal(gw_reader_open_memory_mode(file, size, mode, &r), 0);
		else
			assert_int_equal(gw_reader_open_mode(path, mode, &r), 0);
		while ((k = gw_reader_next(r, &rec)) > 0) {
			/* a slow caller: the thread fills the ring, then checks checksums itself */
			if (n++ == 0 && mode == GW_READER_THREADED)
				usleep(50000);
		}
		if (n != want_records || k != want_end ||
		    gw_reader_skipped(r, NULL) != want_skipped)
			fail_msg("path %d: %d records then %d, %llu skipped; want %d then %d, %llu",
				 i, n, k, (unsigned long long)gw_reader_skipped(r, NULL),
				 want_records, want_end, (unsigned long long)want_skipped);
		if (want_skipped) {
			const char *why;

			gw_reader_skipped(r, &why);
			assert_non_null(strstr(why, "checksum"));
		}
		gw_reader_free(r);
	}
	unlink(path);
}

/*
 * Checksums: three one-note frames, a frame of incompressible NOTE text whose compressed size
 * is 2 MiB + 2 bytes (its checksum then straddles two of the file reader's 1 MiB reads), then
 * a small frame. Intact, all 7 records read; one byte flipped in the text or in the checksum,
 * the big frame fails its checksum before yielding anything, and the last frame is read all
 * the same.
 */
static void test_checksums(void **state)
{
	const size_t target = (2u << 20) + 2, cap = (3u << 20);
	uint8_t *file = malloc(cap), *recs = malloc(cap), *text = malloc(cap);
	size_t hlen, big = 0, len = 0, last = 600000;
	struct gw_codec_state cs;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	(void)state;
	assert_non_null(file);
	assert_non_null(recs);
	assert_non_null(text);
	assert_non_null(cc);
	for (size_t i = 0; i < cap; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		text[i] = (uint8_t)x;
	}
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
	hlen = make_file_header(file, cap, GW_FORMAT_VERSION, GW_FORMAT_VERSION);
	for (int i = 0; i < 3; i++) {
		struct gw_rec_note note = {.time_ns = 10 + (uint64_t)i, .level = 1};
		int k;

		note.text = (struct gw_bytes){(const uint8_t *)"before", 6};
		gw_codec_reset(&cs);
		k = gw_encode_record(&cs, GW_REC_NOTE, &note, recs, cap);
		assert_true(k > 0);
		big = ZSTD_compress2(cc, file + hlen, cap - hlen, recs, (size_t)k);
		assert_false(ZSTD_isError(big));
		hlen += big;
	}
	big = 0;
	/* raw blocks: the frame grows byte for byte with the last text, so this converges */
	for (int tries = 0; tries < 20 && big != target; tries++) {
		size_t n = 0;

		gw_codec_reset(&cs);
		for (int i = 0; i < 3; i++) {
			struct gw_rec_note note = {.time_ns = 100 + (uint64_t)i, .level = 1};
			int k;

			note.text = (struct gw_bytes){text + 760000 * i,
						      i < 2 ? 760000 : (uint32_t)last};
			k = gw_encode_record(&cs, GW_REC_NOTE, &note, recs + n, cap - n);
			assert_true(k > 0);
			n += (size_t)k;
		}
		big = ZSTD_compress2(cc, file + hlen, cap - hlen, recs, n);
		assert_false(ZSTD_isError(big));
		last += target - big;
	}
	assert_int_equal(big, target);
	{
		struct gw_rec_note note = {.time_ns = 900, .level = 2};
		size_t z;
		int k;

		note.text = (struct gw_bytes){(const uint8_t *)"after", 5};
		gw_codec_reset(&cs);
		k = gw_encode_record(&cs, GW_REC_NOTE, &note, recs, cap);
		assert_true(k > 0);
		z = ZSTD_compress2(cc, file + hlen + big, cap - hlen - big, recs, (size_t)k);
		assert_false(ZSTD_isError(z));
		len = hlen + big + z;
	}

	read_all_paths(file, len, 7, 0, 0);
	file[hlen + big - 1] ^= 0x10; /* the checksum's last byte */
	read_all_paths(file, len, 4, 0, 1);
	file[hlen + big - 1] ^= 0x10;
	file[hlen + big / 2] ^= 0x01; /* text in a raw block */
	read_all_paths(file, len, 4, 0, 1);

	ZSTD_freeCCtx(cc);
	free(text);
	free(recs);
	free(file);
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
		cmocka_unit_test(test_checksums),
		cmocka_unit_test_teardown(test_threaded_matches_inline, teardown),
		cmocka_unit_test_teardown(test_threaded_free_anywhere, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
