/* SPDX-License-Identifier: MIT */
/* Fuzz target for the trace reader and the dump printer (with replay.c, a replay program). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "gpuwhy/trace-codec.h"
#include "trace-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same bytes as the content of one frame, straight into the record decoder: mutations
 * rarely survive zstd's checksum, so this is how the decoder itself gets explored. */
static void decode_as_frame(const uint8_t *data, size_t size, FILE *sink)
{
	static struct gw_codec_state cs;
	struct gw_record rec;
	size_t pos = 0, consumed;

	gw_codec_reset(&cs);
	while (pos < size) {
		int k = gw_decode_record(&cs, data + pos, size - pos, &rec, &consumed);

		if (k < 0)
			break;
		if (k > 0 && sink)
			gw_dump_record(&rec, sink);
		pos += consumed;
	}
}

/* Reads the input inline, printing every record, and through the decompression thread that
 * files of 64 KiB or more get; the two must agree call by call, or the target aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct gw_reader *r = NULL, *t = NULL;
	struct gw_record rec, trec;
	int k, tk;

	if (!sink)
		sink = fopen("/dev/null", "w");
	decode_as_frame(data, size, sink);
	k = gw_reader_open_memory_mode(data, size, GW_READER_INLINE, &r);
	tk = gw_reader_open_memory_mode(data, size, GW_READER_THREADED, &t);
	if (k != tk)
		abort();
	if (k < 0)
		return 0;
	do {
		k = gw_reader_next(r, &rec);
		/* the printer touches every field, every byte of BYTES and every IPS entry */
		if (k > 0 && sink)
			gw_dump_record(&rec, sink);
		tk = gw_reader_next(t, &trec);
		if (k != tk || gw_reader_bytes_read(r) != gw_reader_bytes_read(t))
			abort();
		if (k > 0 && (rec.type != trec.type || rec.version != trec.version))
			abort();
		if (k > 0 && sink)
			gw_dump_record(&trec, sink);
	} while (k > 0);
	if (gw_reader_truncated(r) != gw_reader_truncated(t) ||
	    gw_reader_clean_exit(r) != gw_reader_clean_exit(t) ||
	    gw_reader_skipped(r, NULL) != gw_reader_skipped(t, NULL))
		abort();
	gw_reader_free(r);
	gw_reader_free(t);
	return 0;
}
