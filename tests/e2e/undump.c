/* SPDX-License-Identifier: MIT */
/* The inverse of `gpuwhy-report --dump`: a trace from its records as text (a test input). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuwhy/trace-codec.h"
#include "trace-writer.h"

/*
 * usage: undump IN.txt OUT.trace.zst
 *
 * IN holds one record a line, as --dump prints them: `NAME field=value ...`, the first line a
 * HEADER. U64, TIME, SEQ: decimal; I64: signed decimal; BYTES: "text" with the dump's escapes
 * (\" \\ \n \t \xNN), or hex for the binary fields (build_id, uuid), - when empty; IPS:
 * [0x1,0x2]. Fields left out are 0; an END line (the dump's verdict) and blank lines or lines
 * starting with # are skipped. The records are written through the capture's writer; a FOOTER
 * line makes it close the trace cleanly (the writer writes its own footer), none leaves the
 * trace without one, as a killed process's. Tests write traces of any shape with it, the ones
 * the workloads cannot make (escapes in names, device uuids, a trace twice, ...).
 */

#define MAX_LINE  (1u << 20)
#define MAX_BYTES 8 /* BYTES fields of one record */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses a BYTES value at *pp into buf (cap bytes); returns its length or -1. */
static int parse_bytes(char **pp, bool binary, uint8_t *buf, size_t cap)
{
	char *p = *pp;
	size_t n = 0;

	if (*p == '-') {
		*pp = p + 1;
		return 0;
	}
	if (binary) {
		while (hexval(p[0]) >= 0 && hexval(p[1]) >= 0 && n < cap) {
			buf[n++] = (uint8_t)(hexval(p[0]) << 4 | hexval(p[1]));
			p += 2;
		}
		*pp = p;
		return (int)n;
	}
	if (*p++ != '"')
		return -1;
	while (*p && *p != '"' && n < cap) {
		if (*p != '\\') {
			buf[n++] = (uint8_t)*p++;
			continue;
		}
		p++;
		if (*p == 'n')
			buf[n++] = '\n', p++;
		else if (*p == 't')
			buf[n++] = '\t', p++;
		else if (*p == 'x' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0)
			buf[n++] = (uint8_t)(hexval(p[1]) << 4 | hexval(p[2])), p += 3;
		else if (*p)
			buf[n++] = (uint8_t)*p++;
	}
	if (*p != '"')
		return -1;
	*pp = p + 1;
	return (int)n;
}

static int parse_ips(char **pp, uint64_t *ips, uint32_t *depth)
{
	char *p = *pp;

	*depth = 0;
	if (*p++ != '[')
		return -1;
	while (*p && *p != ']' && *depth < GW_MAX_STACK_DEPTH) {
		ips[(*depth)++] = strtoull(p, &p, 0);
		if (*p == ',')
			p++;
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return 0;
}

/* Fills rec from one line; returns 1, 0 for a line to skip, -1 for a bad one. */
static int parse_line(char *line, struct gw_record *rec, uint8_t bufs[MAX_BYTES][MAX_LINE / 8],
		      uint64_t *ips)
{
	const struct gw_record_info *info = NULL;
	char *p = line, *name;
	unsigned nbytes = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '#' || !strncmp(p, "END ", 4))
		return 0;
	name = p;
	while (*p && *p != ' ')
		p++;
	if (*p)
		*p++ = '\0';
	for (unsigned t = 0; t < GW_REC_ID_LIMIT && !info; t++)
		if (gw_record_info(t) && !strcmp(gw_record_info(t)->name, name))
			info = gw_record_info(t);
	if (!info)
		return -1;
	memset(rec, 0, sizeof(*rec));
	rec->type = info->type;
	rec->version = info->version;
	while (*p) {
		const struct gw_field_info *f = NULL;
		uint8_t *field;
		char *key = p;

		while (*p == ' ')
			key = ++p;
		if (!*p)
			break;
		while (*p && *p != '=')
			p++;
		if (*p != '=')
			return -1;
		*p++ = '\0';
		if (!strcmp(key, "version")) {
			rec->version = (uint8_t)strtoul(p, &p, 10);
			continue;
		}
		for (unsigned i = 0; i < info->nfields && !f; i++)
			if (!strcmp(info->fields[i].name, key))
				f = &info->fields[i];
		if (!f)
			return -1;
		field = (uint8_t *)&rec->header + f->offset;
		switch (f->kind) {
		case GW_FIELD_I64:
			*(int64_t *)field = strtoll(p, &p, 10);
			break;
		case GW_FIELD_BYTES: {
			struct gw_bytes *b = (struct gw_bytes *)field;
			int n;

			if (nbytes == MAX_BYTES)
				return -1;
			n = parse_bytes(&p, gw_field_is_binary(f), bufs[nbytes], MAX_LINE / 8);
			if (n < 0)
				return -1;
			*b = (struct gw_bytes){bufs[nbytes++], (uint32_t)n};
			break;
		}
		case GW_FIELD_IPS: {
			struct gw_ips *s = (struct gw_ips *)field;

			if (parse_ips(&p, ips, &s->depth) < 0)
				return -1;
			s->ips = ips;
			break;
		}
		default:
			*(uint64_t *)field = strtoull(p, &p, 10);
			break;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	static uint8_t bufs[MAX_BYTES][MAX_LINE / 8];
	static uint64_t ips[GW_MAX_STACK_DEPTH];
	struct gw_writer_options opt = {.thread_buffer_bytes = 64u << 20};
	char *line = malloc(MAX_LINE);
	struct gw_record rec;
	bool started = false, footer = false;
	unsigned long lineno = 0, n = 0;
	FILE *in;
	int r;

	if (argc != 3 || !line) {
		fprintf(stderr, "usage: undump IN.txt OUT.trace.zst\n");
		return 2;
	}
	if (!(in = fopen(argv[1], "r"))) {
		perror(argv[1]);
		return 1;
	}
	opt.fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (opt.fd < 0) {
		perror(argv[2]);
		return 1;
	}
	while (fgets(line, MAX_LINE, in)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		r = parse_line(line, &rec, bufs, ips);
		if (r == 0)
			continue;
		if (r < 0 || (!started && rec.type != GW_REC_HEADER)) {
			fprintf(stderr, "undump: %s:%lu: cannot read the record\n", argv[1],
				lineno);
			return 1;
		}
		if (!started) {
			if ((r = gw_writer_start(&opt, &rec.header)) < 0) {
				fprintf(stderr, "undump: writer: %s\n", strerror(-r));
				return 1;
			}
			started = true;
			continue;
		}
		if (rec.type == GW_REC_FOOTER) {
			footer = true;
			continue;
		}
		if (!gw_emit(rec.type, &rec.header)) {
			fprintf(stderr, "undump: record %lu dropped\n", lineno);
			return 1;
		}
		if (++n % 10000 == 0)
			gw_writer_flush(10ull * 1000 * 1000 * 1000);
	}
	fclose(in);
	free(line);
	if (!started) {
		fprintf(stderr, "undump: %s: no HEADER line\n", argv[1]);
		return 1;
	}
	r = gw_writer_stop(footer, 0);
	return r < 0 ? 1 : 0;
}
