/* SPDX-License-Identifier: MIT */
/* `gpuwhy run`'s options and its run, which `gpuwhy demo` uses too. */
#pragma once

#include <stdbool.h>

#define GW_MAX_REPORT_ARGS 32

struct gw_run_opts {
	const char *output;
	const char *html;     /* --html FILE, also in report_args */
	const char *perfetto; /* --perfetto FILE, also in report_args */
	bool sim;
	bool no_report;
	bool stdout_is_report; /* --json, --html - or --perfetto -: CMD's stdout goes to stderr */
	bool demo;
	const char *report_args[GW_MAX_REPORT_ARGS]; /* forwarded to gpuwhy-report */
	int n_report_args;
};

/* Parses the options of `run` and `demo` (argv[0] is the command). Returns the index of the
 * first non-option, or -1 after a usage error (reported), or -2 after --help. */
int gw_run_parse_options(int argc, char **argv, struct gw_run_opts *o);

/* --html and --perfetto checked before the program runs; a file in newdir, the -o directory
 * this run is about to make, is fine. Returns 0 or -1 (said why). */
int gw_run_check_report_outputs(const struct gw_run_opts *o, const char *newdir);

/* Adds a report option (and its value, or NULL) for gpuwhy-report. 0 or -E2BIG. */
int gw_run_add_report_arg(struct gw_run_opts *o, const char *flag, const char *value);

/* Runs cmd under capture, then the report. Returns gpuwhy's exit code. */
int gw_run_command(struct gw_run_opts *o, char *const cmd[]);
