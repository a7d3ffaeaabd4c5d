/* SPDX-License-Identifier: MIT */
/* Call stacks at interesting CUDA calls: unwound with libunwind, deduplicated into stack ids. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Launches of one kernel name that always get a stack; after them, one in GW_STACK_LAUNCH_EVERY. */
#define GW_STACK_LAUNCH_FIRST 8
#define GW_STACK_LAUNCH_EVERY 256

/*
 * Unwinds the calling thread (unw_backtrace), drops the innermost frames that lie inside
 * libgpuwhy.so (CUPTI and CUDA frames stay: the report skips them when it looks for the call
 * site), and returns the stack's id, emitting GW_REC_STACK the first time (and GW_REC_MODULE
 * for objects loaded since the last scan). 0 when nothing could be unwound. No allocation, no
 * lock in the common case. When the thread runs Python, its Python frames join the native ones
 * (a GW_STACK_MIXED stack, python-frames.h).
 */
uint64_t gw_stack_capture(void);

/*
 * Readies libunwind before the first stack, at the capture's start. libunwind checks memory
 * it is unsure of by writing it into a pipe it opens at its first unwind; a program that
 * closes descriptors it did not open, then opens files under the same numbers, would have
 * libunwind read from and write to its files. So the pipe is made to land at gw_fd_floor() or
 * above (the free numbers below are held for the moment), and is watched: before a stack,
 * at most once a millisecond, both ends are checked (device and inode); once they are not
 * libunwind's any more, stacks stop for good with a WARNING note. Returns 0; -EMFILE (or the
 * -errno) when no pipe could be made (too few descriptors: libunwind's checks would all fail
 * and stacks be cut short or missing), which the caller says and then turns stacks off. A
 * libunwind the program initialized first keeps its own pipe, unwatched.
 */
int gw_stacks_init(void);

/* Whether stacks stopped because the program took libunwind's descriptors; when (trace
 * clock) in *ret_ns. */
bool gw_stacks_stopped(uint64_t *ret_ns);

/* Whether the launch_count-th launch of a kernel name gets a stack (launch_count from 1). */
static inline int gw_stack_sample_launch(uint32_t launch_count)
{
	return launch_count <= GW_STACK_LAUNCH_FIRST || launch_count % GW_STACK_LAUNCH_EVERY == 0;
}
