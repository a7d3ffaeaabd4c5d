/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --dump`: a trace as text, one line per record, driven by the codec tables. */
#include <inttypes.h>

#include "dump.h"
#include "gpuwhy/trace-codec.h"
#include "source.h"

static void print_bytes(const struct gw_bytes *b, bool binary, FILE *out)
{
	if (binary) {
		for (uint32_t i = 0; i < b->len; i++)
			fprintf(out, "%02x", b->data[i]);
		if (!b->len)
			fputs("-", out);
		return;
	}
	fputc('"', out);
	for (uint32_t i = 0; i < b->len; i++) {
		uint8_t c = b->data[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_ips(const struct gw_ips *s, FILE *out)
{
	fputc('[', out);
	for (uint32_t i = 0; i < s->depth; i++)
		fprintf(out, "%s0x%" PRIx64, i ? "," : "", s->ips[i]);
	fputc(']', out);
}

void gw_dump_record(const struct gw_record *rec, FILE *out)
{
	const struct gw_record_info *info = gw_record_info(rec->type);
	const uint8_t *base = (const uint8_t *)&rec->header;

	if (!info) {
		fprintf(out, "UNKNOWN type=%u version=%u", rec->type, rec->version);
		return;
	}
	fputs(info->name, out);
	if (rec->version != info->version)
		fprintf(out, " version=%u", rec->version);
	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		const void *p = base + f->offset;

		fprintf(out, " %s=", f->name);
		switch (f->kind) {
		case GW_FIELD_I64:
			fprintf(out, "%" PRId64, *(const int64_t *)p);
			break;
		case GW_FIELD_BYTES:
			print_bytes(p, gw_field_is_binary(f), out);
			break;
		case GW_FIELD_IPS:
			print_ips(p, out);
			break;
		default:
			fprintf(out, "%" PRIu64, *(const uint64_t *)p);
			break;
		}
	}
}

int gw_dump_trace(const char *path, const struct gw_source_type *format, FILE *out)
{
	struct gw_source *src = NULL;
	struct gw_record rec;
	uint64_t n = 0;
	int err;

	err = gw_source_open(path, format, &src);
	if (err < 0)
		return err;
	while ((err = gw_source_next(src, &rec)) > 0) {
		gw_dump_record(&rec, out);
		fputc('\n', out);
		n++;
	}
	/* the header is not counted, as the reader never counted it */
	if (err == 0)
		fprintf(out, "END records=%" PRIu64 " truncated=%d clean_exit=%d\n", n ? n - 1 : 0,
			src->truncated, src->clean_exit);
	gw_source_free(src);
	return err;
}
