/* SPDX-License-Identifier: MIT */
/* Stack and string interning: ids, deduplication, one record per distinct item, launch
 * sampling, the module map, and unwinding that skips gpuwhy's own frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "intern.h"
#include "modules.h"
#include "stacks.h"
#include "trace-reader.h"
#include "trace-writer.h"

static char trace_path[64];

static int start_trace(void **state)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION};
	int fd;

	(void)state;
	snprintf(trace_path, sizeof(trace_path), "/tmp/gw-test-stacks-%d.zst", (int)getpid());
	unlink(trace_path);
	fd = open(trace_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	opt.fd = fd;
	if (fd < 0 || gw_intern_init() < 0)
		return -1;
	gw_intern_reset();
	return gw_writer_start(&opt, &hdr) < 0;
}

struct counts {
	unsigned strings, stacks, modules;
	uint64_t stack_ids[8];
	uint64_t first_ip_of_last_stack;
	bool saw_self_exe;
};

static void read_back(struct counts *c)
{
	struct gw_reader *r;
	struct gw_record rec;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	memset(c, 0, sizeof(*c));
	assert_int_equal(gw_writer_stop(true, 0), 0);
	assert_int_equal(gw_reader_open(trace_path, &r), 0);
	while (gw_reader_next(r, &rec) == 1) {
		switch (rec.type) {
		case GW_REC_STRING:
			c->strings++;
			break;
		case GW_REC_STACK:
			if (c->stacks < 8)
				c->stack_ids[c->stacks] = rec.stack.id;
			c->stacks++;
			c->first_ip_of_last_stack = rec.stack.ips.depth ? rec.stack.ips.ips[0] : 0;
			break;
		case GW_REC_MODULE:
			c->modules++;
			if (rec.module.path.len == strlen(exe) &&
			    !memcmp(rec.module.path.data, exe, rec.module.path.len))
				c->saw_self_exe = true;
			break;
		default:
			break;
		}
	}
	gw_reader_free(r);
	unlink(trace_path);
}

static void test_strings(void **state)
{
	char copy[] = "void saxpy<float>(int, float, float*)";
	const char *lit = "void saxpy<float>(int, float, float*)";
	struct counts c;
	uint64_t a, b, k, o;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	a = gw_intern_string(GW_STRING_KERNEL, lit);
	assert_true(a > 0);
	/* Same text through another pointer, and the same pointer again: same id. */
	assert_int_equal(gw_intern_string(GW_STRING_KERNEL, copy), a);
	assert_int_equal(gw_intern_string(GW_STRING_KERNEL, lit), a);
	/* The cache is keyed by pointer but checks the text: a changed buffer is a new string. */
	copy[5] = 'X';
	b = gw_intern_string(GW_STRING_KERNEL, copy);
	assert_true(b > 0 && b != a);
	/* The kind is part of the identity. */
	k = gw_intern_string(GW_STRING_API, lit);
	assert_true(k > 0 && k != a && k != b);
	assert_int_equal(gw_intern_string(GW_STRING_API, NULL), 0);
	o = gw_intern_string(GW_STRING_OTHER, "");
	assert_true(o > 0);
	read_back(&c);
	assert_int_equal(c.strings, 4); /* a, b, k, o */
}

static void test_static_strings(void **state)
{
	static const char name[] = "cudaLaunchKernel";
	char copy[] = "cudaLaunchKernel";
	struct counts c;
	uint64_t a;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	/* A constant's id is the text's id, whichever way it is asked for, and stays put. */
	a = gw_intern_string_static(GW_STRING_API, name);
	assert_true(a > 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(gw_intern_string_static(GW_STRING_API, name), a);
	assert_int_equal(gw_intern_string(GW_STRING_API, copy), a);
	assert_int_equal(gw_intern_string(GW_STRING_API, name), a);
	/* The pointer alone does not decide: the same constant as another kind is another id. */
	assert_true(gw_intern_string_static(GW_STRING_KERNEL, name) != a);
	assert_int_equal(gw_intern_string_static(GW_STRING_API, NULL), 0);
	read_back(&c);
	assert_int_equal(c.strings, 2); /* the API name and the KERNEL one */
}

static void test_stack_dedup(void **state)
{
	const uint64_t s1[] = {0x401000, 0x402000, 0x403000};
	const uint64_t s2[] = {0x401000, 0x402000, 0x403001};
	struct counts c;
	uint64_t a, b;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	a = gw_intern_stack(s1, 3);
	b = gw_intern_stack(s2, 3);
	assert_true(a > 0 && b > 0 && a != b);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(gw_intern_stack(s1, 3), a);
		assert_int_equal(gw_intern_stack(s2, 3), b);
	}
	/* A prefix is another stack. */
	assert_true(gw_intern_stack(s1, 2) != a);
	assert_int_equal(gw_intern_stack(s1, 0), 0);
	read_back(&c);
	assert_int_equal(c.stacks, 3);
	assert_int_equal(c.stack_ids[0], a);
	assert_int_equal(c.stack_ids[1], b);
}

/* Ids count up from 1 in the order items are first seen, strings and stacks each. */
static void test_ids_in_first_seen_order(void **state)
{
	static const char *names[] = {"k_a", "k_b", "cudaMalloc", "k_c", ""};
	static const unsigned kinds[] = {GW_STRING_KERNEL, GW_STRING_KERNEL, GW_STRING_API,
					 GW_STRING_KERNEL, GW_STRING_OTHER};
	const uint64_t s1[] = {0x1000}, s2[] = {0x2000}, s3[] = {0x1000, 0x2000};

	(void)state;
	assert_int_equal(start_trace(state), 0);
	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 0; i < 5; i++)
			assert_int_equal(gw_intern_string(kinds[i], names[i]), i + 1);
	assert_int_equal(gw_intern_stack(s1, 1), 1);
	assert_int_equal(gw_intern_stack(s2, 1), 2);
	assert_int_equal(gw_intern_stack(s1, 1), 1);
	assert_int_equal(gw_intern_stack(s3, 2), 3);
	gw_writer_stop(true, 0);
	unlink(trace_path);
}

#define RACE_THREADS 8
#define RACE_NAMES   256

struct race {
	pthread_barrier_t *go;
	unsigned first;
	char names[RACE_NAMES][32]; /* this thread's own copies of the texts */
	uint64_t ids[RACE_NAMES];
};

static void *race_main(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(r->go);
	for (unsigned k = 0; k < RACE_NAMES; k++) {
		unsigned i = (r->first + k) % RACE_NAMES;

		r->ids[i] = gw_intern_string(GW_STRING_KERNEL, r->names[i]);
	}
	return NULL;
}

/* Threads interning the same texts at once, each from its own buffers: every thread gets the
 * same id for a text, texts get distinct ids, and each text is one STRING record whose id is
 * the one the threads got. */
static void test_ids_concurrent(void **state)
{
	static struct race races[RACE_THREADS];
	pthread_t threads[RACE_THREADS];
	pthread_barrier_t go;
	bool seen[RACE_NAMES] = {false};
	struct gw_reader *rd;
	struct gw_record rec;
	unsigned strings = 0;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	pthread_barrier_init(&go, NULL, RACE_THREADS);
	for (unsigned t = 0; t < RACE_THREADS; t++) {
		races[t].go = &go;
		races[t].first = t * (RACE_NAMES / RACE_THREADS);
		for (unsigned i = 0; i < RACE_NAMES; i++)
			snprintf(races[t].names[i], sizeof(races[t].names[i]), "race_kernel_%u", i);
		assert_int_equal(pthread_create(&threads[t], NULL, race_main, &races[t]), 0);
	}
	for (unsigned t = 0; t < RACE_THREADS; t++)
		pthread_join(threads[t], NULL);
	pthread_barrier_destroy(&go);
	for (unsigned i = 0; i < RACE_NAMES; i++) {
		assert_true(races[0].ids[i] > 0);
		/* a lost draw skips an id: at most one per thread and text */
		assert_true(races[0].ids[i] <= RACE_NAMES * RACE_THREADS);
		for (unsigned t = 1; t < RACE_THREADS; t++)
			assert_int_equal(races[t].ids[i], races[0].ids[i]);
		for (unsigned j = 0; j < i; j++)
			assert_true(races[0].ids[j] != races[0].ids[i]);
	}
	assert_int_equal(gw_writer_stop(true, 0), 0);
	assert_int_equal(gw_reader_open(trace_path, &rd), 0);
	while (gw_reader_next(rd, &rec) == 1) {
		char text[32] = "";
		unsigned i = RACE_NAMES;

		if (rec.type != GW_REC_STRING)
			continue;
		strings++;
		assert_true(rec.string.text.len < sizeof(text));
		memcpy(text, rec.string.text.data, rec.string.text.len);
		assert_int_equal(sscanf(text, "race_kernel_%u", &i), 1);
		assert_true(i < RACE_NAMES && !seen[i]);
		seen[i] = true;
		assert_int_equal(rec.string.id, races[0].ids[i]);
	}
	gw_reader_free(rd);
	unlink(trace_path);
	assert_int_equal(strings, RACE_NAMES);
}

static void test_sampling(void **state)
{
	(void)state;
	for (uint32_t n = 1; n <= GW_STACK_LAUNCH_FIRST; n++)
		assert_true(gw_stack_sample_launch(n));
	assert_false(gw_stack_sample_launch(GW_STACK_LAUNCH_FIRST + 1));
	assert_true(gw_stack_sample_launch(GW_STACK_LAUNCH_EVERY));
	assert_false(gw_stack_sample_launch(GW_STACK_LAUNCH_EVERY + 1));
	assert_true(gw_stack_sample_launch(3 * GW_STACK_LAUNCH_EVERY));
	assert_int_equal(gw_intern_count_launch(0), 0);
}

static void test_launch_counts(void **state)
{
	uint64_t id;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	id = gw_intern_string(GW_STRING_KERNEL, "count_me");
	for (uint32_t n = 1; n <= 1000; n++)
		assert_int_equal(gw_intern_count_launch(id), n);
	gw_writer_stop(true, 0);
	unlink(trace_path);
}

static __attribute__((noinline)) uint64_t capture_here(void)
{
	return gw_stack_capture();
}

/*
 * In this test the capture code is linked into the executable, so the executable is the
 * "self" module whose frames are dropped: what remains starts in libc (the frames that called
 * main). The module map is emitted, this executable included.
 */
static void test_capture_skips_self(void **state)
{
	struct counts c;
	uint64_t a, b;

	(void)state;
	assert_int_equal(start_trace(state), 0);
	gw_modules_reset();
	gw_modules_scan();
	a = capture_here();
	b = capture_here();
	assert_true(a > 0);
	assert_int_equal(a, b);
	assert_false(gw_modules_is_self(0));
	read_back(&c);
	assert_true(c.modules >= 2); /* this executable and libc at least */
	assert_true(c.saw_self_exe);
	assert_int_equal(c.stacks, 1);
	assert_false(gw_modules_is_self(c.first_ip_of_last_stack));
	assert_true(gw_modules_is_self((uint64_t)(uintptr_t)capture_here));
}

struct prepare_run {
	_Atomic bool done;
};

static void *prepare_main(void *arg)
{
	struct prepare_run *p = arg;

	gw_modules_fork_prepare();
	atomic_store(&p->done, true);
	return NULL;
}

/* fork's prepare handler waits for a walk under way; walks asked for meanwhile back off. */
static void test_fork_waits_for_walkers(void **state)
{
	struct prepare_run p = {0};
	pthread_t t;

	(void)state;
	assert_true(gw_modules_walk_begin(false));
	assert_int_equal(pthread_create(&t, NULL, prepare_main, &p), 0);
	usleep(20000); /* far below the handler's 1 s bound */
	assert_false(atomic_load(&p.done));
	gw_modules_walk_end();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(atomic_load(&p.done));
	assert_false(gw_modules_walk_begin(false));
	assert_int_equal(gw_stack_capture(), 0);
	gw_modules_fork_parent();
	assert_true(gw_modules_walk_begin(false));
	gw_modules_walk_end();
}

struct hammer {
	_Atomic bool stop;
	_Atomic unsigned long scans;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;

	/* Scans only: a thread that used libunwind crashes TSan's runtime when it exits (its
	 * key destructor runs after TSan has let the thread go). */
	while (!atomic_load(&h->stop)) {
		gw_modules_scan();
		atomic_fetch_add(&h->scans, 1);
	}
	return NULL;
}

/*
 * Forks while another thread walks the loaded objects without pause: with the handlers
 * registered (as the runtime does), no child inherits a lock held inside dl_iterate_phdr or
 * the scan, so each child's own scan and stack return. A child that hangs is ended by its
 * alarm and fails the test.
 */
static void test_fork_while_unwinding(void **state)
{
	struct hammer h = {0};
	pthread_t t;

	assert_int_equal(start_trace(state), 0);
	gw_modules_reset();
	gw_modules_scan();
	assert_int_equal(pthread_atfork(gw_modules_fork_prepare, gw_modules_fork_parent,
					gw_modules_fork_child),
			 0);
	assert_int_equal(pthread_create(&t, NULL, hammer_main, &h), 0);
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			alarm(10);
			gw_modules_scan(); /* as a child's start does */
			_exit(capture_here() ? 0 : 1);
		}
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	atomic_store(&h.stop, true);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(atomic_load(&h.scans) > 0);
	assert_int_equal(gw_writer_stop(true, 0), 0);
	unlink(trace_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_static_strings),
		cmocka_unit_test(test_stack_dedup),
		cmocka_unit_test(test_ids_in_first_seen_order),
		cmocka_unit_test(test_ids_concurrent),
		cmocka_unit_test(test_sampling),
		cmocka_unit_test(test_launch_counts),
		cmocka_unit_test(test_capture_skips_self),
		cmocka_unit_test(test_fork_waits_for_walkers),
		cmocka_unit_test(test_fork_while_unwinding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
