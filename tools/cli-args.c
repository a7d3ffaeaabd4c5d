/* SPDX-License-Identifier: MIT */
/* Option values that gpuwhy and gpuwhy-report check alike, before any long work starts. */
#include "cli-args.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A value longer than this is shortened in messages: a path is recognisable by then. */
#define GW_CLI_VALUE_SHOWN 256

int gw_parse_us(const char *s, uint64_t *ret_ns)
{
	uint64_t us = 0, frac_ns = 0, scale = 100;
	const char *p = s;
	bool big = false;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		/* Keep reading digits after the bound so "1e30" is -EINVAL and "9999…9" -ERANGE. */
		if (!big)
			us = us * 10 + (uint64_t)(*p - '0');
		big |= us > GW_US_MAX;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (!scale && *p != '0')
				return -EINVAL; /* finer than a nanosecond */
			frac_ns += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p)
		return -EINVAL;
	if (big || us * 1000 + frac_ns > GW_US_MAX * 1000)
		return -ERANGE;
	*ret_ns = us * 1000 + frac_ns;
	return 0;
}

int gw_check_output_file(const char *path, char *why, size_t size)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;
	size_t len = strlen(path);
	int fd;

	if (!len) {
		snprintf(why, size, "an empty file name");
		return -EINVAL;
	}
	if (strcmp(path, "-") == 0)
		return 0;
	if (len >= sizeof(dir)) {
		snprintf(why, size, "%s", strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, size, "is a directory, not a file");
			return -EISDIR;
		}
		/* /dev/null, /dev/stdout, a FIFO: written in place, never replaced. */
		if (!S_ISREG(st.st_mode))
			return 0;
		/* It is replaced, not written through: still, a file its owner made read-only
		 * stays as it is, as a shell's redirection would leave it. */
		if (access(path, W_OK) < 0) {
			int e = errno;

			snprintf(why, size, "%s", strerror(e));
			return -e;
		}
	} else if (errno != ENOENT) {
		int e = errno;

		snprintf(why, size, "%s",
			 e == ENOTDIR ? "a part of the path is not a directory" : strerror(e));
		return -e;
	}
	if (path[len - 1] == '/') {
		snprintf(why, size, "names a directory, not a file");
		return -EISDIR;
	}
	/* The file is (re)created in its directory: that must exist and be writable. */
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) < 0) {
		int e = errno;

		snprintf(why, size, "directory '%s' %s", dir,
			 e == ENOENT ? "does not exist" : strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, size, "'%s' is not a directory", dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		int e = errno;

		snprintf(why, size, "cannot write in directory '%s': %s", dir, strerror(e));
		return -e;
	}
	/* access() says what the permissions allow, not that the file system takes a file
	 * (/proc, a read-only mount): make one, unnamed where it can be, and let it go. */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char probe[PATH_MAX + 32];

		snprintf(probe, sizeof(probe), "%s/.gpuwhy-probe-XXXXXX", dir);
		fd = mkstemp(probe);
		if (fd >= 0)
			unlink(probe);
	}
	if (fd < 0) {
		int e = errno;

		snprintf(why, size, "cannot create a file in directory '%s': %s", dir, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

void gw_cli_error(FILE *f, const char *prog, const char *opt, const char *value, const char *fmt,
		  ...)
{
	size_t n = 0;
	va_list ap;

	fprintf(f, "%s: %s '", prog, opt);
	for (const unsigned char *p = (const unsigned char *)value; *p; p++, n++) {
		if (n == GW_CLI_VALUE_SHOWN) {
			fputs("...", f);
			break;
		}
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputs("': ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

int gw_cli_parse_us(const char *prog, const char *opt, const char *value, uint64_t *ret_ns)
{
	int err = gw_parse_us(value, ret_ns);

	if (err == -ERANGE)
		gw_cli_error(stderr, prog, opt, value, "more than the largest, %llu us", GW_US_MAX);
	else if (err < 0)
		gw_cli_error(stderr, prog, opt, value,
			     "not a number of microseconds (a decimal such as 10 or 2.5, at most "
			     "3 decimals, from 0 to %llu)",
			     GW_US_MAX);
	return err;
}

int gw_cli_check_output(const char *prog, const char *opt, const char *path)
{
	char why[PATH_MAX + 64];
	int err = gw_check_output_file(path, why, sizeof(why));

	if (err < 0)
		gw_cli_error(stderr, prog, opt, path, "%s", why);
	return err;
}
