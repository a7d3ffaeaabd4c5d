/* SPDX-License-Identifier: MIT */
/* The default text report: a first screen to act on, then the details. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "analysis.h"

/* Writes res to f: verdict, quadrant, breakdown bars and the top three causes with call
 * sites and remedies, then details. color adds ANSI colours (callers decide: a terminal and
 * NO_COLOR unset). Returns 0, or -EIO when writing failed. */
int gw_report_text(const struct gw_analysis *res, const struct gw_analysis_options *opt, FILE *f,
		   bool color);
