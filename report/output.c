/* SPDX-License-Identifier: MIT */
/* Output files written whole or not at all (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Named temporary files the signal handler removes: only where O_TMPFILE is missing. */
#define GW_OUTPUT_SLOTS 4
static char gw_tmp_path[GW_OUTPUT_SLOTS][PATH_MAX];
static volatile sig_atomic_t gw_tmp_live[GW_OUTPUT_SLOTS];

struct gw_output {
	FILE *f;
	int fd;
	int err;       /* errno of the first failed write */
	char *path;    /* where it is published; NULL: written in place */
	bool unnamed;  /* fd is an O_TMPFILE file */
	int slot;      /* the named temporary's slot, -1 none */
	mode_t mode;   /* the published file's mode */
	bool replaces; /* path exists: publishing renames over it */
};

static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
	struct gw_output *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!o->err)
				o->err = w < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static void on_fatal_signal(int sig)
{
	for (int i = 0; i < GW_OUTPUT_SLOTS; i++)
		if (gw_tmp_live[i])
			unlink(gw_tmp_path[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void gw_output_catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (signal(sigs[i], on_fatal_signal) == SIG_IGN)
			signal(sigs[i], SIG_IGN);
}

/* path's directory into dir (PATH_MAX). */
static void dir_of(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
}

/* The stand-in for O_TMPFILE: a named temporary beside path, removed on a fatal signal. */
static int named_temporary(struct gw_output *o)
{
	const char *slash = strrchr(o->path, '/');
	sigset_t fatal, old;
	int n, e = 0;

	for (o->slot = 0; o->slot < GW_OUTPUT_SLOTS && gw_tmp_live[o->slot]; o->slot++)
		;
	if (o->slot == GW_OUTPUT_SLOTS)
		return -EMFILE;
	n = snprintf(gw_tmp_path[o->slot], PATH_MAX, "%.*s.gpuwhy-report-XXXXXX",
		     slash ? (int)(slash + 1 - o->path) : 0, o->path);
	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	/* no signal between the file's creation and the flag that has the handler remove it */
	sigemptyset(&fatal);
	sigaddset(&fatal, SIGINT);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	o->fd = mkstemp(gw_tmp_path[o->slot]);
	if (o->fd < 0)
		e = -errno;
	else
		gw_tmp_live[o->slot] = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e < 0)
		o->slot = -1;
	return e;
}

int gw_output_begin(const char *path, struct gw_output **ret)
{
	struct gw_output *o = calloc(1, sizeof(*o));
	char dir[PATH_MAX];
	struct stat st;
	bool exists;
	int r = 0;

	*ret = NULL;
	if (!o)
		return -ENOMEM;
	o->slot = -1;
	o->fd = -1;
	exists = strcmp(path, "-") != 0 && stat(path, &st) == 0;
	if (strcmp(path, "-") == 0) {
		fflush(stdout); /* what the caller's stdio holds for it goes first */
		o->fd = STDOUT_FILENO;
	} else if (exists && !S_ISREG(st.st_mode)) {
		/* /dev/null, /dev/stdout, a FIFO: written in place, never replaced */
		o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (o->fd < 0)
			r = -errno;
	} else {
		o->replaces = exists;
		o->mode = exists ? st.st_mode & 07777 : 0600;
		o->path = strdup(path);
		if (!o->path) {
			r = -ENOMEM;
			goto out;
		}
		dir_of(path, dir);
		o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		o->unnamed = o->fd >= 0;
		if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
			r = named_temporary(o);
		else if (o->fd < 0)
			r = -errno;
	}
	if (r < 0)
		goto out;
	o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = out_write});
	if (!o->f)
		r = -errno;
out:
	if (r < 0) {
		o->f = NULL;
		gw_output_finish(o, r);
		return r;
	}
	*ret = o;
	return 0;
}

FILE *gw_output_stream(struct gw_output *o)
{
	return o->f;
}

/* Gives the finished file its name. Returns 0 or -errno. */
static int publish(struct gw_output *o)
{
	char proc[64], tmp[PATH_MAX + 32];
	int n;

	if (fchmod(o->fd, o->mode) < 0)
		return -errno;
	if (!o->unnamed)
		return rename(gw_tmp_path[o->slot], o->path) < 0 ? -errno : 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	/* a new name: link it there; an old file: link beside it, then rename over it, so
	 * the old one stays whole until the new one replaces it */
	if (!o->replaces)
		return linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) < 0 ? -errno
											: 0;
	for (unsigned i = 0;; i++) {
		n = snprintf(tmp, sizeof(tmp), "%s.gpuwhy-report-%u-%u", o->path,
			     (unsigned)getpid(), i);
		if (n < 0 || n >= (int)sizeof(tmp))
			return -ENAMETOOLONG;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			break;
		if (errno != EEXIST || i > 100)
			return -errno;
	}
	if (rename(tmp, o->path) < 0) {
		int e = -errno;

		unlink(tmp);
		return e;
	}
	return 0;
}

int gw_output_finish(struct gw_output *o, int err)
{
	int werr = 0;

	if (!o)
		return err;
	if (o->f) {
		/* the last buffered bytes; a write error of any time is in o->err */
		if (fflush(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
		werr = o->err;
		fclose(o->f);
	}
	/* a renderer that saw ferror says EIO: the write's own error says more */
	if (werr && (err >= 0 || err == -EIO))
		err = -werr;
	if (err >= 0 && o->path)
		err = publish(o);
	if (o->slot >= 0) {
		if (err < 0)
			unlink(gw_tmp_path[o->slot]);
		gw_tmp_live[o->slot] = 0;
	}
	if (o->fd >= 0 && o->fd != STDOUT_FILENO && close(o->fd) < 0 && err >= 0)
		err = -errno;
	free(o->path);
	free(o);
	return err;
}
