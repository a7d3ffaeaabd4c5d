/* SPDX-License-Identifier: MIT */
/* The analysis when memory runs out: every allocation it makes, failed in turn, gives -ENOMEM
 * or a whole result, never a crash (malloc, calloc, realloc and strdup wrapped at link time). */
#include <errno.h>
#include <stdio.h>

#include "analysis-test-util.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static unsigned long calls, fail_at; /* fail_at 0: never */

static bool fail_now(void)
{
	return fail_at && ++calls == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

/* A small run that reaches every stage: kernels on two streams, tiny ones, a sync, a copy,
 * allocations, a blocked gap, warnings (no device record for device 1), steps. Returns the
 * analysis's result code; *ret is the result on success. */
static int run(struct gw_analysis **ret)
{
	struct gw_analysis_options opt;
	struct gw_analyzer *a = NULL;
	struct gw_record r;
	uint64_t corr = 0;
	int e;

	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	opt.keep_gaps = true;
	opt.keep_events = true;
	opt.timeline_bins = 16;
	*ret = NULL;
	if ((e = gw_analyzer_new(&opt, &a)) < 0)
		return e;
	if ((e = gw_analyzer_begin_trace(a, "t")) < 0)
		goto out;
#define ADD(rec)                                                                                   \
	do {                                                                                       \
		if ((e = gw_analyzer_add(a, &(rec))) < 0)                                          \
			goto out;                                                                  \
	} while (0)
	r = (struct gw_record){.type = GW_REC_DEVICE};
	r.device = (struct gw_rec_device){.device = 0,
					  .sm_count = 4,
					  .max_threads_per_sm = 2048,
					  .max_blocks_per_sm = 32,
					  .regs_per_sm = 65536,
					  .memory_total_bytes = 1 << 30};
	ADD(r);
	r = (struct gw_record){.type = GW_REC_STRING};
	r.string = (struct gw_rec_string){
		.id = 1, .kind = GW_STRING_KERNEL, .text = {(const uint8_t *)"sgemm_kernel", 12}};
	ADD(r);
	/* a Python program's stack (Python frames between addresses) for the syncs: its site is
	 * resolved, line table and all, under each failure too */
	r = (struct gw_record){.type = GW_REC_STRING};
	r.string = (struct gw_rec_string){.id = 2,
					  .kind = GW_STRING_PYTHON_FILE,
					  .text = {(const uint8_t *)"/u/train.py", 11}};
	ADD(r);
	r = (struct gw_record){.type = GW_REC_STRING};
	r.string = (struct gw_rec_string){
		.id = 3, .kind = GW_STRING_PYTHON_FUNCTION, .text = {(const uint8_t *)"step", 4}};
	ADD(r);
	r = (struct gw_record){.type = GW_REC_PYCODE};
	r.pycode = (struct gw_rec_pycode){
		.id = 1,
		.version = 0x030b,
		.file_id = 2,
		.function_id = 3,
		.first_line = 7,
		.line_table = {(const uint8_t[]){0x80 | 11 << 3 | 3, 1, 2}, 3}};
	ADD(r);
	r = (struct gw_record){.type = GW_REC_STACK};
	r.stack = (struct gw_rec_stack){.id = 5,
					.ips = {(const uint64_t[]){0x1000, GW_PYFRAME(1, 2, true),
								   0x2000, GW_PYFRAME(1, 4, true)},
						4},
					.ips_kind = GW_STACK_MIXED};
	ADD(r);
	for (int i = 0; i < 40; i++) {
		uint64_t t = 1000000 + (uint64_t)i * (i == 30 ? 200000 : 20000);

		r = (struct gw_record){.type = GW_REC_API};
		r.api = (struct gw_rec_api){.tid = 1,
					    .start_ns = t,
					    .end_ns = t + 3000,
					    .correlation = ++corr,
					    .category = GW_API_LAUNCH,
					    .name_id = 1,
					    .device = (uint64_t)(i == 39)};
		ADD(r);
		r = (struct gw_record){.type = GW_REC_KERNEL};
		r.kernel = (struct gw_rec_kernel){.device = (uint64_t)(i == 39),
						  .stream = 7 + (uint64_t)(i % 2),
						  .correlation = corr,
						  .start_ns = t + 5000,
						  .end_ns = t + 5000 + (i % 3 ? 4000 : 12000),
						  .name_id = 1,
						  .grid_x = (uint64_t)(i % 5 + 1),
						  .block_x = 256,
						  .registers_per_thread = 32};
		ADD(r);
		if (i % 10 == 9) {
			r = (struct gw_record){.type = GW_REC_API};
			r.api = (struct gw_rec_api){.tid = 1,
						    .start_ns = t + 4000,
						    .end_ns = t + 30000,
						    .correlation = ++corr,
						    .category = GW_API_SYNC,
						    .sync_kind = GW_SYNC_EXPLICIT,
						    .stack_id = 5};
			ADD(r);
		}
		if (i % 8 == 0) {
			r = (struct gw_record){.type = GW_REC_MEMORY};
			r.memory = (struct gw_rec_memory){.time_ns = t,
							  .op = GW_MEMORY_ALLOC,
							  .mem_kind = GW_MEM_DEVICE,
							  .address = 0x1000 + (uint64_t)i,
							  .bytes = 4096};
			ADD(r);
		}
	}
	/* ten steps of four launches (names by text), a registered name and a range that is no
	 * step: the steps stage, its watched steps and the slowest steps' sites */
	for (int i = 0; i < 10; i++) {
		char name[16];

		snprintf(name, sizeof(name), "step %d", i);
		r = (struct gw_record){.type = GW_REC_RANGE};
		r.range = (struct gw_rec_range){
			.tid = 1,
			.start_ns = 1000000 + (uint64_t)i * 80000,
			.end_ns = 1000000 + (uint64_t)(i + 1) * 80000,
			.kind = GW_RANGE_PUSH_POP,
			.name = {(const uint8_t *)name, (uint32_t)strlen(name)}};
		ADD(r);
	}
	r = (struct gw_record){.type = GW_REC_RANGE};
	r.range = (struct gw_rec_range){.tid = 1,
					.start_ns = 900000,
					.end_ns = 999000,
					.kind = GW_RANGE_PUSH_POP,
					.name_id = 9};
	ADD(r);
	r = (struct gw_record){.type = GW_REC_STRING};
	r.string = (struct gw_rec_string){
		.id = 9, .kind = GW_STRING_RANGE, .text = {(const uint8_t *)"setup", 5}};
	ADD(r);
	/* measured counters over the run: the counters stage's series and estimates */
	r = (struct gw_record){.type = GW_REC_SAMPLER};
	r.sampler = (struct gw_rec_sampler){
		.device = 0, .source = GW_SAMPLER_GPM, .reason = {(const uint8_t *)"why", 3}};
	ADD(r);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 2; k++) {
			r = (struct gw_record){.type = GW_REC_METRIC};
			r.metric = (struct gw_rec_metric){
				.device = 0,
				.counter = k ? GW_COUNTER_SM_UTIL : GW_COUNTER_DRAM_BW_UTIL,
				.start_ns = 1000000 + (uint64_t)i * 100000,
				.end_ns = 1100000 + (uint64_t)i * 100000,
				.value = 100000 * (uint64_t)(i + k)};
			ADD(r);
		}
	e = gw_analyzer_finish(a, ret);
out:
	gw_analyzer_free(a);
	return e;
}

static void every_allocation_fails_in_turn(void **state)
{
	struct gw_analysis *res;
	unsigned long total, failed = 0;

	(void)state;
	fail_at = 0;
	calls = 0;
	assert_int_equal(run(&res), 0);
	assert_int_equal(res->steps.n, 10); /* the run reaches the steps stage */
	/* and the Python site: byte 2 of a 4-unit entry one line past first line 7 */
	assert_string_equal(res->sync_sites[0].site.text, "step (train.py:8)");
	gw_analysis_free(res);
	/* count the allocations of a whole run: fail_at past them never fires */
	fail_at = ~0ul;
	calls = 0;
	assert_int_equal(run(&res), 0);
	gw_analysis_free(res);
	total = calls;
	assert_true(total > 50);
	for (fail_at = 1; fail_at <= total; fail_at++) {
		int e;

		calls = 0;
		e = run(&res);
		if (e < 0) {
			assert_int_equal(e, -ENOMEM);
			assert_null(res);
			failed++;
		} else {
			gw_analysis_free(res);
		}
	}
	fail_at = 0;
	/* most allocations are needed: their failure is the run's */
	assert_true(failed > total / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_allocation_fails_in_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
