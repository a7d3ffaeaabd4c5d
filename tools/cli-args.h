/* SPDX-License-Identifier: MIT */
/* Option values that gpuwhy and gpuwhy-report check alike, before any long work starts. */
#ifndef GW_CLI_ARGS_H
#define GW_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The largest --tiny-us / --starve-us: 1000 s, far beyond any gap or kernel worth a rule. */
#define GW_US_MAX 1000000000ULL

/*
 * Parses a duration in microseconds: decimal digits, optionally a point and one to three more
 * digits (nanosecond resolution), from 0 to GW_US_MAX. No sign, exponent, hex, space, "nan" or
 * "inf". Returns 0 with *ret_ns set, -EINVAL when S is not such a number, -ERANGE when above.
 */
int gw_parse_us(const char *s, uint64_t *ret_ns);

/*
 * Checks that PATH can be written as an output file without starting the work first: a
 * non-empty name, not a directory, in a directory that exists and can be written. "-" (standard
 * output) and an existing non-regular file (a device, a FIFO) pass as they are. Returns 0, or
 * -errno with a reason (without the path itself) in WHY.
 */
int gw_check_output_file(const char *path, char *why, size_t size);

/*
 * gw_parse_us and gw_check_output_file for option OPT of program PROG, saying what is wrong in
 * one line on stderr (through gw_cli_error). Return 0, or -errno after that line.
 */
int gw_cli_parse_us(const char *prog, const char *opt, const char *value, uint64_t *ret_ns);
int gw_cli_check_output(const char *prog, const char *opt, const char *path);

/*
 * Prints "PROG: OPT 'VALUE': REASON" as one line on F, with VALUE's control characters escaped
 * and a very long VALUE shortened, so that the line stays one line.
 */
__attribute__((format(printf, 5, 6), nonnull(1, 2, 3, 4, 5))) void
gw_cli_error(FILE *f, const char *prog, const char *opt, const char *value, const char *fmt, ...);

#endif
