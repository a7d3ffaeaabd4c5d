/* SPDX-License-Identifier: MIT */
/* Streaming reader of gpuwhy traces: frame by frame, bounded memory, any bytes accepted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"

/* Largest decompressed frame the reader accepts; a longer one makes the trace corrupt. */
#define GW_READER_MAX_FRAME (64u << 20)

/*
 * With a decompression thread, frames decompressed and not yet given back: the one the caller
 * decodes and the ones ready after it. Memory stays below this many GW_READER_MAX_FRAME.
 */
#define GW_READER_SLOTS 3

/*
 * How a reader decompresses. AUTO: on a second thread, ahead of the caller, when the input is
 * 64 KiB or more and the process may run on two or more CPUs (with one, a second thread only
 * adds switches); inline otherwise, or when the thread cannot be started. THREADED: always on
 * a second thread (tests, fuzzing). INLINE: never. Every mode yields the same records, errors,
 * error texts, flags and byte counts at the same calls.
 */
enum gw_reader_mode {
	GW_READER_AUTO,
	GW_READER_INLINE,
	GW_READER_THREADED,
};

struct gw_reader;

/*
 * Opens a trace and reads its file header. Returns 0 and the reader in *ret; -EBADMSG when
 * the file is not a gpuwhy trace (empty, no or wrong magic, corrupt header);
 * -EPROTONOSUPPORT when a newer gpuwhy wrote it; other -errno from open/read/malloc.
 */
int gw_reader_open(const char *path, struct gw_reader **ret);
/* The same with a mode; GW_READER_AUTO is gw_reader_open. */
int gw_reader_open_mode(const char *path, enum gw_reader_mode mode, struct gw_reader **ret);

/* The same over an open file, read from its current offset; the reader owns fd from the
 * call on (it is closed on failure too). */
int gw_reader_open_fd(int fd, enum gw_reader_mode mode, struct gw_reader **ret);

/* Same over a buffer, which must outlive the reader (fuzzing, tests). */
int gw_reader_open_memory(const void *data, size_t size, struct gw_reader **ret);
int gw_reader_open_memory_mode(const void *data, size_t size, enum gw_reader_mode mode,
			       struct gw_reader **ret);

/* The file header's record. Owned by the reader; its BYTES live as long as the reader. */
const struct gw_rec_header *gw_reader_header(const struct gw_reader *r);

/*
 * The next record of the data frames (header excluded; unknown record types skipped).
 * Returns 1 with *ret filled, 0 at the end (a file cut inside a frame ends before that frame:
 * only complete, checksummed frames yield records), or -errno for a read error, after which
 * every call returns the same error. A corrupt frame is passed over to the next frame
 * (gw_reader_skipped counts them). BYTES in *ret stay valid until the reader moves to
 * the next frame; IPS only until the next call.
 */
int gw_reader_next(struct gw_reader *r, struct gw_record *ret);

/* After the end: true when the file ended inside a frame or without a footer. */
bool gw_reader_truncated(const struct gw_reader *r);

/* Corrupt frames passed over so far (their records are lost; the frames after them are read:
 * each frame decodes alone), and in *ret_reason (may be NULL) why the first was: "corrupt
 * gpuwhy trace: bad frame near byte N (...)". */
uint64_t gw_reader_skipped(const struct gw_reader *r, const char **ret_reason);

/* True once the footer record was read: the process closed its trace cleanly. */
bool gw_reader_clean_exit(const struct gw_reader *r);

/* Compressed bytes consumed so far (file header included), and the file's size (progress). */
uint64_t gw_reader_bytes_read(const struct gw_reader *r);
uint64_t gw_reader_file_size(const struct gw_reader *r);

/* Stops and joins the decompression thread, wherever the reader is; accepts NULL. */
void gw_reader_free(struct gw_reader *r);

/* A human reason for an error a reader function returned: for -EBADMSG, why the last one on
 * this thread was returned ("not a gpuwhy trace", "corrupt gpuwhy trace: bad frame near byte
 * N (...)"). The string is static or thread-local: valid until the next reader call on the
 * same thread. */
const char *gw_reader_strerror(int err);

/* Whether decompressing a file of file_size bytes on a second thread, ahead of its reader,
 * is worth it: 64 KiB or more, and two CPUs or more this process may run on. The frame
 * reader's auto mode and the kineto source's gzip decide by it. */
bool gw_reader_thread_helps(uint64_t file_size);
