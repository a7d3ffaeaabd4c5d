/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --dump`: a trace as text, one line per record. */
#pragma once

#include <stdio.h>

#include "gpuwhy/trace-format.h"

/*
 * Prints the file header, then every record as `NAME field=value ...` (BYTES as quoted,
 * escaped text or hex, IPS as a list of 0x addresses), then an `END` line with the reader's
 * verdict (records, truncated, clean_exit). Reads any format a source reads (format NULL:
 * from the content). Returns 0, or the source's -errno (gw_source_strerror); the lines
 * before an error stay printed.
 */
struct gw_source_type;
int gw_dump_trace(const char *path, const struct gw_source_type *format, FILE *out);

/* One record as one line, without the newline. */
void gw_dump_record(const struct gw_record *rec, FILE *out);
