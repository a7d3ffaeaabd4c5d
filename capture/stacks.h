/* SPDX-License-Identifier: MIT */
/* Call stacks at interesting CUDA calls: unwound with libunwind, deduplicated into stack ids. */
#pragma once

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

/* Whether the launch_count-th launch of a kernel name gets a stack (launch_count from 1). */
static inline int gw_stack_sample_launch(uint32_t launch_count)
{
	return launch_count <= GW_STACK_LAUNCH_FIRST || launch_count % GW_STACK_LAUNCH_EVERY == 0;
}
