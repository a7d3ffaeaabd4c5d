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

/* Two DROPS records in one frame: type 20, version 1, payload length, then time_ns as a delta
 * from the type's time cursor (0, then the first record's 300), source, count. */
static void test_golden_drops(void **state)
{
	static const uint8_t want[] = {
		20, 1, 4, 0xd8, 0x04, 0x03, 0x01, /* time 300: zigzag 600 = 0x258 */
		20, 1, 4, 0x13, 0x01, 0xac, 0x02, /* time 290: delta -10, zigzag 19; count 300 */
	};
	struct gw_rec_drops a = {.time_ns = 300, .source = GW_DROP_WRITE, .count = 1};
	struct gw_rec_drops b = {.time_ns = 290, .source = GW_DROP_THREAD_BUFFER, .count = 300};
	struct gw_codec_state enc, dec;
	struct gw_record rec;
	uint8_t buf[64];
	size_t n = 0, consumed;
	int k;

	(void)state;
	gw_codec_reset(&enc);
	k = gw_encode_record(&enc, GW_REC_DROPS, &a, buf, sizeof(buf));
	assert_int_equal(k, 7);
	n += (size_t)k;
	k = gw_encode_record(&enc, GW_REC_DROPS, &b, buf + n, sizeof(buf) - n);
	assert_int_equal(k, 7);
	n += (size_t)k;
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	gw_codec_reset(&dec);
	assert_int_equal(gw_decode_record(&dec, want, sizeof(want), &rec, &consumed), 1);
	assert_int_equal(consumed, 7);
	gw_test_assert_record_equal(GW_REC_DROPS, &a, &rec.drops);
	assert_int_equal(gw_decode_record(&dec, want + 7, 7, &rec, &consumed), 1);
	gw_test_assert_record_equal(GW_REC_DROPS, &b, &rec.drops);
}

/* An API record's two TIME fields share the cursor: end_ns is coded against start_ns, and the
 * next record's start_ns against the previous end_ns. SEQ has its own cursor. */
static void test_time_cursor_within_record(void **state)
{
	struct gw_rec_api a = {.start_ns = 1000, .end_ns = 1004, .correlation = 7};
	struct gw_rec_api b = {.start_ns = 1010, .end_ns = 1013, .correlation = 8};
	struct gw_codec_state enc;
	uint8_t buf[512]; /* the encoder wants room for the worst case: 25 fields of 10 bytes */
	int k;

	(void)state;
	gw_codec_reset(&enc);
	k = gw_encode_record(&enc, GW_REC_API, &a, buf, sizeof(buf));
	/* tid 0 (1 byte), start 1000 (zigzag 2000: 2 bytes), end +4 (1), corr 7 (1), 21 zeros */
	assert_int_equal(k, 3 + 1 + 2 + 1 + 1 + 21);
	assert_int_equal(buf[2], 26);
	assert_int_equal(buf[3], 0);
	assert_int_equal(buf[4], (2000 & 0x7f) | 0x80);
	assert_int_equal(buf[5], 2000 >> 7);
	assert_int_equal(buf[6], 8);  /* +4 */
	assert_int_equal(buf[7], 14); /* 7 - 0 */
	k = gw_encode_record(&enc, GW_REC_API, &b, buf, sizeof(buf));
	assert_int_equal(k, 3 + 25);
	assert_int_equal(buf[4], 12); /* 1010 - 1004 = +6 */
	assert_int_equal(buf[5], 6);  /* +3 */
	assert_int_equal(buf[6], 2);  /* 8 - 7 = +1 */
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
	/* no room: nothing written, the cursors as they were */
	assert_int_equal(gw_encode_record(&s, GW_REC_KERNEL, &kr, small, sizeof(small)), -ENOSPC);
	assert_int_equal(s.time_cursor[GW_REC_KERNEL], 0);
	assert_int_equal(s.seq_cursor[GW_REC_KERNEL], 0);
	/* a payload over the limit: refused, cursors restored */
	assert_int_equal(gw_encode_record(&s, GW_REC_NOTE, &n, buf, GW_MAX_RECORD_PAYLOAD + 64),
			 -EMSGSIZE);
	assert_int_equal(s.time_cursor[GW_REC_NOTE], 0);
	/* at the limit exactly: 1 byte of time, 1 of level, 3 of length, the text */
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

static uint64_t codec_rng = 0x2545f4914f6cdd1dull;

/* Values of every encoded size from 1 to 10 bytes, zero and the extremes among them. */
static uint64_t random_value(void)
{
	unsigned bits;

	codec_rng ^= codec_rng << 13;
	codec_rng ^= codec_rng >> 7;
	codec_rng ^= codec_rng << 17;
	bits = (unsigned)(codec_rng % 65);
	return bits == 64 ? codec_rng * 0x9e3779b97f4a7c15ull
			  : (codec_rng * 0x9e3779b97f4a7c15ull) & ((1ull << bits) - 1);
}

/* Fills every field of a record of this type through the field table. */
static void random_record(const struct gw_record_info *info, void *rec, uint8_t *bytes,
			  uint64_t *ips)
{
	memset(rec, 0, info->size);
	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		uint8_t *at = (uint8_t *)rec + f->offset;

		if (f->kind == GW_FIELD_BYTES) {
			struct gw_bytes b = {bytes, (uint32_t)(random_value() % 40)};

			for (uint32_t k = 0; k < b.len; k++)
				bytes[k] = (uint8_t)random_value();
			memcpy(at, &b, sizeof(b));
			bytes += 40;
		} else if (f->kind == GW_FIELD_IPS) {
			struct gw_ips v = {ips, (uint32_t)(random_value() % 12)};

			for (uint32_t k = 0; k < v.depth; k++)
				ips[k] = random_value();
			memcpy(at, &v, sizeof(v));
			ips += 12;
		} else {
			uint64_t v = random_value();

			memcpy(at, &v, sizeof(v));
		}
	}
}

/* Decodes the record at rec (rec_len bytes) as a frame would hold it, with slack bytes after
 * it: none (the careful decoder alone runs) or plenty (the fast one runs first). */
static int decode_with_slack(const uint8_t *rec, size_t rec_len, size_t slack, uint8_t fill,
			     struct gw_codec_state *s, struct gw_record *out, size_t *consumed)
{
	static uint8_t buf[GW_RECORD_OVERHEAD + 4096 + 4096];

	memcpy(buf, rec, rec_len);
	memset(buf + rec_len, fill, slack);
	return gw_decode_record(s, buf, rec_len + slack, out, consumed);
}

/*
 * The fast decoder (no per-field end checks, used where the frame has room after the record)
 * must give exactly what the careful one gives: for whole records of every type with values of
 * every size, and for every shorter payload an older writer or a corrupt file could hold.
 * The slack after the record is filled with continuation bytes (0xff) or zeros, so a decoder
 * that read past the payload would see it.
 */
static void test_fast_decoder_agrees(void **state)
{
	static uint8_t enc_buf[GW_RECORD_OVERHEAD + 4096], cut[GW_RECORD_OVERHEAD + 4096];
	static uint8_t bytes[64 * 40];
	static uint64_t ips[64 * 12];
	static const uint8_t fills[] = {0xff, 0x00};

	(void)state;
	for (unsigned type = 0; type < GW_REC_ID_LIMIT; type++) {
		const struct gw_record_info *info = gw_record_info(type);

		if (!info)
			continue;
		for (int round = 0; round < 40; round++) {
			uint64_t want[sizeof(struct gw_record) / 8 + 1]; /* any record's struct */
			struct gw_codec_state enc;
			size_t plen_at, plen, hdr;
			const uint8_t *q;
			uint64_t v = 0, t0, s0;
			int n;

			random_record(info, want, bytes, ips);
			gw_codec_reset(&enc);
			/* a cursor that is not zero, as in the middle of a frame */
			enc.time_cursor[type] = t0 = random_value();
			enc.seq_cursor[type] = s0 = random_value();
			n = gw_encode_record(&enc, type, want, enc_buf, sizeof(enc_buf));
			assert_true(n > 0);
			q = enc_buf + 2;
			assert_int_equal(gw_get_uleb(&q, enc_buf + n, &v), 0);
			plen = (size_t)v;
			plen_at = (size_t)(q - enc_buf);
			/* every payload length from empty to whole, the header rewritten for it */
			for (size_t keep = 0; keep <= plen; keep++) {
				for (size_t f = 0; f < sizeof(fills); f++) {
					struct gw_codec_state careful, fast;
					struct gw_record a, b;
					size_t ca = 0, cb = 0;
					int ka, kb;

					cut[0] = enc_buf[0];
					cut[1] = enc_buf[1];
					hdr = (size_t)(gw_put_uleb(cut + 2, keep) - cut);
					memcpy(cut + hdr, enc_buf + plen_at, keep);
					gw_codec_reset(&careful);
					careful.time_cursor[type] = t0;
					careful.seq_cursor[type] = s0;
					fast = careful;
					memset(&a, 0x5a, sizeof(a));
					memset(&b, 0xa5, sizeof(b));
					ka = decode_with_slack(cut, hdr + keep, 0, 0, &careful, &a,
							       &ca);
					kb = decode_with_slack(cut, hdr + keep, 4096, fills[f],
							       &fast, &b, &cb);
					assert_int_equal(ka, kb);
					assert_int_equal(careful.time_cursor[type],
							 fast.time_cursor[type]);
					assert_int_equal(careful.seq_cursor[type],
							 fast.seq_cursor[type]);
					if (ka != 1)
						continue;
					assert_int_equal(ca, hdr + keep);
					assert_int_equal(cb, hdr + keep);
					/* IPS point into each state's own scratch */
					gw_test_assert_record_equal(type, &a.kernel, &b.kernel);
					if (keep == plen) /* whole: what was written */
						gw_test_assert_record_equal(type, want, &a.kernel);
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leb128_and_zigzag),
		cmocka_unit_test(test_golden_drops),
		cmocka_unit_test(test_time_cursor_within_record),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_info_table),
		cmocka_unit_test(test_fast_decoder_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
