/* SPDX-License-Identifier: MIT */
/* Streaming reader of gpuwhy traces: frame by frame, bounded memory, any bytes accepted. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "gpuwhy/trace-codec.h"
#include "trace-reader.h"

#define GW_READ_CHUNK	   (128u << 10)
#define GW_FIRST_OUT	   (256u << 10)
#define GW_WINDOW_LOG_MAX  26 /* 64 MiB, as GW_READER_MAX_FRAME */
#define GW_HEADER_MAX	   (GW_FILE_MAGIC_LEN + 4u + GW_RECORD_OVERHEAD + GW_MAX_RECORD_PAYLOAD)
#define GW_SKIP_HEADER_LEN 8u

struct gw_reader {
	int fd; /* -1 for a memory reader */
	const uint8_t *mem;
	size_t mem_size;

	uint8_t *in;
	ZSTD_inBuffer zin;
	bool eof;
	uint64_t bytes_read, file_size;

	ZSTD_DStream *ds;
	uint8_t *out;
	size_t out_cap, out_len, out_pos;
	struct gw_codec_state codec;

	uint8_t *header_buf;
	struct gw_rec_header header;

	bool done, partial_frame, footer;
	int err;
};

static _Thread_local uint64_t newer_version;
static _Thread_local char strerror_buf[160];
/* Why the last -EBADMSG on this thread was returned, for gw_reader_strerror. */
static _Thread_local char badmsg_reason[128];

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(badmsg_reason, sizeof(badmsg_reason), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static int not_a_trace(void)
{
	snprintf(badmsg_reason, sizeof(badmsg_reason), "not a gpuwhy trace");
	return -EBADMSG;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads exactly n bytes unless the file ends; returns the count read or -errno. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The first n bytes after the position in the file or buffer; fewer at the end. */
static ssize_t take(struct gw_reader *r, uint8_t *dst, size_t n)
{
	ssize_t got;

	if (r->fd < 0) {
		size_t left = r->mem_size - (size_t)r->bytes_read;

		got = (ssize_t)(n < left ? n : left);
		memcpy(dst, r->mem + r->bytes_read, (size_t)got);
	} else {
		got = read_full(r->fd, dst, n);
		if (got < 0)
			return got;
	}
	r->bytes_read += (uint64_t)got;
	return got;
}

static int read_file_header(struct gw_reader *r)
{
	uint8_t skip[GW_SKIP_HEADER_LEN];
	struct gw_codec_state *cs = &r->codec;
	struct gw_record rec;
	uint32_t content, version;
	size_t consumed;
	ssize_t got;
	int k;

	got = take(r, skip, sizeof(skip));
	if (got < 0)
		return (int)got;
	if ((size_t)got < sizeof(skip) || get_le32(skip) != GW_SKIPPABLE_MAGIC)
		return not_a_trace();
	content = get_le32(skip + 4);
	if (content < GW_FILE_MAGIC_LEN + 4 + 3 || content > GW_HEADER_MAX)
		return not_a_trace();
	r->header_buf = malloc(content);
	if (!r->header_buf)
		return -ENOMEM;
	got = take(r, r->header_buf, content);
	if (got < 0)
		return (int)got;
	if ((size_t)got < content || memcmp(r->header_buf, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN))
		return not_a_trace();
	version = get_le32(r->header_buf + GW_FILE_MAGIC_LEN);
	if (version > GW_FORMAT_VERSION) {
		newer_version = version;
		return -EPROTONOSUPPORT;
	}
	if (version == 0)
		return not_a_trace();
	gw_codec_reset(cs);
	k = gw_decode_record(cs, r->header_buf + GW_FILE_MAGIC_LEN + 4,
			     content - GW_FILE_MAGIC_LEN - 4, &rec, &consumed);
	if (k != 1 || rec.type != GW_REC_HEADER)
		return bad("corrupt gpuwhy trace: bad file header record");
	if (rec.header.format_version > GW_FORMAT_VERSION) {
		newer_version = rec.header.format_version;
		return -EPROTONOSUPPORT;
	}
	r->header = rec.header;
	return 0;
}

static int reader_init(struct gw_reader *r)
{
	int err;

	err = read_file_header(r);
	if (err < 0)
		return err;
	r->ds = ZSTD_createDStream();
	r->out_cap = GW_FIRST_OUT;
	r->out = malloc(r->out_cap);
	if (!r->ds || !r->out)
		return -ENOMEM;
	ZSTD_DCtx_setParameter(r->ds, ZSTD_d_windowLogMax, GW_WINDOW_LOG_MAX);
	if (r->fd < 0) {
		r->zin.src = r->mem + r->bytes_read;
		r->zin.size = r->mem_size - (size_t)r->bytes_read;
		r->zin.pos = 0;
		r->bytes_read = r->mem_size - r->zin.size;
	} else {
		r->in = malloc(GW_READ_CHUNK);
		if (!r->in)
			return -ENOMEM;
		r->zin.src = r->in;
	}
	return 0;
}

int gw_reader_open(const char *path, struct gw_reader **ret)
{
	struct gw_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	err = reader_init(r);
	if (err < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	gw_reader_free(r);
	return err;
}

int gw_reader_open_memory(const void *data, size_t size, struct gw_reader **ret)
{
	struct gw_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->mem = data;
	r->mem_size = data ? size : 0;
	r->file_size = r->mem_size;
	err = reader_init(r);
	if (err < 0) {
		gw_reader_free(r);
		return err;
	}
	*ret = r;
	return 0;
}

/* More compressed input; false at the end of the file. */
static int refill(struct gw_reader *r)
{
	ssize_t got;

	if (r->fd < 0)
		return 0;
	got = read_full(r->fd, r->in, GW_READ_CHUNK);
	if (got < 0)
		return (int)got;
	r->zin.size = (size_t)got;
	r->zin.pos = 0;
	return got > 0;
}

/* Decompresses the next whole frame into out: 1, 0 at the end, or -errno. */
static int next_frame(struct gw_reader *r)
{
	bool started = false;

	r->out_len = 0;
	r->out_pos = 0;
	for (;;) {
		ZSTD_outBuffer o;
		size_t before, z;

		if (r->zin.pos == r->zin.size) {
			int k = refill(r);

			if (k < 0)
				return k;
			if (k == 0) {
				r->partial_frame = started;
				return 0;
			}
		}
		started = true;
		o.dst = r->out;
		o.size = r->out_cap;
		o.pos = r->out_len;
		before = r->zin.pos;
		z = ZSTD_decompressStream(r->ds, &o, &r->zin);
		r->bytes_read += r->zin.pos - before;
		if (ZSTD_isError(z))
			return bad("corrupt gpuwhy trace: bad frame near byte %llu (%s)",
				   (unsigned long long)r->bytes_read, ZSTD_getErrorName(z));
		r->out_len = o.pos;
		if (z == 0)
			return 1;
		if (o.pos == o.size) {
			uint8_t *bigger;

			if (r->out_cap >= GW_READER_MAX_FRAME)
				return bad(
					"corrupt gpuwhy trace: a frame near byte %llu decompresses "
					"to more than 64 MiB",
					(unsigned long long)r->bytes_read);
			bigger = realloc(r->out, r->out_cap * 2);
			if (!bigger)
				return -ENOMEM;
			r->out = bigger;
			r->out_cap *= 2;
		}
	}
}

int gw_reader_next(struct gw_reader *r, struct gw_record *ret)
{
	for (;;) {
		size_t consumed;
		int k;

		if (r->err)
			return r->err;
		if (r->done)
			return 0;
		if (r->out_pos < r->out_len) {
			k = gw_decode_record(&r->codec, r->out + r->out_pos,
					     r->out_len - r->out_pos, ret, &consumed);
			if (k < 0) {
				r->err = bad(
					"corrupt gpuwhy trace: bad record in the frame ending at "
					"byte %llu",
					(unsigned long long)r->bytes_read);
				continue;
			}
			r->out_pos += consumed;
			if (k == 0)
				continue;
			if (ret->type == GW_REC_FOOTER)
				r->footer = true;
			return 1;
		}
		k = next_frame(r);
		if (k < 0)
			r->err = k;
		else if (k == 0)
			r->done = true;
		gw_codec_reset(&r->codec);
	}
}

const struct gw_rec_header *gw_reader_header(const struct gw_reader *r)
{
	return &r->header;
}

bool gw_reader_truncated(const struct gw_reader *r)
{
	return r->partial_frame || !r->footer;
}

bool gw_reader_clean_exit(const struct gw_reader *r)
{
	return r->footer;
}

uint64_t gw_reader_bytes_read(const struct gw_reader *r)
{
	return r->bytes_read;
}

uint64_t gw_reader_file_size(const struct gw_reader *r)
{
	return r->file_size;
}

void gw_reader_free(struct gw_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDStream(r->ds);
	free(r->in);
	free(r->out);
	free(r->header_buf);
	free(r);
}

const char *gw_reader_strerror(int err)
{
	switch (err) {
	case -EBADMSG:
		return badmsg_reason[0] ? badmsg_reason : "not a gpuwhy trace, or a corrupt one";
	case -EPROTONOSUPPORT:
		snprintf(strerror_buf, sizeof(strerror_buf),
			 "written by a newer gpuwhy (format %llu; this one reads %u)",
			 (unsigned long long)newer_version, GW_FORMAT_VERSION);
		return strerror_buf;
	default:
		return strerror(err < 0 ? -err : err);
	}
}
