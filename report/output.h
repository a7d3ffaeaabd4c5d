/* SPDX-License-Identifier: MIT */
/* The renderers' output files: written whole or not at all, private, with their own errors. */
#pragma once

#include <stdio.h>

/*
 * An output being written. A regular file (or a new one) is written unnamed in its directory
 * (O_TMPFILE) and takes its name only once complete, so a failure, a signal or a SIGKILL never
 * leaves half a page where FILE was, nor a temporary file beside it, and an older FILE stays
 * whole until replaced. A new file is private (0600, as the trace it comes from); a replaced
 * one keeps its mode. "-" is standard output; a device or FIFO is written in place. Where the
 * file system has no O_TMPFILE, a named temporary file beside FILE stands in, removed on a
 * failure and, with gw_output_catch_signals, on SIGINT, SIGTERM and SIGHUP.
 * The stream remembers the errno of its first failed write: a full disk says ENOSPC.
 */
struct gw_output;

/* Starts writing path. Returns 0 and the output in *ret, or -errno. */
int gw_output_begin(const char *path, struct gw_output **ret);

/* The stream to render into. */
FILE *gw_output_stream(struct gw_output *o);

/*
 * Ends the output: err is how far the rendering got (0 or -errno). Publishes the file when
 * err and every write succeeded, else removes what was written. Frees o. Returns err, or the
 * first write error when err was 0 or -EIO (a renderer's ferror), or the publishing's error.
 */
int gw_output_finish(struct gw_output *o, int err);

/* Removes the named temporary files of outputs being written when SIGINT, SIGTERM or SIGHUP
 * end the process (a signal it was started ignoring stays ignored). For programs. */
void gw_output_catch_signals(void);
