/* SPDX-License-Identifier: MIT */
/* The launcher's signal rules: a signal meant for the whole job reaches the program once. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * `gpuwhy run` forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to it to the program, which runs
 * in the launcher's process group. A sender that signals the whole job reaches the program
 * itself: a process group (`kill -TERM -PGID`, a terminal's ^C, timeout(1)), a cgroup (systemd's
 * KillMode=control-group, Slurm's step teardown), a command-line match (`pkill -f train.py`).
 * Forwarding that signal again delivers it twice, and frameworks read a second SIGINT or
 * SIGTERM as "stop now", cutting a checkpoint short.
 *
 * The witness tells the two apart. It is a process of the launcher's that sits where the
 * program sits (the same process group, session, cgroup, user and parent; the program's
 * command line and name) and blocks the four signals and reports each one it gets, with its
 * sender, through a pipe. A signal the launcher gets from a sender that also signalled the
 * witness within 100 ms reached the whole job, the program included: it is not forwarded. A
 * signal nobody else got (kill of the launcher's pid, a scheduler that knows only that pid) is
 * forwarded once. While a signal is still pending in the witness (it has not been scheduled
 * yet) the decision waits, up to a second. A terminal's signal (SI_KERNEL) to the launcher's
 * foreground group is never forwarded while the program is in that group. A program that left
 * the launcher's process group (setsid, its own job control) gets every signal forwarded: a
 * group send does not reach it, and nothing tells a group send from a cgroup send.
 *
 * The program dies with the launcher: it gets SIGKILL when the launcher dies (PR_SET_PDEATHSIG,
 * set before exec and checked against a launcher that died first), as if it had been killed
 * itself; the witness too.
 */

/* The witness's work when this executable was started as one (the environment says so):
 * reports signals until the launcher goes, and exits. Returns when it is not a witness. */
void gw_witness_main_if_asked(char **argv);

/* Starts the witness for a program to run as argv (signals already blocked). Its pid and the
 * read end of its reports; pid -1 when it could not start (every signal is then forwarded). */
struct gw_witness {
	pid_t pid;
	int fd;
};
void gw_witness_start(char *const argv[], struct gw_witness *ret);

/*
 * Waits for the program (pid, in the launcher's process group, started with the forwarded
 * signals and SIGCHLD blocked in the launcher) and forwards signals by the rules above, reading
 * them from sfd (a signalfd for those signals and SIGCHLD). Ends the witness. Returns the
 * program's wait status or -errno.
 */
int gw_forward_until_exit(pid_t pid, int sfd, struct gw_witness *witness);

/* In the program's child process before exec: dies with the launcher (launcher_pid). */
void gw_die_with_launcher(pid_t launcher_pid);
