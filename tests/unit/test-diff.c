/* SPDX-License-Identifier: MIT */
/* gpuwhy diff's comparison: per step or per run, sites matched by function and file (not by
 * line), the verdict's facts, and the warnings for runs unlike each other. */
#include <math.h>
#include <stdio.h>

#include "analysis-test-util.h"
#include "diff.h"

#define SMS  4
#define FULL 32
#define US   1000ull

static void add(struct tb *t, struct gw_record r)
{
	tb_add(t, &r);
}

/* A stack of one named frame: function train in train.py at line, as an importer writes it. */
static void frame_stack(struct tb *t, uint64_t stack_id, unsigned line)
{
	static const char fn[] = "train", file[] = "train.py";
	struct gw_record r = {.type = GW_REC_STRING};
	uint64_t ips[1] = {stack_id};

	r.string = (struct gw_rec_string){
		.id = 100, .kind = GW_STRING_OTHER, .text = {(const uint8_t *)fn, sizeof(fn) - 1}};
	add(t, r);
	r.string = (struct gw_rec_string){.id = 101,
					  .kind = GW_STRING_OTHER,
					  .text = {(const uint8_t *)file, sizeof(file) - 1}};
	add(t, r);
	r = (struct gw_record){.type = GW_REC_FRAME};
	r.frame = (struct gw_rec_frame){.id = stack_id,
					.lang = GW_FRAME_PYTHON,
					.function_id = 100,
					.file_id = 101,
					.line = line};
	add(t, r);
	r = (struct gw_record){.type = GW_REC_STACK};
	r.stack =
		(struct gw_rec_stack){.id = stack_id, .ips = {ips, 1}, .ips_kind = GW_STACK_FRAMES};
	add(t, r);
}

/*
 * steps steps of 1 ms on thread 1, each launching one 300 us kernel (kernel_name) at 100 us and
 * reading back with a synchronous copy at sync_line of train.py, which waits for the kernel
 * (from 150 us to its end at 410 us): the copy's debt, 260 us, then covers the host work to
 * the next step's launch. The gap after each step's kernel, to the next kernel (1110 us on),
 * is 700 us: 260 host_sync, 436 host_work, 4 launch_overhead inside the launch call.
 */
static struct gw_analysis *run(int steps, unsigned sync_line, const char *kernel_name, bool ranges)
{
	struct tb t;
	struct gw_analysis_options opt;

	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	tb_init_opt(&t, &opt);
	tb_device(&t, 0, SMS);
	tb_string(&t, 1, kernel_name);
	frame_stack(&t, 7, sync_line);
	for (int i = 0; i < steps; i++) {
		uint64_t s = (uint64_t)i * 1000 * US;
		struct gw_record r;
		char name[16];

		if (ranges) {
			snprintf(name, sizeof(name), "step %d", i);
			r = (struct gw_record){.type = GW_REC_RANGE};
			r.range = (struct gw_rec_range){
				.tid = 1,
				.start_ns = s,
				.end_ns = s + 1000 * US,
				.kind = GW_RANGE_PUSH_POP,
				.name = {(const uint8_t *)name, (uint32_t)strlen(name)}};
			add(&t, r);
		}
		tb_launch(&t, 1, s + 100 * US, s + 104 * US, 0, 7, 1, FULL, s + 110 * US,
			  s + 410 * US);
		r = tb_api_rec(&t, 1, s + 150 * US, s + 410 * US, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
		r.api.stack_id = 7;
		r.api.name_id = 1;
		add(&t, r);
	}
	return tb_finish(&t);
}

static const struct gw_diff_site *site(const struct gw_diff *d, enum gw_diff_site_kind k)
{
	for (unsigned i = 0; i < d->n_sites; i++)
		if (d->sites[i].kind == k)
			return &d->sites[i];
	return NULL;
}

/* The same program, its sync moved three lines down: per step, nothing moved, and the sync
 * site is one site on both sides. */
static void same_program_sync_moved(void **state)
{
	struct gw_analysis *b = run(4, 87, "sgemm_kernel", true);
	struct gw_analysis *a = run(6, 90, "sgemm_kernel", true);
	struct gw_diff *d;
	const struct gw_diff_site *s;

	(void)state;
	assert_int_equal(gw_diff_new(b, a, &d), 0);
	assert_true(d->per_step);
	assert_int_equal(d->before.steps, 4);
	assert_int_equal(d->after.steps, 6);
	/* every step but the last holds a whole 700 us gap; the last ends with its kernel */
	for (int k = 0; k < GW_BUCKET_COUNT; k++)
		assert_near(d->delta_share[k], d->after.share[k] - d->before.share[k], 1e-12);
	assert_near(d->before.device_ns[GW_BUCKET_COMPUTE], 300 * US, 1e-3);
	assert_near(d->after.device_ns[GW_BUCKET_COMPUTE], 300 * US, 1e-3);
	assert_near(d->before.device_ns[GW_BUCKET_HOST_SYNC], 260.0 * US * 3 / 4, 1e-3);
	assert_near(d->after.device_ns[GW_BUCKET_HOST_SYNC], 260.0 * US * 5 / 6, 1e-3);
	s = site(d, GW_DIFF_SYNC);
	assert_non_null(s);
	assert_string_equal(s->function, "train");
	assert_string_equal(s->file, "train.py");
	assert_near(s->before_count, 1, 1e-12); /* one a step, both sides: matched */
	assert_near(s->after_count, 1, 1e-12);
	assert_near(s->before, 260.0 * US * 3 / 4, 1e-3);
	assert_near(s->after, 260.0 * US * 5 / 6, 1e-3);
	assert_null(site(d, GW_DIFF_TINY_KERNEL));
	assert_int_equal(d->n_warnings, 0);
	assert_non_null(strstr(d->verdict, "GPU time per step"));
	assert_non_null(strstr(d->verdict, "still host_work"));
	gw_diff_free(d);
	gw_analysis_free(b);
	gw_analysis_free(a);
}

/* Steps on one side only: per run, said; other kernels: said. */
static void unlike_runs_are_warned_of(void **state)
{
	struct gw_analysis *b = run(4, 87, "sgemm_kernel", true);
	struct gw_analysis *a = run(4, 87, "elementwise_kernel", false);
	struct gw_diff *d;

	(void)state;
	assert_int_equal(gw_diff_new(b, a, &d), 0);
	assert_false(d->per_step);
	assert_int_equal(d->n_warnings, 2);
	assert_non_null(strstr(d->warnings[0], "only the first run has steps"));
	assert_non_null(strstr(d->warnings[1], "share only 0%"));
	/* per run: the window, 110 us to the last kernel's end, 3410 us */
	assert_near(d->before.wall_ns, 3300 * US, 1e-3);
	assert_near(d->after.gpu_ns, 3300 * US, 1e-3);
	assert_near(d->gpu_change, 0, 1e-12);
	/* the kernel's class moved its time from compute to bandwidth_bound */
	assert_near(d->delta_share[GW_BUCKET_COMPUTE], -1200.0 / 3300.0, 1e-9);
	assert_near(d->delta_share[GW_BUCKET_BANDWIDTH_BOUND], 1200.0 / 3300.0, 1e-9);
	gw_diff_free(d);
	gw_analysis_free(b);
	gw_analysis_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_program_sync_moved),
		cmocka_unit_test(unlike_runs_are_warned_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
