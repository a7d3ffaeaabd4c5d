/* SPDX-License-Identifier: MIT */
/* What the launcher's commands share: finding things next to gpuwhy, the environment, and
 * running a program with the signals it is sent forwarded to it. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef GW_INSTALL_LIBDIR_REL
#define GW_INSTALL_LIBDIR_REL "../lib"
#endif
#ifndef GW_CUDA_ROOT
#define GW_CUDA_ROOT "/usr/local/cuda"
#endif
#ifndef GW_INSTALL_LIBDIR_ABS
#define GW_INSTALL_LIBDIR_ABS "/usr/local/lib"
#endif

#define GW_LIBRARY_NAME "libgpuwhy.so"
#define GW_REPORT_NAME	"gpuwhy-report"

/* GPUWHY_DEBUG is set: say on stderr which signals were forwarded. */
extern bool gw_debug;

/* The directory of this executable (/proc/self/exe) into buf. Returns 0 or -errno. */
int gw_self_dir(char *buf, size_t len);
/* dir/rel, resolved (realpath) into out (PATH_MAX), when it exists. Returns 0 or -errno. */
int gw_resolve(const char *dir, const char *rel, char *out);
/* libgpuwhy.so: ../lib beside gpuwhy (a build tree), then the installed libdir. */
int gw_find_library(char *out);
/* The simulated GPU's libraries (tests/gpusim of a build tree beside gpuwhy). */
int gw_find_gpusim(char *out);
/* A program installed or built beside gpuwhy (gpuwhy-report). */
int gw_find_sibling(const char *name, char *out);
/* Puts value in front of the environment list name (sep-separated). Returns 0 or -errno. */
int gw_env_prepend(const char *name, const char *value, char sep);
/* Runs argv[0] with argv and waits for it; with forward, SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * sent to gpuwhy go to it by the rules of job-signals.h (a signal the whole job got is not
 * sent again), and it dies with gpuwhy; with stdout_to_stderr, its standard output is gpuwhy's
 * standard error. Returns its wait status, or -errno when it could not start. */
int gw_spawn_and_wait(char *const argv[], bool forward, bool stdout_to_stderr);
/* SIGINT, SIGTERM, SIGHUP and SIGQUIT: what the launcher forwards. */
void gw_forwarded_signals_set(sigset_t *set);
/* The shell's exit code for a wait status: the code, or 128 + the signal. */
int gw_exit_code_of(int status);
bool gw_is_directory(const char *path);
/* The directory part of path (up to its last '/'): its length, and where it starts. */
int gw_dir_part(const char *path, const char **ret_dir);
/* Whether CMD can be run as the shell would find it; says why not on stderr. 0 or an exit
 * code (126, 127). */
int gw_check_command(const char *name);
/* Whether this machine has an NVIDIA GPU the driver sees. */
bool gw_have_real_gpu(void);
