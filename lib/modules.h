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

/* Whether ip lies in libgpuwhy.so itself (so stacks can start at the application's frames). */
bool gw_modules_is_self(uint64_t ip);

/* Forgets what was emitted, so the next scan emits every module again (a fork child's trace). */
void gw_modules_reset(void);
