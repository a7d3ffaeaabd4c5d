/* SPDX-License-Identifier: MIT */
/* The report's options (report-options.h): their getopt entries, checks and help. */
#include "report-options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli-args.h"
#include "source.h"

enum kind {
	FLAG,
	MICROS,
	COUNT,
	OUTPUT,
	FORMAT,
	PATTERN,
};

static const struct {
	const char *flag, *arg, *help;
	enum kind kind;
	bool run;
} options[] = {
#define GW_ROPT_ROW(ID, name, arg, k, r, h) {"--" name, arg, h, k, r},
	GW_REPORT_OPTIONS(GW_ROPT_ROW)
#undef GW_ROPT_ROW
};

void gw_report_args_init(struct gw_report_args *args)
{
	*args = (struct gw_report_args){.tiny_ns = UINT64_MAX,
					.starve_ns = UINT64_MAX,
					.queue_ns = UINT64_MAX,
					.skew_ns = UINT64_MAX,
					.perfetto_max_events = UINT64_MAX};
}

size_t gw_report_getopt(struct option *opts, bool for_run)
{
	size_t n = 0;

	for (int i = 0; i < GW_ROPT_COUNT; i++) {
		if (for_run && !options[i].run)
			continue;
		opts[n++] = (struct option){options[i].flag + 2,
					    options[i].arg ? required_argument : no_argument, NULL,
					    GW_ROPT_FIRST + 1 + i};
	}
	return n;
}

const char *gw_report_option_flag(int c)
{
	return gw_is_report_option(c) ? options[c - GW_ROPT_FIRST - 1].flag : "?";
}

int gw_report_option(const char *prog, int c, const char *value, struct gw_report_args *args)
{
	const char *flag = gw_report_option_flag(c);

	if (c != GW_ROPT_FORMAT)
		args->shapes_report = flag;
	switch (c) {
	case GW_ROPT_JSON:
		args->json = true;
		return 0;
	case GW_ROPT_TINY_US:
		return gw_cli_parse_us(prog, flag, value, &args->tiny_ns) < 0 ? -1 : 0;
	case GW_ROPT_STARVE_US:
		return gw_cli_parse_us(prog, flag, value, &args->starve_ns) < 0 ? -1 : 0;
	case GW_ROPT_QUEUE_US:
		return gw_cli_parse_us(prog, flag, value, &args->queue_ns) < 0 ? -1 : 0;
	case GW_ROPT_SKEW_US:
		return gw_cli_parse_us(prog, flag, value, &args->skew_ns) < 0 ? -1 : 0;
	case GW_ROPT_PERFETTO_MAX_EVENTS: {
		char *end;

		errno = 0;
		args->perfetto_max_events = strtoull(value, &end, 10);
		if (!*value || *end || value[0] == '-' || errno ||
		    args->perfetto_max_events > 1000000000000ull) {
			gw_cli_error(stderr, prog, flag, value,
				     "is not a count of events (a whole number up to 10^12)");
			return -1;
		}
		return 0;
	}
	case GW_ROPT_HTML:
		args->html = value;
		return 0;
	case GW_ROPT_PERFETTO:
		args->perfetto = value;
		return 0;
	case GW_ROPT_STEPS: {
		char why[256];

		if (gw_steps_pattern_check(value, why, sizeof(why)) < 0) {
			gw_cli_error(stderr, prog, flag, value, "is not a regular expression: %s",
				     why);
			return -1;
		}
		args->steps = value;
		return 0;
	}
	case GW_ROPT_SITE_FILTER: {
		char why[256];

		if (gw_site_filter_check(value, why, sizeof(why)) < 0) {
			gw_cli_error(stderr, prog, flag, value, "is not a regular expression: %s",
				     why);
			return -1;
		}
		args->site_filter = value;
		return 0;
	}
	case GW_ROPT_FORMAT:
		if (!(args->format = gw_source_type_by_name(value))) {
			gw_cli_error(stderr, prog, flag, value,
				     "is not a format gpuwhy reads (gpuwhy, kineto, nsys)");
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

void gw_report_analysis_options(const struct gw_report_args *args, struct gw_analysis_options *opt)
{
	if (args->tiny_ns != UINT64_MAX)
		opt->tiny_ns = args->tiny_ns;
	if (args->starve_ns != UINT64_MAX)
		opt->starve_ns = args->starve_ns;
	if (args->queue_ns != UINT64_MAX)
		opt->queue_ns = args->queue_ns;
	if (args->skew_ns != UINT64_MAX)
		opt->skew_ns = args->skew_ns;
	if (args->steps)
		opt->steps_pattern = args->steps;
	if (args->site_filter)
		opt->site_filter = args->site_filter;
}

void gw_report_options_help(FILE *f, bool for_run)
{
	for (int i = 0; i < GW_ROPT_COUNT; i++) {
		const char *help = options[i].help;
		char head[32];
		int col;

		if (for_run && !options[i].run)
			continue;
		snprintf(head, sizeof(head), "%s%s%s", options[i].flag, options[i].arg ? " " : "",
			 options[i].arg ? options[i].arg : "");
		/* the help wraps at spaces under its own column */
		col = fprintf(f, "  %-16s ", head);
		while (strlen(help) > (size_t)(92 - col)) {
			int cut = 92 - col;

			while (cut > 0 && help[cut] != ' ')
				cut--;
			fprintf(f, "%.*s\n%*s", cut, help, col, "");
			help += cut + 1;
		}
		fprintf(f, "%s\n", help);
	}
}
