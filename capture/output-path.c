/* SPDX-License-Identifier: MIT */
/* Expands GPUWHY_OUTPUT patterns and creates the trace file without ever overwriting. */
#include "output-path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

int64_t gw_rank_from_env(void)
{
	static const char *const vars[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = secure_getenv(vars[i]);
		char *end;
		long long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtoll(v, &end, 10);
		if (!errno && !*end && r >= 0)
			return r;
	}
	return -1;
}

static int append(char *buf, size_t size, size_t *len, const char *text, size_t n)
{
	if (*len + n >= size)
		return -ENAMETOOLONG;
	memcpy(buf + *len, text, n);
	*len += n;
	return 0;
}

/* Decimal without stdio, so the expansion stays async-signal-safe. */
static size_t format_u64(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

int gw_output_pattern_check(const char *pattern, const char **ret_bad)
{
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		if (!p[1] || !strchr(GW_OUTPUT_SEQUENCES, p[1])) {
			*ret_bad = p;
			return -EINVAL;
		}
		p++;
	}
	return 0;
}

bool gw_output_pattern_varies(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (*p != '%' || !p[1])
			continue;
		if (p[1] != '%')
			return true;
		p++;
	}
	return false;
}

int gw_output_pattern_glob(const char *pattern, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = pattern; *p; p++) {
		const char *piece;
		char one[3] = {0};

		if (p[0] == '%' && p[1] && p[1] != '%' && strchr(GW_OUTPUT_SEQUENCES, p[1])) {
			piece = "*";
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			piece = "%";
			p++;
		} else if (strchr("*?[\\", *p)) {
			one[0] = '\\';
			one[1] = *p;
			piece = one;
		} else {
			one[0] = *p;
			piece = one;
		}
		for (; *piece; piece++) {
			if (o + 1 >= size)
				return -ENAMETOOLONG;
			out[o++] = *piece;
		}
	}
	if (!size)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

int gw_output_path_expand(char *buf, size_t size, const char *pattern, pid_t pid, const char *host,
			  int64_t rank)
{
	size_t len = 0;
	char num[20];
	int r;

	if (!size)
		return -ENAMETOOLONG;
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			r = append(buf, size, &len, p, 1);
		} else {
			switch (*++p) {
			case 'p':
				r = append(buf, size, &len, num, format_u64(num, (uint64_t)pid));
				break;
			case 'h':
				r = append(buf, size, &len, host, strlen(host));
				break;
			case 'r':
				if (rank < 0)
					r = append(buf, size, &len, "norank", 6);
				else
					r = append(buf, size, &len, num,
						   format_u64(num, (uint64_t)rank));
				break;
			case '%':
				r = append(buf, size, &len, "%", 1);
				break;
			default:
				r = -EINVAL;
				break;
			}
		}
		if (r < 0)
			return r;
	}
	buf[len] = '\0';
	return (int)len;
}

int gw_output_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	return fd < 0 ? -errno : fd;
}
