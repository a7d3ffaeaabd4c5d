/* SPDX-License-Identifier: MIT */
/* The gpuwhy source: a .trace.zst through the streaming reader (trace-reader.h). */
#include <errno.h>
#include <stdlib.h>

#include "sources-internal.h"
#include "trace-reader.h"

struct gpuwhy_state {
	struct gw_reader *rd;
	bool header_given;
};

static bool gpuwhy_sniff(const uint8_t *head, size_t len, bool gzip)
{
	/* the file header's skippable-frame magic; the reader judges the rest */
	return !gzip && len >= 4 && head[0] == (GW_SKIPPABLE_MAGIC & 0xff) &&
	       head[1] == (GW_SKIPPABLE_MAGIC >> 8 & 0xff) &&
	       head[2] == (GW_SKIPPABLE_MAGIC >> 16 & 0xff) &&
	       head[3] == (GW_SKIPPABLE_MAGIC >> 24 & 0xff);
}

/* The reader's own reason travels with the error. */
static int reader_fail(int err)
{
	return gw_source_fail(err, "%s", gw_reader_strerror(err));
}

static int gpuwhy_open(struct gw_source *s)
{
	struct gpuwhy_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	s->state = st;
	if (s->gzip)
		return gw_source_fail(-EBADMSG, "gzip-compressed: not a gpuwhy trace");
	r = gw_reader_open_fd(s->fd, GW_READER_AUTO, &st->rd);
	s->fd = -1; /* the reader's now, also when it failed */
	return r < 0 ? reader_fail(r) : 0;
}

static int gpuwhy_next(struct gw_source *s, struct gw_record *ret)
{
	struct gpuwhy_state *st = s->state;
	int r;

	if (!st->header_given) {
		ret->type = GW_REC_HEADER;
		ret->version = GW_REC_HEADER_VERSION;
		ret->header = *gw_reader_header(st->rd);
		st->header_given = true;
		return 1;
	}
	r = gw_reader_next(st->rd, ret);
	if (r == 0) {
		s->truncated = gw_reader_truncated(st->rd);
		s->clean_exit = gw_reader_clean_exit(st->rd);
		s->skipped = gw_reader_skipped(st->rd, &s->skip_reason);
	}
	return r < 0 ? reader_fail(r) : r;
}

static void gpuwhy_progress(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size)
{
	const struct gpuwhy_state *st = s->state;

	*ret_done = gw_reader_bytes_read(st->rd);
	*ret_size = gw_reader_file_size(st->rd);
}

static void gpuwhy_close(struct gw_source *s)
{
	struct gpuwhy_state *st = s->state;

	if (st)
		gw_reader_free(st->rd);
	free(st);
}

const struct gw_source_type gw_source_gpuwhy = {
	.name = "gpuwhy",
	.what = "gpuwhy trace",
	.sniff = gpuwhy_sniff,
	.open = gpuwhy_open,
	.next = gpuwhy_next,
	.progress = gpuwhy_progress,
	.close = gpuwhy_close,
};
