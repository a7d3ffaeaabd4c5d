/* SPDX-License-Identifier: MIT */
/* The gpuwhy launcher: runs a program under capture, then reports why its GPU sat idle. */
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
#include "output-path.h"

#ifndef GW_INSTALL_LIBDIR_REL
#define GW_INSTALL_LIBDIR_REL "../lib"
#endif
#ifndef GW_CUDA_ROOT
#define GW_CUDA_ROOT "/usr/local/cuda"
#endif
#ifndef GW_INSTALL_LIBDIR_ABS
#define GW_INSTALL_LIBDIR_ABS "/usr/local/lib"
#endif

#define GW_LIBRARY_NAME	   "libgpuwhy.so"
#define GW_REPORT_NAME	   "gpuwhy-report"
#define GW_MAX_REPORT_ARGS 32

/* Bundled workloads `gpuwhy demo` may profile, in order of preference (build tree only). */
static const char *const gw_demo_workloads[] = {
	"mixed_training",
	"mixed",
	"healthy",
};

static const int gw_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static volatile pid_t gw_child_pid;
static bool gw_debug; /* GPUWHY_DEBUG set: say on stderr which signals were forwarded */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuwhy run [-o FILE|DIR/] [--sim] [--no-report] [REPORT OPTIONS] -- CMD "
		"[ARGS]\n"
		"       gpuwhy report [REPORT OPTIONS] TRACE...   (same as gpuwhy-report)\n"
		"       gpuwhy demo [--sim]\n"
		"\n"
		"run options:\n"
		"  -o, --output FILE    trace file pattern (%%p pid, %%h host, %%r rank);\n"
		"                       a directory (or a name ending in /) gets one\n"
		"                       gpuwhy-%%p.trace.zst per CUDA process; default\n"
		"                       ./gpuwhy-%%p.trace.zst\n"
		"      --sim            run on the simulated GPU (a test double, build tree only)\n"
		"      --no-report      keep the traces, print no report\n"
		"report options (passed to gpuwhy-report):\n"
		"      --json  --html FILE  --perfetto FILE  --tiny-us N  --starve-us N\n"
		"\n"
		"N: microseconds, a decimal such as 10 or 2.5 (at most 3 decimals), 0 to "
		"1000000000.\n"
		"gpuwhy exits with CMD's exit status (128+N when a signal N killed it), 127 when\n"
		"CMD is not found, 126 when it cannot be run, 2 on a usage error. See "
		"gpuwhy(1).\n");
}

/* The directory of this executable, from /proc/self/exe. */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

/* Resolves DIR/REL (or REL when absolute) to a canonical path when it exists. */
static int resolve(const char *dir, const char *rel, char *out)
{
	char path[PATH_MAX];
	int n;

	if (rel[0] == '/')
		n = snprintf(path, sizeof(path), "%s", rel);
	else
		n = snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (!realpath(path, out))
		return -errno;
	return 0;
}

/* libgpuwhy.so: the build tree keeps it in ../lib, an installed tree in the configured libdir. */
static int find_library(char *out)
{
	const char *env = secure_getenv("GPUWHY_LIBRARY");
	char dir[PATH_MAX];
	int r;

	if (env && env[0])
		return realpath(env, out) ? 0 : -errno;
	r = self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	if (resolve(dir, "../lib/" GW_LIBRARY_NAME, out) == 0)
		return 0;
	if (resolve(dir, GW_INSTALL_LIBDIR_REL "/" GW_LIBRARY_NAME, out) == 0)
		return 0;
	return resolve(dir, GW_INSTALL_LIBDIR_ABS "/" GW_LIBRARY_NAME, out);
}

/* The simulated GPU exists only in a build tree: ../tests/gpusim holding libcudart.so.13. */
static int find_gpusim(char *out)
{
	char dir[PATH_MAX], probe[PATH_MAX];
	int r;

	r = self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	r = resolve(dir, "../tests/gpusim", out);
	if (r < 0)
		return r;
	if (snprintf(probe, sizeof(probe), "%s/libcudart.so.13", out) >= (int)sizeof(probe))
		return -ENAMETOOLONG;
	return access(probe, R_OK) == 0 ? 0 : -errno;
}

static int find_sibling(const char *name, char *out)
{
	char dir[PATH_MAX];
	int r;

	r = self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	return resolve(dir, name, out);
}

/* Prepends VALUE to the SEP-separated list in the environment variable NAME. */
static int env_prepend(const char *name, const char *value, char sep)
{
	const char *old = secure_getenv(name);
	char *joined;
	int r;

	if (!old || !old[0])
		return setenv(name, value, 1) < 0 ? -errno : 0;
	if (asprintf(&joined, "%s%c%s", value, sep, old) < 0)
		return -ENOMEM;
	r = setenv(name, joined, 1) < 0 ? -errno : 0;
	free(joined);
	return r;
}

static bool in_list(char **list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
	pid_t child = gw_child_pid;

	(void)ctx;
	if (child <= 0)
		return;
	/*
	 * The child starts in our process group, so a terminal's ^C (sent by the kernel to the
	 * whole foreground group) has already reached it: forwarding it again would deliver it
	 * twice, and programs such as torchrun treat a second SIGINT as "stop now". Signals sent
	 * to us alone by another process (kill, a batch scheduler) are forwarded, and so is a
	 * terminal's when the child has left our group (setsid, its own job control).
	 */
	if (info->si_code == SI_KERNEL && getpgid(child) == getpgrp())
		return;
	kill(child, sig);
	if (gw_debug) {
		char msg[64] = "gpuwhy: forwarded signal ";
		size_t n = strlen(msg);

		if (sig >= 10)
			msg[n++] = (char)('0' + sig / 10 % 10);
		msg[n++] = (char)('0' + sig % 10);
		memcpy(msg + n, " to the program\n", 16);
		if (write(STDERR_FILENO, msg, n + 16) < 0)
			return;
	}
}

static void block_forwarded(int how, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(gw_forwarded_signals) / sizeof(gw_forwarded_signals[0]); i++)
		sigaddset(&set, gw_forwarded_signals[i]);
	sigprocmask(how, &set, old);
}

/* Runs ARGV as a child and returns its wait status, or -errno. When FORWARD is set, the
 * termination signals this process receives from others are passed on to the child. */
static int spawn_and_wait(char *const argv[], bool forward)
{
	struct sigaction sa = {0}, old_sa[4];
	sigset_t old_mask;
	int status = 0, err_pipe[2], child_errno = 0;
	size_t nsig = sizeof(gw_forwarded_signals) / sizeof(gw_forwarded_signals[0]);
	pid_t pid;

	/* The exec error comes back through a close-on-exec pipe, so "command not found" is
	 * reported by us and distinguished from a program that exits 127 itself. */
	if (pipe2(err_pipe, O_CLOEXEC) < 0)
		return -errno;

	block_forwarded(SIG_BLOCK, &old_mask);
	if (forward) {
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < nsig; i++)
			sigaction(gw_forwarded_signals[i], &sa, &old_sa[i]);
	}

	pid = fork();
	if (pid == 0) {
		int e;

		signal(SIGPIPE, SIG_DFL);
		for (size_t i = 0; forward && i < nsig; i++)
			signal(gw_forwarded_signals[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (pid < 0) {
		int e = -errno;

		close(err_pipe[0]);
		close(err_pipe[1]);
		block_forwarded(SIG_SETMASK, &old_mask);
		return e;
	}
	gw_child_pid = pid;
	close(err_pipe[1]);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	if (read(err_pipe[0], &child_errno, sizeof(child_errno)) != sizeof(child_errno))
		child_errno = 0;
	close(err_pipe[0]);

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -errno;
			break;
		}
	}

	block_forwarded(SIG_BLOCK, NULL);
	gw_child_pid = 0;
	for (size_t i = 0; forward && i < nsig; i++)
		sigaction(gw_forwarded_signals[i], &old_sa[i], NULL);
	block_forwarded(SIG_SETMASK, &old_mask);

	if (child_errno)
		return -child_errno;
	return status;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

struct gw_run_opts {
	const char *output;
	const char *html;     /* --html FILE, also in report_args */
	const char *perfetto; /* --perfetto FILE, also in report_args */
	bool sim;
	bool no_report;
	bool demo;
	char *report_args[GW_MAX_REPORT_ARGS];
	int n_report_args;
};

/* Runs gpuwhy-report with the collected options over FILES. Returns its exit code. */
static int run_report(struct gw_run_opts *o, char **files, size_t n_files)
{
	char report[PATH_MAX];
	char **argv;
	size_t n = 0;
	int r;

	r = find_sibling(GW_REPORT_NAME, report);
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
		argv[n++] = o->report_args[i];
	for (size_t i = 0; i < n_files; i++)
		argv[n++] = files[i];
	argv[n] = NULL;

	fflush(stdout);
	r = spawn_and_wait(argv, false);
	free(argv);
	if (r < 0) {
		fprintf(stderr, "gpuwhy: cannot run %s: %s\n", report, strerror(-r));
		return 1;
	}
	return exit_code_of(r);
}

/* Sets up the environment for capture. Returns 0 or -errno, having told the user why. */
static int prepare_env(const struct gw_run_opts *o, const char *pattern)
{
	char lib[PATH_MAX], sim[PATH_MAX];
	const char *preload = secure_getenv("LD_PRELOAD");
	int r;

	r = find_library(lib);
	if (r < 0) {
		fprintf(stderr,
			"gpuwhy: cannot find " GW_LIBRARY_NAME
			" (looked in ../lib and " GW_INSTALL_LIBDIR_REL
			" next to gpuwhy, and " GW_INSTALL_LIBDIR_ABS "); set GPUWHY_LIBRARY\n");
		return r;
	}
	if (o->sim) {
		r = find_gpusim(sim);
		if (r < 0) {
			fprintf(stderr,
				"gpuwhy: --sim: the simulated GPU (tests/gpusim) is only part "
				"of a build tree, and none was found next to this gpuwhy\n");
			return r;
		}
		r = env_prepend("LD_LIBRARY_PATH", sim, ':');
		if (r < 0)
			return r;
	}
	if (!preload || !strstr(preload, lib)) {
		r = env_prepend("LD_PRELOAD", lib, ':');
		if (r < 0)
			return r;
	}
	/* For programs that clear LD_PRELOAD: the driver loads this library itself. */
	if (setenv("CUDA_INJECTION64_PATH", lib, 0) < 0)
		return -errno;
	if (setenv("GPUWHY_OUTPUT", pattern, 1) < 0)
		return -errno;
	return 0;
}

static bool is_directory(const char *path)
{
	struct stat st;
	size_t len = strlen(path);

	if (len && path[len - 1] == '/')
		return true;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH's directory part, or "." (as the %.*s precision and string to print). */
static int dir_part(const char *path, const char **ret_dir)
{
	const char *slash = strrchr(path, '/');

	*ret_dir = slash ? path : ".";
	if (!slash)
		return 1;
	return slash == path ? 1 : (int)(slash - path);
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
	as_dir = is_directory(value);
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
		dlen = dir_part(value, &dir);
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
static int check_report_outputs(const struct gw_run_opts *o, const char *newdir)
{
	const char *outs[2][2] = {{"--html", o->html}, {"--perfetto", o->perfetto}};

	for (int i = 0; i < 2; i++) {
		const char *path = outs[i][1], *dir;
		int dlen;
		size_t nlen;

		if (!path)
			continue;
		if (newdir) {
			dlen = dir_part(path, &dir);
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

/* An executable file at PATH: 0, -EISDIR, or -errno as execve would fail. */
static int check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

/*
 * What execvp will find for NAME, looked up first so that a mistyped command makes no trace
 * directory: 0, -ENOENT (a shell's 127), -EACCES or -EISDIR (126). The launch still reports
 * what execvp says.
 */
static int check_command(const char *name)
{
	const char *path = secure_getenv("PATH");
	char file[PATH_MAX];
	int err = -ENOENT;

	if (!name[0])
		return -ENOENT;
	if (strchr(name, '/'))
		return check_executable(name);
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's default */
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int n, r;

		/* An empty entry is the working directory, as for execvp. */
		n = end == p ? snprintf(file, sizeof(file), "%s", name)
			     : snprintf(file, sizeof(file), "%.*s/%s", (int)(end - p), p, name);
		if (n > 0 && n < (int)sizeof(file)) {
			r = check_executable(file);
			if (r == 0)
				return 0;
			if (r == -EACCES || r == -EISDIR)
				err = -EACCES; /* execvp goes on searching, then says EACCES */
		}
		if (!*end)
			break;
		p = end;
	}
	return err;
}

/* The run itself: capture, report, exit status. */
static int run_command(struct gw_run_opts *o, char *const cmd[])
{
	char pattern[PATH_MAX], gl[2 * PATH_MAX];
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
	    check_report_outputs(o, make_dir ? o->output : NULL) < 0)
		return 2;
	r = check_command(cmd[0]);
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
	if (gw_output_pattern_glob(pattern, gl, sizeof(gl)) < 0) {
		fprintf(stderr, "gpuwhy: the trace path is too long\n");
		return 2;
	}

	if (prepare_env(o, pattern) < 0)
		return 1;
	glob(gl, 0, NULL, &before);

	status = spawn_and_wait(cmd, true);
	if (status < 0) {
		fprintf(stderr, "gpuwhy: %s: %s\n", cmd[0], strerror(-status));
		globfree(&before);
		return status == -ENOENT ? 127 : 126;
	}
	code = exit_code_of(status);

	glob(gl, 0, NULL, &after);
	fresh = calloc(after.gl_pathc + 1, sizeof(*fresh));
	for (size_t i = 0; fresh && i < after.gl_pathc; i++)
		if (!in_list(before.gl_pathv, before.gl_pathc, after.gl_pathv[i]))
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
		run_report(o, fresh, n_fresh);
	}

	free(fresh);
	globfree(&before);
	globfree(&after);
	return code;
}

static bool have_real_gpu(void)
{
	char *argv[] = {"nvidia-smi", "-L", NULL};
	int status, devnull, saved_out, saved_err;

	if (access("/dev/nvidia0", F_OK) == 0)
		return true;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		return false;
	fflush(stdout);
	saved_out = dup(STDOUT_FILENO);
	saved_err = dup(STDERR_FILENO);
	dup2(devnull, STDOUT_FILENO);
	dup2(devnull, STDERR_FILENO);
	status = spawn_and_wait(argv, false);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	close(devnull);
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int add_report_arg(struct gw_run_opts *o, const char *flag, char *value)
{
	if (o->n_report_args + 2 > GW_MAX_REPORT_ARGS)
		return -E2BIG;
	o->report_args[o->n_report_args++] = (char *)flag;
	if (value)
		o->report_args[o->n_report_args++] = value;
	return 0;
}

static int cmd_demo(struct gw_run_opts *o)
{
	char dir[PATH_MAX], workload[PATH_MAX], rel[PATH_MAX];
	char tmpdir[] = "/tmp/gpuwhy-demo.XXXXXX";
	char outdir[sizeof(tmpdir) + 1];
	char page[sizeof(tmpdir) + sizeof("/report.html")];
	bool with_page;
	char *cmd[2];
	bool found = false;
	int code;

	if (check_report_outputs(o, NULL) < 0)
		return 2;
	if (self_dir(dir, sizeof(dir)) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(gw_demo_workloads) / sizeof(gw_demo_workloads[0]); i++) {
		snprintf(rel, sizeof(rel), "../tests/workloads/%s", gw_demo_workloads[i]);
		if (resolve(dir, rel, workload) == 0 && access(workload, X_OK) == 0) {
			found = true;
			break;
		}
	}
	if (!found) {
		fprintf(stderr, "gpuwhy: demo: no bundled workload next to this gpuwhy (the demo "
				"runs from a build tree with the CUDA workloads built by nvcc)\n");
		return 1;
	}
	if (!o->sim && !have_real_gpu())
		o->sim = true;
	/* The workloads use the shared CUDA runtime: on a real GPU, let the loader fall back to
	 * the toolkit's copy when the system paths have none. */
	if (!o->sim) {
		const char *old = secure_getenv("LD_LIBRARY_PATH");
		char *paths;

		if (asprintf(&paths, "%s%s" GW_CUDA_ROOT "/lib64", old ? old : "",
			     old && old[0] ? ":" : "") < 0)
			return 1;
		setenv("LD_LIBRARY_PATH", paths, 1);
		free(paths);
	}
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "gpuwhy: demo: %s: %s\n", tmpdir, strerror(errno));
		return 1;
	}
	snprintf(outdir, sizeof(outdir), "%s/", tmpdir);
	snprintf(page, sizeof(page), "%s/report.html", tmpdir);
	o->output = outdir;
	/* People would rather look than read: the demo also writes the HTML page. */
	with_page = o->n_report_args == 0;
	if (with_page && add_report_arg(o, "--html", page) < 0)
		return 1;

	if (o->sim)
		printf("== gpuwhy demo on the SIMULATED GPU (tests/gpusim) ==\n"
		       "No GPU was found, so the workload runs on gpusim, a test double that "
		       "models\n"
		       "a GPU's timeline on the CPU. The numbers below are simulated, not a GPU\n"
		       "measurement; they show what gpuwhy reports, not how a real GPU "
		       "performs.\n\n");
	else
		printf("== gpuwhy demo on this machine's GPU ==\n\n");
	printf("$ gpuwhy run%s -o %s%s%s -- %s\n\n", o->sim ? " --sim" : "", outdir,
	       with_page ? " --html " : "", with_page ? page : "", workload);
	fflush(stdout);

	cmd[0] = workload;
	cmd[1] = NULL;
	code = run_command(o, cmd);
	if (with_page)
		printf("\nThe HTML report (open it in a browser): %s\n", page);
	printf("The trace: %s\n", tmpdir);
	return code;
}

enum {
	GW_OPT_SIM = 256,
	GW_OPT_NO_REPORT,
	GW_OPT_JSON,
	GW_OPT_HTML,
	GW_OPT_PERFETTO,
	GW_OPT_TINY_US,
	GW_OPT_STARVE_US,
};

static const struct option gw_run_options[] = {
	{"output", required_argument, NULL, 'o'},
	{"sim", no_argument, NULL, GW_OPT_SIM},
	{"no-report", no_argument, NULL, GW_OPT_NO_REPORT},
	{"json", no_argument, NULL, GW_OPT_JSON},
	{"html", required_argument, NULL, GW_OPT_HTML},
	{"perfetto", required_argument, NULL, GW_OPT_PERFETTO},
	{"tiny-us", required_argument, NULL, GW_OPT_TINY_US},
	{"starve-us", required_argument, NULL, GW_OPT_STARVE_US},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* Parses the options of `run` and `demo`. Returns the index of the first non-option, or -1
 * after a usage error (reported), or -2 after --help. */
static int parse_run_options(int argc, char **argv, struct gw_run_opts *o)
{
	uint64_t ns;
	int c, r = 0;

	optind = 1;
	opterr = 0; /* one line of our own for each error, below */
	/* "+": stop at the first non-option, which is CMD, so CMD's own options stay its own;
	 * ":": a missing value is told apart from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:o:h", gw_run_options, NULL)) != -1) {
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
		case GW_OPT_JSON:
			r = add_report_arg(o, "--json", NULL);
			break;
		case GW_OPT_HTML:
			o->html = optarg;
			r = add_report_arg(o, "--html", optarg);
			break;
		case GW_OPT_PERFETTO:
			o->perfetto = optarg;
			r = add_report_arg(o, "--perfetto", optarg);
			break;
		/* Checked here, as gpuwhy-report would, so a bad value fails before the run. */
		case GW_OPT_TINY_US:
			if (gw_cli_parse_us("gpuwhy", "--tiny-us", optarg, &ns) < 0)
				return -1;
			r = add_report_arg(o, "--tiny-us", optarg);
			break;
		case GW_OPT_STARVE_US:
			if (gw_cli_parse_us("gpuwhy", "--starve-us", optarg, &ns) < 0)
				return -1;
			r = add_report_arg(o, "--starve-us", optarg);
			break;
		case 'h':
			usage(stdout);
			return -2;
		case ':':
			fprintf(stderr, "gpuwhy: option '%s' needs a value (gpuwhy --help)\n",
				argv[optind - 1]);
			return -1;
		default:
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

static int cmd_report(char **argv)
{
	char report[PATH_MAX];
	int r = find_sibling(GW_REPORT_NAME, report);

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

	gw_debug = debug && debug[0] && strcmp(debug, "0") != 0;
	if (argc < 2) {
		fprintf(stderr, "gpuwhy: no command given: run, report or demo (gpuwhy --help)\n");
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "report") == 0)
		return cmd_report(argv + 1);

	if (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "demo") != 0) {
		gw_cli_error(stderr, "gpuwhy", "command", argv[1],
			     "unknown; use run, report or demo (gpuwhy --help)");
		return 2;
	}
	first = parse_run_options(argc - 1, argv + 1, &o);
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
		return cmd_demo(&o);
	}
	if (first >= argc - 1) {
		fprintf(stderr,
			"gpuwhy: run: no command given (gpuwhy run [OPTIONS] -- CMD [ARGS])\n");
		return 2;
	}
	return run_command(&o, argv + 1 + first);
}
