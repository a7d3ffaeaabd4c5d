/* SPDX-License-Identifier: MIT */
/* The formats the registry (source.c) knows: one gw_source_type per file of sources/. */
#pragma once

#include "source.h"

extern const struct gw_source_type gw_source_gpuwhy; /* gpuwhy-trace.c */
extern const struct gw_source_type gw_source_kineto; /* kineto.c */
