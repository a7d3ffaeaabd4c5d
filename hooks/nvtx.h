/* SPDX-License-Identifier: MIT */
/* NVTX ranges into RANGE records: what lib/ calls when libgpuwhy.so is the NVTX injection. */
#pragma once

#include <stdint.h>

/*
 * NVTX's injection entry point, for one NVTX instance of the process (each copy of the
 * header-only NVTX, and each libnvToolsExt, calls it once): installs gpuwhy's range, mark,
 * domain and registered-string functions in that instance's tables. get_export_table is the
 * instance's nvtxGetExportTable. Any thread, any time, before or after capture starts; ranges
 * are recorded while capture is on. Returns 1 always: 0 would make NVTX unload the library.
 */
int gw_nvtx_attach(const void *(*get_export_table)(uint32_t id));

/* A NOTE at exit when ranges were lost (nested too deep, too many threads or open start/end
 * ranges), saying how many and why. */
void gw_nvtx_exit_notes(void);

/* In a fork child: the stacks of the threads that did not come along are free again. */
void gw_nvtx_fork_child(void);

/* Whether any NVTX instance attached: the trace says so at exit (ranges were possible). */
int gw_nvtx_attached(void);
