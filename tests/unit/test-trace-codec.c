/* SPDX-License-Identifier: MIT */
/* The record codec against bytes worked out by hand from the format description. */
#include "trace-test-util.h"

static void test_leb128_and_zigzag(void **state)
{
	static const struct {
		uint64_t v;
		uint8_t bytes[10];
		size_t n;
	} cases[] = {
		{0, {0x00}, 1},
		{127, {0x7f}, 1},
		{128, {0x80, 0x01}, 2},
		{300, {0xac, 0x02}, 2},
		{16383, {0xff, 0x7f}, 2},
		{16384, {0x80, 0x80, 0x01}, 3},
		{UINT64_MAX, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
	};
	uint8_t buf[16];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const uint8_t *p = buf;
		uint64_t v;

		assert_int_equal(gw_put_uleb(buf, cases[i].v) - buf, cases[i].n);
		assert_memory_equal(buf, cases[i].bytes, cases[i].n);
		assert_int_equal(gw_get_uleb(&p, buf + cases[i].n, &v), 0);
		assert_int_equal(v, cases[i].v);
		assert_ptr_equal(p, buf + cases[i].n);
		/* one byte short: the value runs past the end */
		p = buf;
		if (cases[i].n > 1)
			assert_int_equal(gw_get_uleb(&p, buf + cases[i].n - 1, &v), -EBADMSG);
	}
	assert_int_equal(gw_zigzag(0), 0);
	assert_int_equal(gw_zigzag(-1), 1);
	assert_int_equal(gw_zigzag(1), 2);
	assert_int_equal(gw_zigzag(-2), 3);
	assert_int_equal(gw_zigzag(INT64_MAX), UINT64_MAX - 1);
	assert_int_equal(gw_zigzag(INT64_MIN), UINT64_MAX);
	assert_int_equal(gw_unzigzag(UINT64_MAX), INT64_MIN);
	assert_int_equal(gw_unzigzag(3), -2);
}

/*
 * Three DROPS records in one frame. Each is type 20, version 1, payload length, then the
 * payload: the change bitmap (bit 0 source, bit 1 count: the scalars that differ from the
 * previous DROPS, all zero at the frame start), time_ns as a delta from the type's time
 * cursor, then source and count when their bit is set.
 */
static void test_golden_drops(void **state)
{
	static const uint8_t want[] = {
		20, 1, 5, 0x03, 0xd8, 0x04, 0x03, 0x01, /* both set; time 300: zigzag 600 = 0x258 */
		20, 1, 5, 0x03, 0x13, 0x01, 0xac, 0x02, /* time -10: zigzag 19; count 300 */
		20, 1, 2, 0x00, 0x0a,			/* nothing changed; time +5: zigzag 10 */
	};
	struct gw_rec_drops a = {.time_ns = 300, .source = GW_DROP_WRITE, .count = 1};
	struct gw_rec_drops b = {.time_ns = 290, .source = GW_DROP_THREAD_BUFFER, .count = 300};
	struct gw_rec_drops c = {.time_ns = 295, .source = GW_DROP_THREAD_BUFFER, .count = 300};
	const struct gw_rec_drops *in[] = {&a, &b, &c};
	static const size_t sizes[] = {8, 8, 5};
	struct gw_codec_state enc, dec;
	struct gw_record rec;
	uint8_t buf[64];
	size_t n = 0, consumed;
	int k;

	(void)state;
	gw_codec_reset(&enc);
	for (size_t i = 0; i < 3; i++) {
		k = gw_encode_record(&enc, GW_REC_DROPS, in[i], buf + n, sizeof(buf) - n);
		assert_int_equal(k, sizes[i]);
		n += (size_t)k;
	}
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	gw_codec_reset(&dec);
	n = 0;
	for (size_t i = 0; i < 3; i++) {
		memset(&rec, 0xaa, sizeof(rec));
		assert_int_equal(
			gw_decode_record(&dec, want + n, sizeof(want) - n, &rec, &consumed), 1);
		assert_int_equal(consumed, sizes[i]);
		gw_test_assert_record_equal(GW_REC_DROPS, in[i], &rec.drops);
		n += consumed;
	}
}

/*
 * An API record's two TIME fields share the cursor: end_ns is coded against start_ns, and the
 * next record's start_ns against the previous end_ns. SEQ has its own cursor. API scalars are
 * numbered in list order: tid 0, category 1 ... kernel_name_id 14, grid_x 15, grid_y 16,
 * grid_z 17, block_x 18; a bitmap reaching bit 18 takes 3 LEB128 bytes.
 */
static void test_api_bitmap_and_cursors(void **state)
{
	/*
	 * 1: bitmap 0 (all scalars 0), start 1000 (zigzag 2000 = 0x7d0), end +4, corr 7.
	 * 2: bitmap 0, start +6 from the previous end 1004, end +3, corr +1.
	 * 3: bitmap bits 0, 15, 18 = 0x48001; tid 5; start +7, end +5, corr +1; grid_x 1024,
	 *    block_x 256.
	 * 4: grid_x back to 0: bit 15 = 0x8000, and its value 0 is sent; tid and block_x are as
	 *    before; start +5, end +1, corr +1.
	 */
	static const uint8_t want[] = {
		10, 1, 5,  0x00, 0xd0, 0x0f, 8,	 14,				       /* 1 */
		10, 1, 4,  0x00, 12,   6,    2,					       /* 2 */
		10, 1, 11, 0x81, 0x80, 0x12, 5,	 14, 10, 2,    0x80, 0x08, 0x80, 0x02, /* 3 */
		10, 1, 7,  0x80, 0x80, 0x02, 10, 2,  2,	 0x00,			       /* 4 */
	};
	struct gw_rec_api a = {.start_ns = 1000, .end_ns = 1004, .correlation = 7};
	struct gw_rec_api b = {.start_ns = 1010, .end_ns = 1013, .correlation = 8};
	struct gw_rec_api c = {.tid = 5,
			       .start_ns = 1020,
			       .end_ns = 1025,
			       .correlation = 9,
			       .grid_x = 1024,
			       .block_x = 256};
	struct gw_rec_api d = {
		.tid = 5, .start_ns = 1030, .end_ns = 1031, .correlation = 10, .block_x = 256};
	const struct gw_rec_api *in[] = {&a, &b, &c, &d};
	static const size_t sizes[] = {8, 7, 14, 10};
	struct gw_codec_state enc, dec;
	struct gw_record rec;
	uint8_t buf[512]; /* the encoder wants room for the worst case: 25 fields of 10 bytes */
	size_t n = 0, consumed;
	int k;

	(void)state;
	gw_codec_reset(&enc);
	gw_codec_reset(&dec);
	for (size_t i = 0; i < 4; i++) {
		k = gw_encode_record(&enc, GW_REC_API, in[i], buf, sizeof(buf));
		assert_int_equal(k, sizes[i]);
		assert_memory_equal(buf, want + n, sizes[i]);
		memset(&rec, 0xaa, sizeof(rec));
		assert_int_equal(
			gw_decode_record(&dec, want + n, sizeof(want) - n, &rec, &consumed), 1);
		assert_int_equal(consumed, sizes[i]);
		gw_test_assert_record_equal(GW_REC_API, in[i], &rec.api);
		n += sizes[i];
	}
	assert_int_equal(n, sizeof(want));
}

/*
 * What a newer writer may add: bits for scalars past the ones this reader knows, and their
 * values (or any other appended field) after the known fields. Both are ignored.
 */
static void test_appended_fields(void **state)
{
	/* DROPS version 2: bitmap bits 0 and 2 (source, and a third scalar this build lacks),
	 * time +5, source 1, then the new scalar 129 and a BYTES field "hi" */
	static const uint8_t rec2[] = {20, 2, 8, 0x05, 0x0a, 0x01, 0x81, 0x01, 2, 'h', 'i'};
	struct gw_rec_drops want = {.time_ns = 5, .source = 1};
	struct gw_codec_state dec;
	struct gw_record rec;
	size_t consumed;

	(void)state;
	gw_codec_reset(&dec);
	assert_int_equal(gw_decode_record(&dec, rec2, sizeof(rec2), &rec, &consumed), 1);
	assert_int_equal(consumed, sizeof(rec2));
	assert_int_equal(rec.version, 2);
	gw_test_assert_record_equal(GW_REC_DROPS, &want, &rec.drops);
}

static void test_limits(void **state)
{
	static uint8_t big[GW_MAX_RECORD_PAYLOAD];
	struct gw_rec_note n = {.time_ns = 5, .text = {big, sizeof(big)}};
	struct gw_rec_kernel kr = {.start_ns = 10, .end_ns = 20, .correlation = 3};
	struct gw_codec_state s;
	uint8_t *buf = malloc(GW_MAX_RECORD_PAYLOAD + 64);
	uint8_t small[8];

	(void)state;
	assert_non_null(buf);
	gw_codec_reset(&s);
	/* no room: nothing written, the cursors and the previous record as they were */
	assert_int_equal(gw_encode_record(&s, GW_REC_KERNEL, &kr, small, sizeof(small)), -ENOSPC);
	assert_int_equal(s.time_cursor[GW_REC_KERNEL], 0);
	assert_int_equal(s.seq_cursor[GW_REC_KERNEL], 0);
	assert_int_equal(s.prev.kernel.start_ns, 0);
	/* a payload over the limit: refused, cursors and previous record restored */
	assert_int_equal(gw_encode_record(&s, GW_REC_NOTE, &n, buf, GW_MAX_RECORD_PAYLOAD + 64),
			 -EMSGSIZE);
	assert_int_equal(s.time_cursor[GW_REC_NOTE], 0);
	assert_int_equal(s.prev.note.time_ns, 0);
	/* at the limit exactly: 1 byte of bitmap (level 0, as the previous NOTE: not sent), 1 of
	 * time, 3 of length, the text */
	n.text.len = GW_MAX_RECORD_PAYLOAD - 5;
	assert_int_equal(gw_encode_record(&s, GW_REC_NOTE, &n, buf, GW_MAX_RECORD_PAYLOAD + 64),
			 2 + 3 + GW_MAX_RECORD_PAYLOAD);
	assert_int_equal(gw_encode_record(&s, 99, &n, buf, 64), -EINVAL);
	free(buf);
}

static void test_info_table(void **state)
{
	const struct gw_record_info *api = gw_record_info(GW_REC_API);
	const struct gw_record_info *mod = gw_record_info(GW_REC_MODULE);

	(void)state;
	assert_null(gw_record_info(0));
	assert_null(gw_record_info(99));
	assert_string_equal(api->name, "API");
	assert_int_equal(api->nfields, 25);
	assert_int_equal(api->nvar, 0);
	assert_int_equal(api->size, sizeof(struct gw_rec_api));
	assert_string_equal(api->fields[3].name, "correlation");
	assert_int_equal(api->fields[3].kind, GW_FIELD_SEQ);
	assert_int_equal(api->fields[3].offset, offsetof(struct gw_rec_api, correlation));
	assert_int_equal(mod->nvar, 2);
	assert_true(gw_field_is_binary(&mod->fields[5])); /* build_id */
	assert_false(gw_field_is_binary(&mod->fields[6]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leb128_and_zigzag),
		cmocka_unit_test(test_golden_drops),
		cmocka_unit_test(test_api_bitmap_and_cursors),
		cmocka_unit_test(test_appended_fields),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_info_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
