/* SPDX-License-Identifier: MIT */
/* A trace reader written as a third party would: the installed headers and libzstd only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <gpuwhy/trace-codec.h>
#include <gpuwhy/trace-format.h>

/*
 * usage: third-party-reader TRACE
 * Prints "NAME count" for every record type of the trace, the HEADER in the file header
 * included, then "frames N". Checks the file header by doc/trace-format.md; decompresses each
 * data frame on its own and decodes its records with cursors reset at the frame's start. Exit
 * 1 on anything it cannot read (this program does not try to keep a cut trace's prefix).
 */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t counts[GW_REC_ID_LIMIT];

/* Decodes every record of one decompressed frame (or the header's content). */
static int decode_all(const uint8_t *p, size_t len)
{
	struct gw_codec_state *st = malloc(sizeof(*st));
	struct gw_record rec;
	size_t used;
	int r = 0;

	if (!st)
		return -ENOMEM;
	gw_codec_reset(st);
	while (len > 0) {
		r = gw_decode_record(st, p, len, &rec, &used);
		if (r < 0)
			break;
		counts[rec.type]++; /* unknown types too: they were skipped by length */
		p += used;
		len -= used;
		r = 0;
	}
	free(st);
	return r;
}

int main(int argc, char **argv)
{
	uint8_t *file = NULL, *out = NULL;
	size_t size = 0, cap = 0, n, pos, hsize, outcap = 64u << 20;
	unsigned frames = 0;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "rb")))
		return 1;
	do {
		if (size == cap && !(file = realloc(file, cap = cap ? 2 * cap : 1 << 20)))
			return 1;
		n = fread(file + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);

	/* the file header: a skippable frame holding the magic, the version and a HEADER */
	if (size < 20 || le32(file) != GW_SKIPPABLE_MAGIC ||
	    memcmp(file + 8, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN) != 0 ||
	    le32(file + 16) > GW_FORMAT_VERSION)
		return 1;
	hsize = le32(file + 4);
	if (hsize < 12 || 8 + hsize > size || decode_all(file + 20, hsize - 12) < 0)
		return 1;
	out = malloc(outcap);
	if (!out)
		return 1;
	for (pos = 8 + hsize; pos < size;) {
		size_t csize = ZSTD_findFrameCompressedSize(file + pos, size - pos);
		size_t dsize;

		if (ZSTD_isError(csize))
			return 1;
		/* skippable frames (magic 0x184D2A5?) hold no records */
		if (size - pos >= 4 && (le32(file + pos) & 0xfffffff0u) == 0x184d2a50u) {
			pos += csize;
			continue;
		}
		dsize = ZSTD_decompress(out, outcap, file + pos, csize);
		if (ZSTD_isError(dsize) || decode_all(out, dsize) < 0)
			return 1;
		frames++;
		pos += csize;
	}
	for (unsigned t = 0; t < GW_REC_ID_LIMIT; t++) {
		const struct gw_record_info *info = gw_record_info(t);

		if (counts[t])
			printf("%s %llu\n", info ? info->name : "UNKNOWN",
			       (unsigned long long)counts[t]);
	}
	printf("frames %u\n", frames);
	free(out);
	free(file);
	return 0;
}
