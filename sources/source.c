/* SPDX-License-Identifier: MIT */
/* The source registry: finds a file's format from its content and forwards to that format. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "source.h"
#include "sources-internal.h"

const struct gw_source_type *const gw_source_types[] = {
	&gw_source_gpuwhy,
	&gw_source_nsys,
	&gw_source_kineto,
	NULL,
};

static _Thread_local int fail_err;
static _Thread_local char fail_reason[256];

int gw_source_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fail_reason, sizeof(fail_reason), fmt, ap);
	va_end(ap);
	fail_err = err;
	return err;
}

const char *gw_source_strerror(int err)
{
	if (err < 0 && err == fail_err && fail_reason[0])
		return fail_reason;
	return strerror(err < 0 ? -err : err);
}

const struct gw_source_type *gw_source_type_by_name(const char *name)
{
	for (const struct gw_source_type *const *t = gw_source_types; *t; t++)
		if (strcmp((*t)->name, name) == 0)
			return *t;
	return NULL;
}

/* Reads up to len bytes from fd's start. Returns the count or -errno. */
static ssize_t read_head(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The decompressed start of gzip data in[0, n) into out; its length (a cut stream gives what
 * it has). */
static size_t gunzip_head(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream z = {0};
	size_t got;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 0;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	while (z.avail_out > 0 && inflate(&z, Z_SYNC_FLUSH) == Z_OK)
		;
	got = cap - z.avail_out;
	inflateEnd(&z);
	return got;
}

/* The format of the file open as fd (read with pread: its offset stays 0); sets *ret_gzip. */
static int detect(int fd, const struct gw_source_type **ret, bool *ret_gzip)
{
	/* gzip's own header and a deflate stream that reaches 4 KiB of output fit in this */
	enum { RAW = 2 * GW_SOURCE_SNIFF_BYTES };
	uint8_t *raw = NULL, *head = NULL;
	const uint8_t *look;
	size_t len;
	ssize_t n;
	int r;

	raw = malloc(RAW);
	head = malloc(GW_SOURCE_SNIFF_BYTES);
	if (!raw || !head) {
		r = -ENOMEM;
		goto out;
	}
	n = read_head(fd, raw, RAW);
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	*ret_gzip = n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
	look = raw;
	len = (size_t)n < GW_SOURCE_SNIFF_BYTES ? (size_t)n : GW_SOURCE_SNIFF_BYTES;
	if (*ret_gzip) {
		len = gunzip_head(raw, (size_t)n, head, GW_SOURCE_SNIFF_BYTES);
		look = head;
	}
	for (const struct gw_source_type *const *t = gw_source_types; *t; t++) {
		if ((*t)->sniff(look, len, *ret_gzip)) {
			*ret = *t;
			r = 0;
			goto out;
		}
	}
	r = gw_source_fail(-EBADMSG, "%s",
			   n == 0      ? "empty file, not a trace"
			   : *ret_gzip ? "gzip-compressed, but not a trace gpuwhy reads"
				       : "not a trace gpuwhy reads (a gpuwhy trace, "
					 "torch.profiler JSON or an Nsight Systems "
					 "SQLite export)");
out:
	free(raw);
	free(head);
	return r;
}

int gw_source_open(const char *path, const struct gw_source_type *type, struct gw_source **ret)
{
	struct gw_source *s;
	bool gzip = false;
	int fd, r;

	*ret = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!type) {
		r = detect(fd, &type, &gzip);
		/* An Nsight Systems report is known by its name: gpuwhy reads its SQLite export. */
		if (r == -EBADMSG && gw_nsys_report_name(path))
			r = gw_source_fail(-EBADMSG, GW_NSYS_EXPORT_HINT, path);
	} else {
		uint8_t magic[2];

		r = (int)read_head(fd, magic, sizeof(magic));
		gzip = r == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
		r = r < 0 ? r : 0;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		close(fd);
		return -ENOMEM;
	}
	s->type = type;
	s->fd = fd;
	s->gzip = gzip;
	if ((r = type->open(s)) < 0) {
		gw_source_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

int gw_source_next(struct gw_source *s, struct gw_record *ret)
{
	return s->type->next(s, ret);
}

void gw_source_progress(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size)
{
	*ret_done = *ret_size = 0;
	if (s->type->progress)
		s->type->progress(s, ret_done, ret_size);
}

void gw_source_free(struct gw_source *s)
{
	if (!s)
		return;
	s->type->close(s);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}
