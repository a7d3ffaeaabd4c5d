/* SPDX-License-Identifier: MIT */
/* The per-event questions the hooks ask (is capture on, stacks wanted, which thread is this),
 * answered from state the lifecycle (preload/) sets. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* True while this process writes a trace. Read with gw_capturing(). */
extern _Atomic bool gw_capture_on;

/* GPUWHY_STACKS, once the settings were read. Read with gw_stacks_enabled(). */
extern bool gw_stacks_on;

/*
 * What the lifecycle does on the event path's rare branches, set once by preload/ before
 * capture starts (NULL: nothing). The per-event code calls down into lib/ only; the lifecycle
 * above it hands these in, so no folder calls back into one above it.
 *   wake: capture is off; a fork child of a capturing parent starts its own trace here.
 *         Returns whether capture is on now.
 *   thread_first_event: a thread's first event, before its THREAD record.
 */
struct gw_lifecycle_hooks {
	bool (*wake)(void);
	void (*thread_first_event)(void);
};
extern struct gw_lifecycle_hooks gw_lifecycle;

/* Slow path of gw_capturing. */
bool gw_capture_wake(void);

/* Whether events should be recorded now. Hot path: one relaxed load when capture is on. */
static inline bool gw_capturing(void)
{
	return atomic_load_explicit(&gw_capture_on, memory_order_relaxed) || gw_capture_wake();
}

static inline bool gw_stacks_enabled(void)
{
	return gw_stacks_on;
}

/* The calling thread's kernel tid; emits a GW_REC_THREAD record the first time per thread. */
uint64_t gw_thread_id(void);

/* In a fork child: the one thread left has not been seen yet. */
void gw_thread_id_fork_child(void);
