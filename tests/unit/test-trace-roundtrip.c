/* SPDX-License-Identifier: MIT */
/* Every record type through the real writer and back through the reader, field by field. */
#include <fcntl.h>

#include "trace-test-util.h"
#include "trace-reader.h"
#include "trace-writer.h"

#define PER_TYPE 12

/* Values at the edges of each LEB128 length and of the 64-bit range; consecutive fields and
 * records take different ones, so TIME/SEQ deltas jump both ways across the whole range. */
static const uint64_t patterns[] = {
	0,
	1,
	127,
	128,
	16383,
	16384,
	UINT32_MAX,
	1ull << 63,
	UINT64_MAX,
	UINT64_MAX - 1,
	0x0123456789abcdefull,
	5,
};
#define NPAT (sizeof(patterns) / sizeof(patterns[0]))

static uint8_t long_bytes[70000];
static uint64_t deep_ips[200];

static struct gw_bytes bytes_for(unsigned k)
{
	static const uint8_t with_nul[] = "kernel\0name\"\\\n";

	switch (k % 4) {
	case 0:
		return (struct gw_bytes){NULL, 0};
	case 1:
		return (struct gw_bytes){with_nul, sizeof(with_nul) - 1};
	case 2:
		return (struct gw_bytes){long_bytes, 256};
	default:
		return (struct gw_bytes){long_bytes, sizeof(long_bytes)};
	}
}

static struct gw_ips ips_for(unsigned k)
{
	static const uint32_t depths[] = {0, 1, 7, GW_MAX_STACK_DEPTH, 200};

	return (struct gw_ips){deep_ips, depths[k % 5]};
}

/* Record k of a type: every field set from the patterns, BYTES and IPS from the samples. */
static void fill(const struct gw_record_info *info, unsigned k, void *rec)
{
	memset(rec, 0, info->size);
	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		uint8_t *p = (uint8_t *)rec + f->offset;
		uint64_t v = patterns[(k * 5 + i) % NPAT];

		if (f->kind == GW_FIELD_BYTES) {
			struct gw_bytes b = bytes_for(k + i);

			memcpy(p, &b, sizeof(b));
		} else if (f->kind == GW_FIELD_IPS) {
			struct gw_ips s = ips_for(k + i);

			memcpy(p, &s, sizeof(s));
		} else {
			memcpy(p, &v, 8);
		}
	}
}

static bool is_data_type(unsigned type)
{
	return type != GW_REC_HEADER && type != GW_REC_FOOTER && gw_record_info(type);
}

static void roundtrip(size_t frame_bytes)
{
	/* room for everything: this test is about encoding, not about a writer falling behind */
	struct gw_writer_options opt = {
		.frame_bytes = frame_bytes,
		.zstd_level = 3,
		.thread_buffer_bytes = 8u << 20,
	};
	struct gw_rec_header hdr;
	struct gw_reader *r = NULL;
	struct gw_record rec;
	struct gw_writer_stats st;
	union {
		struct gw_record any;
		uint8_t raw[sizeof(struct gw_record)];
	} want;
	char path[4096];
	uint64_t emitted = 0, got = 0, reported_drops = 0;

	for (size_t i = 0; i < sizeof(long_bytes); i++)
		long_bytes[i] = (uint8_t)(i * 7 + (i >> 8));
	for (unsigned i = 0; i < 200; i++)
		deep_ips[i] = (i & 1) ? 0x7f0000001000ull + i * 0x40 : UINT64_MAX - i * 3;

	gw_test_header(&hdr);
	hdr.rank = INT64_MIN;
	hdr.start_realtime_ns = UINT64_MAX;
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_false(gw_emit(GW_REC_API, &want.any.api)); /* no writer yet */
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	assert_int_equal(gw_writer_start(&opt, &hdr), -EBUSY);
	for (unsigned type = 0; type < GW_REC_ID_LIMIT; type++) {
		if (!is_data_type(type))
			continue;
		for (unsigned k = 0; k < PER_TYPE; k++) {
			fill(gw_record_info(type), k, &want.any.header);
			assert_true(gw_emit(type, &want.any.header));
			emitted++;
			/* DROPS records emitted here stand for others' losses: the footer adds
			 * them up (modulo 2^64, as the counters are) */
			if (type == GW_REC_DROPS)
				reported_drops += want.any.drops.count;
		}
	}
	assert_int_equal(gw_writer_stop(true, GW_FOOTER_SIGNAL), 0);
	assert_false(gw_emit(GW_REC_API, &want.any.api));
	gw_writer_get_stats(&st);
	assert_int_equal(st.records, emitted);
	assert_int_equal(st.dropped, reported_drops);

	assert_int_equal(gw_reader_open(path, &r), 0);
	gw_test_assert_record_equal(GW_REC_HEADER, &hdr, gw_reader_header(r));
	for (unsigned type = 0; type < GW_REC_ID_LIMIT; type++) {
		if (!is_data_type(type))
			continue;
		for (unsigned k = 0; k < PER_TYPE; k++) {
			assert_int_equal(gw_reader_next(r, &rec), 1);
			assert_int_equal(rec.type, type);
			assert_int_equal(rec.version, gw_record_info(type)->version);
			fill(gw_record_info(type), k, &want.any.header);
			gw_test_assert_record_equal(type, &want.any.header, &rec.header);
			got++;
		}
	}
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_FOOTER);
	assert_int_equal(rec.footer.records, emitted);
	assert_int_equal(rec.footer.dropped, reported_drops);
	assert_int_equal(rec.footer.flags, GW_FOOTER_SIGNAL);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_true(gw_reader_clean_exit(r));
	assert_false(gw_reader_truncated(r));
	assert_int_equal(gw_reader_bytes_read(r), gw_reader_file_size(r));
	assert_int_equal(gw_reader_file_size(r), st.bytes_written);
	assert_int_equal(got, emitted);
	gw_reader_free(r);
	unlink(path);
}

static void test_roundtrip_one_frame(void **state)
{
	(void)state;
	roundtrip(0);
}

/* One record per frame: every TIME/SEQ cursor restarts at zero each time. */
static void test_roundtrip_frame_per_record(void **state)
{
	(void)state;
	roundtrip(1);
}

/* Without a clean stop there is no footer, and the reader says so. */
static void test_unclean_stop(void **state)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr;
	struct gw_rec_kernel k = {.start_ns = 10, .end_ns = 20, .correlation = 3};
	struct gw_reader *r = NULL;
	struct gw_record rec;
	char path[4096];

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	assert_true(gw_emit(GW_REC_KERNEL, &k));
	assert_int_equal(gw_writer_stop(false, 0), 0);
	assert_int_equal(gw_writer_stop(false, 0), -EINVAL);
	assert_int_equal(gw_reader_open(path, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	gw_test_assert_record_equal(GW_REC_KERNEL, &k, &rec.kernel);
	assert_int_equal(gw_reader_next(r, &rec), 0);
	assert_false(gw_reader_clean_exit(r));
	assert_true(gw_reader_truncated(r));
	gw_reader_free(r);
	unlink(path);
}

/* A file that cannot be written (disk full): start fails cleanly and owns the fd. */
static void test_disk_full(void **state)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	gw_test_header(&hdr);
	opt.fd = dup(fileno(f));
	fclose(f);
	assert_int_equal(gw_writer_start(&opt, &hdr), -ENOSPC);
	assert_int_equal(fcntl(opt.fd, F_GETFD), -1); /* closed by the writer */
	assert_false(gw_emit(GW_REC_NOTE, &(struct gw_rec_note){0}));
}

/* A failed assertion leaves the writer running: stop it so the next test starts clean. */
static int teardown(void **state)
{
	(void)state;
	gw_writer_stop(false, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_roundtrip_one_frame, teardown),
		cmocka_unit_test_teardown(test_roundtrip_frame_per_record, teardown),
		cmocka_unit_test_teardown(test_unclean_stop, teardown),
		cmocka_unit_test_teardown(test_disk_full, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
