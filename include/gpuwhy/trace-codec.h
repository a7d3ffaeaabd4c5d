/* SPDX-License-Identifier: MIT */
/* Record encoder, decoder and field tables, generated from the field lists of trace-format.h. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuwhy/trace-format.h"

/* One more than the largest record type id, so per-type arrays can be indexed by id. */
union gw_codec_id_limit {
#define GW_CODEC_ID_MEMBER(NAME, name, id, ver) char name[(id) + 1];
	GW_RECORDS(GW_CODEC_ID_MEMBER)
#undef GW_CODEC_ID_MEMBER
};
#define GW_REC_ID_LIMIT sizeof(union gw_codec_id_limit)

/* Bytes of a record around its payload: type, version and the longest length prefix a valid
 * payload (<= GW_MAX_RECORD_PAYLOAD) needs. */
#define GW_RECORD_OVERHEAD 5u

/*
 * The delta cursors of one frame (TIME and SEQ, per record type) and the decoder's scratch
 * space for IPS lists. Encoder and decoder each keep one and reset it at every frame start.
 */
struct gw_codec_state {
	uint64_t time_cursor[GW_REC_ID_LIMIT];
	uint64_t seq_cursor[GW_REC_ID_LIMIT];
	uint64_t ips[GW_MAX_STACK_DEPTH]; /* decoded IPS: valid until the next decode */
};

static inline void gw_codec_reset(struct gw_codec_state *s)
{
	memset(s->time_cursor, 0, sizeof(s->time_cursor));
	memset(s->seq_cursor, 0, sizeof(s->seq_cursor));
}

/* ---- primitives ---- */

static inline uint8_t *gw_put_uleb(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t gw_zigzag(int64_t v)
{
	/* the sign spread over all bits, without right-shifting a signed value */
	return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63));
}

static inline int64_t gw_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Reads one LEB128 value; -EBADMSG when it runs past end or does not fit 64 bits. */
static inline int gw_get_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *ret)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	if (p < end && *p < 0x80) {
		*ret = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*ret = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return 0;
	}
	for (;;) {
		uint8_t b;

		if (p >= end)
			return -EBADMSG;
		b = *p++;
		if (shift == 63 && b > 1)
			return -EBADMSG;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
		if (shift > 63)
			return -EBADMSG;
	}
	*ret = v;
	*pp = p;
	return 0;
}

/* ---- encoder ---- */

#define GW_ENC_BOUND_U64(v)   10u
#define GW_ENC_BOUND_I64(v)   10u
#define GW_ENC_BOUND_TIME(v)  10u
#define GW_ENC_BOUND_SEQ(v)   10u
#define GW_ENC_BOUND_BYTES(v) (5u + (size_t)(v).len)
#define GW_ENC_BOUND_IPS(v)                                                                        \
	(5u + 10u * (size_t)((v).depth < GW_MAX_STACK_DEPTH ? (v).depth : GW_MAX_STACK_DEPTH))

static inline uint8_t *gw_enc_U64(struct gw_codec_state *s, unsigned t, uint8_t *p, uint64_t v)
{
	(void)s;
	(void)t;
	return gw_put_uleb(p, v);
}

static inline uint8_t *gw_enc_I64(struct gw_codec_state *s, unsigned t, uint8_t *p, int64_t v)
{
	(void)s;
	(void)t;
	return gw_put_uleb(p, gw_zigzag(v));
}

static inline uint8_t *gw_enc_TIME(struct gw_codec_state *s, unsigned t, uint8_t *p, uint64_t v)
{
	p = gw_put_uleb(p, gw_zigzag((int64_t)(v - s->time_cursor[t])));
	s->time_cursor[t] = v;
	return p;
}

static inline uint8_t *gw_enc_SEQ(struct gw_codec_state *s, unsigned t, uint8_t *p, uint64_t v)
{
	p = gw_put_uleb(p, gw_zigzag((int64_t)(v - s->seq_cursor[t])));
	s->seq_cursor[t] = v;
	return p;
}

static inline uint8_t *gw_enc_BYTES(struct gw_codec_state *s, unsigned t, uint8_t *p,
				    struct gw_bytes v)
{
	(void)s;
	(void)t;
	p = gw_put_uleb(p, v.len);
	if (v.len)
		memcpy(p, v.data, v.len);
	return p + v.len;
}

/* Lists deeper than GW_MAX_STACK_DEPTH keep their innermost GW_MAX_STACK_DEPTH entries. */
static inline uint8_t *gw_enc_IPS(struct gw_codec_state *s, unsigned t, uint8_t *p, struct gw_ips v)
{
	uint32_t n = v.depth < GW_MAX_STACK_DEPTH ? v.depth : GW_MAX_STACK_DEPTH;
	uint64_t prev = 0;

	(void)s;
	(void)t;
	p = gw_put_uleb(p, n);
	for (uint32_t i = 0; i < n; i++) {
		p = gw_put_uleb(p, gw_zigzag((int64_t)(v.ips[i] - prev)));
		prev = v.ips[i];
	}
	return p;
}

#define GW_ENC_BOUND_FIELD(kind, fname) +GW_ENC_BOUND_##kind(r->fname)
#define GW_ENC_FIELD(kind, fname)	p = gw_enc_##kind(s, t, p, r->fname);

/* A payload of 128 bytes or more, written at out + 3, moves up behind its longer length
 * prefix. Out of line: rare, and the compiler cannot see that small buffers never get here. */
static __attribute__((noinline, cold, unused)) int gw_enc_long_payload(uint8_t *out, size_t len)
{
	uint8_t prefix[3], *h = gw_put_uleb(prefix, len);

	memmove(out + 2 + (h - prefix), out + 3, len);
	memcpy(out + 2, prefix, (size_t)(h - prefix));
	return (int)(2 + (size_t)(h - prefix) + len);
}

/*
 * The payload goes 3 bytes into out, after type, version and the one-byte length prefix of
 * the usual payload (under 128 bytes); a longer one is moved up once its prefix size is known.
 */
#define GW_ENC_RECORD_FN(NAME, name, id, ver)                                                      \
	static inline int gw_encode_##name(                                                        \
		struct gw_codec_state *s, const struct gw_rec_##name *r, uint8_t *out, size_t cap) \
	{                                                                                          \
		const unsigned t = (id);                                                           \
		size_t bound = GW_RECORD_OVERHEAD GW_FIELDS_##name(GW_ENC_BOUND_FIELD);            \
		uint64_t time_cursor = s->time_cursor[t], seq_cursor = s->seq_cursor[t];           \
		uint8_t *p = out + 3;                                                              \
		size_t len;                                                                        \
                                                                                                   \
		if (bound > cap)                                                                   \
			return -ENOSPC;                                                            \
		GW_FIELDS_##name(GW_ENC_FIELD) len = (size_t)(p - (out + 3));                      \
		if (len > GW_MAX_RECORD_PAYLOAD) {                                                 \
			s->time_cursor[t] = time_cursor;                                           \
			s->seq_cursor[t] = seq_cursor;                                             \
			return -EMSGSIZE;                                                          \
		}                                                                                  \
		out[0] = (uint8_t)(id);                                                            \
		out[1] = (uint8_t)(ver);                                                           \
		if (len < 0x80) {                                                                  \
			out[2] = (uint8_t)len;                                                     \
			return (int)(3 + len);                                                     \
		}                                                                                  \
		return gw_enc_long_payload(out, len);                                              \
	}
GW_RECORDS(GW_ENC_RECORD_FN)
#undef GW_ENC_RECORD_FN

/*
 * Encodes one record of a known type (rec points to its struct gw_rec_NAME) into out and
 * advances the frame's cursors. Returns the bytes written; -ENOSPC when cap is less than the
 * record's worst-case size (nothing written, cursors untouched); -EMSGSIZE when the payload
 * would exceed GW_MAX_RECORD_PAYLOAD; -EINVAL for an unknown type.
 */
static inline int gw_encode_record(struct gw_codec_state *s, unsigned type, const void *rec,
				   uint8_t *out, size_t cap)
{
	switch (type) {
#define GW_ENC_CASE(NAME, name, id, ver)                                                           \
	case id:                                                                                   \
		return gw_encode_##name(s, (const struct gw_rec_##name *)rec, out, cap);
		GW_RECORDS(GW_ENC_CASE)
#undef GW_ENC_CASE
	default:
		return -EINVAL;
	}
}

/* ---- decoder ---- */

/* A field absent from a shorter (older) payload decodes as 0 and leaves its cursor alone. */
static inline int gw_dec_U64(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			     const uint8_t *end, uint64_t *v)
{
	(void)s;
	(void)t;
	if (*pp == end) {
		*v = 0;
		return 0;
	}
	return gw_get_uleb(pp, end, v);
}

static inline int gw_dec_I64(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			     const uint8_t *end, int64_t *v)
{
	uint64_t u = 0;
	int r;

	(void)s;
	(void)t;
	if (*pp == end) {
		*v = 0;
		return 0;
	}
	r = gw_get_uleb(pp, end, &u);
	*v = gw_unzigzag(u);
	return r;
}

static inline int gw_dec_TIME(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			      const uint8_t *end, uint64_t *v)
{
	uint64_t u;

	if (*pp == end) {
		*v = 0;
		return 0;
	}
	if (gw_get_uleb(pp, end, &u) < 0)
		return -EBADMSG;
	*v = s->time_cursor[t] + (uint64_t)gw_unzigzag(u);
	s->time_cursor[t] = *v;
	return 0;
}

static inline int gw_dec_SEQ(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			     const uint8_t *end, uint64_t *v)
{
	uint64_t u;

	if (*pp == end) {
		*v = 0;
		return 0;
	}
	if (gw_get_uleb(pp, end, &u) < 0)
		return -EBADMSG;
	*v = s->seq_cursor[t] + (uint64_t)gw_unzigzag(u);
	s->seq_cursor[t] = *v;
	return 0;
}

static inline int gw_dec_BYTES(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			       const uint8_t *end, struct gw_bytes *v)
{
	uint64_t len;

	(void)s;
	(void)t;
	v->data = NULL;
	v->len = 0;
	if (*pp == end)
		return 0;
	if (gw_get_uleb(pp, end, &len) < 0 || len > (uint64_t)(end - *pp))
		return -EBADMSG;
	v->data = len ? *pp : NULL;
	v->len = (uint32_t)len;
	*pp += len;
	return 0;
}

static inline int gw_dec_IPS(struct gw_codec_state *s, unsigned t, const uint8_t **pp,
			     const uint8_t *end, struct gw_ips *v)
{
	uint64_t n, prev = 0;

	(void)t;
	v->ips = s->ips;
	v->depth = 0;
	if (*pp == end)
		return 0;
	if (gw_get_uleb(pp, end, &n) < 0 || n > GW_MAX_STACK_DEPTH || n > (uint64_t)(end - *pp))
		return -EBADMSG;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d;

		if (gw_get_uleb(pp, end, &d) < 0)
			return -EBADMSG;
		prev += (uint64_t)gw_unzigzag(d);
		s->ips[i] = prev;
	}
	v->depth = (uint32_t)n;
	return 0;
}

/* Fast paths for the common one-byte encoding of a scalar field; BYTES and IPS take the
 * general path. */
#define GW_DEC_FAST_U64(b, fname)   (r->fname = (b), 1)
#define GW_DEC_FAST_I64(b, fname)   (r->fname = gw_unzigzag(b), 1)
#define GW_DEC_FAST_TIME(b, fname)  (r->fname = s->time_cursor[t] += (uint64_t)gw_unzigzag(b), 1)
#define GW_DEC_FAST_SEQ(b, fname)   (r->fname = s->seq_cursor[t] += (uint64_t)gw_unzigzag(b), 1)
#define GW_DEC_FAST_BYTES(b, fname) 0
#define GW_DEC_FAST_IPS(b, fname)   0

#define GW_DEC_FIELD(kind, fname)                                                                  \
	if (p < end && *p < 0x80 && GW_DEC_FAST_##kind(*p, fname))                                 \
		p++;                                                                               \
	else if (gw_dec_##kind(s, t, &p, end, &r->fname) < 0)                                      \
		return -EBADMSG;

#define GW_DEC_RECORD_FN(NAME, name, id, ver)                                                      \
	static __attribute__((noinline, unused)) int gw_decode_##name(                             \
		struct gw_codec_state *restrict s, const uint8_t *p, const uint8_t *end,           \
		struct gw_rec_##name *restrict r)                                                  \
	{                                                                                          \
		const unsigned t = (id);                                                           \
                                                                                                   \
		GW_FIELDS_##name(GW_DEC_FIELD) return 0;                                           \
	}
GW_RECORDS(GW_DEC_RECORD_FN)
#undef GW_DEC_RECORD_FN

/*
 * The fast decoder, for the usual record: every field present. It drops the per-field check for
 * the payload's end, so it may only run where GW_DECQ_SLACK bytes per field can be read past
 * the payload (inside a frame, not at its end), and it succeeds only when its reads stayed
 * within the payload, which makes its result the one gw_decode_NAME would give. When a field
 * is absent (an older writer) or the bytes are bad it returns false, having changed nothing but
 * *r and the IPS scratch, and the caller runs gw_decode_NAME instead.
 */
#define GW_DECQ_SLACK 10u

/* Reads a LEB128 value with no end check: GW_DECQ_SLACK bytes at *pp must be readable. */
static inline bool gw_get_uleb_unbounded(const uint8_t **pp, uint64_t *ret)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	if (p[1] < 0x80) { /* two bytes: timestamps and sizes, the usual multi-byte value */
		*ret = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return true;
	}
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = *p++;

		if (shift == 63 && b > 1)
			return false;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			*pp = p;
			return true;
		}
	}
	return false;
}

#define GW_DECQ_GET                                                                                \
	if (*p < 0x80)                                                                             \
		u = *p++;                                                                          \
	else if (!gw_get_uleb_unbounded(&p, &u))                                                   \
		return false;
#define GW_DECQ_U64(fname)  GW_DECQ_GET r->fname = u;
#define GW_DECQ_I64(fname)  GW_DECQ_GET r->fname = gw_unzigzag(u);
#define GW_DECQ_TIME(fname) GW_DECQ_GET r->fname = time_cursor += (uint64_t)gw_unzigzag(u);
#define GW_DECQ_SEQ(fname)  GW_DECQ_GET r->fname = seq_cursor += (uint64_t)gw_unzigzag(u);
/* BYTES and IPS check against end themselves; past end they fail, which is what is wanted */
#define GW_DECQ_BYTES(fname)                                                                       \
	if (p > end || gw_dec_BYTES(s, t, &p, end, &r->fname) < 0)                                 \
		return false;
#define GW_DECQ_IPS(fname)                                                                         \
	if (p > end || gw_dec_IPS(s, t, &p, end, &r->fname) < 0)                                   \
		return false;
#define GW_DECQ_FIELD(kind, fname) GW_DECQ_##kind(fname)
#define GW_DECQ_COUNT(kind, fname) +1u

#define GW_DECQ_RECORD_FN(NAME, name, id, ver)                                                     \
	static inline bool gw_decode_fast_##name(struct gw_codec_state *restrict s,                \
						 const uint8_t *p, const uint8_t *end,             \
						 struct gw_rec_##name *restrict r)                 \
	{                                                                                          \
		const unsigned t = (id);                                                           \
		uint64_t time_cursor = s->time_cursor[t], seq_cursor = s->seq_cursor[t], u;        \
		(void)time_cursor;                                                                 \
		(void)seq_cursor;                                                                  \
		(void)u;                                                                           \
		GW_FIELDS_##name(GW_DECQ_FIELD) if (p > end) return false;                         \
		s->time_cursor[t] = time_cursor;                                                   \
		s->seq_cursor[t] = seq_cursor;                                                     \
		return true;                                                                       \
	}
GW_RECORDS(GW_DECQ_RECORD_FN)
#undef GW_DECQ_RECORD_FN

/*
 * Decodes the record at p (len bytes available) and sets *consumed to its encoded size.
 * Returns 1 for a known type (ret filled; BYTES point into p, IPS into s->ips), 0 for a type
 * this decoder does not know (only ret->type and ret->version set; skip *consumed bytes), or
 * -EBADMSG when the bytes are not a valid record (nothing consumed).
 */
static inline int gw_decode_record(struct gw_codec_state *s, const uint8_t *p, size_t len,
				   struct gw_record *ret, size_t *consumed)
{
	const uint8_t *q = p + 2, *end = p + len;
	uint64_t plen;
	int r;

	if (len < 3)
		return -EBADMSG;
	if (p[2] < 0x80) {
		plen = p[2];
		q++;
	} else if (gw_get_uleb(&q, end, &plen) < 0 || plen > GW_MAX_RECORD_PAYLOAD) {
		return -EBADMSG;
	}
	if (plen > (uint64_t)(end - q))
		return -EBADMSG;
	ret->type = p[0];
	ret->version = p[1];
	end = q + plen;
	switch (p[0]) {
#define GW_DEC_CASE(NAME, name, id, ver)                                                           \
	case id:                                                                                   \
		if ((size_t)(p + len - end) >=                                                     \
			    GW_DECQ_SLACK * (0 GW_FIELDS_##name(GW_DECQ_COUNT)) &&                 \
		    gw_decode_fast_##name(s, q, end, &ret->name))                                  \
			r = 0;                                                                     \
		else                                                                               \
			r = gw_decode_##name(s, q, end, &ret->name);                               \
		break;
		GW_RECORDS(GW_DEC_CASE)
#undef GW_DEC_CASE
	default:
		*consumed = (size_t)(end - p);
		return 0;
	}
	if (r < 0)
		return r;
	*consumed = (size_t)(end - p);
	return 1;
}

/* ---- tables, for printers and generic code ---- */

enum gw_field_kind {
	GW_FIELD_U64,
	GW_FIELD_I64,
	GW_FIELD_TIME,
	GW_FIELD_SEQ,
	GW_FIELD_BYTES,
	GW_FIELD_IPS,
};

struct gw_field_info {
	const char *name;
	uint8_t kind;	 /* enum gw_field_kind */
	uint16_t offset; /* in struct gw_rec_NAME */
};

struct gw_record_info {
	const char *name;  /* "API" */
	const char *lname; /* "api" */
	uint8_t type;
	uint8_t version;
	uint8_t nfields;
	uint8_t nvar;  /* BYTES and IPS fields: those whose data lives outside the struct */
	uint16_t size; /* sizeof(struct gw_rec_NAME) */
	const struct gw_field_info *fields;
};

#define GW_FIELD_IS_VAR_U64   0
#define GW_FIELD_IS_VAR_I64   0
#define GW_FIELD_IS_VAR_TIME  0
#define GW_FIELD_IS_VAR_SEQ   0
#define GW_FIELD_IS_VAR_BYTES 1
#define GW_FIELD_IS_VAR_IPS   1

/* The field macro sees only kind and name, so each generated function aliases its struct. */
#define GW_INFO_FIELD(kind, fname)                                                                 \
	{#fname, GW_FIELD_##kind, (uint16_t)offsetof(gw_info_rec, fname)},
#define GW_INFO_NVAR(kind, fname) +GW_FIELD_IS_VAR_##kind
#define GW_INFO_RECORD_FN(NAME, name, id, ver)                                                     \
	static inline const struct gw_record_info *gw_record_info_##name(void)                     \
	{                                                                                          \
		typedef struct gw_rec_##name gw_info_rec;                                          \
		static const struct gw_field_info fields[] = {GW_FIELDS_##name(GW_INFO_FIELD)};    \
		static const struct gw_record_info info = {                                        \
			#NAME,                                                                     \
			#name,                                                                     \
			id,                                                                        \
			ver,                                                                       \
			sizeof(fields) / sizeof(fields[0]),                                        \
			0 GW_FIELDS_##name(GW_INFO_NVAR),                                          \
			sizeof(gw_info_rec),                                                       \
			fields,                                                                    \
		};                                                                                 \
		return &info;                                                                      \
	}
GW_RECORDS(GW_INFO_RECORD_FN)
#undef GW_INFO_RECORD_FN

/* The table entry of a record type; NULL for a type this build does not know. */
static inline const struct gw_record_info *gw_record_info(unsigned type)
{
	switch (type) {
#define GW_INFO_CASE(NAME, name, id, ver)                                                          \
	case id:                                                                                   \
		return gw_record_info_##name();
		GW_RECORDS(GW_INFO_CASE)
#undef GW_INFO_CASE
	default:
		return NULL;
	}
}

/* BYTES fields printed as hex rather than text. */
static inline bool gw_field_is_binary(const struct gw_field_info *f)
{
	return f->kind == GW_FIELD_BYTES &&
	       (!strcmp(f->name, "build_id") || !strcmp(f->name, "uuid"));
}
