/* SPDX-License-Identifier: MIT */
/* Trace sources: every input format the report reads, each yielding trace-format records. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"

/*
 * A source turns one input file into the records of include/gpuwhy/trace-format.h, so that one
 * analysis and one set of writers serve every format: gpuwhy's own .trace.zst, and the traces
 * other tools wrote. The first record a source yields is the trace's HEADER.
 */
struct gw_source;

/* Bytes of a file's start that a format is recognised by (gzip undone). */
#define GW_SOURCE_SNIFF_BYTES 4096

/* One input format. */
struct gw_source_type {
	const char *name; /* the --format value: "gpuwhy", "kineto", "nsys" */
	const char *what; /* for humans: "gpuwhy trace" */
	/* True when a file starting with head[0, len) is of this format. When the file is
	 * gzip-compressed, head is its decompressed start and gzip is true. */
	bool (*sniff)(const uint8_t *head, size_t len, bool gzip);
	/* Opens the input: s->fd is s->path open for reading at offset 0 (take it by setting
	 * s->fd to -1), s->gzip says whether it is gzip-compressed; sets s->state. 0 or -errno
	 * (with gw_source_fail for a reason worth more than strerror). */
	int (*open)(struct gw_source *s);
	/* As gw_source_next. */
	int (*next)(struct gw_source *s, struct gw_record *ret);
	/* Input bytes consumed so far and the input's size, for progress (may be NULL). */
	void (*progress)(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size);
	/* Frees s->state; called once, also after a failed open. */
	void (*close)(struct gw_source *s);
};

struct gw_source {
	const struct gw_source_type *type;
	char *path;
	int fd;	     /* the file, open once; -1 once a type took it */
	bool gzip;   /* the file is gzip-compressed */
	void *state; /* the type's own */
	/* Set by the type when next() returns 0: the input ended early (what was yielded is
	 * good), and whether the traced process closed its trace (formats that cannot tell: the
	 * same as !truncated). */
	bool truncated;
	bool clean_exit;
	/* Set with them: parts of the input passed over as corrupt (their records are lost, what
	 * followed was read), and why the first was (NULL when none). */
	uint64_t skipped;
	const char *skip_reason;
};

/* Every format, NULL-terminated, in the order they are tried. */
extern const struct gw_source_type *const gw_source_types[];

/* The format named name (its --format value), or NULL. */
const struct gw_source_type *gw_source_type_by_name(const char *name);

/*
 * Opens path as type, or as the format its content shows when type is NULL. Returns 0 and the
 * source in *ret; -EBADMSG when no format recognises the file (or it is not a valid file of
 * the forced type); -EPROTONOSUPPORT for a version this build does not read; other -errno.
 * The reason: gw_source_strerror().
 */
int gw_source_open(const char *path, const struct gw_source_type *type, struct gw_source **ret);

/*
 * The next record: 1 with *ret filled, 0 at the end (then truncated and clean_exit are set).
 * -EBADMSG: the input is corrupt from here on, what was yielded before is good (the report
 * keeps it, as for a cut file); any other -errno: the input cannot be used. After an error
 * every call returns it again. BYTES and IPS inside *ret stay valid until the next call.
 */
int gw_source_next(struct gw_source *s, struct gw_record *ret);

/* Input bytes consumed and the input's size (0 when unknown). */
void gw_source_progress(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size);

/* Closes the source; accepts NULL. */
void gw_source_free(struct gw_source *s);

/*
 * Records why the calling thread's next error return err happened (printf-style), and returns
 * err, for a source's `return gw_source_fail(-EBADMSG, "byte %llu: ...", ...)`.
 */
int gw_source_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A human reason for an error a source function returned on this thread: the text given to
 * gw_source_fail for that error, else strerror. Valid until the next source call on the thread.
 */
const char *gw_source_strerror(int err);
