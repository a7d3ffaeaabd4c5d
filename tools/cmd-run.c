/* SPDX-License-Identifier: MIT */
/* `gpuwhy run`: checks the options, runs CMD under capture, then reports its traces. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli-args.h"
#include "launch.h"
#include "output-path.h"
#include "report-options.h"
#include "commands.h"

/* Runs gpuwhy-report with the collected options over FILES. Returns its exit code. */
static int report(struct gw_run_opts *o, char **files, size_t n_files)
{
	char report[PATH_MAX];
	char **argv;
	size_t n = 0;
	int r;

	r = gw_find_sibling(GW_REPORT_NAME, report);
	if (r < 0) {
		fprintf(stderr, "gpuwhy: cannot find %s next to gpuwhy: %s\n", GW_REPORT_NAME,
			strerror(-r));
		return 1;
	}
	argv = calloc((size_t)o->n_report_args + n_files + 2, sizeof(*argv));
	if (!argv)
		return 1;
	argv[n++] = report;
	for (int i = 0; i < o->n_report_args; i++)
		argv[n++] = (char *)o->report_args[i];
	for (size_t i = 0; i < n_files; i++)
		argv[n++] = files[i];
	argv[n] = NULL;

	fflush(stdout);
	r = gw_spawn_and_wait(argv, false, false);
	free(argv);
	if (r < 0) {
		fprintf(stderr, "gpuwhy: cannot run %s: %s\n", report, strerror(-r));
		return 1;
	}
	return gw_exit_code_of(r);
}

/*
 * The simulated libraries a framework's own copies would shadow: PyTorch's libraries find
 * NVIDIA's runtime, CUPTI (Kineto's) and cuBLAS through their RPATH, which is searched before
 * LD_LIBRARY_PATH, but never load a second object of a soname already loaded. Preloading
 * gpusim's makes them the ones used (the runtime first, then CUPTI, cuBLASLt and cuBLAS).
 */
static int preload_gpusim(const char *sim)
{
	static const char *const libs[] = {"libcublas.so.13", "libcublasLt.so.13", "libcupti.so.13",
					   "libcudart.so.13"};
	char path[PATH_MAX];
	int r;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", sim, libs[i]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (access(path, R_OK) < 0)
			continue; /* a build without it: the program gets NVIDIA's */
		r = gw_env_prepend("LD_PRELOAD", path, ':');
		if (r < 0)
			return r;
	}
	return 0;
}

/* Sets up the environment for capture. Returns 0 or -errno, having told the user why. */
static int prepare_env(const struct gw_run_opts *o, const char *pattern)
{
	char lib[PATH_MAX], sim[PATH_MAX];
	const char *preload = secure_getenv("LD_PRELOAD");
	int r;

	r = gw_find_library(lib);
	if (r < 0) {
		fprintf(stderr,
			"gpuwhy: cannot find " GW_LIBRARY_NAME
			" (looked in ../lib and " GW_INSTALL_LIBDIR_REL
			" next to gpuwhy, and " GW_INSTALL_LIBDIR_ABS "); set GPUWHY_LIBRARY\n");
		return r;
	}
	if (o->sim) {
		r = gw_find_gpusim(sim);
		if (r < 0) {
			fprintf(stderr,
				"gpuwhy: --sim: the simulated GPU (tests/gpusim) is only part "
				"of a build tree, and none was found next to this gpuwhy\n");
			return r;
		}
		r = gw_env_prepend("LD_LIBRARY_PATH", sim, ':');
		if (r < 0)
			return r;
		r = preload_gpusim(sim);
		if (r < 0)
			return r;
	}
	if (!preload || !strstr(preload, lib)) {
		r = gw_env_prepend("LD_PRELOAD", lib, ':');
		if (r < 0)
			return r;
	}
	/* For programs that clear LD_PRELOAD: the driver loads this library itself. */
	if (setenv("CUDA_INJECTION64_PATH", lib, 0) < 0)
		return -errno;
	/* NVTX ranges (steps): NVTX loads its injection library from this at the first range;
	 * a value set already is another tool's, which keeps it. */
	if (setenv("NVTX_INJECTION64_PATH", lib, 0) < 0)
		return -errno;
	if (setenv("GPUWHY_OUTPUT", pattern, 1) < 0)
		return -errno;
	return 0;
}

/*
 * The trace path pattern from OPT (-o or GPUWHY_OUTPUT) with VALUE, made absolute in PATTERN
 * (size PATH_MAX). Checked before the program starts, as the capture library would only find
 * out inside it; *RET_MKDIR is set when VALUE is a directory still to be made. Returns 0, or
 * -1 after saying in one line what is wrong.
 */
static int output_pattern(const char *opt, const char *value, char *pattern, bool *ret_mkdir)
{
	char why[PATH_MAX + 64], path[PATH_MAX];
	const char *dir;
	struct stat st;
	const char *bad;
	bool as_dir;
	size_t len = strlen(value);
	int dlen;

	*ret_mkdir = false;
	if (!len) {
		gw_cli_error(stderr, "gpuwhy", opt, value, "an empty path");
		return -1;
	}
	if (gw_output_pattern_check(value, &bad) < 0) {
		gw_cli_error(stderr, "gpuwhy", opt, value,
			     "'%%%.1s' is none of %%p (pid), %%h (host), %%r (rank), %%%%",
			     bad + 1);
		return -1;
	}
	as_dir = gw_is_directory(value);
	if (snprintf(path, sizeof(path), "%s%s%s", value,
		     as_dir && value[len - 1] != '/' ? "/" : "",
		     as_dir ? GW_OUTPUT_DEFAULT : "") >= (int)sizeof(path)) {
		gw_cli_error(stderr, "gpuwhy", opt, value, "%s", strerror(ENAMETOOLONG));
		return -1;
	}
	if (as_dir) {
		/* The directory is made by this run (one level, as mkdir), before the program's
		 * processes need it, so its name cannot wait for them to expand a % sequence. */
		if (strchr(value, '%')) {
			gw_cli_error(stderr, "gpuwhy", opt, value,
				     "a directory's name cannot hold %% sequences; put them in a "
				     "file name");
			return -1;
		}
		if (stat(value, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				gw_cli_error(stderr, "gpuwhy", opt, value, "is not a directory");
				return -1;
			}
			if (access(value, W_OK | X_OK) < 0) {
				gw_cli_error(stderr, "gpuwhy", opt, value, "%s", strerror(errno));
				return -1;
			}
		} else if (errno != ENOENT) {
			gw_cli_error(stderr, "gpuwhy", opt, value, "%s",
				     errno == ENOTDIR ? "is not a directory" : strerror(errno));
			return -1;
		} else {
			char bare[PATH_MAX];

			snprintf(bare, sizeof(bare), "%s", value);
			while (len > 1 && bare[len - 1] == '/')
				bare[--len] = '\0';
			if (gw_check_output_file(bare, why, sizeof(why)) < 0) {
				gw_cli_error(stderr, "gpuwhy", opt, value, "%s", why);
				return -1;
			}
			*ret_mkdir = true;
		}
	} else {
		/* A % sequence in the directory part is expanded by each process: unknown here. */
		dlen = gw_dir_part(value, &dir);
		if (!memchr(dir, '%', (size_t)dlen) &&
		    gw_check_output_file(value, why, sizeof(why)) < 0) {
			gw_cli_error(stderr, "gpuwhy", opt, value, "%s", why);
			return -1;
		}
		if (!gw_output_pattern_varies(value) && lstat(value, &st) == 0) {
			gw_cli_error(stderr, "gpuwhy", opt, value,
				     "exists, and traces are never overwritten (add %%p, or give a "
				     "directory)");
			return -1;
		}
	}
	/* A relative pattern is taken relative to our working directory, which the program
	 * may leave: make it absolute. */
	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd))) {
			fprintf(stderr, "gpuwhy: the working directory: %s\n", strerror(errno));
			return -1;
		}
		if (snprintf(pattern, PATH_MAX, "%s/%s", cwd, path) >= PATH_MAX) {
			gw_cli_error(stderr, "gpuwhy", opt, value, "%s", strerror(ENAMETOOLONG));
			return -1;
		}
	} else {
		strcpy(pattern, path);
	}
	return 0;
}

/*
 * --html and --perfetto, checked before the program runs rather than after it: a file in
 * NEWDIR, the -o directory this run is about to make, is fine. Returns 0 or -1 (said why).
 */
int gw_run_check_report_outputs(const struct gw_run_opts *o, const char *newdir)
{
	const char *outs[2][2] = {{"--html", o->html}, {"--perfetto", o->perfetto}};

	for (int i = 0; i < 2; i++) {
		const char *path = outs[i][1], *dir;
		int dlen;
		size_t nlen;

		if (!path)
			continue;
		if (newdir) {
			dlen = gw_dir_part(path, &dir);
			nlen = strlen(newdir);
			while (nlen > 1 && newdir[nlen - 1] == '/')
				nlen--;
			if ((size_t)dlen == nlen && memcmp(dir, newdir, nlen) == 0 &&
			    path[dlen + 1] != '\0')
				continue;
		}
		if (gw_cli_check_output("gpuwhy", outs[i][0], path) < 0)
			return -1;
	}
	if (o->html && o->perfetto && strcmp(o->html, "-") == 0 && strcmp(o->perfetto, "-") == 0) {
		fprintf(stderr, "gpuwhy: --html and --perfetto cannot both be standard output\n");
		return -1;
	}
	return 0;
}

static bool in_list(char **list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* The run itself: capture, report, exit status. */
int gw_run_command(struct gw_run_opts *o, char *const cmd[])
{
	char pattern[PATH_MAX], gl[2 * PATH_MAX], gl_exec[2 * PATH_MAX + 8];
	glob_t before = {0}, after = {0};
	const char *opt = o->output ? "-o" : "the default trace path (-o changes it)";
	char **fresh = NULL;
	size_t n_fresh = 0;
	const char *exported = secure_getenv("GPUWHY_OUTPUT");
	bool make_dir;
	int status, code, r;

	/* Without -o, a GPUWHY_OUTPUT the user exported still decides where traces go. */
	if (!o->output && exported && exported[0]) {
		o->output = exported;
		opt = "GPUWHY_OUTPUT";
	}
	if (output_pattern(opt, o->output ? o->output : GW_OUTPUT_DEFAULT, pattern, &make_dir) <
		    0 ||
	    gw_run_check_report_outputs(o, make_dir ? o->output : NULL) < 0)
		return 2;
	r = gw_check_command(cmd[0]);
	if (r < 0) {
		gw_cli_error(stderr, "gpuwhy", "command", cmd[0], "%s",
			     r == -ENOENT
				     ? (strchr(cmd[0], '/') ? "no such file" : "not found in PATH")
			     : r == -EISDIR ? "is a directory"
					    : "cannot be run (not an executable file)");
		return r == -ENOENT ? 127 : 126;
	}
	if (make_dir && mkdir(o->output, 0777) < 0 && errno != EEXIST) {
		gw_cli_error(stderr, "gpuwhy", opt, o->output, "%s", strerror(errno));
		return 2;
	}
	/* the traces of the pattern, and of the later images of a process that exec'd (-execN:
	 * a pattern without %p matches only the first) */
	if (gw_output_pattern_glob(pattern, gl, sizeof(gl)) < 0 ||
	    gw_output_exec_glob(gl_exec, sizeof(gl_exec), gl) < 0) {
		fprintf(stderr, "gpuwhy: the trace path is too long\n");
		return 2;
	}

	if (prepare_env(o, pattern) < 0)
		return 1;
	glob(gl, 0, NULL, &before);
	glob(gl_exec, GLOB_APPEND, NULL, &before);

	/* With a machine-readable report on standard output (--json, --html -, --perfetto -),
	 * that output is the report alone: the program's own goes to standard error. */
	status = gw_spawn_and_wait(cmd, true, o->stdout_is_report);
	if (status < 0) {
		fprintf(stderr, "gpuwhy: %s: %s\n", cmd[0], strerror(-status));
		globfree(&before);
		return status == -ENOENT ? 127 : 126;
	}
	code = gw_exit_code_of(status);

	glob(gl, 0, NULL, &after);
	glob(gl_exec, GLOB_APPEND, NULL, &after);
	fresh = calloc(after.gl_pathc + 1, sizeof(*fresh));
	for (size_t i = 0; fresh && i < after.gl_pathc; i++)
		if (!in_list(before.gl_pathv, before.gl_pathc, after.gl_pathv[i]) &&
		    !in_list(fresh, n_fresh, after.gl_pathv[i])) /* matched by both globs */
			fresh[n_fresh++] = after.gl_pathv[i];

	if (WIFSIGNALED(status))
		fprintf(stderr, "gpuwhy: %s was killed by signal %d (%s)\n", cmd[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (n_fresh == 0) {
		fprintf(stderr,
			"gpuwhy: %s wrote no trace (%s): it made no CUDA call, or capture was "
			"disabled (GPUWHY_DISABLE)\n",
			cmd[0], pattern);
	} else if (!o->no_report) {
		/* The program's status wins; a failed report has printed its own reason. */
		report(o, fresh, n_fresh);
	}

	free(fresh);
	globfree(&before);
	globfree(&after);
	return code;
}

int gw_run_add_report_arg(struct gw_run_opts *o, const char *flag, const char *value)
{
	if (o->n_report_args + 2 > GW_MAX_REPORT_ARGS)
		return -E2BIG;
	o->report_args[o->n_report_args++] = flag;
	if (value)
		o->report_args[o->n_report_args++] = value;
	return 0;
}

enum {
	GW_OPT_SIM = 256,
	GW_OPT_NO_REPORT,
};

int gw_run_parse_options(int argc, char **argv, struct gw_run_opts *o)
{
	struct option opts[GW_ROPT_COUNT + 5] = {
		{"output", required_argument, NULL, 'o'},
		{"sim", no_argument, NULL, GW_OPT_SIM},
		{"no-report", no_argument, NULL, GW_OPT_NO_REPORT},
		{"help", no_argument, NULL, 'h'},
	};
	struct gw_report_args checked;
	int c, r = 0;

	gw_report_getopt(opts + 4, true);
	gw_report_args_init(&checked);
	optind = 1;
	opterr = 0; /* one line of our own for each error, below */
	/* "+": stop at the first non-option, which is CMD, so CMD's own options stay its own;
	 * ":": a missing value is told apart from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case GW_OPT_SIM:
			o->sim = true;
			break;
		case GW_OPT_NO_REPORT:
			o->no_report = true;
			break;
		case 'h':
			gw_usage(stdout);
			return -2;
		case ':':
			fprintf(stderr, "gpuwhy: option '%s' needs a value (gpuwhy --help)\n",
				argv[optind - 1]);
			return -1;
		default:
			if (gw_is_report_option(c)) {
				/* checked here as gpuwhy-report will, so a bad value fails before
				 * the run, then passed on as given */
				if (gw_report_option("gpuwhy", c, optarg, &checked) < 0)
					return -1;
				r = gw_run_add_report_arg(o, gw_report_option_flag(c), optarg);
				if (c == GW_ROPT_HTML)
					o->html = optarg;
				else if (c == GW_ROPT_PERFETTO)
					o->perfetto = optarg;
				if (c == GW_ROPT_JSON ||
				    ((c == GW_ROPT_HTML || c == GW_ROPT_PERFETTO) &&
				     !strcmp(optarg, "-")))
					o->stdout_is_report = true;
				break;
			}
			if (optopt > 0 && optopt < 0x100)
				fprintf(stderr, "gpuwhy: unknown option '-%c' (gpuwhy --help)\n",
					optopt);
			else if (optopt)
				fprintf(stderr, "gpuwhy: option '%s' takes no value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "gpuwhy: unknown option '%s' (gpuwhy --help)\n",
					argv[optind - 1]);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "gpuwhy: too many report options\n");
			return -1;
		}
	}
	return optind;
}
