/* SPDX-License-Identifier: MIT */
/* What the launcher's commands share: finding the library and the tools, starting a program
 * with the signals it is sent forwarded to it, and its exit status. */
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
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job-signals.h"
#include "launch.h"

static const int gw_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

bool gw_debug;

/* The directory of this executable, from /proc/self/exe. */
int gw_self_dir(char *buf, size_t len)
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
int gw_resolve(const char *dir, const char *rel, char *out)
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
int gw_find_library(char *out)
{
	const char *env = secure_getenv("GPUWHY_LIBRARY");
	char dir[PATH_MAX];
	int r;

	if (env && env[0])
		return realpath(env, out) ? 0 : -errno;
	r = gw_self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	if (gw_resolve(dir, "../lib/" GW_LIBRARY_NAME, out) == 0)
		return 0;
	if (gw_resolve(dir, GW_INSTALL_LIBDIR_REL "/" GW_LIBRARY_NAME, out) == 0)
		return 0;
	return gw_resolve(dir, GW_INSTALL_LIBDIR_ABS "/" GW_LIBRARY_NAME, out);
}

/* The simulated GPU exists only in a build tree: ../tests/gpusim holding libcudart.so.13. */
int gw_find_gpusim(char *out)
{
	char dir[PATH_MAX], probe[PATH_MAX];
	int r;

	r = gw_self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	r = gw_resolve(dir, "../tests/gpusim", out);
	if (r < 0)
		return r;
	if (snprintf(probe, sizeof(probe), "%s/libcudart.so.13", out) >= (int)sizeof(probe))
		return -ENAMETOOLONG;
	return access(probe, R_OK) == 0 ? 0 : -errno;
}

int gw_find_sibling(const char *name, char *out)
{
	char dir[PATH_MAX];
	int r;

	r = gw_self_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	return gw_resolve(dir, name, out);
}

/* Prepends VALUE to the SEP-separated list in the environment variable NAME. */
int gw_env_prepend(const char *name, const char *value, char sep)
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

void gw_forwarded_signals_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(gw_forwarded_signals) / sizeof(gw_forwarded_signals[0]); i++)
		sigaddset(set, gw_forwarded_signals[i]);
}

/* Runs ARGV as a child and returns its wait status, or -errno. When FORWARD is set, the
 * termination signals this process receives are passed on to the child by the rules of
 * job-signals.h, and the child dies with this process. */
int gw_spawn_and_wait(char *const argv[], bool forward, bool stdout_to_stderr)
{
	struct gw_witness witness = {-1, -1};
	sigset_t blocked, old_mask;
	int status = 0, err_pipe[2], child_errno = 0, sfd = -1;
	size_t nsig = sizeof(gw_forwarded_signals) / sizeof(gw_forwarded_signals[0]);
	pid_t pid, launcher = getpid();

	/* The exec error comes back through a close-on-exec pipe, so "command not found" is
	 * reported by us and distinguished from a program that exits 127 itself. */
	if (pipe2(err_pipe, O_CLOEXEC) < 0)
		return -errno;

	/* From here the signals wait in the signalfd (read once the program runs) rather than
	 * interrupt: nothing sent meanwhile is lost. */
	gw_forwarded_signals_set(&blocked);
	sigaddset(&blocked, SIGCHLD);
	sigprocmask(SIG_BLOCK, &blocked, &old_mask);
	if (forward) {
		sfd = signalfd(-1, &blocked, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0) {
			int e = -errno;

			sigprocmask(SIG_SETMASK, &old_mask, NULL);
			close(err_pipe[0]);
			close(err_pipe[1]);
			return e;
		}
		gw_witness_start(argv, &witness);
	}

	pid = fork();
	if (pid == 0) {
		int e;

		if (forward)
			gw_die_with_launcher(launcher);
		signal(SIGPIPE, SIG_DFL);
		for (size_t i = 0; i < nsig; i++)
			signal(gw_forwarded_signals[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(err_pipe[1]);
	if (pid < 0) {
		int e = -errno;

		close(err_pipe[0]);
		if (witness.pid > 0) {
			kill(witness.pid, SIGKILL);
			waitpid(witness.pid, NULL, 0);
			close(witness.fd);
		}
		if (sfd >= 0)
			close(sfd);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		return e;
	}
	if (read(err_pipe[0], &child_errno, sizeof(child_errno)) != sizeof(child_errno))
		child_errno = 0;
	close(err_pipe[0]);

	if (forward) {
		status = gw_forward_until_exit(pid, sfd, &witness);
		close(sfd);
	} else {
		while (waitpid(pid, &status, 0) < 0) {
			if (errno != EINTR) {
				status = -errno;
				break;
			}
		}
	}
	/* the program's end is known; a termination signal that came after it is the launcher's
	 * own, with the launcher's disposition, once unblocked */
	{
		struct timespec zero = {0, 0};
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		while (sigtimedwait(&chld, NULL, &zero) > 0)
			;
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	if (child_errno)
		return -child_errno;
	return status;
}

int gw_exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

bool gw_is_directory(const char *path)
{
	struct stat st;
	size_t len = strlen(path);

	if (len && path[len - 1] == '/')
		return true;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH's directory part, or "." (as the %.*s precision and string to print). */
int gw_dir_part(const char *path, const char **ret_dir)
{
	const char *slash = strrchr(path, '/');

	*ret_dir = slash ? path : ".";
	if (!slash)
		return 1;
	return slash == path ? 1 : (int)(slash - path);
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
int gw_check_command(const char *name)
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

bool gw_have_real_gpu(void)
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
	status = gw_spawn_and_wait(argv, false, false);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	close(devnull);
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
