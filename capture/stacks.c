/* SPDX-License-Identifier: MIT */
/* Unwinds the current thread and turns the stack into a deduplicated id. */
#include "stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gpuwhy/trace-format.h>

#include "clock.h"
#include "descriptors.h"
#include "intern.h"
#include "modules.h"
#include "python-frames.h"
#include "trace-writer.h"

/* Deep enough for framework code between the application's call site and the CUDA call. */
#define UNWIND_DEPTH  64
/* How often, at most, a stack checks libunwind's pipe first. */
#define PIPE_CHECK_NS 1000000ull
/* Where above the floor libunwind's new pipe is looked for. */
#define PIPE_SEARCH   64

/* libunwind's memory-check pipe, as found at the start (watched: found and ours to check). */
static struct {
	bool watched;
	int rd, wr;
	struct gw_fd_id rd_id, wr_id;
} vpipe;
static _Atomic uint64_t next_check_ns;
static _Atomic bool stopped;
static _Atomic uint64_t stopped_ns;

static bool is_pipe_end(int fd, int mode, struct stat *st)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == mode && fstat(fd, st) == 0 && S_ISFIFO(st->st_mode);
}

/* Finds the pipe that appeared at or above floor, among the numbers that were free before. */
static bool find_new_pipe(int floor, const bool *was_open)
{
	struct stat r, wst;

	for (int i = 0; i < PIPE_SEARCH; i++) {
		if (was_open[i] || !is_pipe_end(floor + i, O_RDONLY, &r))
			continue;
		for (int j = 0; j < PIPE_SEARCH; j++) {
			if (was_open[j] || j == i || !is_pipe_end(floor + j, O_WRONLY, &wst) ||
			    wst.st_ino != r.st_ino || wst.st_dev != r.st_dev)
				continue;
			vpipe.rd = floor + i;
			vpipe.wr = floor + j;
			vpipe.rd_id = (struct gw_fd_id){r.st_dev, r.st_ino};
			vpipe.wr_id = (struct gw_fd_id){wst.st_dev, wst.st_ino};
			return true;
		}
	}
	return false;
}

int gw_stacks_init(void)
{
	int floor = gw_fd_floor(), held[128], nheld = 0, fd, r = 0;
	bool was_open[PIPE_SEARCH];
	struct gw_fd_id null_id;
	void *raw[4];

	if (vpipe.watched) /* a fork child: libunwind and its pipe came with the parent */
		return 0;
	/* Every free number below the floor is held for the moment (by /dev/null), so the
	 * pipe libunwind opens at its first unwind takes the lowest free ones above it. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	gw_fd_identify(fd, &null_id);
	while (fd >= 0 && fd < floor && nheld < (int)(sizeof(held) / sizeof(held[0]))) {
		held[nheld++] = fd;
		fd = fcntl(held[0], F_DUPFD_CLOEXEC, 0);
	}
	if (fd < 0)
		r = -errno;
	else if (fd >= floor)
		close(fd);
	for (int i = 0; i < PIPE_SEARCH; i++)
		was_open[i] = fcntl(floor + i, F_GETFD) >= 0;
	if (!r && gw_modules_walk_begin(true)) {
		unw_backtrace(raw, 4);
		gw_modules_walk_end();
	}
	/* what was held is given back, unless the program put a file of its own there since */
	for (int i = 0; i < nheld; i++)
		if (gw_fd_is(held[i], &null_id))
			close(held[i]);
	if (r < 0)
		return r;
	if (find_new_pipe(floor, was_open)) {
		vpipe.watched = true;
		atomic_store(&next_check_ns, gw_now_ns() + PIPE_CHECK_NS);
		return 0;
	}
	/* No pipe: libunwind was initialized before (by the program), or could not make one. */
	{
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		close(p[0]);
		close(p[1]);
	}
	return 0;
}

bool gw_stacks_stopped(uint64_t *ret_ns)
{
	if (!atomic_load(&stopped))
		return false;
	if (ret_ns)
		*ret_ns = atomic_load(&stopped_ns);
	return true;
}

static void stop_stacks(void)
{
	static const char text[] =
		"call stacks stopped: the program closed the descriptors of libunwind's memory "
		"check (a pipe) or put files of its own under their numbers, which unwinding "
		"would read and write; stacks taken before are in the trace";
	struct gw_rec_note note = {
		.level = GW_NOTE_WARNING,
		.text = {(const uint8_t *)text, sizeof(text) - 1},
	};

	note.time_ns = gw_now_ns();
	atomic_store(&stopped_ns, note.time_ns);
	if (atomic_exchange(&stopped, true))
		return;
	gw_emit(GW_REC_NOTE, &note);
}

/* Before an unwind, at most once a millisecond: both ends of the pipe are still libunwind's. */
static bool pipe_intact(void)
{
	uint64_t now, due;

	if (!vpipe.watched)
		return true;
	now = gw_now_ns();
	due = atomic_load_explicit(&next_check_ns, memory_order_relaxed);
	if (now < due || !atomic_compare_exchange_strong(&next_check_ns, &due, now + PIPE_CHECK_NS))
		return true;
	if (gw_fd_is(vpipe.rd, &vpipe.rd_id) && gw_fd_is(vpipe.wr, &vpipe.wr_id))
		return true;
	stop_stacks();
	return false;
}

uint64_t gw_stack_capture(void)
{
	void *raw[UNWIND_DEPTH];
	uint64_t ips[UNWIND_DEPTH], mixed[GW_MAX_STACK_DEPTH];
	uint32_t depth = 0, merged;
	int first = 0, n;

	if (atomic_load_explicit(&stopped, memory_order_relaxed) || !pipe_intact())
		return 0;
	/* during another thread's fork, no stack rather than a child that hangs */
	if (!gw_modules_walk_begin(false))
		return 0;
	n = unw_backtrace(raw, UNWIND_DEPTH);
	gw_modules_walk_end();
	while (first < n && gw_modules_is_self((uint64_t)(uintptr_t)raw[first]))
		first++;
	for (int i = first; i < n; i++)
		ips[depth++] = (uint64_t)(uintptr_t)raw[i];
	/* In a Python program, the thread's Python frames join the native ones. */
	merged = gw_python_merge(ips, depth, mixed, GW_MAX_STACK_DEPTH);
	if (merged)
		return gw_intern_stack_kind(mixed, merged, GW_STACK_MIXED);
	if (!depth)
		return 0;
	return gw_intern_stack(ips, depth);
}
