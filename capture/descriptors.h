/* SPDX-License-Identifier: MIT */
/* gpuwhy's own file descriptors inside the program: out of its way, and checked before use. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * A program may close descriptors it did not open (closefrom(3), close_range, a sandbox), start
 * with its standard streams closed (`prog 2>&-`), or dup2 onto any number. A descriptor of
 * gpuwhy's that the program closed, and whose number the program's next open reuses, is the
 * program's file: gpuwhy must never write to it. So gpuwhy's descriptors sit high (at or above
 * gw_fd_floor(), never 0, 1 or 2), are close-on-exec, and are checked (device and inode)
 * before they are used where they could be taken over.
 */

/* The file a descriptor was: its device and inode. */
struct gw_fd_id {
	dev_t dev;
	ino_t ino;
};

/* Where gpuwhy's descriptors go: 100, or half the soft RLIMIT_NOFILE when that is lower, never
 * below 3. A program that closed them reuses their numbers only after that many opens. */
int gw_fd_floor(void);

/* Moves fd to the lowest free number at or above gw_fd_floor(), close-on-exec, and closes the
 * old number. Without a free number there it keeps fd when fd >= 3; a descriptor below 3 (a
 * standard stream's number, free because the program closed it) is closed and -EMFILE
 * returned: it must not stay where the program's output goes. Returns the descriptor or
 * -errno. */
int gw_fd_move_high(int fd);

/* What fd is now: 0, or -errno (-EBADF when it is closed). */
int gw_fd_identify(int fd, struct gw_fd_id *ret);

/* Whether fd is still the file id describes (open, same device and inode). */
bool gw_fd_is(int fd, const struct gw_fd_id *id);
