/* SPDX-License-Identifier: MIT */
/* gpuwhy's own file descriptors: high, close-on-exec, checked before use (descriptors.h). */
#include "descriptors.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define GW_FD_FLOOR_MAX 100
#define GW_FD_FLOOR_MIN 3

int gw_fd_floor(void)
{
	struct rlimit rl;
	rlim_t half;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return GW_FD_FLOOR_MAX;
	half = rl.rlim_cur / 2;
	if (half > GW_FD_FLOOR_MAX)
		return GW_FD_FLOOR_MAX;
	return half < GW_FD_FLOOR_MIN ? GW_FD_FLOOR_MIN : (int)half;
}

int gw_fd_move_high(int fd)
{
	int high;

	if (fd < 0)
		return -EBADF;
	if (fd >= gw_fd_floor()) {
		/* already out of the way; only make sure it does not survive exec */
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			return -errno;
		return fd;
	}
	high = fcntl(fd, F_DUPFD_CLOEXEC, gw_fd_floor());
	if (high < 0) {
		int e = errno;

		if (fd >= GW_FD_FLOOR_MIN && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0)
			return fd;
		close(fd);
		return -(e == EINVAL ? EMFILE : e);
	}
	close(fd);
	return high;
}

int gw_fd_identify(int fd, struct gw_fd_id *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	return 0;
}

bool gw_fd_is(int fd, const struct gw_fd_id *id)
{
	struct gw_fd_id now;

	return gw_fd_identify(fd, &now) == 0 && now.dev == id->dev && now.ino == id->ino;
}
