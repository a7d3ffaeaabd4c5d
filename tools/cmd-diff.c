/* SPDX-License-Identifier: MIT */
/* `gpuwhy diff BEFORE AFTER`: two runs (any format the report reads) compared, per step. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "cli-args.h"
#include "commands.h"
#include "diff.h"
#include "output.h"
#include "report-diff.h"
#include "report-options.h"
#include "source.h"

/* Sites kept per list on each side: more than the report shows, so the sides match. */
#define GW_DIFF_TOP_N 50

enum {
	GW_DIFF_OPT_VS = 0x100,
};

static int usage_error(const char *what)
{
	fprintf(stderr,
		"gpuwhy: diff: %s (gpuwhy diff [OPTIONS] BEFORE AFTER, or BEFORE... --vs "
		"AFTER...)\n",
		what);
	return 2;
}

/* Every input is a file that can be read, before the long work. Returns an exit code. */
static int check_inputs(char **paths, int n)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		int e = 0;

		if (stat(paths[i], &st) < 0)
			e = errno;
		else if (S_ISDIR(st.st_mode))
			e = EISDIR;
		else if (access(paths[i], R_OK) < 0)
			e = errno;
		if (e) {
			fprintf(stderr, "gpuwhy: %s: %s\n", paths[i], gw_source_strerror(-e));
			return 1;
		}
	}
	return 0;
}

static int analyse(char **paths, int n, const struct gw_report_args *ra, struct gw_analysis **ret)
{
	struct gw_analysis_options opt;
	struct gw_inputs in = {.paths = (const char *const *)paths, .n = n, .format = ra->format};
	int e;

	gw_analysis_options_init(&opt);
	gw_report_analysis_options(ra, &opt);
	opt.top_n = GW_DIFF_TOP_N;
	e = gw_analyze_files(&in, &opt, ret);
	if (e < 0) {
		fprintf(stderr, "gpuwhy: %s: %s\n", in.failed >= 0 ? paths[in.failed] : "analysis",
			in.reason);
		return 1;
	}
	return 0;
}

/* Writes the page, or the JSON or text to standard output, through report/output.h. */
static int render(const struct gw_diff *d, const struct gw_diff_inputs *in, const char *path,
		  int kind)
{
	struct gw_output *out;
	int e = gw_output_begin(path, &out);

	if (e >= 0) {
		FILE *f = gw_output_stream(out);
		const char *nc = secure_getenv("NO_COLOR");

		if (kind == 'h')
			e = gw_report_diff_html(d, in, f);
		else if (kind == 'j')
			e = gw_report_diff_json(d, in, f);
		else
			e = gw_report_diff_text(d, in, f, isatty(STDOUT_FILENO) && !(nc && nc[0]));
		e = gw_output_finish(out, e);
	}
	if (e < 0) {
		fprintf(stderr, "gpuwhy: diff: %s: %s\n",
			strcmp(path, "-") ? path : "standard output", strerror(-e));
		return 1;
	}
	return 0;
}

int gw_cmd_diff(int argc, char **argv)
{
	struct option opts[GW_ROPT_COUNT + 3] = {
		{"vs", no_argument, NULL, GW_DIFF_OPT_VS},
		{"help", no_argument, NULL, 'h'},
	};
	struct gw_report_args ra;
	struct gw_analysis *before = NULL, *after = NULL;
	struct gw_diff *d = NULL;
	struct gw_diff_inputs in;
	char **ops = calloc((size_t)argc + 1, sizeof(*ops));
	int n = 0, vs = -1, c, code = 2;

	if (!ops)
		return usage_error("out of memory");
	gw_report_args_init(&ra);
	gw_report_getopt(opts + 2, false);
	opterr = 0;
	optind = 1;
	/* '-': operands come back in order (as option 1), so --vs splits them where it stands */
	while ((c = getopt_long(argc, argv, "-:h", opts, NULL)) != -1) {
		if (c == 1) {
			ops[n++] = optarg;
		} else if (c == GW_DIFF_OPT_VS) {
			if (vs >= 0) {
				code = usage_error("--vs given twice");
				goto out;
			}
			vs = n;
		} else if (c == 'h') {
			printf("usage: gpuwhy diff [OPTIONS] BEFORE AFTER\n"
			       "       gpuwhy diff [OPTIONS] BEFORE... --vs AFTER...\n"
			       "\n"
			       "Compares two runs, each one trace or several (any format "
			       "gpuwhy-report "
			       "reads),\nper step when both have steps (--steps), else per "
			       "run.\n\n");
			gw_report_options_help(stdout, false);
			code = 0;
			goto out;
		} else if (c == ':') {
			fprintf(stderr, "gpuwhy: diff: option '%s' needs a value\n",
				argv[optind - 1]);
			goto out;
		} else if (gw_is_report_option(c)) {
			if (c == GW_ROPT_PERFETTO || c == GW_ROPT_PERFETTO_MAX_EVENTS) {
				code = usage_error("--perfetto does not apply to a comparison");
				goto out;
			}
			if (gw_report_option("gpuwhy: diff", c, optarg, &ra) < 0)
				goto out;
		} else {
			fprintf(stderr, "gpuwhy: diff: unknown option '%s' (gpuwhy diff --help)\n",
				argv[optind - 1]);
			goto out;
		}
	}
	while (optind < argc) /* after "--" */
		ops[n++] = argv[optind++];
	if (vs < 0 && n != 2) {
		code = usage_error(n < 2 ? "two runs to compare are needed"
					 : "more than two inputs: put --vs between the runs");
		goto out;
	}
	if (vs < 0)
		vs = 1;
	if (vs == 0 || vs == n) {
		code = usage_error("each side of --vs needs at least one input");
		goto out;
	}
	if (ra.json && ra.html && !strcmp(ra.html, "-")) {
		code = usage_error("--json and --html - cannot both be standard output");
		goto out;
	}
	if (ra.html && gw_cli_check_output("gpuwhy: diff", "--html", ra.html) < 0)
		goto out;
	for (int i = 0; ra.html && strcmp(ra.html, "-") && i < n; i++)
		if (!strcmp(ra.html, ops[i])) {
			gw_cli_error(stderr, "gpuwhy: diff", "--html", ra.html,
				     "is one of the inputs, which would be lost");
			goto out;
		}
	code = 1;
	if (check_inputs(ops, n) || analyse(ops, vs, &ra, &before) ||
	    analyse(ops + vs, n - vs, &ra, &after))
		goto out;
	if (gw_diff_new(before, after, &d) < 0) {
		fprintf(stderr, "gpuwhy: diff: out of memory\n");
		goto out;
	}
	in = (struct gw_diff_inputs){(const char *const *)ops, vs, (const char *const *)ops + vs,
				     n - vs};
	gw_output_catch_signals();
	code = 0;
	if (ra.html)
		code = render(d, &in, ra.html, 'h');
	if (!code && !(ra.html && !strcmp(ra.html, "-")))
		code = render(d, &in, "-", ra.json ? 'j' : 't');
out:
	gw_diff_free(d);
	gw_analysis_free(before);
	gw_analysis_free(after);
	free(ops);
	return code;
}
