/* SPDX-License-Identifier: MIT */
/*
 * The cost of one stack capture in a Python program, with its Python frames and without: a
 * module that bench-python-frames.py loads with ctypes (which releases the GIL around the call,
 * as PyTorch does around its CUDA work) from 30 Python frames deep, and that calls gpuwhy's
 * real gw_stack_capture with a live writer. GPUWHY_PYTHON=0 in the environment gives the
 * capture without Python frames.
 */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture-state.h"
#include "clock.h"
#include "config.h"
#include "intern.h"
#include "modules.h"
#include "python-frames.h"
#include "stacks.h"
#include "trace-writer.h"

#define ROUNDS 9

#define EXPORT __attribute__((visibility("default")))
EXPORT int bench_setup(void);
EXPORT double bench_capture(unsigned n);
EXPORT unsigned bench_python_words(void);
EXPORT void bench_stop(void);

/* The thread's CPU time: on a shared machine, wall time also counts the time other tenants
 * held the CPU. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int bench_setup(void)
{
	static char path[] = "/tmp/gw-bench-python-XXXXXX";
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION};
	const char *invalid;
	struct gw_config cfg;

	gw_config_from_env(&cfg, &invalid);
	gw_stacks_on = true;
	gw_python_configure(cfg.python, cfg.python_layout);
	opt.fd = mkstemp(path);
	if (opt.fd < 0 || gw_intern_init() < 0 || gw_writer_start(&opt, &hdr) < 0)
		return -1;
	unlink(path);
	atomic_store(&gw_capture_on, true);
	gw_modules_scan();
	return 0;
}

/* Median over ROUNDS of the mean CPU time of one capture over n, in ns. */
double bench_capture(unsigned n)
{
	uint64_t per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = cpu_ns();

		for (unsigned i = 0; i < n; i++)
			gw_stack_capture();
		per[r] = (cpu_ns() - t0) * 1000 / n;
		gw_writer_flush(1000000000ull);
	}
	qsort(per, ROUNDS, sizeof(per[0]), cmp_u64);
	return per[ROUNDS / 2] / 1000.0;
}

/* The words of one merged stack (0: no Python frames were added). */
unsigned bench_python_words(void)
{
	uint64_t native[1] = {0}, out[GW_MAX_STACK_DEPTH];
	uint32_t n = gw_python_merge(native, 0, out, GW_MAX_STACK_DEPTH);
	unsigned python = 0;

	for (uint32_t i = 0; i < n; i++)
		python += GW_PYFRAME_IS(out[i]);
	return python;
}

void bench_stop(void)
{
	gw_writer_stop(true, 0);
}

/* The Python part alone: the walk and the merge into an empty native stack, in ns of CPU. */
EXPORT double bench_merge_only(unsigned n);
EXPORT double bench_merge_only(unsigned n)
{
	uint64_t native[1] = {0}, out[GW_MAX_STACK_DEPTH], t0 = cpu_ns();
	volatile uint32_t sink = 0;

	for (unsigned i = 0; i < n; i++)
		sink += gw_python_merge(native, 0, out, GW_MAX_STACK_DEPTH);
	return (double)(cpu_ns() - t0) / n;
}
