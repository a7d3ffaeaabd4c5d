/* SPDX-License-Identifier: MIT */
/* GPUWHY_OUTPUT expansion, the rank variables, and creation that never overwrites. */
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output-path.h"

static void test_expand(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(
		gw_output_path_expand(buf, sizeof(buf), "gpuwhy-%p.trace.zst", 1234, "h", -1),
		(int)strlen("gpuwhy-1234.trace.zst"));
	assert_string_equal(buf, "gpuwhy-1234.trace.zst");
	gw_output_path_expand(buf, sizeof(buf), "%h-%r-%%-%p", 7, "node07", 3);
	assert_string_equal(buf, "node07-3-%-7");
	gw_output_path_expand(buf, sizeof(buf), "r%r", 7, "x", -1);
	assert_string_equal(buf, "rnorank");
	gw_output_path_expand(buf, sizeof(buf), "/a/b", 0, "x", 0);
	assert_string_equal(buf, "/a/b");
	gw_output_path_expand(buf, sizeof(buf), "%p", 0, "x", 0);
	assert_string_equal(buf, "0");
}

static void test_expand_errors(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(gw_output_path_expand(buf, sizeof(buf), "a%x", 1, "h", 0), -EINVAL);
	assert_int_equal(gw_output_path_expand(buf, sizeof(buf), "a%", 1, "h", 0), -EINVAL);
	/* "1234567" needs 8 bytes with its NUL: fits in 8, not in 7. */
	assert_int_equal(gw_output_path_expand(buf, 8, "%p", 1234567, "h", 0), 7);
	assert_int_equal(gw_output_path_expand(buf, 7, "%p", 1234567, "h", 0), -ENAMETOOLONG);
	assert_int_equal(gw_output_path_expand(buf, 4, "%h", 1, "hostname", 0), -ENAMETOOLONG);
}

/* The launcher's view of the grammar: the check, whether names differ per process, and the
 * glob that finds every expansion after the run. */
static void test_pattern(void **state)
{
	static const char *const good[] = {"t.zst", "%p", "a-%h-%r-%%.zst", "%%p"};
	const char *bad;
	char gl[64], path[64];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(gw_output_pattern_check(good[i], &bad), 0);
	assert_int_equal(gw_output_pattern_check("a%qb", &bad), -EINVAL);
	assert_string_equal(bad, "%qb");
	assert_int_equal(gw_output_pattern_check("ends%", &bad), -EINVAL);
	assert_string_equal(bad, "%");

	assert_false(gw_output_pattern_varies("trace.zst"));
	assert_false(gw_output_pattern_varies("100%%.zst"));
	assert_true(gw_output_pattern_varies("t-%r.zst"));

	assert_int_equal(gw_output_pattern_glob("/d/g-%h-%p[%%]*.zst", gl, sizeof(gl)), 0);
	assert_string_equal(gl, "/d/g-*-*\\[%]\\*.zst");
	/* every expansion matches it */
	assert_true(gw_output_path_expand(path, sizeof(path), "/d/g-%h-%p[%%]*.zst", 42, "node",
					  -1) > 0);
	assert_int_equal(fnmatch(gl, path, 0), 0);
	assert_int_equal(gw_output_pattern_glob("%p%p%p", gl, 3), -ENAMETOOLONG);
}

static void test_rank(void **state)
{
	(void)state;
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	assert_int_equal(gw_rank_from_env(), -1);
	setenv("OMPI_COMM_WORLD_RANK", "9", 1);
	assert_int_equal(gw_rank_from_env(), 9);
	setenv("SLURM_PROCID", "2", 1);
	assert_int_equal(gw_rank_from_env(), 2);
	setenv("RANK", "5", 1);
	assert_int_equal(gw_rank_from_env(), 5);
	/* Not a number: the next variable decides. */
	setenv("RANK", "five", 1);
	assert_int_equal(gw_rank_from_env(), 2);
	setenv("RANK", "-3", 1);
	assert_int_equal(gw_rank_from_env(), 2);
}

/* A later image of an exec'ing process: -execN before the trace's ending. */
static void test_exec_path(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(gw_output_exec_path(out, sizeof(out), "d/gpuwhy-7.trace.zst", 1),
			 (int)strlen("d/gpuwhy-7-exec1.trace.zst"));
	assert_string_equal(out, "d/gpuwhy-7-exec1.trace.zst");
	gw_output_exec_path(out, sizeof(out), "trace-7.zst", 12);
	assert_string_equal(out, "trace-7-exec12.zst");
	gw_output_exec_path(out, sizeof(out), "out/7", 2);
	assert_string_equal(out, "out/7-exec2");
	/* an ending that is the whole file name is not an ending */
	gw_output_exec_path(out, sizeof(out), "dir.trace.zst/.zst", 1);
	assert_string_equal(out, "dir.trace.zst/.zst-exec1");
	assert_int_equal(gw_output_exec_path(out, 8, "trace-7.zst", 1), -ENAMETOOLONG);
}

static off_t size_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 ? -1 : st.st_size;
}

static void test_open_never_overwrites(void **state)
{
	char dir[] = "/tmp/gw-test-open-XXXXXX";
	char path[128], link[128], target[128];
	struct stat st;
	mode_t old_umask = umask(0);
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(target, sizeof(target), "%s/target", dir);

	fd = gw_output_open(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* An existing file: refused, untouched. */
	assert_int_equal(gw_output_open(path), -EEXIST);
	assert_int_equal(size_of(path), 3);

	/* A symlink, dangling or not: refused, and its target is neither created nor written. */
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(gw_output_open(link), -EEXIST);
	assert_int_equal(size_of(target), -1);
	unlink(link);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(gw_output_open(link), -EEXIST);
	assert_int_equal(size_of(path), 3);

	/* A directory that does not exist. */
	snprintf(target, sizeof(target), "%s/no/such/dir/trace", dir);
	assert_int_equal(gw_output_open(target), -ENOENT);

	unlink(link);
	unlink(path);
	rmdir(dir);
	umask(old_umask);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_expand_errors),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_open_never_overwrites),
		cmocka_unit_test(test_exec_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
