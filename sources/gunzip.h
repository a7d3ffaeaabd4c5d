/* SPDX-License-Identifier: MIT */
/* A gzip file's bytes, decompressed chunk by chunk, ahead of the reader on a thread of its own. */
#ifndef GW_SOURCES_GUNZIP_H
#define GW_SOURCES_GUNZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gw_gunzip_state {
	GW_GUNZIP_MORE,	   /* more chunks follow */
	GW_GUNZIP_END,	   /* the last gzip member ended: nothing follows */
	GW_GUNZIP_CUT,	   /* the file ends inside a member (what: where) */
	GW_GUNZIP_CORRUPT, /* zlib refused the data (what: where and why; err) */
	GW_GUNZIP_FAILED,  /* reading the file failed (err) */
};

/* One chunk: data valid until the next gw_gunzip_next. A chunk that ends the stream may
 * still carry data, which comes before the end. */
struct gw_gunzip_chunk {
	const uint8_t *data;
	size_t len;
	enum gw_gunzip_state state;
	int err;	    /* negative errno: GW_GUNZIP_CORRUPT, GW_GUNZIP_FAILED */
	uint64_t file_read; /* bytes of the file read so far */
	char what[160];
};

struct gw_gunzip;

/* Starts decompressing fd (read from where it is; the caller keeps and closes it): ahead, on
 * a thread of its own, or, without ahead or where pthread_create fails, inside
 * gw_gunzip_next (slower, the same bytes). Returns 0 or -ENOMEM. */
int gw_gunzip_open(int fd, bool ahead, struct gw_gunzip **ret);

/* The next chunk; after a chunk whose state is not GW_GUNZIP_MORE, nothing more comes. */
void gw_gunzip_next(struct gw_gunzip *g, struct gw_gunzip_chunk *ret);

/* Stops the thread (it may be waiting for room, or inside a read) and frees everything. */
void gw_gunzip_free(struct gw_gunzip *g);

#endif
