/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --html FILE`: the analysis as one self-contained HTML page. */
#pragma once

#include <stdio.h>

#include "analysis.h"

/* Bins of the drawing timeline the page asks the analysis for. */
#define GW_HTML_TIMELINE_BINS 2000u

/* Idle gaps drawn one by one up to this many; past it, they are summed per time cell. */
#define GW_HTML_MAX_GAPS 20000u

/* Raises OPT so the analysis keeps what the page draws: timeline bins and idle gaps. */
void gw_report_html_options(struct gw_analysis_options *opt);

/*
 * Writes the page for A, analysed with OPT (may be NULL), to f (report/output.h makes files
 * of it). Inline CSS, JS and SVG, no network. The numbers are A's, computed from every event; only the drawing is
 * downsampled (at most 2 * GW_HTML_TIMELINE_BINS bins and GW_HTML_MAX_GAPS gaps, so the page
 * stays small whatever the trace's size). Returns 0 or -errno.
 */
int gw_report_html(const struct gw_analysis *a, const struct gw_analysis_options *opt, FILE *f);
