/* SPDX-License-Identifier: MIT */
/* JSON value writers shared by the HTML page and the Perfetto export (streamed to a FILE). */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Writes LEN bytes of S as a JSON string literal with its quotes. Control characters are
 * escaped, '<' is written as \u003c (so the text may sit inside an HTML <script>), and bytes
 * that are not valid UTF-8 become U+FFFD, so the output always parses. */
void gw_json_string(FILE *f, const char *s, size_t len);

/* The same for a NUL-terminated string; NULL writes null. */
void gw_json_cstr(FILE *f, const char *s);

/* A number with up to 9 significant digits; NaN and infinities write null. */
void gw_json_double(FILE *f, double v);
