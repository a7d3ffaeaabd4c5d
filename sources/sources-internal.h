/* SPDX-License-Identifier: MIT */
/* The formats the registry (source.c) knows: one gw_source_type per file of sources/. */
#pragma once

#include "source.h"

extern const struct gw_source_type gw_source_gpuwhy; /* gpuwhy-trace.c */
extern const struct gw_source_type gw_source_kineto; /* kineto.c */
extern const struct gw_source_type gw_source_nsys;   /* nsys.c */

/* Whether path is named as an Nsight Systems report (.nsys-rep, or .qdrep before 2021.4),
 * which gpuwhy does not read, and the line that says how to export it (one %s: the path). */
bool gw_nsys_report_name(const char *path);
#define GW_NSYS_EXPORT_HINT                                                                        \
	"an Nsight Systems report, not its SQLite export: run `nsys export --type sqlite "         \
	"--output report.sqlite %s`, then read report.sqlite"
