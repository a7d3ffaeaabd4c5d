/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --perfetto FILE`: the traces as Chrome trace-event JSON (ui.perfetto.dev). */
#pragma once

#include "analysis.h"

/* Bins of the SM-fill counter track (the analysis's drawing timeline). */
#define GW_PERFETTO_TIMELINE_BINS 10000u

/* Raises OPT so the analysis keeps what the export needs: idle gaps and a fine timeline. */
void gw_report_perfetto_options(struct gw_analysis_options *opt);

/*
 * Writes the N traces at PATHS, analysed into A, to OUT ("-" is stdout) as a Chrome
 * trace-event JSON object, streamed while the traces are read again:
 *   - a process per trace (its pid) with a thread track per host thread: one X event per
 *     API record, category "api";
 *   - a process per GPU with a track per stream: one X event per KERNEL, MEMCPY and MEMSET
 *     record, categories "kernel", "memcpy", "memset" (a kernel's args carry its class,
 *     gw_kernel_class() of its name, as a bucket key); launch calls and their kernels are
 *     joined by flow arrows (bind_id = the correlation id);
 *   - in the GPU's process, a "GPU idle" track: one X event per attributed gap of A, named
 *     by its bucket's key, category "idle";
 *   - counter (C) events: "live device memory" per GPU, one per device-memory MEMORY record
 *     (kinds device, async, VMM) in time order; "SM fill" per GPU, min(1, sum of the running
 *     kernels' gw_kernel_fill()), an event at each start or end that changes it. A trace with
 *     more kernels than the exact counter holds gets "SM fill (bin mean)" from A's bins.
 * Timestamps are microseconds from the earliest trace start. Memory held: the strings,
 * threads and devices of the traces, 24 bytes per device-memory MEMORY record and 64 per
 * kernel (up to 2 Mi kernels per trace).
 * Returns 0, -errno, or the reader's error for an unreadable trace.
 */
int gw_report_perfetto(const struct gw_analysis *a, const char *const *paths, int n,
		       const char *out);
