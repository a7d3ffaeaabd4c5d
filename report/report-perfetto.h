/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --perfetto FILE`: the traces as Chrome trace-event JSON (ui.perfetto.dev). */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"

/* The default --perfetto-max-events: about 200 MB of JSON, what ui.perfetto.dev opens. */
#define GW_PERFETTO_MAX_EVENTS 1000000u

/* Bins of the SM-fill counter track (the analysis's drawing timeline). */
#define GW_PERFETTO_TIMELINE_BINS 10000u

/* Raises OPT so the analysis keeps what the export needs: idle gaps and a fine timeline. */
void gw_report_perfetto_options(struct gw_analysis_options *opt);

/*
 * Writes A to f as a Chrome trace-event JSON object, from A's event view
 * (A must have been analysed with gw_report_perfetto_options, which asks for it):
 *   - a process per trace (its pid) with a thread track per host thread: one X event per
 *     API call, category "api";
 *   - a process per GPU with a track per stream: one X event per kernel, copy and memset,
 *     categories "kernel", "memcpy", "memset" (a kernel's args carry its class and fill as
 *     the analysis decided them); launch calls and their operations are joined by flow arrows
 *     (bind_id = the correlation id);
 *   - in the GPU's process, a "GPU idle" track: one X event per attributed gap of A, named
 *     by its bucket's key, category "idle";
 *   - counter (C) events per GPU: "live device memory" at each allocation and free the
 *     analysis counted, and "SM fill" at each change of the fill the attribution used (or,
 *     past the view's limit, "SM fill (bin mean)" from A's bins).
 * Timestamps are microseconds from the earliest capture start. Reads no trace. With more than
 * max_events calls and GPU operations (0: no limit), the run is shown up to the time before
 * which at most that many start, and otherData's cut_at says where: viewers load a few
 * million events, not the hundreds of millions of a long launch-bound run.
 * Returns 0 or -errno (-EINVAL: A has no event view).
 */
int gw_report_perfetto(const struct gw_analysis *a, uint64_t max_events, FILE *f);
