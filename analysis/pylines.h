/* SPDX-License-Identifier: MIT */
/* The source line of a Python frame from its code object's line table. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The line of the instruction at byte offset (GW_PYFRAME_NO_OFFSET: first_line) of a code
 * object whose PYCODE record has version ((major << 8) | minor), line table table[0..len) and
 * first line first_line. 0 when no entry covers the offset, the entry has no line, or the
 * version is one whose table gpuwhy does not read (3.10 to 3.13).
 */
unsigned gw_py_line(unsigned version, const uint8_t *table, size_t len, unsigned first_line,
		    uint32_t offset);
