/* SPDX-License-Identifier: MIT */
/* Strict UTF-8: what the sources take from files and the JSON writers put into reports. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The length of the valid UTF-8 sequence at s[0, n), 1 to 4, or 0 when there is none: a lead
 * byte and the right number of continuation bytes is not enough, overlong forms, surrogates and
 * code points past U+10FFFF are not UTF-8 either, and a JSON reader rejects them. n > 0.
 */
size_t gw_utf8_len(const uint8_t *s, size_t n);
