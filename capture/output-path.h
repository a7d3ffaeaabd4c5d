/* SPDX-License-Identifier: MIT */
/* The trace file's name (GPUWHY_OUTPUT patterns) and its exclusive, no-follow creation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The pattern grammar, owned here for the library (which expands it), the settings table and
 * the launcher (which checks a pattern before the program runs and finds the files after):
 * %p the pid, %h the host, %r the rank, %% a percent sign.
 */
#define GW_OUTPUT_SEQUENCES "phr%"

/* The trace path when GPUWHY_OUTPUT is unset, and the file name in a directory given to
 * `gpuwhy run -o DIR/`. */
#define GW_OUTPUT_DEFAULT "gpuwhy-%p.trace.zst"

/*
 * The process's rank from RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK (first one set to a
 * non-negative decimal number), or -1.
 */
int64_t gw_rank_from_env(void);

/*
 * Expands pattern into buf (size bytes, NUL-terminated): %p the pid, %h host, %r rank (the
 * text "norank" when rank < 0), %% a percent sign. Returns the length, -ENAMETOOLONG when it
 * does not fit, -EINVAL for an unknown or trailing %. No allocation; async-signal-safe.
 */
int gw_output_path_expand(char *buf, size_t size, const char *pattern, pid_t pid, const char *host,
			  int64_t rank);

/* Checks pattern's % sequences: 0, or -EINVAL with *ret_bad at the first % that starts none
 * (its next character may be the terminating NUL). */
int gw_output_pattern_check(const char *pattern, const char **ret_bad);

/* Whether pattern holds a sequence that differs between processes (%p, %h, %r). */
bool gw_output_pattern_varies(const char *pattern);

/*
 * The pattern as a glob(7) pattern that every expansion matches: %p %h %r become '*', %% a
 * '%', and glob's own special characters are escaped. Returns 0 or -ENAMETOOLONG.
 */
int gw_output_pattern_glob(const char *pattern, char *out, size_t size);

/*
 * Creates path for writing: O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode 0600, so an
 * existing file or a symlink is never opened, let alone truncated. Returns the fd or -errno
 * (-EEXIST, -ELOOP, -EACCES, ...).
 */
int gw_output_open(const char *path);

/*
 * The trace path of a later image of the same process (after exec, which keeps the pid): path
 * with "-execN" before its ".trace.zst" or ".zst" ending (else at its end), into out. Returns
 * the length or -ENAMETOOLONG.
 */
int gw_output_exec_path(char *out, size_t size, const char *path, unsigned n);

/*
 * Whether the trace at path was written by an earlier image of this very process: its header's
 * pid is pid and it started no earlier than the process did (a stale file of an earlier
 * process that had the same pid started before). False when it cannot be read.
 */
bool gw_output_is_earlier_image(const char *path, pid_t pid);
