/* SPDX-License-Identifier: MIT */
/* `gpuwhy diff`: two analyses compared, as text, as JSON (gpuwhy-diff/1) and as a page. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "diff.h"

/* The inputs of each side, for the header (borrowed). */
struct gw_diff_inputs {
	const char *const *before;
	int n_before;
	const char *const *after;
	int n_after;
};

/* The comparison as text; color: ANSI colours. Returns 0 or -EIO. */
int gw_report_diff_text(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f,
			bool color);

/* The comparison as one JSON document, schema gpuwhy-diff/1. Returns 0 or -EIO. */
int gw_report_diff_json(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f);

/* The comparison as one self-contained page (both breakdowns, one above the other, and the
 * deltas), its data the JSON document. Returns 0 or -EIO. */
int gw_report_diff_html(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f);
