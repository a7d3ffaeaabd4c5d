/* SPDX-License-Identifier: MIT */
/* Offline symbolization of recorded stacks from the trace's module map (elfutils libdwfl). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

struct gw_symbolizer;

/* An empty symbolizer. Returns >= 0 or -ENOMEM. */
int gw_symbolizer_new(struct gw_symbolizer **ret);
/* A loaded object of the traced process: its path and load bias. A missing or unreadable file
 * is accepted: its addresses then show as module+offset. */
int gw_symbolizer_add_module(struct gw_symbolizer *s, const char *path, uint64_t bias,
			     uint64_t start, uint64_t size);
/*
 * Fills site (text, function, file, line, module, offset, frames) from a stack of return
 * addresses, innermost first, skipping frames inside libgpuwhy, the CUDA runtime, CUPTI, the
 * driver and gpusim. s may be NULL (no symbolization: module+offset is still unknown, so the
 * raw address is shown). Returns >= 0 or -ENOMEM.
 */
int gw_symbolize_site(struct gw_symbolizer *s, const uint64_t *ips, unsigned depth,
		      struct gw_site *site);
/*
 * One native frame: its text ("function (file:line)", "function (module)", "module+0x..") in
 * *text and its fields in d; *skipped when it lies in libgpuwhy, the CUDA runtime, CUPTI,
 * the driver or gpusim. Returns >= 0 or -ENOMEM.
 */
int gw_symbolize_frame(struct gw_symbolizer *s, uint64_t ip, char **text, struct gw_frame_detail *d,
		       bool *skipped);
void gw_frame_detail_clear(struct gw_frame_detail *d);
void gw_symbolizer_free(struct gw_symbolizer *s);

/* Frees the strings inside a site (not the site itself). */
void gw_site_clear(struct gw_site *site);
