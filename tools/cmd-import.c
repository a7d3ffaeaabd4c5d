/* SPDX-License-Identifier: MIT */
/* `gpuwhy import IN -o OUT`: any trace the sources read, written as a gpuwhy .trace.zst. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli-args.h"
#include "output-path.h"
#include "report-options.h"
#include "commands.h"
#include "source.h"
#include "trace-writer.h"

/* The writer's thread ring, and how many records go in before the writer is asked to drain
 * it: far below what fills the ring, so no record is ever dropped. */
#define GW_IMPORT_RING_BYTES  (64u << 20)
#define GW_IMPORT_FLUSH_EVERY 16384
#define GW_IMPORT_FLUSH_NS    (60ull * 1000 * 1000 * 1000)

static int usage_error(const char *what)
{
	fprintf(stderr, "gpuwhy: import: %s (gpuwhy import [--format NAME] IN -o OUT)\n", what);
	return 2;
}

/* Copies the source's records into the writer started on fd. Returns 0 or -errno (-EBADMSG
 * and the source's reason for a source that failed; -EIO when the writer dropped a record). */
static int copy_records(struct gw_source *src, int fd, uint64_t *ret_records)
{
	struct gw_writer_options opt = {.fd = fd, .thread_buffer_bytes = GW_IMPORT_RING_BYTES};
	struct gw_writer_stats stats;
	struct gw_record rec;
	uint64_t n = 0;
	int r, stop;

	r = gw_source_next(src, &rec);
	if (r <= 0 || rec.type != GW_REC_HEADER) {
		close(fd);
		return r < 0 ? r : gw_source_fail(-EBADMSG, "the source yielded no header");
	}
	if ((r = gw_writer_start(&opt, &rec.header)) < 0)
		return r;
	while ((r = gw_source_next(src, &rec)) > 0) {
		if (rec.type == GW_REC_HEADER || rec.type == GW_REC_FOOTER)
			continue; /* the writer writes its own */
		if (!gw_emit(rec.type, &rec.header)) {
			r = -EIO;
			break;
		}
		if (++n % GW_IMPORT_FLUSH_EVERY == 0)
			gw_writer_flush(GW_IMPORT_FLUSH_NS);
	}
	/* Corrupt input after good records: the report keeps what came before, and so does the
	 * import, as a cut trace. */
	if (r == -EBADMSG && n > 0) {
		fprintf(stderr, "gpuwhy: %s: %s: the trace ends there\n", src->path,
			gw_source_strerror(r));
		src->truncated = true;
		r = 0;
	}
	/* a source cut short makes a trace without a footer: it reads as truncated too */
	stop = gw_writer_stop(r == 0 && !src->truncated, 0);
	gw_writer_get_stats(&stats);
	if (r >= 0 && stats.dropped)
		r = -EIO;
	*ret_records = n;
	return r < 0 ? r : stop;
}

int gw_cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, GW_ROPT_FORMAT},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct gw_report_args args;
	const char *out = NULL, *in;
	struct gw_source *src = NULL;
	uint64_t records = 0;
	int c, fd, r;

	gw_report_args_init(&args);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case GW_ROPT_FORMAT:
			if (gw_report_option("gpuwhy", c, optarg, &args) < 0)
				return 2;
			break;
		case 'h':
			gw_usage(stdout);
			return 0;
		case ':':
			return usage_error("an option needs a value");
		default:
			return usage_error("unknown option");
		}
	}
	if (optind != argc - 1)
		return usage_error(optind < argc ? "one input at a time" : "no input given");
	in = argv[optind];
	if (!out)
		return usage_error("no output given (-o OUT)");
	if (gw_cli_check_output("gpuwhy", "-o", out) < 0)
		return 2;
	if (access(out, F_OK) == 0) {
		gw_cli_error(stderr, "gpuwhy", "-o", out,
			     "exists, and traces are never overwritten");
		return 2;
	}

	if ((r = gw_source_open(in, args.format, &src)) < 0) {
		fprintf(stderr, "gpuwhy: %s: %s\n", in, gw_source_strerror(r));
		return 1;
	}
	/* never over an existing file, as the capture never does */
	fd = gw_output_open(out);
	if (fd < 0) {
		gw_cli_error(stderr, "gpuwhy", "-o", out, "%s%s", strerror(-fd),
			     fd == -EEXIST ? " (never overwritten)" : "");
		gw_source_free(src);
		return 1;
	}
	r = copy_records(src, fd, &records);
	if (r < 0) {
		fprintf(stderr, "gpuwhy: %s: %s\n", r == -EIO ? out : in,
			r == -EIO ? "records were lost writing the trace" : gw_source_strerror(r));
		unlink(out);
		gw_source_free(src);
		return 1;
	}
	fprintf(stderr, "gpuwhy: %s (%s): %llu records into %s%s\n", in, src->type->what,
		(unsigned long long)records, out,
		src->truncated ? "; the input was cut short, so is the trace" : "");
	gw_source_free(src);
	return 0;
}
