/* SPDX-License-Identifier: MIT */
/* gpuwhy-report: reads gpuwhy traces; parses options, then dispatches to one mode. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "dump.h"
#include "report-html.h"
#include "report-json.h"
#include "report-perfetto.h"
#include "report-text.h"
#include "trace-reader.h"

enum gw_report_mode {
	GW_MODE_REPORT, /* the SM-time report */
	GW_MODE_DUMP,	/* every record as text */
};

struct gw_report_args {
	enum gw_report_mode mode;
	char **traces;
	int ntraces;
	const char *html;     /* --html FILE */
	const char *perfetto; /* --perfetto FILE */
	bool json;	      /* --json: JSON instead of text on stdout */
	uint64_t tiny_ns;     /* --tiny-us */
	uint64_t starve_ns;   /* --starve-us */
};

/* Exit codes (DESIGN.md): 0 ok, 1 an input is not a readable trace, 2 usage. */
enum {
	GW_EXIT_OK = 0,
	GW_EXIT_UNREADABLE = 1,
	GW_EXIT_USAGE = 2,
};

enum {
	GW_OPT_DUMP = 0x100,
	GW_OPT_HTML,
	GW_OPT_PERFETTO,
	GW_OPT_JSON,
	GW_OPT_TINY_US,
	GW_OPT_STARVE_US,
};

static const struct option long_options[] = {
	{"dump", no_argument, NULL, GW_OPT_DUMP},
	{"html", required_argument, NULL, GW_OPT_HTML},
	{"perfetto", required_argument, NULL, GW_OPT_PERFETTO},
	{"json", no_argument, NULL, GW_OPT_JSON},
	{"tiny-us", required_argument, NULL, GW_OPT_TINY_US},
	{"starve-us", required_argument, NULL, GW_OPT_STARVE_US},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
	fputs("usage: gpuwhy-report [OPTIONS] TRACE...\n"
	      "       gpuwhy-report --dump TRACE...\n"
	      "\n"
	      "  --json           the report as JSON (schema gpuwhy-report/1) on stdout\n"
	      "  --tiny-us N      a kernel shorter than N us is tiny (10)\n"
	      "  --starve-us N    a starved gap up to N us is launch overhead, longer is host\n"
	      "                   work (100)\n"
	      "  --html FILE      also write a self-contained HTML page (charts, sites)\n"
	      "  --perfetto FILE  also write Chrome trace-event JSON (ui.perfetto.dev)\n"
	      "  --dump           print every record of the trace as one line of text\n"
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
		case GW_OPT_HTML:
			ret->html = optarg;
			break;
		case GW_OPT_PERFETTO:
			ret->perfetto = optarg;
			break;
		case GW_OPT_JSON:
			ret->json = true;
			break;
		case GW_OPT_TINY_US:
		case GW_OPT_STARVE_US: {
			char *end;
			unsigned long long us;

			errno = 0;
			us = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    us > UINT64_MAX / 1000) {
				fprintf(stderr, "gpuwhy-report: %s: not a number of microseconds\n",
					optarg);
				return -1;
			}
			*(c == GW_OPT_TINY_US ? &ret->tiny_ns : &ret->starve_ns) = us * 1000;
			break;
		}
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

/* --html and --perfetto, after the analysis. Returns an exit code. */
static int write_exports(const struct gw_report_args *args, const struct gw_analysis *a,
			 const struct gw_analysis_options *opt)
{
	int err;

	if (args->html) {
		err = gw_report_html(a, opt, args->html);
		if (err < 0) {
			fprintf(stderr, "gpuwhy-report: %s: %s\n", args->html, strerror(-err));
			return GW_EXIT_UNREADABLE;
		}
	}
	if (args->perfetto) {
		err = gw_report_perfetto(a, (const char *const *)args->traces, args->ntraces,
					 args->perfetto);
		if (err < 0) {
			fprintf(stderr, "gpuwhy-report: %s: %s\n", args->perfetto,
				err == -EBADMSG || err == -EPROTONOSUPPORT ? gw_reader_strerror(err)
									   : strerror(-err));
			return GW_EXIT_UNREADABLE;
		}
	}
	return GW_EXIT_OK;
}

/* Progress on a terminal's stderr only; the line is cleared when the analysis ends. */
static void progress(void *ctx, int i, int n, uint64_t done, uint64_t size)
{
	char **traces = ctx;

	fprintf(stderr, "\rgpuwhy-report: reading %s (%d/%d) %3.0f%%", traces[i], i + 1, n,
		size ? 100.0 * (double)done / (double)size : 0.0);
}

static int run_report(const struct gw_report_args *args)
{
	struct gw_analysis_options opt;
	struct gw_analysis *a = NULL;
	int failed = -1, err, code;

	gw_analysis_options_init(&opt);
	if (args->tiny_ns != UINT64_MAX)
		opt.tiny_ns = args->tiny_ns;
	if (args->starve_ns != UINT64_MAX)
		opt.starve_ns = args->starve_ns;
	if (isatty(STDERR_FILENO)) {
		opt.progress = progress;
		opt.progress_ctx = args->traces;
	}
	if (args->html)
		gw_report_html_options(&opt);
	if (args->perfetto)
		gw_report_perfetto_options(&opt);
	err = gw_analyze_files((const char *const *)args->traces, args->ntraces, &opt, &a, &failed);
	if (opt.progress)
		fputs("\r\033[K", stderr);
	if (err < 0) {
		fprintf(stderr, "gpuwhy-report: %s: %s\n",
			failed >= 0 ? args->traces[failed] : "analysis", gw_reader_strerror(err));
		return GW_EXIT_UNREADABLE;
	}
	code = write_exports(args, a, &opt);
	if (code == GW_EXIT_OK) {
		const char *nc = secure_getenv("NO_COLOR");
		bool color = isatty(STDOUT_FILENO) && !(nc && nc[0]);

		err = args->json ? gw_report_json(a, &opt, stdout)
				 : gw_report_text(a, &opt, stdout, color);
		if (fflush(stdout) != 0 || err < 0) {
			fprintf(stderr, "gpuwhy-report: writing the report: %s\n", strerror(EIO));
			code = GW_EXIT_UNREADABLE;
		}
	}
	gw_analysis_free(a);
	return code;
}

int main(int argc, char **argv)
{
	struct gw_report_args args = {
		.mode = GW_MODE_REPORT, .tiny_ns = UINT64_MAX, .starve_ns = UINT64_MAX};

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
