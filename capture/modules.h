/* SPDX-License-Identifier: MIT */
/* The module map: which object is loaded where, so stacks can be symbolized offline. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Walks the loaded objects (dl_iterate_phdr) and emits a GW_REC_MODULE LOADED record for each
 * one not emitted before, and UNLOADED for those gone since. Takes a mutex: not for the hot
 * path (called at start, and by gw_modules_check when an address is unknown).
 */
void gw_modules_scan(void);

/*
 * Rescans when one of ips[0..n) lies outside every known module (a dlopen since the last
 * scan). Lock-free when all are known.
 */
void gw_modules_check(const uint64_t *ips, uint32_t n);

/* Counts the scans that found objects loaded since the one before (dlopen): who looks for
 * something among the objects looks again when it changed. */
uint32_t gw_modules_generation(void);

/* Whether ip lies in libgpuwhy.so itself (so stacks can start at the application's frames). */
bool gw_modules_is_self(uint64_t ip);

/* Forgets what was emitted, so the next scan emits every module again (a fork child's trace). */
void gw_modules_reset(void);

/*
 * Brackets a walk of the loaded objects outside gw_modules_scan (unw_backtrace). begin returns
 * false, having taken nothing, while a fork is under way (wait: true waits for its end
 * instead); after true, call gw_modules_walk_end. Lock-free.
 */
bool gw_modules_walk_begin(bool wait);
void gw_modules_walk_end(void);

/* pthread_atfork handlers: prepare waits (at most 1 s) until no thread walks the objects. */
void gw_modules_fork_prepare(void);
void gw_modules_fork_parent(void);
void gw_modules_fork_child(void);
