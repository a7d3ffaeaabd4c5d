/* SPDX-License-Identifier: MIT */
/* The capture's lifecycle inside the process: start once, fork, exit, signals; and the cheap
 * per-event questions the hooks ask (is capture on, which thread is this). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* True while this process writes a trace. Read with gw_capturing(). */
extern _Atomic bool gw_capture_on;

/* Slow path of gw_capturing: a fork child's first CUDA call starts its own trace. */
bool gw_runtime_wake(void);

/* Whether events should be recorded now. Hot path: one relaxed load when capture is on. */
static inline bool gw_capturing(void)
{
	return atomic_load_explicit(&gw_capture_on, memory_order_relaxed) || gw_runtime_wake();
}

/* GPUWHY_STACKS, once the settings were read. Read with gw_stacks_enabled(). */
extern bool gw_stacks_on;

static inline bool gw_stacks_enabled(void)
{
	return gw_stacks_on;
}

/* The calling thread's kernel tid; emits a GW_REC_THREAD record the first time per thread. */
uint64_t gw_thread_id(void);

/* The entry points' work (lib/entry.c, only in libgpuwhy.so): the preload constructor, the
 * driver's InitializeInjection, and the destructor (the exit path for a program that made no
 * CUDA call; a no-op once the trace is closed). */
void gw_runtime_preload(void);
void gw_runtime_injection(void);
void gw_runtime_exit(void);

/* Reads the GPUWHY_* settings (once; the entry points do it). */
void gw_runtime_configure(void);

/*
 * Starts capture once per process (later calls return at once): creates the trace file, loads
 * and subscribes CUPTI, starts the writer and enables the callbacks and activity kinds. Every
 * failure is one "gpuwhy:" warning line on stderr and leaves the application untouched.
 * Called by the preload constructor and by InitializeInjection.
 */
void gw_runtime_start(void);
