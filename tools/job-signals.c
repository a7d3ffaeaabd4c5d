/* SPDX-License-Identifier: MIT */
/* The launcher's signal rules and the witness that applies them (job-signals.h). */
#include "job-signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"

#define WITNESS_ENV "GPUWHY_SIGNAL_WITNESS"
/* How long a signal of the launcher's waits for the witness's word of the same send. */
#define MATCH_NS    100000000ll
/* The longest it waits while the signal is still pending in the witness. */
#define PENDING_NS  1000000000ll
#define MAX_WAITING 64

/* What the witness reports of each signal it gets. */
struct report {
	int32_t sig, pid, code;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void gw_witness_main_if_asked(char **argv)
{
	const char *v = secure_getenv(WITNESS_ENV), *name;
	struct report r;
	siginfo_t si;
	sigset_t set;
	int fd;

	if (!v)
		return;
	fd = atoi(v);
	/* The program's name (as pkill and killall see it), not the launcher's. */
	name = argv[0] ? strrchr(argv[0], '/') : NULL;
	prctl(PR_SET_NAME, name ? name + 1 : argv[0] ? argv[0] : "gpuwhy", 0, 0, 0);
	gw_forwarded_signals_set(&set);
	/* blocked since before the fork: a signal sent meanwhile is pending, not lost */
	for (;;) {
		if (sigwaitinfo(&set, &si) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		r = (struct report){si.si_signo, si.si_pid, si.si_code};
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			_exit(0); /* the launcher is gone */
	}
}

void gw_die_with_launcher(pid_t launcher_pid)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* the launcher died before the line above: this process was already re-parented */
	if (getppid() != launcher_pid)
		raise(SIGKILL);
}

void gw_witness_start(char *const argv[], struct gw_witness *ret)
{
	char env[64], *envp[] = {env, NULL};
	pid_t launcher = getpid();
	int p[2], null;

	ret->pid = -1;
	ret->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	ret->pid = fork();
	if (ret->pid == 0) {
		gw_die_with_launcher(launcher);
		close(p[0]);
		/* the report pipe crosses exec; the rest of the launcher's descriptors do not */
		if (fcntl(p[1], F_SETFD, 0) < 0)
			_exit(127);
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		snprintf(env, sizeof(env), WITNESS_ENV "=%d", p[1]);
		/* this executable again, with the program's command line */
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	close(p[1]);
	if (ret->pid < 0) {
		close(p[0]);
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ret->fd = p[0];
}

/* Whether sig is pending in process pid (its private or shared set, /proc/PID/status). */
static bool pending_in(pid_t pid, int sig)
{
	char path[64], buf[4096], *p;
	unsigned long long mask;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (const char *key = "SigPnd:"; key; key = strcmp(key, "SigPnd:") ? NULL : "ShdPnd:") {
		p = strstr(buf, key);
		if (p && sscanf(p + strlen(key), "%llx", &mask) == 1 && (mask >> (sig - 1)) & 1)
			return true;
	}
	return false;
}

static void debug_line(const char *what, int sig)
{
	if (gw_debug)
		fprintf(stderr, "gpuwhy: %s %d%s\n", what, sig,
			strcmp(what, "forwarded signal") ? "" : " to the program");
}

struct waiting {
	int sig, pid;
	int64_t since, until;
};

static void drop(struct waiting *list, int *n, int i)
{
	list[i] = list[--*n];
}

int gw_forward_until_exit(pid_t pid, int sfd, struct gw_witness *witness)
{
	/* signals of the launcher's waiting for the witness's word, and words not yet matched */
	struct waiting mine[MAX_WAITING], words[MAX_WAITING];
	int n_mine = 0, n_words = 0, status = 0;
	bool done = false;

	while (!done) {
		struct pollfd pfd[2] = {{sfd, POLLIN, 0}, {witness->fd, POLLIN, 0}};
		struct signalfd_siginfo si;
		struct report r;
		int64_t t = now_ns(), wait_ms = -1;

		for (int i = 0; i < n_mine; i++) {
			int64_t ms = (mine[i].until - t) / 1000000 + 1;

			if (wait_ms < 0 || ms < wait_ms)
				wait_ms = ms > 0 ? ms : 0;
		}
		if (poll(pfd, witness->fd >= 0 ? 2 : 1, (int)wait_ms) < 0 && errno != EINTR)
			return -errno;
		t = now_ns();

		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			int sig = (int)si.ssi_signo;
			bool in_group = getpgid(pid) == getpgrp();

			if (sig == SIGCHLD)
				continue;
			/* a terminal's signal went to its whole foreground group: the program has it */
			if (si.ssi_code == SI_KERNEL && in_group)
				continue;
			if (witness->pid < 0 || !in_group || n_mine == MAX_WAITING) {
				kill(pid, sig);
				debug_line("forwarded signal", sig);
				continue;
			}
			mine[n_mine++] = (struct waiting){sig, (int)si.ssi_pid, t, t + MATCH_NS};
		}
		while (witness->fd >= 0) {
			ssize_t got = read(witness->fd, &r, sizeof(r));

			if (got == 0) { /* the witness is gone: no more words */
				close(witness->fd);
				witness->fd = -1;
				break;
			}
			if (got != sizeof(r))
				break;
			if (n_words < MAX_WAITING)
				words[n_words++] =
					(struct waiting){r.sig, r.pid, t, t + PENDING_NS};
		}

		/* a send that reached the witness reached the program: once is enough */
		for (int i = 0; i < n_mine; i++) {
			for (int j = 0; j < n_words; j++) {
				if (words[j].sig != mine[i].sig || words[j].pid != mine[i].pid)
					continue;
				debug_line("not forwarded, the whole job got signal", mine[i].sig);
				drop(words, &n_words, j);
				drop(mine, &n_mine, i--);
				break;
			}
		}
		for (int i = 0; i < n_mine; i++) {
			if (t < mine[i].until)
				continue;
			/* still pending in the witness: its word is coming */
			if (t < mine[i].since + PENDING_NS &&
			    pending_in(witness->pid, mine[i].sig)) {
				mine[i].until = t + 10000000ll;
				continue;
			}
			kill(pid, mine[i].sig);
			debug_line("forwarded signal", mine[i].sig);
			drop(mine, &n_mine, i--);
		}
		for (int j = 0; j < n_words; j++)
			if (t >= words[j].until)
				drop(words, &n_words, j--);

		if (waitpid(pid, &status, WNOHANG) == pid)
			done = true;
		if (witness->pid > 0 && waitpid(witness->pid, NULL, WNOHANG) == witness->pid) {
			/* gone (it could not start): the rules fall back to forwarding */
			witness->pid = -1;
		}
	}
	if (witness->pid > 0) {
		kill(witness->pid, SIGKILL);
		waitpid(witness->pid, NULL, 0);
	}
	if (witness->fd >= 0)
		close(witness->fd);
	witness->pid = witness->fd = -1;
	return status;
}
