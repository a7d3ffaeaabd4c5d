/* SPDX-License-Identifier: MIT */
/* The writer under concurrency: many producers, a starved writer, thread exit, fork. */
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "trace-test-util.h"
#include "trace-reader.h"
#include "trace-writer.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GW_HAS_TSAN 1
#endif
#endif
#ifndef GW_HAS_TSAN
#define GW_HAS_TSAN 0
#endif

#define THREADS	    16
#define PER_THREAD  5000
#define STARVED_N   3000
#define STARVED_BUF 4096

static void *producer(void *arg)
{
	uint64_t tid = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 1; i <= PER_THREAD; i++) {
		struct gw_rec_api a = {
			.tid = tid,
			.start_ns = 1000000 + i * 5000,
			.end_ns = 1000000 + i * 5000 + 4000,
			.correlation = i,
			.category = GW_API_LAUNCH,
		};

		if (!gw_emit(GW_REC_API, &a))
			return (void *)1;
	}
	return NULL;
}

/* 16 threads at once, each ring big enough for all it emits: nothing may be dropped, every
 * thread's records arrive complete and in its own order. */
static void test_sixteen_threads(void **state)
{
	/* a ring entry of an API record is 8 + sizeof(struct gw_rec_api) bytes */
	struct gw_writer_options opt = {
		.thread_buffer_bytes = PER_THREAD * (8 + sizeof(struct gw_rec_api)),
		.max_threads = THREADS,
	};
	uint64_t next[THREADS + 1] = {0}, total = 0;
	struct gw_writer_stats st;
	struct gw_rec_header hdr;
	struct gw_reader *r = NULL;
	struct gw_record rec;
	pthread_t t[THREADS];
	char path[4096];
	int k;

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, producer, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		assert_null(ret);
	}
	assert_int_equal(gw_writer_stop(true, 0), 0);
	gw_writer_get_stats(&st);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.records, THREADS * PER_THREAD);

	assert_int_equal(gw_reader_open(path, &r), 0);
	while ((k = gw_reader_next(r, &rec)) > 0) {
		if (rec.type == GW_REC_FOOTER) {
			assert_int_equal(rec.footer.records, THREADS * PER_THREAD);
			assert_int_equal(rec.footer.dropped, 0);
			continue;
		}
		assert_int_equal(rec.type, GW_REC_API);
		assert_true(rec.api.tid >= 1 && rec.api.tid <= THREADS);
		assert_int_equal(rec.api.correlation, next[rec.api.tid] + 1);
		assert_int_equal(rec.api.start_ns, 1000000 + rec.api.correlation * 5000);
		next[rec.api.tid] = rec.api.correlation;
		total++;
	}
	assert_int_equal(k, 0);
	assert_true(gw_reader_clean_exit(r));
	for (int i = 1; i <= THREADS; i++)
		assert_int_equal(next[i], PER_THREAD);
	assert_int_equal(total, THREADS * PER_THREAD);
	gw_reader_free(r);
	unlink(path);
}

/* The writer stalled while one thread emits far more than its tiny ring holds: what was not
 * read is exactly what the DROPS records (and the footer) count. */
static void test_starved_writer(void **state)
{
	struct gw_writer_options opt = {.thread_buffer_bytes = STARVED_BUF, .max_threads = 4};
	uint64_t accepted = 0, refused = 0, read = 0, drops = 0, footer_dropped = 0;
	struct gw_rec_header hdr;
	struct gw_reader *r = NULL;
	struct gw_record rec;
	char path[4096];

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	gw_writer_test_stall(true);
	for (uint64_t i = 1; i <= STARVED_N; i++) {
		struct gw_rec_kernel k = {
			.correlation = i, .start_ns = i * 1000, .end_ns = i * 1000 + 900};

		if (gw_emit(GW_REC_KERNEL, &k))
			accepted++;
		else
			refused++;
	}
	/* a 4 KiB ring holds at most 4096 / (8 + sizeof(kernel)) entries */
	assert_true(accepted <= STARVED_BUF / (8 + sizeof(struct gw_rec_kernel)));
	assert_true(refused > 0);
	assert_int_equal(gw_writer_stop(true, 0), 0);

	assert_int_equal(gw_reader_open(path, &r), 0);
	while (gw_reader_next(r, &rec) > 0) {
		if (rec.type == GW_REC_KERNEL)
			read++;
		else if (rec.type == GW_REC_DROPS && rec.drops.source == GW_DROP_THREAD_BUFFER)
			drops += rec.drops.count;
		else if (rec.type == GW_REC_FOOTER)
			footer_dropped = rec.footer.dropped;
	}
	assert_int_equal(read, accepted);
	assert_int_equal(drops, STARVED_N - read);
	assert_int_equal(footer_dropped, drops);
	gw_reader_free(r);
	unlink(path);
}

static void *short_lived(void *arg)
{
	struct gw_rec_note n = {.time_ns = 77, .text = {(const uint8_t *)"bye", 3}};

	(void)arg;
	gw_emit(GW_REC_NOTE, &n);
	return NULL;
}

/* More threads than buffers, one after another: exiting threads give theirs back, and each
 * exit makes a frame without waiting for the flush interval. */
static void test_thread_exit_recycles(void **state)
{
	struct gw_writer_options opt = {.max_threads = 2,
					.flush_interval_ns = 3600ull * 1000000000ull};
	struct gw_rec_header hdr;
	struct gw_writer_stats st = {0};
	char path[4096];

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	for (int i = 0; i < 10; i++) {
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, short_lived, NULL), 0);
		pthread_join(t, NULL);
		/* the buffer is back once the writer drained it */
		for (int wait = 0; wait < 2000; wait++) {
			gw_writer_get_stats(&st);
			if (st.records == (uint64_t)i + 1)
				break;
			usleep(1000);
		}
		assert_int_equal(st.records, i + 1);
	}
	assert_int_equal(st.dropped, 0);
	assert_int_equal(gw_writer_stop(true, 0), 0);
	unlink(path);
}

/* A fork child forgets the parent's writer and can start its own; the parent's is unharmed. */
static void test_fork_child(void **state)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr;
	struct gw_rec_note n = {.time_ns = 1, .text = {(const uint8_t *)"parent", 6}};
	struct gw_reader *r = NULL;
	struct gw_record rec;
	char path[4096], cpath[4096];
	int status, cfd, records = 0;
	pid_t pid;

	(void)state;
#if defined(__SANITIZE_THREAD__) || GW_HAS_TSAN
	/* ThreadSanitizer cannot follow a child of a threaded process that starts threads
	 * ("starting new threads after multi-threaded fork is not supported"); ASan runs it. */
	skip();
#endif
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	cfd = gw_test_tmpfile(cpath, sizeof(cpath));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	assert_true(gw_emit(GW_REC_NOTE, &n));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gw_writer_options copt = {.fd = cfd};
		struct gw_rec_note cn = {.time_ns = 2, .text = {(const uint8_t *)"child", 5}};
		int ok = 1;

		gw_writer_atfork_child();
		ok &= !gw_emit(GW_REC_NOTE, &cn);
		ok &= gw_writer_start(&copt, &hdr) == 0;
		ok &= gw_emit(GW_REC_NOTE, &cn);
		ok &= gw_writer_stop(true, 0) == 0;
		_exit(ok ? 0 : 1);
	}
	close(cfd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(gw_emit(GW_REC_NOTE, &n));
	assert_int_equal(gw_writer_stop(true, 0), 0);

	assert_int_equal(gw_reader_open(path, &r), 0);
	while (gw_reader_next(r, &rec) > 0) {
		if (rec.type == GW_REC_NOTE) {
			assert_memory_equal(rec.note.text.data, "parent", 6);
			records++;
		}
	}
	assert_int_equal(records, 2);
	assert_true(gw_reader_clean_exit(r));
	gw_reader_free(r);
	assert_int_equal(gw_reader_open(cpath, &r), 0);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_NOTE);
	assert_memory_equal(rec.note.text.data, "child", 5);
	assert_int_equal(gw_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, GW_REC_FOOTER);
	gw_reader_free(r);
	unlink(path);
	unlink(cpath);
}

/* Killed without warning: what was emitted more than a flush interval before is in the file. */
static void test_sigkill_keeps_flushed(void **state)
{
	struct gw_rec_header hdr;
	struct gw_reader *r = NULL;
	struct gw_record rec;
	char path[4096];
	int fd, status, n = 0;
	pid_t pid;

	(void)state;
	gw_test_header(&hdr);
	fd = gw_test_tmpfile(path, sizeof(path));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gw_writer_options opt = {.fd = fd, .flush_interval_ns = 20000000};

		gw_writer_atfork_child();
		if (gw_writer_start(&opt, &hdr) < 0)
			_exit(1);
		for (uint64_t i = 1; i <= 100; i++) {
			struct gw_rec_kernel k = {.correlation = i, .start_ns = i, .end_ns = i + 1};

			gw_emit(GW_REC_KERNEL, &k);
		}
		usleep(500000); /* 25 flush intervals */
		kill(getpid(), SIGKILL);
		_exit(2);
	}
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(gw_reader_open(path, &r), 0);
	while (gw_reader_next(r, &rec) > 0) {
		assert_int_equal(rec.type, GW_REC_KERNEL);
		assert_int_equal(rec.kernel.correlation, ++n);
	}
	assert_int_equal(n, 100);
	assert_false(gw_reader_clean_exit(r));
	assert_true(gw_reader_truncated(r));
	gw_reader_free(r);
	unlink(path);
}

/* The file hits its size limit mid-run: the writer stops writing and counts what it lost,
 * stop reports the error, and the file still reads up to its last complete frame. */
static void test_file_size_limit(void **state)
{
	struct gw_rec_header hdr;
	struct gw_reader *r = NULL;
	struct gw_record rec;
	char path[4096];
	int fd, status, n = 0, k;
	pid_t pid;

	(void)state;
	gw_test_header(&hdr);
	fd = gw_test_tmpfile(path, sizeof(path));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gw_writer_options opt = {.fd = fd, .frame_bytes = 256};
		struct rlimit lim = {.rlim_cur = 4096, .rlim_max = 4096};
		struct gw_writer_stats st;
		int err;

		gw_writer_atfork_child();
		/* SIGXFSZ keeps its default action (core dump): the writer thread blocks it */
		setrlimit(RLIMIT_FSIZE, &lim);
		if (gw_writer_start(&opt, &hdr) < 0)
			_exit(10);
		/* every record differs (a hash in name_id), so frames stay near 256 bytes */
		for (uint64_t i = 1; i <= 2000; i++) {
			struct gw_rec_kernel kr = {.correlation = i,
						   .name_id = (i * 0x9e3779b97f4a7c15ull) >> 20};

			/* the default 1 MiB ring holds all 2000: nothing is refused */
			if (!gw_emit(GW_REC_KERNEL, &kr))
				_exit(12);
		}
		err = gw_writer_stop(true, 0);
		gw_writer_get_stats(&st);
		/* written (complete frames) plus lost (the rest) is everything emitted */
		_exit(err == -EFBIG && st.records + st.dropped == 2000 && st.dropped > 0 ? 0 : 11);
	}
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(gw_reader_open(path, &r), 0);
	while ((k = gw_reader_next(r, &rec)) > 0)
		if (rec.type == GW_REC_KERNEL)
			assert_int_equal(rec.kernel.correlation, ++n);
	assert_int_equal(k, 0);
	assert_true(n > 0 && n < 2000);
	assert_true(gw_reader_truncated(r));
	gw_reader_free(r);
	unlink(path);
}

static int teardown(void **state)
{
	(void)state;
	gw_writer_test_stall(false);
	gw_writer_stop(false, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sixteen_threads, teardown),
		cmocka_unit_test_teardown(test_starved_writer, teardown),
		cmocka_unit_test_teardown(test_thread_exit_recycles, teardown),
		cmocka_unit_test_teardown(test_fork_child, teardown),
		cmocka_unit_test_teardown(test_sigkill_keeps_flushed, teardown),
		cmocka_unit_test_teardown(test_file_size_limit, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
