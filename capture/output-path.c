/* SPDX-License-Identifier: MIT */
/* Expands GPUWHY_OUTPUT patterns and creates the trace file without ever overwriting. */
#include "output-path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuwhy/trace-codec.h"

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

int gw_output_exec_path(char *out, size_t size, const char *path, unsigned n)
{
	static const char *const endings[] = {".trace.zst", ".zst"};
	size_t len = strlen(path), stem = len;
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	int r;

	for (size_t i = 0; i < sizeof(endings) / sizeof(endings[0]); i++) {
		size_t e = strlen(endings[i]);

		/* an ending, not the whole file name */
		if (len - (size_t)(name - path) > e && !strcmp(path + len - e, endings[i])) {
			stem = len - e;
			break;
		}
	}
	r = snprintf(out, size, "%.*s-exec%u%s", (int)stem, path, n, path + stem);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : r;
}

/* When this process started, on the real-time clock (ns): from its start in clock ticks since
 * boot (/proc/self/stat) and how long ago that was. 0 when unknown. */
static uint64_t process_start_realtime_ns(void)
{
	char buf[1024], *p;
	unsigned long long ticks = 0;
	struct timespec boot, real;
	long hz = sysconf(_SC_CLK_TCK);
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	uint64_t age, start_boot;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = '\0';
	/* after the command name (which may hold spaces and parentheses): field 3 on */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", &ticks) != 1)
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_REALTIME, &real);
	start_boot = (uint64_t)ticks * (1000000000ull / (uint64_t)hz);
	age = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec;
	age = age > start_boot ? age - start_boot : 0;
	return (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec - age;
}

bool gw_output_is_earlier_image(const char *path, pid_t pid)
{
	uint8_t buf[4096];
	uint32_t magic, content;
	struct gw_codec_state cs;
	struct gw_record rec;
	size_t used;
	uint64_t started;
	/* a FIFO or a device named like a trace is never read: opening it could block */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n = fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)
			    ? -1
			    : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (n < 20)
		return false;
	memcpy(&magic, buf, 4);
	memcpy(&content, buf + 4, 4);
	if (magic != GW_SKIPPABLE_MAGIC || memcmp(buf + 8, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN) ||
	    content < GW_FILE_MAGIC_LEN + 4 || (size_t)content + 8 > (size_t)n)
		return false;
	gw_codec_reset(&cs);
	if (gw_decode_record(&cs, buf + 20, content - GW_FILE_MAGIC_LEN - 4, &rec, &used) != 1 ||
	    rec.type != GW_REC_HEADER || rec.header.pid != (uint64_t)pid)
		return false;
	/* a second of slack: the process's start is known to a clock tick, the clocks may step */
	started = process_start_realtime_ns();
	return started && rec.header.start_realtime_ns + 1000000000ull >= started;
}
