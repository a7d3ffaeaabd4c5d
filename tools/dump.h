/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --dump`: a trace as text, one line per record. */
#pragma once

#include <stdio.h>

#include "gpuwhy/trace-format.h"

/*
 * Prints the file header, then every record as `NAME field=value ...` (BYTES as quoted,
 * escaped text or hex, IPS as a list of 0x addresses), then an `END` line with the reader's
 * verdict (records, truncated, clean_exit). Returns 0, or the reader's -errno; the lines before
 * an error stay printed.
 */
int gw_dump_trace(const char *path, FILE *out);

/* One record as one line, without the newline. */
void gw_dump_record(const struct gw_record *rec, FILE *out);
