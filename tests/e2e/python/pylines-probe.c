/* SPDX-License-Identifier: MIT */
/*
 * gw_py_line() on line tables the test takes from a real interpreter (test-python.py, lines).
 * Each input line: VERSION FIRST_LINE TABLE_HEX OFFSET...; each output line: the line of each
 * offset (0: none), in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pylines.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int main(void)
{
	static char line[1 << 22];
	static uint8_t table[1 << 20];

	while (fgets(line, sizeof(line), stdin)) {
		char *save = NULL, *tok;
		unsigned version, first;
		size_t n = 0;

		if (!(tok = strtok_r(line, " \n", &save)))
			continue;
		version = (unsigned)strtoul(tok, NULL, 0);
		first = (unsigned)strtoul(strtok_r(NULL, " \n", &save), NULL, 10);
		tok = strtok_r(NULL, " \n", &save);
		if (strcmp(tok, "-") != 0)
			for (size_t i = 0; tok[i] && tok[i + 1] && n < sizeof(table); i += 2)
				table[n++] = (uint8_t)(hexval(tok[i]) << 4 | hexval(tok[i + 1]));
		while ((tok = strtok_r(NULL, " \n", &save)))
			printf("%u ", gw_py_line(version, table, n, first,
						 (uint32_t)strtoul(tok, NULL, 10)));
		putchar('\n');
	}
	return 0;
}
