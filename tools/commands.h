/* SPDX-License-Identifier: MIT */
/* The launcher's commands besides `run` (run.h), and its help, for gpuwhy.c's dispatch. */
#pragma once

#include <stdio.h>

#include "run.h"

/* gpuwhy's usage text (gpuwhy.c). */
void gw_usage(FILE *f);

/* `gpuwhy demo`, with run's options already parsed into o (cmd-demo.c). Returns the exit
 * code. */
int gw_cmd_demo(struct gw_run_opts *o);

/* `gpuwhy import [--format NAME] IN -o OUT`, argv[0] being "import" (cmd-import.c): IN, of
 * any format a source reads, written as a gpuwhy trace. Returns the exit code. */
int gw_cmd_import(int argc, char **argv);

/* `gpuwhy diff [OPTIONS] BEFORE AFTER` (or BEFORE... --vs AFTER...), argv[0] being "diff"
 * (cmd-diff.c): two runs analysed and compared. Returns the exit code. */
int gw_cmd_diff(int argc, char **argv);
