/* SPDX-License-Identifier: MIT */
/* A program for the launcher's signal tests: counts every SIGTERM and SIGINT delivered to it. */

/*
 *   signal-count count MARKER   writes "ready PID" to MARKER; after the first SIGTERM or SIGINT
 *                               waits 1 s more (a second delivery arrives by then), appends
 *                               "SIGTERM N SIGINT M" and exits 0
 *   signal-count sleep MARKER   writes "ready PID" to MARKER and waits until a signal ends it
 *
 * The handler runs once per delivery (a C handler, not a language runtime's flag that two
 * deliveries set once); the kernel merges only a signal sent again while the first is still
 * pending, so a count of 1 may hide a duplicate, and the tests also read the launcher's own
 * account of what it forwarded.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t terms, ints;

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		terms++;
	else
		ints++;
}

static void pause_for(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	/* a signal cuts nanosleep short: sleep again for what is left */
	while (nanosleep(&ts, &ts) < 0)
		;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	FILE *f;

	if (argc != 3 || (strcmp(argv[1], "count") && strcmp(argv[1], "sleep"))) {
		fprintf(stderr, "usage: signal-count count|sleep MARKER\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	f = fopen(argv[2], "w");
	if (!f)
		return 3;
	fprintf(f, "ready %d\n", (int)getpid());
	fclose(f);
	if (!strcmp(argv[1], "sleep")) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		for (;;)
			pause();
	}
	for (int i = 0; i < 3000 && !terms && !ints; i++)
		pause_for(10);
	pause_for(1000);
	f = fopen(argv[2], "a");
	if (!f)
		return 3;
	fprintf(f, "SIGTERM %d SIGINT %d\n", (int)terms, (int)ints);
	fclose(f);
	return 0;
}
