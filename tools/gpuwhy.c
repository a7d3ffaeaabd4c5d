/* SPDX-License-Identifier: MIT */
/* The gpuwhy launcher: runs a program under capture, then reports why its GPU sat idle. One
 * file per command: cmd-run.c, cmd-demo.c, cmd-import.c, cmd-diff.c; `gpuwhy report` is
 * gpuwhy-report. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-args.h"
#include "job-signals.h"
#include "launch.h"
#include "output-path.h"
#include "report-options.h"
#include "commands.h"

void gw_usage(FILE *f)
{
	fprintf(f,
		"usage: gpuwhy run [-o FILE|DIR/] [--sim] [--no-report] [REPORT OPTIONS] -- CMD "
		"[ARGS]\n"
		"       gpuwhy report [REPORT OPTIONS] TRACE...   (same as gpuwhy-report)\n"
		"       gpuwhy demo [--sim]\n"
		"       gpuwhy import [--format NAME] IN -o OUT   (any trace the report reads,\n"
		"                                                 as a gpuwhy .trace.zst)\n"
		"       gpuwhy diff [REPORT OPTIONS] BEFORE AFTER  (two runs compared, per step;\n"
		"                                                 BEFORE... --vs AFTER... for\n"
		"                                                 runs of several traces)\n"
		"\n"
		"run options:\n"
		"  -o, --output FILE    trace file pattern (%%p pid, %%h host, %%r rank);\n"
		"                       a directory (or a name ending in /) gets one\n"
		"                       %s per CUDA process; default\n"
		"                       ./%s\n"
		"      --sim            run on the simulated GPU (a test double, build tree only)\n"
		"      --no-report      keep the traces, print no report\n"
		"report options (passed to gpuwhy-report):\n",
		GW_OUTPUT_DEFAULT, GW_OUTPUT_DEFAULT);
	gw_report_options_help(f, true);
	fprintf(f,
		"\n"
		"N: microseconds, a decimal such as 10 or 2.5 (at most 3 decimals), 0 to "
		"1000000000.\n"
		"gpuwhy exits with CMD's exit status (128+N when a signal N killed it), 127 when\n"
		"CMD is not found, 126 when it cannot be run, 2 on a usage error. See "
		"gpuwhy(1).\n");
}

/* `gpuwhy report ARGS`: gpuwhy-report ARGS, in this process's place. */
static int cmd_report(char **argv)
{
	char report[PATH_MAX];
	int r = gw_find_sibling(GW_REPORT_NAME, report);

	if (r < 0) {
		fprintf(stderr, "gpuwhy: cannot find %s next to gpuwhy: %s\n", GW_REPORT_NAME,
			strerror(-r));
		return 1;
	}
	argv[0] = report;
	execv(report, argv);
	fprintf(stderr, "gpuwhy: cannot run %s: %s\n", report, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct gw_run_opts o = {0};
	const char *debug = secure_getenv("GPUWHY_DEBUG");
	int first;

	/* started by `gpuwhy run` as its signal witness (job-signals.h), with the program's argv */
	gw_witness_main_if_asked(argv);
	gw_debug = debug && debug[0] && strcmp(debug, "0") != 0;
	if (argc < 2) {
		fprintf(stderr, "gpuwhy: no command given: run, report, demo, import or diff "
				"(gpuwhy --help)\n");
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		gw_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "report") == 0)
		return cmd_report(argv + 1);
	if (strcmp(argv[1], "import") == 0)
		return gw_cmd_import(argc - 1, argv + 1);
	if (strcmp(argv[1], "diff") == 0)
		return gw_cmd_diff(argc - 1, argv + 1);

	if (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "demo") != 0) {
		gw_cli_error(stderr, "gpuwhy", "command", argv[1],
			     "unknown; use run, report, demo, import or diff (gpuwhy --help)");
		return 2;
	}
	first = gw_run_parse_options(argc - 1, argv + 1, &o);
	if (first == -2)
		return 0;
	if (first < 0)
		return 2;

	if (strcmp(argv[1], "demo") == 0) {
		if (first != argc - 1) {
			gw_cli_error(stderr, "gpuwhy", "demo", argv[1 + first],
				     "the demo runs its own workload and takes no command");
			return 2;
		}
		if (o.output || o.no_report) {
			fprintf(stderr,
				"gpuwhy: demo: %s does not apply; the demo keeps its trace in "
				"a directory of its own and always reports\n",
				o.output ? "-o" : "--no-report");
			return 2;
		}
		return gw_cmd_demo(&o);
	}
	if (first >= argc - 1) {
		fprintf(stderr,
			"gpuwhy: run: no command given (gpuwhy run [OPTIONS] -- CMD [ARGS])\n");
		return 2;
	}
	return gw_run_command(&o, argv + 1 + first);
}
