/* SPDX-License-Identifier: MIT */
/* The report's options, one table: gpuwhy-report takes them; gpuwhy run and demo check them
 * the same way before the program runs, and forward them. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * X(ID, name, arg, kind, run, help): --name; arg names its value in the help (NULL: none);
 * kind says how the value is checked; run is 1 when `gpuwhy run` and `demo` take it too.
 */
#define GW_REPORT_OPTIONS(X)                                                                       \
	X(JSON, "json", NULL, FLAG, 1, "the report as JSON (schema gpuwhy-report/1) on stdout")    \
	X(TINY_US, "tiny-us", "N", MICROS, 1, "a kernel shorter than N us is tiny (10)")           \
	X(STARVE_US, "starve-us", "N", MICROS, 1,                                                  \
	  "a starved gap up to N us is launch overhead, longer is host work (100)")                \
	X(QUEUE_US, "queue-us", "N", MICROS, 1,                                                    \
	  "a gap before queued work up to N us is launch overhead, longer is blocked (20)")        \
	X(SKEW_US, "skew-us", "N", MICROS, 1,                                                      \
	  "GPU and host times may disagree by N us: work counts as queued when its launch "        \
	  "returned N us before the GPU went idle (10)")                                           \
	X(HTML, "html", "FILE", OUTPUT, 1,                                                         \
	  "also write a self-contained HTML page (charts, sites)")                                 \
	X(PERFETTO, "perfetto", "FILE", OUTPUT, 1,                                                 \
	  "also write Chrome trace-event JSON (ui.perfetto.dev)")                                  \
	X(PERFETTO_MAX_EVENTS, "perfetto-max-events", "N", COUNT, 1,                               \
	  "--perfetto shows the run up to where N calls and GPU operations started; 0 all "        \
	  "(1000000)")                                                                             \
	X(STEPS, "steps", "REGEX", PATTERN, 1,                                                     \
	  "ranges whose whole name REGEX matches (POSIX extended, any case) are steps; '' none "   \
	  "(default: ProfilerStep#N, step, iteration, train_step, each with or without a number)") \
	X(SITE_FILTER, "site-filter", "REGEX", PATTERN, 1,                                         \
	  "Python frames whose file REGEX matches (POSIX extended) are the framework's, never a "  \
	  "site; '' none (default: site-packages/, dist-packages/, /lib/python3, <frozen, "        \
	  "<string>, torch/)")                                                                     \
	X(FORMAT, "format", "NAME", FORMAT, 0,                                                     \
	  "read every TRACE as NAME: gpuwhy, kineto (torch.profiler JSON), nsys (Nsight "          \
	  "Systems SQLite export); without it, each file's format comes from its content")

/* getopt values of the options: above any single-character option. */
enum gw_report_option_id {
	GW_ROPT_FIRST = 0x200,
#define GW_ROPT_ID(ID, name, arg, kind, run, help) GW_ROPT_##ID,
	GW_REPORT_OPTIONS(GW_ROPT_ID)
#undef GW_ROPT_ID
		GW_ROPT_END
};
#define GW_ROPT_COUNT (GW_ROPT_END - GW_ROPT_FIRST - 1)

struct gw_source_type;

/* What the options said. */
struct gw_report_args {
	bool json;
	const char *html;		     /* NULL: none */
	const char *perfetto;		     /* NULL: none */
	uint64_t perfetto_max_events;	     /* UINT64_MAX: the writer's default */
	uint64_t tiny_ns;		     /* UINT64_MAX: the analysis's default */
	uint64_t starve_ns;		     /* UINT64_MAX: the analysis's default */
	uint64_t queue_ns;		     /* UINT64_MAX: the analysis's default */
	uint64_t skew_ns;		     /* UINT64_MAX: the analysis's default */
	const struct gw_source_type *format; /* NULL: from each file's content */
	const char *steps;		     /* NULL: the analysis's default pattern */
	const char *site_filter;	     /* NULL: the analysis's default filter */
	/* the last option given that shapes the report ("--json", ...), not how traces are
	 * read; NULL: none */
	const char *shapes_report;
};

/* Empty args: no option given. */
void gw_report_args_init(struct gw_report_args *args);

/* Writes the getopt entries of the options (only those `run` takes when for_run) to opts,
 * which has room for GW_ROPT_COUNT. Returns how many. */
size_t gw_report_getopt(struct option *opts, bool for_run);

/* Whether getopt's value c is a report option. */
static inline bool gw_is_report_option(int c)
{
	return c > GW_ROPT_FIRST && c < GW_ROPT_END;
}

/* Checks option c's value as gpuwhy-report does and records it in args; a bad value is one
 * line on stderr naming prog, the option and the value. Returns 0 or -1. */
int gw_report_option(const char *prog, int c, const char *value, struct gw_report_args *args);

struct gw_analysis_options;

/* The analysis options the report options ask for (opt initialized by the caller). */
void gw_report_analysis_options(const struct gw_report_args *args, struct gw_analysis_options *opt);

/* The option's "--name", for forwarding. */
const char *gw_report_option_flag(int c);

/* The options' help lines, aligned (only those `run` takes when for_run). */
void gw_report_options_help(FILE *f, bool for_run);
