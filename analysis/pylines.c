/* SPDX-License-Identifier: MIT */
/* The source line of a Python frame: its instruction offset looked up in its code object's line
 * table, as CPython's PyCode_Addr2Line does (doc/trace-format.md, Python frames). */
#include "pylines.h"

/* 3.10 (PEP 626): (start delta in bytes, line delta) pairs; -128: the range has no line. */
static unsigned line_310(const uint8_t *t, size_t len, unsigned first_line, uint32_t offset)
{
	int64_t line = first_line, start, end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (delta != -128)
			line += delta;
		if (start == end)
			continue; /* an empty range only moves the line */
		if (offset < end)
			return delta == -128 || line <= 0 ? 0 : (unsigned)line;
	}
	return 0;
}

/* A varint of the location table: 6-bit groups, least significant first, bit 6 set when
 * another group follows. */
static uint64_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		if (shift < 64)
			v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = varint(t, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11 on: the location table (CPython's Objects/locations.md). */
static unsigned line_311(const uint8_t *t, size_t len, unsigned first_line, uint32_t offset)
{
	int64_t line = first_line;
	uint64_t end = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t head = t[i++];
		unsigned code = head >> 3 & 15;
		uint64_t start = end;
		bool none = code == 15;

		if (!(head & 128))
			return 0;	      /* not the start of an entry: a broken table */
		end += ((head & 7) + 1) * 2u; /* code units of 2 bytes */
		if (code == 14 || code == 13)
			line += svarint(t, len, &i);
		else if (code >= 10 && code <= 12)
			line += code - 10;
		/* the rest of the entry (columns, end line) */
		while (i < len && !(t[i] & 128))
			i++;
		if (offset >= start && offset < end)
			return none || line <= 0 ? 0 : (unsigned)line;
	}
	return 0;
}

unsigned gw_py_line(unsigned version, const uint8_t *table, size_t len, unsigned first_line,
		    uint32_t offset)
{
	if (offset == 0xffffffffu)
		return first_line; /* before its first instruction: PyCode_Addr2Line's answer */
	if (version == 0x030a)
		return line_310(table, len, first_line, offset);
	if (version >= 0x030b && version <= 0x030d)
		return line_311(table, len, first_line, offset);
	return 0;
}
