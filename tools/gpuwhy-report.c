/* SPDX-License-Identifier: MIT */
/* gpuwhy-report: reads gpuwhy traces; parses options, then dispatches to one mode. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "cli-args.h"
#include "dump.h"
#include "output.h"
#include "report-html.h"
#include "report-json.h"
#include "report-perfetto.h"
#include "report-options.h"
#include "report-text.h"
#include "source.h"

enum gw_report_mode {
	GW_MODE_REPORT, /* the SM-time report */
	GW_MODE_DUMP,	/* every record as text */
};

struct gw_report_cmd {
	enum gw_report_mode mode;
	char **traces;
	int ntraces;
	struct gw_report_args opt; /* the report options (report-options.h) */
};

/* Exit codes (doc/design.md): 0 ok, 1 an input is not a readable trace, 2 usage. */
enum {
	GW_EXIT_OK = 0,
	GW_EXIT_UNREADABLE = 1,
	GW_EXIT_USAGE = 2,
};

enum {
	GW_OPT_DUMP = 0x100,
};

static const char gw_prog[] = "gpuwhy-report";

static void usage(FILE *out)
{
	fputs("usage: gpuwhy-report [OPTIONS] TRACE...\n"
	      "       gpuwhy-report --dump TRACE...\n"
	      "\n",
	      out);
	gw_report_options_help(out, false);
	fputs("  --dump           print every record of the trace as one line of text\n"
	      "  -h, --help\n"
	      "\n"
	      "TRACE: a gpuwhy trace (.trace.zst), a torch.profiler JSON trace (.json, .json.gz)\n"
	      "or an Nsight Systems SQLite export; several TRACEs make one report.\n"
	      "N: microseconds, a decimal such as 10 or 2.5 (at most 3 decimals), 0 to "
	      "1000000000.\n"
	      "FILE: replaced only once complete; '-' is standard output.\n"
	      "Exit status: 0 ok, 1 a TRACE cannot be read, 2 a usage error.\n",
	      out);
}

/* The same file, when both exist. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The output files, checked before any trace is read so that a bad one costs no wait. */
static int check_outputs(const struct gw_report_cmd *args)
{
	const char *outs[2][2] = {{"--html", args->opt.html}, {"--perfetto", args->opt.perfetto}};

	for (int i = 0; i < 2; i++) {
		const char *opt = outs[i][0], *path = outs[i][1];

		if (!path)
			continue;
		if (gw_cli_check_output(gw_prog, opt, path) < 0)
			return -1;
		for (int t = 0; strcmp(path, "-") != 0 && t < args->ntraces; t++) {
			if (same_file(path, args->traces[t])) {
				gw_cli_error(stderr, gw_prog, opt, path,
					     "is one of the input traces, which would be lost");
				return -1;
			}
		}
	}
	if (args->opt.html && args->opt.perfetto && same_file(args->opt.html, args->opt.perfetto)) {
		gw_cli_error(stderr, gw_prog, "--perfetto", args->opt.perfetto,
			     "--html names the same file");
		return -1;
	}
	return 0;
}

static bool exports_to_stdout(const struct gw_report_cmd *args)
{
	return (args->opt.html && strcmp(args->opt.html, "-") == 0) ||
	       (args->opt.perfetto && strcmp(args->opt.perfetto, "-") == 0);
}

static int parse_args(int argc, char **argv, struct gw_report_cmd *ret)
{
	struct option opts[GW_ROPT_COUNT + 3] = {
		{"dump", no_argument, NULL, GW_OPT_DUMP},
		{"help", no_argument, NULL, 'h'},
	};
	int c;

	gw_report_getopt(opts + 2, false);
	/* Errors are printed here, one line each, with the program's name rather than argv[0];
	 * the leading ':' tells a missing value apart from an unknown option. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case GW_OPT_DUMP:
			ret->mode = GW_MODE_DUMP;
			break;
		case 'h':
			usage(stdout);
			exit(GW_EXIT_OK);
		case ':':
			fprintf(stderr, "%s: option '%s' needs a value (%s --help)\n", gw_prog,
				argv[optind - 1], gw_prog);
			return -1;
		default:
			if (gw_is_report_option(c)) {
				if (gw_report_option(gw_prog, c, optarg, &ret->opt) < 0)
					return -1;
				break;
			}
			if (optopt > 0 && optopt < 0x100)
				fprintf(stderr, "%s: unknown option '-%c' (%s --help)\n", gw_prog,
					optopt, gw_prog);
			else if (optopt)
				fprintf(stderr, "%s: option '%s' takes no value\n", gw_prog,
					argv[optind - 1]);
			else
				fprintf(stderr, "%s: unknown option '%s' (%s --help)\n", gw_prog,
					argv[optind - 1], gw_prog);
			return -1;
		}
	}
	ret->traces = argv + optind;
	ret->ntraces = argc - optind;
	/* --format chooses how --dump reads too; the others shape a report it does not make */
	if (ret->mode == GW_MODE_DUMP && ret->opt.shapes_report) {
		fprintf(stderr, "%s: --dump prints the records only; %s does not go with it\n",
			gw_prog, ret->opt.shapes_report);
		return -1;
	}
	if (ret->ntraces < 1) {
		fprintf(stderr, "%s: no TRACE given (%s --help)\n", gw_prog, gw_prog);
		return -1;
	}
	if (ret->opt.json && exports_to_stdout(ret)) {
		fprintf(stderr, "%s: --json and %s - cannot both be standard output\n", gw_prog,
			ret->opt.html && !strcmp(ret->opt.html, "-") ? "--html" : "--perfetto");
		return -1;
	}
	if (ret->opt.html && ret->opt.perfetto && strcmp(ret->opt.html, "-") == 0 &&
	    strcmp(ret->opt.perfetto, "-") == 0) {
		fprintf(stderr, "%s: --html and --perfetto cannot both be standard output\n",
			gw_prog);
		return -1;
	}
	return check_outputs(ret);
}

/*
 * Every TRACE exists, is a file and can be read, before the first is analysed; the reader
 * says the same for these, but only after reading the traces before them. Returns an exit code.
 */
static int check_traces(const struct gw_report_cmd *args)
{
	for (int i = 0; i < args->ntraces; i++) {
		const char *path = args->traces[i];
		struct stat st;
		int e = 0;

		if (stat(path, &st) < 0)
			e = errno;
		else if (S_ISDIR(st.st_mode))
			e = EISDIR;
		else if (access(path, R_OK) < 0)
			e = errno;
		if (e) {
			fprintf(stderr, "%s: %s: %s\n", gw_prog, path, gw_source_strerror(-e));
			return GW_EXIT_UNREADABLE;
		}
	}
	return GW_EXIT_OK;
}

static int run_dump(const struct gw_report_cmd *args)
{
	for (int i = 0; i < args->ntraces; i++) {
		int err = gw_dump_trace(args->traces[i], args->opt.format, stdout);

		if (err < 0) {
			fflush(stdout);
			fprintf(stderr, "gpuwhy-report: %s: %s\n", args->traces[i],
				gw_source_strerror(err));
			return GW_EXIT_UNREADABLE;
		}
	}
	return GW_EXIT_OK;
}

/* Renders a to path through report/output.h. Returns an exit code. */
static int export(const char *path, const struct gw_analysis *a,
		  const struct gw_analysis_options *opt, const struct gw_report_args *ra)
{
	struct gw_output *out;
	int err = gw_output_begin(path, &out);

	if (err >= 0) {
		FILE *f = gw_output_stream(out);

		if (path == ra->html)
			err = gw_report_html(a, opt, f);
		else
			err = gw_report_perfetto(a,
						 ra->perfetto_max_events == UINT64_MAX
							 ? GW_PERFETTO_MAX_EVENTS
							 : ra->perfetto_max_events,
						 f);
		err = gw_output_finish(out, err);
	}
	if (err < 0) {
		fprintf(stderr, "%s: %s: %s\n", gw_prog, path, strerror(-err));
		return GW_EXIT_UNREADABLE;
	}
	return GW_EXIT_OK;
}

/* --html and --perfetto, after the analysis. Returns an exit code. */
static int write_exports(const struct gw_report_cmd *args, const struct gw_analysis *a,
			 const struct gw_analysis_options *opt)
{
	int code = GW_EXIT_OK;

	if (args->opt.html)
		code = export(args->opt.html, a, opt, &args->opt);
	if (args->opt.perfetto && code == GW_EXIT_OK)
		code = export(args->opt.perfetto, a, opt, &args->opt);
	return code;
}

/* Progress on a terminal's stderr only; the line is cleared when the analysis ends. */
static void progress(void *ctx, int i, int n, uint64_t done, uint64_t size)
{
	char **traces = ctx;

	fprintf(stderr, "\rgpuwhy-report: reading %s (%d/%d) %3.0f%%", traces[i], i + 1, n,
		size ? 100.0 * (double)done / (double)size : 0.0);
}

static int run_report(const struct gw_report_cmd *args)
{
	struct gw_analysis_options opt;
	struct gw_analysis *a = NULL;
	struct gw_inputs in = {
		.paths = (const char *const *)args->traces,
		.n = args->ntraces,
		.format = args->opt.format,
	};
	int err, code;

	gw_analysis_options_init(&opt);
	gw_report_analysis_options(&args->opt, &opt);
	if (isatty(STDERR_FILENO)) {
		opt.progress = progress;
		opt.progress_ctx = args->traces;
	}
	if (args->opt.html)
		gw_report_html_options(&opt);
	if (args->opt.perfetto)
		gw_report_perfetto_options(&opt);
	err = gw_analyze_files(&in, &opt, &a);
	if (opt.progress)
		fputs("\r\033[K", stderr);
	if (err < 0) {
		fprintf(stderr, "gpuwhy-report: %s: %s\n",
			in.failed >= 0 ? args->traces[in.failed] : "analysis", in.reason);
		return GW_EXIT_UNREADABLE;
	}
	code = write_exports(args, a, &opt);
	/* An export to standard output is all that goes there: a report after it would make
	 * the page or the JSON unreadable. */
	if (code == GW_EXIT_OK && !exports_to_stdout(args)) {
		const char *nc = secure_getenv("NO_COLOR");
		bool color = isatty(STDOUT_FILENO) && !(nc && nc[0]);

		struct gw_output *out;

		err = gw_output_begin("-", &out);
		if (err >= 0) {
			FILE *f = gw_output_stream(out);

			err = args->opt.json ? gw_report_json(a, &opt, f)
					     : gw_report_text(a, &opt, f, color);
			err = gw_output_finish(out, err);
		}
		if (err < 0) {
			fprintf(stderr, "gpuwhy-report: writing the report: %s\n", strerror(-err));
			code = GW_EXIT_UNREADABLE;
		}
	}
	gw_analysis_free(a);
	return code;
}

int main(int argc, char **argv)
{
	struct gw_report_cmd args = {.mode = GW_MODE_REPORT};

	gw_report_args_init(&args.opt);

	if (parse_args(argc, argv, &args) < 0)
		return GW_EXIT_USAGE;
	if (check_traces(&args) != GW_EXIT_OK)
		return GW_EXIT_UNREADABLE;
	gw_output_catch_signals();
	switch (args.mode) {
	case GW_MODE_DUMP:
		return run_dump(&args);
	case GW_MODE_REPORT:
	default:
		return run_report(&args);
	}
}
