/* SPDX-License-Identifier: MIT */
/* The writer against a program that closes its descriptor and reuses the number. */

/*
 * Each case runs in a fork child (a seccomp filter, once installed, stays), which exits 0 when
 * every check held. The program's side: after the writer started, it closes every descriptor
 * from 3 up (close_range, as closefrom(3) does) and opens a file of its own, then dup2s it onto
 * the number the trace had, so that number is the program's file whatever the writer did.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "trace-test-util.h"
#include "trace-reader.h"
#include "trace-writer.h"

#define RECORDS 200

/* unshare and close_range asking for a table of its own fail with EPERM, as in containers
 * whose seccomp profile refuses them: the writer keeps its descriptor in the process's table */
static void refuse_private_tables(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLOSE_RANGE_UNSHARE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(90);
}

static bool emit_n(unsigned n, uint64_t first)
{
	for (uint64_t i = first; i < first + n; i++) {
		struct gw_rec_api a = {
			.tid = 1, .start_ns = i * 1000, .end_ns = i * 1000 + 500, .correlation = i};

		if (!gw_emit(GW_REC_API, &a))
			return false;
	}
	return true;
}

/* API records in the trace at path (the footer's count aside); -1 when it does not read. */
static long api_records(const char *path, bool *clean)
{
	struct gw_reader *r = NULL;
	struct gw_record rec;
	long n = 0;
	int k;

	if (gw_reader_open(path, &r) < 0)
		return -1;
	while ((k = gw_reader_next(r, &rec)) > 0)
		n += rec.type == GW_REC_API;
	*clean = k == 0 && gw_reader_clean_exit(r);
	gw_reader_free(r);
	return k < 0 ? -1 : n;
}

enum variant { PRIVATE, SHARED_REOPENED, SHARED_LOST };

#define CHECK(cond, code)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			_exit(code);                                                               \
	} while (0)

/* The program's scenario, in a fork child. */
static void scenario(enum variant v, const char *path, const char *own)
{
	static const char mine[] = "the program's own bytes\n";
	struct gw_writer_options opt = {.flush_interval_ns = 1000000};
	struct gw_writer_stats st;
	struct gw_rec_header hdr;
	char moved[4200], buf[64];
	int fd, other, r;
	bool clean = false;
	ssize_t n;

	if (v != PRIVATE)
		refuse_private_tables();
	gw_test_header(&hdr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 3, 10);
	opt.fd = fd;
	opt.path = path;
	CHECK(gw_writer_start(&opt, &hdr) == 0, 11);
	CHECK(emit_n(RECORDS, 1), 12);
	gw_writer_flush(1000000000ull);

	/* the program: closefrom(3), a file of its own, under the trace's old number */
	syscall(SYS_close_range, 3u, ~0u, 0u);
	other = open(own, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(other >= 0, 13);
	if (other != fd) {
		CHECK(dup2(other, fd) == fd, 14);
		close(other);
	}
	CHECK(write(fd, mine, sizeof(mine) - 1) == sizeof(mine) - 1, 15);
	if (v == SHARED_LOST) {
		/* the trace's name now leads elsewhere: it cannot be reopened */
		snprintf(moved, sizeof(moved), "%s.moved", path);
		CHECK(rename(path, moved) == 0, 16);
	}
	CHECK(emit_n(RECORDS, RECORDS + 1), 17);
	r = gw_writer_stop(true, 0);
	gw_writer_get_stats(&st);

	/* never a byte of the trace in the program's file, and its descriptor left open */
	CHECK(fcntl(fd, F_GETFD) >= 0, 20);
	n = pread(fd, buf, sizeof(buf), 0);
	CHECK(n == sizeof(mine) - 1 && !memcmp(buf, mine, (size_t)n), 21);
	CHECK(st.private_fd == (v == PRIVATE), 22);
	if (v == SHARED_LOST) {
		/* writing stopped and says so: the records after the takeover count as dropped */
		CHECK(r < 0 && st.descriptor_lost, 30);
		CHECK(st.dropped >= RECORDS, 31);
		CHECK(api_records(moved, &clean) == RECORDS && !clean, 32);
		unlink(moved);
	} else {
		CHECK(r == 0 && !st.descriptor_lost && st.dropped == 0, 40);
		CHECK(st.reopened == (v == SHARED_REOPENED ? 1u : 0u), 41);
		CHECK(api_records(path, &clean) == 2 * RECORDS && clean, 42);
		unlink(path);
	}
	unlink(own);
	_exit(0);
}

static void run(enum variant v)
{
	char path[4096], own[4200];
	pid_t pid;
	int st, fd = gw_test_tmpfile(path, sizeof(path));

	close(fd);
	snprintf(own, sizeof(own), "%s.own", path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		scenario(v, path, own);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("variant %d: the child ended with status %d (check %d failed)", (int)v, st,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	unlink(path);
}

/* Its own descriptor table: the program's closefrom and file do not reach the trace. */
static void test_private_table(void **state)
{
	(void)state;
	run(PRIVATE);
}

/* In the program's table: the takeover is seen before the next write, the trace reopened. */
static void test_shared_reopened(void **state)
{
	(void)state;
	run(SHARED_REOPENED);
}

/* In the program's table, the file gone from its name: writing stops, the loss is counted. */
static void test_shared_lost(void **state)
{
	(void)state;
	run(SHARED_LOST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_table),
		cmocka_unit_test(test_shared_reopened),
		cmocka_unit_test(test_shared_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
