/* SPDX-License-Identifier: MIT */
/* The capture's lifecycle inside the process: start once, fork, exit, signals. */
#pragma once

/* The entry points' work (entry.c, only in libgpuwhy.so): the preload constructor, the
 * driver's InitializeInjection, and the destructor (the exit path for a program that made no
 * CUDA call; a no-op once the trace is closed). */
void gw_lifecycle_preload(void);
void gw_lifecycle_injection(void);
void gw_lifecycle_exit(void);

/* Reads the GPUWHY_* settings (once; the entry points do it). */
void gw_lifecycle_configure(void);

/*
 * Starts capture once per process (later calls return at once): creates the trace file, loads
 * and subscribes CUPTI, starts the writer and enables the callbacks and activity kinds. Every
 * failure is one "gpuwhy:" warning line on stderr and leaves the application untouched.
 * Called by the preload constructor and by InitializeInjection.
 */
void gw_lifecycle_start(void);
