/* SPDX-License-Identifier: MIT */
/* gpuwhy-report: reads gpuwhy traces; parses options, then dispatches to one mode. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "dump.h"
#include "trace-reader.h"

enum gw_report_mode {
	GW_MODE_REPORT, /* the SM-time report */
	GW_MODE_DUMP,	/* every record as text */
};

struct gw_report_args {
	enum gw_report_mode mode;
	char **traces;
	int ntraces;
};

/* Exit codes (DESIGN.md): 0 ok, 1 an input is not a readable trace, 2 usage. */
enum {
	GW_EXIT_OK = 0,
	GW_EXIT_UNREADABLE = 1,
	GW_EXIT_USAGE = 2,
};

enum {
	GW_OPT_DUMP = 0x100,
};

static const struct option long_options[] = {
	{"dump", no_argument, NULL, GW_OPT_DUMP},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
	fputs("usage: gpuwhy-report [OPTIONS] TRACE...\n"
	      "       gpuwhy-report --dump TRACE...\n"
	      "\n"
	      "  --dump    print every record of the trace as one line of text\n"
	      "  -h, --help\n",
	      out);
}

static int parse_args(int argc, char **argv, struct gw_report_args *ret)
{
	int c;

	opterr = 0; /* errors are printed here, with the program's name rather than argv[0] */
	while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (c) {
		case GW_OPT_DUMP:
			ret->mode = GW_MODE_DUMP;
			break;
		case 'h':
			usage(stdout);
			exit(GW_EXIT_OK);
		default:
			fprintf(stderr, "gpuwhy-report: unknown option or missing argument: %s\n",
				argv[optind - 1]);
			return -1;
		}
	}
	ret->traces = argv + optind;
	ret->ntraces = argc - optind;
	if (ret->ntraces < 1) {
		fputs("gpuwhy-report: no trace given\n", stderr);
		return -1;
	}
	return 0;
}

static int run_dump(const struct gw_report_args *args)
{
	for (int i = 0; i < args->ntraces; i++) {
		int err = gw_dump_trace(args->traces[i], stdout);

		if (err < 0) {
			fflush(stdout);
			fprintf(stderr, "gpuwhy-report: %s: %s\n", args->traces[i],
				gw_reader_strerror(err));
			return GW_EXIT_UNREADABLE;
		}
	}
	return GW_EXIT_OK;
}

static int run_report(const struct gw_report_args *args)
{
	(void)args;
	fputs("gpuwhy-report: this build has no report yet; use --dump\n", stderr);
	return GW_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct gw_report_args args = {.mode = GW_MODE_REPORT};

	if (parse_args(argc, argv, &args) < 0) {
		usage(stderr);
		return GW_EXIT_USAGE;
	}
	switch (args.mode) {
	case GW_MODE_DUMP:
		return run_dump(&args);
	case GW_MODE_REPORT:
	default:
		return run_report(&args);
	}
}
