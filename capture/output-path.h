/* SPDX-License-Identifier: MIT */
/* The trace file's name (GPUWHY_OUTPUT patterns) and its exclusive, no-follow creation. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/*
 * Creates path for writing: O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode 0600, so an
 * existing file or a symlink is never opened, let alone truncated. Returns the fd or -errno
 * (-EEXIST, -ELOOP, -EACCES, ...).
 */
int gw_output_open(const char *path);
