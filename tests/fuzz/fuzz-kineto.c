/* SPDX-License-Identifier: MIT */
/* Fuzz target for the kineto source (with replay.c, a replay program): any bytes as a trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "dump.h"
#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Ids a record refers to must have been given before it: a bitmap per id space. */
struct seen {
	uint8_t strings[1 << 17], frames[1 << 17], stacks[1 << 17];
};

/* Ids past the bitmaps are not checked. */
static bool has(const uint8_t *set, uint64_t id)
{
	return id >= (1u << 20) || (set[id >> 3] >> (id & 7) & 1);
}

static void put(uint8_t *set, uint64_t id)
{
	if (id < (1u << 20))
		set[id >> 3] |= (uint8_t)(1u << (id & 7));
}

/* What the source promises besides "no crash": the HEADER first, each STRING, FRAME and STACK
 * before the records that name it, stacks of FRAME ids no deeper than the format allows. */
static void check(const struct gw_record *r, uint64_t n, struct seen *s)
{
	bool ok = n > 0 || r->type == GW_REC_HEADER;

	switch (r->type) {
	case GW_REC_HEADER:
		ok = n == 0;
		break;
	case GW_REC_STRING:
		put(s->strings, r->string.id);
		break;
	case GW_REC_FRAME:
		ok = has(s->strings, r->frame.function_id) &&
		     (!r->frame.file_id || has(s->strings, r->frame.file_id));
		put(s->frames, r->frame.id);
		break;
	case GW_REC_STACK:
		ok = r->stack.ips_kind == GW_STACK_FRAMES &&
		     r->stack.ips.depth <= GW_MAX_STACK_DEPTH;
		for (uint32_t i = 0; ok && i < r->stack.ips.depth; i++)
			ok = has(s->frames, r->stack.ips.ips[i]);
		put(s->stacks, r->stack.id);
		break;
	case GW_REC_KERNEL:
		ok = has(s->strings, r->kernel.name_id) && r->kernel.end_ns >= r->kernel.start_ns;
		break;
	case GW_REC_API:
		ok = has(s->strings, r->api.name_id) &&
		     (!r->api.stack_id || has(s->stacks, r->api.stack_id));
		break;
	case GW_REC_MEMORY:
		ok = r->memory.mem_kind == GW_MEM_TENSOR &&
		     (!r->memory.stack_id || has(s->stacks, r->memory.stack_id));
		break;
	}
	if (!ok) {
		fprintf(stderr, "fuzz-kineto: record %llu breaks the source's promises: ",
			(unsigned long long)n);
		gw_dump_record(r, stderr);
		fputc('\n', stderr);
		abort();
	}
}

/* Reads the file at path as a Kineto trace (forced, or found from the content). */
static void read_all(const char *path, bool forced, FILE *sink)
{
	static struct seen seen;
	struct gw_source *s = NULL;
	struct gw_record r;
	uint64_t n = 0;
	int k;

	if (gw_source_open(path, forced ? gw_source_type_by_name("kineto") : NULL, &s) < 0)
		return;
	memset(&seen, 0, sizeof(seen));
	while ((k = gw_source_next(s, &r)) > 0) {
		if (strcmp(s->type->name, "kineto") == 0)
			check(&r, n, &seen);
		if (sink)
			gw_dump_record(&r, sink);
		n++;
	}
	gw_source_free(s);
}

static int to_memfd(const uint8_t *data, size_t size, char *path, size_t cap)
{
	int fd = memfd_create("fuzz-kineto", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

/* The input as a file of its own, forced and detected; then gzip-compressed, whole and cut. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char path[64];
	uint8_t *gz = NULL;
	z_stream z = {0};
	int fd;

	if (!sink)
		sink = fopen("/dev/null", "w");
	fd = to_memfd(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	read_all(path, true, sink);
	read_all(path, false, sink);
	close(fd);
	if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	gz = malloc(deflateBound(&z, size));
	if (gz) {
		z.next_in = (Bytef *)data;
		z.avail_in = (uInt)size;
		z.next_out = gz;
		z.avail_out = (uInt)deflateBound(&z, size);
		if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
			size_t n = z.total_out;

			/* whole, then cut in its last third */
			for (int cut = 0; cut < 2; cut++) {
				fd = to_memfd(gz, cut ? n - n / 3 : n, path, sizeof(path));
				if (fd < 0)
					break;
				read_all(path, false, sink);
				close(fd);
			}
		}
	}
	deflateEnd(&z);
	free(gz);
	return 0;
}
