/* SPDX-License-Identifier: MIT */
/* The capture's lifecycle inside the process: start once, fork, exit, signals. */
#pragma once

#include <stdbool.h>

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

/*
 * exec without fork keeps the pid and ends every thread of the image: the trace is closed
 * first, as at exit (CUPTI's records flushed, the footer with GW_FOOTER_EXEC), when this
 * process owns it and the exec would find an executable file (file, searched in PATH with
 * path_search; or the descriptor fd >= 0 of fexecve). The next image writes its own trace
 * (named -execN). exec_failed says, after an exec that returned, that the rest of the image is
 * not recorded. entry.c's exec family calls them (LD_PRELOAD only: the functions are found
 * first only when the library is preloaded).
 */
void gw_lifecycle_before_exec(const char *file, bool path_search, int fd);
void gw_lifecycle_exec_failed(int err);
