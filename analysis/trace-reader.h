/* SPDX-License-Identifier: MIT */
/* Streaming reader of gpuwhy traces: frame by frame, bounded memory, any bytes accepted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"

/* Largest decompressed frame the reader accepts; a longer one makes the trace corrupt. */
#define GW_READER_MAX_FRAME (64u << 20)

struct gw_reader;

/*
 * Opens a trace and reads its file header. Returns 0 and the reader in *ret; -EBADMSG when
 * the file is not a gpuwhy trace (empty, no or wrong magic, corrupt header);
 * -EPROTONOSUPPORT when a newer gpuwhy wrote it; other -errno from open/read/malloc.
 */
int gw_reader_open(const char *path, struct gw_reader **ret);

/* Same over a buffer, which must outlive the reader (fuzzing, tests). */
int gw_reader_open_memory(const void *data, size_t size, struct gw_reader **ret);

/* The file header's record. Owned by the reader; its BYTES live as long as the reader. */
const struct gw_rec_header *gw_reader_header(const struct gw_reader *r);

/*
 * The next record of the data frames (header excluded; unknown record types skipped).
 * Returns 1 with *ret filled, 0 at the end (a file cut inside a frame ends before that frame:
 * only complete, checksummed frames yield records), or -EBADMSG for corrupt bytes, after
 * which every call returns the same error. BYTES in *ret stay valid until the reader moves to
 * the next frame; IPS only until the next call.
 */
int gw_reader_next(struct gw_reader *r, struct gw_record *ret);

/* After the end: true when the file ended inside a frame or without a footer. */
bool gw_reader_truncated(const struct gw_reader *r);

/* True once the footer record was read: the process closed its trace cleanly. */
bool gw_reader_clean_exit(const struct gw_reader *r);

/* Compressed bytes consumed so far (file header included), and the file's size (progress). */
uint64_t gw_reader_bytes_read(const struct gw_reader *r);
uint64_t gw_reader_file_size(const struct gw_reader *r);

void gw_reader_free(struct gw_reader *r);

/* A human reason for an error a reader function returned: for -EBADMSG, why the last one on
 * this thread was returned ("not a gpuwhy trace", "corrupt gpuwhy trace: bad frame near byte
 * N (...)"). The string is static or thread-local: valid until the next reader call on the
 * same thread. */
const char *gw_reader_strerror(int err);
