/* SPDX-License-Identifier: MIT */
/* JSON throughput of the kineto source on one core: yajl alone, and the source's records. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "source.h"

/*
 * usage: bench-kineto FILE.json...   (uncompressed JSON: the figure is JSON bytes per second)
 *
 * For each file, in one process, alternating seven times and keeping the fastest of each (the
 * shared VM this runs on slows single runs by up to a third):
 * yajl tokenizing the file with callbacks that do nothing (the parser's own ceiling), then
 * the kineto source yielding every record (gw_source_next; the analysis not included). CPU
 * time of this thread, so a busy machine slows the figures less than wall time would.
 */

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int nop(void *ctx)
{
	(void)ctx;
	return 1;
}

static int nop_bool(void *ctx, int b)
{
	(void)ctx;
	(void)b;
	return 1;
}

static int nop_text(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
	return 1;
}

static int nop_str(void *ctx, const unsigned char *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
	return 1;
}

/* yajl over the file with empty callbacks (raw numbers, as the source asks for them). */
static int yajl_alone(const char *path, double *ret_s)
{
	static const yajl_callbacks cbs = {
		.yajl_null = nop,
		.yajl_boolean = nop_bool,
		.yajl_number = nop_text,
		.yajl_string = nop_str,
		.yajl_start_map = nop,
		.yajl_map_key = nop_str,
		.yajl_end_map = nop,
		.yajl_start_array = nop,
		.yajl_end_array = nop,
	};
	static unsigned char buf[256 * 1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	yajl_handle y;
	ssize_t n;
	double t0;

	if (fd < 0)
		return -errno;
	y = yajl_alloc(&cbs, NULL, NULL);
	yajl_config(y, yajl_dont_validate_strings, 1);
	t0 = cpu_s();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (yajl_parse(y, buf, (size_t)n) != yajl_status_ok) {
			r = -EBADMSG;
			break;
		}
	if (!r && yajl_complete_parse(y) != yajl_status_ok)
		r = -EBADMSG;
	*ret_s = cpu_s() - t0;
	yajl_free(y);
	close(fd);
	return r;
}

/* The kineto source, every record. */
static int source(const char *path, double *ret_s, uint64_t *ret_records, uint64_t *ret_bytes)
{
	struct gw_source *s = NULL;
	struct gw_record rec;
	uint64_t n = 0, size;
	double t0 = cpu_s();
	int r;

	r = gw_source_open(path, gw_source_type_by_name("kineto"), &s);
	if (r < 0)
		return r;
	while ((r = gw_source_next(s, &rec)) > 0)
		n++;
	*ret_s = cpu_s() - t0;
	gw_source_progress(s, ret_bytes, &size);
	gw_source_free(s);
	*ret_records = n;
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE.json...\n", argv[0]);
		return 2;
	}
	printf("%-40s %10s %12s %12s %12s %14s\n", "file", "MB", "yajl MB/s", "source MB/s",
	       "records", "records/s");
	for (int i = 1; i < argc; i++) {
		double ys = 1e30, ss = 1e30, t = 0;
		uint64_t records = 0, bytes = 0;
		const char *base = strrchr(argv[i], '/');
		int r;

		for (int rep = 0; rep < 7; rep++) {
			if ((r = yajl_alone(argv[i], &t)) < 0)
				goto fail;
			ys = t < ys ? t : ys;
			if ((r = source(argv[i], &t, &records, &bytes)) < 0)
				goto fail;
			ss = t < ss ? t : ss;
		}
		printf("%-40.40s %10.1f %12.0f %12.0f %12" PRIu64 " %14.0f\n",
		       base ? base + 1 : argv[i], (double)bytes / 1e6, (double)bytes / 1e6 / ys,
		       (double)bytes / 1e6 / ss, records, (double)records / ss);
		continue;
	fail:
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[i], gw_source_strerror(r));
		return 1;
	}
	return 0;
}
