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

/*
 * An export to a regular file is written to a temporary file beside it and renamed over it
 * once complete, so a failure or a signal never leaves half a page where FILE was (and an
 * older FILE stays whole). On SIGINT, SIGTERM or SIGHUP the temporary files are removed.
 */
enum { GW_EXPORTS = 2 };
static char gw_tmp_path[GW_EXPORTS][PATH_MAX];
static volatile sig_atomic_t gw_tmp_live[GW_EXPORTS];
static mode_t gw_tmp_mode[GW_EXPORTS]; /* what FILE ends up with */
static mode_t gw_umask;

static void on_fatal_signal(int sig)
{
	for (int i = 0; i < GW_EXPORTS; i++)
		if (gw_tmp_live[i])
			unlink(gw_tmp_path[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A signal this process was started ignoring (nohup, a background job) stays ignored. */
static void catch_fatal_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (signal(sigs[i], on_fatal_signal) == SIG_IGN)
			signal(sigs[i], SIG_IGN);
}

/* Sets *RET_PATH to where export SLOT writes PATH. Returns 0 or -errno. */
static int export_begin(int slot, const char *path, const char **ret_path)
{
	const char *slash = strrchr(path, '/');
	sigset_t fatal, old;
	struct stat st;
	int fd, n, err;

	*ret_path = path;
	if (stat(path, &st) < 0)
		st.st_mode = S_IFREG | (0666 & ~gw_umask); /* as a new file would get */
	if (strcmp(path, "-") == 0 || !S_ISREG(st.st_mode))
		return 0;
	gw_tmp_mode[slot] = st.st_mode & 07777;
	n = snprintf(gw_tmp_path[slot], PATH_MAX, "%.*s.gpuwhy-report-XXXXXX",
		     slash ? (int)(slash + 1 - path) : 0, path);
	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	/* no signal between the file's creation and the flag that has the handler remove it */
	sigemptyset(&fatal);
	sigaddset(&fatal, SIGINT);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	fd = mkstemp(gw_tmp_path[slot]);
	err = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		close(fd);
		gw_tmp_live[slot] = 1;
		*ret_path = gw_tmp_path[slot];
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Publishes export SLOT as PATH when ERR says it was written whole, else removes it. */
static int export_end(int slot, const char *path, int err)
{
	if (!gw_tmp_live[slot])
		return err;
	/* mkstemp made it 0600: give it the mode FILE has, or a new file would get. */
	if (err >= 0 && chmod(gw_tmp_path[slot], gw_tmp_mode[slot]) < 0)
		err = -errno;
	if (err >= 0 && rename(gw_tmp_path[slot], path) < 0)
		err = -errno;
	if (err < 0)
		unlink(gw_tmp_path[slot]);
	gw_tmp_live[slot] = 0;
	return err;
}

/* --html and --perfetto, after the analysis. Returns an exit code. */
static int write_exports(const struct gw_report_cmd *args, const struct gw_analysis *a,
			 const struct gw_analysis_options *opt)
{
	const char *to;
	int err;

	if (args->opt.html) {
		err = export_begin(0, args->opt.html, &to);
		if (err >= 0)
			err = gw_report_html(a, opt, to);
		err = export_end(0, args->opt.html, err);
		if (err < 0) {
			fprintf(stderr, "%s: %s: %s\n", gw_prog, args->opt.html, strerror(-err));
			return GW_EXIT_UNREADABLE;
		}
	}
	if (args->opt.perfetto) {
		err = export_begin(1, args->opt.perfetto, &to);
		if (err >= 0)
			err = gw_report_perfetto(a, to);
		err = export_end(1, args->opt.perfetto, err);
		if (err < 0) {
			fprintf(stderr, "%s: %s: %s\n", gw_prog, args->opt.perfetto,
				strerror(-err));
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
	if (args->opt.tiny_ns != UINT64_MAX)
		opt.tiny_ns = args->opt.tiny_ns;
	if (args->opt.starve_ns != UINT64_MAX)
		opt.starve_ns = args->opt.starve_ns;
	if (args->opt.queue_ns != UINT64_MAX)
		opt.queue_ns = args->opt.queue_ns;
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
	if (code == GW_EXIT_OK) {
		const char *nc = secure_getenv("NO_COLOR");
		bool color = isatty(STDOUT_FILENO) && !(nc && nc[0]);

		err = args->opt.json ? gw_report_json(a, &opt, stdout)
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
	struct gw_report_cmd args = {.mode = GW_MODE_REPORT};

	gw_report_args_init(&args.opt);

	if (parse_args(argc, argv, &args) < 0)
		return GW_EXIT_USAGE;
	if (check_traces(&args) != GW_EXIT_OK)
		return GW_EXIT_UNREADABLE;
	gw_umask = umask(0);
	umask(gw_umask);
	catch_fatal_signals();
	switch (args.mode) {
	case GW_MODE_DUMP:
		return run_dump(&args);
	case GW_MODE_REPORT:
	default:
		return run_report(&args);
	}
}
