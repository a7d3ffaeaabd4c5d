/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --json`: the analysis as a gpuwhy-report/1 JSON document. */
#pragma once

#include <stdio.h>

#include "analysis.h"

/* Writes res to f (design.md "Interfaces", schema gpuwhy-report/1; doc/causes.md lists the
 * extra keys). opt gives the thresholds used. Returns 0, or -EIO when writing failed. */
int gw_report_json(const struct gw_analysis *res, const struct gw_analysis_options *opt, FILE *f);
