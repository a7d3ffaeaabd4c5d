/* SPDX-License-Identifier: MIT */
/* JSON value writers shared by the HTML page and the Perfetto export. */
#include <math.h>
#include <stdint.h>

#include "json-out.h"
#include "utf8.h"

void gw_json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		switch (c) {
		case '"':
			fputs("\\\"", f);
			i++;
			continue;
		case '\\':
			fputs("\\\\", f);
			i++;
			continue;
		case '\n':
			fputs("\\n", f);
			i++;
			continue;
		case '\t':
			fputs("\\t", f);
			i++;
			continue;
		case '<':
			fputs("\\u003c", f);
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		n = gw_utf8_len(p + i, len - i);
		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		fwrite(p + i, 1, n, f);
		i += n;
	}
	fputc('"', f);
}

void gw_json_cstr(FILE *f, const char *s)
{
	size_t len = 0;

	if (!s) {
		fputs("null", f);
		return;
	}
	while (s[len])
		len++;
	gw_json_string(f, s, len);
}

void gw_json_double(FILE *f, double v)
{
	if (!isfinite(v)) {
		fputs("null", f);
		return;
	}
	if (v == 0) {
		fputc('0', f);
		return;
	}
	fprintf(f, "%.9g", v);
}
