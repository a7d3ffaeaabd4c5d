/* SPDX-License-Identifier: MIT */
/* Call sites of named frames (imported traces) and of captured Python frames (mixed stacks):
 * the innermost Python frame outside the framework; lines from hand-built line tables. */
#include <stdio.h>

#include "analysis-test-util.h"
#include "pylines.h"

enum { S_ITEM = 10, S_STEP, S_TRAIN, S_CALL, S_MODULE, S_TENSOR, S_MAIN, S_BUILTIN, S_LIBTORCH };

static void str(struct tb *t, uint64_t id, const char *text)
{
	struct gw_record r = {.type = GW_REC_STRING};

	r.string.id = id;
	r.string.kind = GW_STRING_OTHER;
	r.string.text = (struct gw_bytes){(const uint8_t *)text, (uint32_t)strlen(text)};
	tb_add(t, &r);
}

static void frame(struct tb *t, uint64_t id, uint64_t lang, uint64_t fn, uint64_t file,
		  uint64_t line, uint64_t module)
{
	struct gw_record r = {.type = GW_REC_FRAME};

	r.frame = (struct gw_rec_frame){.id = id,
					.lang = lang,
					.function_id = fn,
					.file_id = file,
					.line = line,
					.module_id = module};
	tb_add(t, &r);
}

static void stack(struct tb *t, uint64_t id, const uint64_t *frames, uint32_t n)
{
	struct gw_record r = {.type = GW_REC_STACK};

	r.stack = (struct gw_rec_stack){.id = id, .ips = {frames, n}, .ips_kind = GW_STACK_FRAMES};
	tb_add(t, &r);
}

/*
 * A loss.item() under a training step: the stack, innermost first, is a built-in, a frame of
 * torch's tensor.py (in site-packages), the user's step in train.py, and its caller. The site
 * is train.py's step, line 87, with the caller below it; a stack of framework frames only is
 * shown as its innermost frame; a native one outside libtorch is the site.
 */
static void python_site(void **state)
{
	static const uint64_t item[] = {1, 2, 3, 4};
	static const uint64_t all_torch[] = {1, 2};
	static const uint64_t native[] = {5, 6};
	struct tb t;
	struct gw_analysis *res;
	struct gw_record k, api;

	(void)state;
	tb_init(&t);
	tb_device(&t, 0, 4);
	str(&t, S_ITEM, "<built-in method item of Tensor object>");
	str(&t, S_TENSOR, "/usr/lib/python3/site-packages/torch/_tensor.py");
	str(&t, S_CALL, "__format__");
	str(&t, S_STEP, "step");
	str(&t, S_TRAIN, "/home/u/proj/train.py");
	str(&t, S_MAIN, "main");
	str(&t, S_LIBTORCH, "/opt/torch/lib/libtorch_cuda.so");
	str(&t, S_MODULE, "/home/u/proj/libops.so");
	str(&t, S_BUILTIN, "fused_op_launch");
	frame(&t, 1, GW_FRAME_PYTHON, S_ITEM, 0, 0, 0);
	frame(&t, 2, GW_FRAME_PYTHON, S_CALL, S_TENSOR, 1001, 0);
	frame(&t, 3, GW_FRAME_PYTHON, S_STEP, S_TRAIN, 87, 0);
	frame(&t, 4, GW_FRAME_PYTHON, S_MAIN, S_TRAIN, 120, 0);
	frame(&t, 5, GW_FRAME_NATIVE, S_CALL, 0, 0, S_LIBTORCH);
	frame(&t, 6, GW_FRAME_NATIVE, S_BUILTIN, 0, 0, S_MODULE);
	stack(&t, 7, item, 4);
	stack(&t, 8, all_torch, 2);
	stack(&t, 9, native, 2);
	/* a kernel, and three syncs after it with those stacks */
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 4000, 0, 7, 1, 32, 5000, 15000);
	for (int i = 0; i < 3; i++) {
		api = tb_api_rec(&t, 1, 6000 + 1000 * (uint64_t)i, 15000, 0, GW_API_SYNC,
				 GW_SYNC_EXPLICIT);
		api.api.name_id = S_MAIN; /* any name: the sites are told apart by their stack */
		api.api.stack_id = 7 + (uint64_t)i;
		tb_add(&t, &api);
	}
	k = tb_kernel_rec(900, 0, 7, 1, 32, 20000, 30000);
	tb_add(&t, &k);
	res = tb_finish(&t);
	assert_int_equal(res->n_sync_sites, 3);
	for (unsigned i = 0; i < 3; i++) {
		const struct gw_site *s = &res->sync_sites[i].site;

		if (s->stack_id == 7) {
			assert_string_equal(s->text, "step (train.py:87)");
			assert_string_equal(s->function, "step");
			assert_string_equal(s->file, "/home/u/proj/train.py");
			assert_int_equal(s->line, 87);
			assert_int_equal(s->n_frames, 2);
			assert_string_equal(s->frames[1], "main (train.py:120)");
		} else if (s->stack_id == 8) {
			assert_string_equal(s->text, "<built-in method item of Tensor object>");
			assert_int_equal(s->n_frames, 2);
		} else {
			assert_int_equal(s->stack_id, 9);
			assert_string_equal(s->text, "fused_op_launch (libops.so)");
			assert_string_equal(s->module, "libops.so");
		}
	}
	gw_analysis_free(res);
}

/*
 * Line tables written by hand from their definitions (doc/trace-format.md, Python frames).
 * 3.10 (PEP 626), first line 20: (6, +2) covers bytes 0-5 at line 22; (0, +3) is empty and
 * only moves the line to 25; (4, -128) covers 6-9 with no line; (2, +1) covers 10-11 at 26.
 * 3.11 location table, first line 10: code 13 (+2 as a signed varint, 4), 2 code units: bytes
 * 0-3 at line 12; code 11 (one line further) with two column bytes, 3 units: 4-9 at 13;
 * code 15 (no location), 1 unit: 10-11 with no line; code 14 (-3 as a signed varint, 7;
 * then end line, columns), 1 unit: 12-13 at 10. Past the end: no line.
 */
static const uint8_t table_310[] = {6, 2, 0, 3, 4, 0x80, 2, 1};
static const uint8_t table_311[] = {0x80 | 13 << 3 | 1,
				    4,
				    0x80 | 11 << 3 | 2,
				    5,
				    9,
				    0x80 | 15 << 3 | 0,
				    0x80 | 14 << 3 | 0,
				    7,
				    0,
				    1,
				    2};

static void python_lines(void **state)
{
	static const unsigned want_310[][2] = {{0, 22}, {4, 22}, {6, 0}, {8, 0}, {10, 26}, {12, 0}};
	static const unsigned want_311[][2] = {{0, 12}, {2, 12},  {4, 13}, {8, 13},
					       {10, 0}, {12, 10}, {14, 0}};

	(void)state;
	for (size_t i = 0; i < sizeof(want_310) / sizeof(want_310[0]); i++)
		assert_int_equal(
			gw_py_line(0x030a, table_310, sizeof(table_310), 20, want_310[i][0]),
			want_310[i][1]);
	for (size_t i = 0; i < sizeof(want_311) / sizeof(want_311[0]); i++) {
		/* 3.12 and 3.13 keep 3.11's table */
		for (unsigned v = 0x030b; v <= 0x030d; v++)
			assert_int_equal(
				gw_py_line(v, table_311, sizeof(table_311), 10, want_311[i][0]),
				want_311[i][1]);
	}
	/* before the first instruction: the first line; a version it does not read: none */
	assert_int_equal(gw_py_line(0x030b, table_311, sizeof(table_311), 10, GW_PYFRAME_NO_OFFSET),
			 10);
	assert_int_equal(gw_py_line(0x030e, table_311, sizeof(table_311), 10, 0), 0);
	/* a broken table (a byte that starts no entry) gives no line rather than a wrong one */
	assert_int_equal(gw_py_line(0x030b, (const uint8_t[]){0x05, 0x80 | 10 << 3}, 2, 10, 0), 0);
}

enum { S_TORCH_FILE = 40, S_TORCH_FN, S_USER_FILE, S_STEP_FN, S_MAIN_FN };

static void pycode(struct tb *t, uint64_t id, uint64_t fn, uint64_t file, uint64_t first)
{
	struct gw_record r = {.type = GW_REC_PYCODE};

	r.pycode = (struct gw_rec_pycode){
		.id = id,
		.version = 0x030b,
		.file_id = file,
		.function_id = fn,
		.first_line = first,
		.line_table = {table_311, sizeof(table_311)},
	};
	tb_add(t, &r);
}

/*
 * A captured stack (GW_STACK_MIXED), innermost first: an address (no module: not the user's), a
 * frame of torch's tensor.py in site-packages, the user's step at byte 6 (line 13 by the table
 * above), another address, and main at byte 2 (line 12 from first line 10). The site is step,
 * line 13, with main below it; with an empty site filter, the torch frame is (byte 8: line
 * 1003 from its first line 1000); with a filter
 * that names train.py, step and main are the framework's and the innermost Python frame, of
 * all the framework's, is the site.
 */
static struct gw_analysis *mixed(const char *filter)
{
	const uint64_t words[] = {0x1000, GW_PYFRAME(1, 8, false), GW_PYFRAME(2, 6, true), 0x2000,
				  GW_PYFRAME(3, 2, true)};
	struct gw_analysis_options opt;
	struct gw_record k, api, st = {.type = GW_REC_STACK};
	struct tb t;

	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	opt.site_filter = filter;
	tb_init_opt(&t, &opt);
	tb_device(&t, 0, 4);
	str(&t, S_TORCH_FILE, "/usr/lib/python3/site-packages/torch/_tensor.py");
	str(&t, S_TORCH_FN, "Tensor.item");
	str(&t, S_USER_FILE, "/home/u/proj/train.py");
	str(&t, S_STEP_FN, "Trainer.step");
	str(&t, S_MAIN_FN, "main");
	pycode(&t, 1, S_TORCH_FN, S_TORCH_FILE, 1000);
	pycode(&t, 2, S_STEP_FN, S_USER_FILE, 10);
	pycode(&t, 3, S_MAIN_FN, S_USER_FILE, 10);
	st.stack = (struct gw_rec_stack){.id = 7, .ips = {words, 5}, .ips_kind = GW_STACK_MIXED};
	tb_add(&t, &st);
	tb_string(&t, 1, "sgemm_kernel");
	tb_launch(&t, 1, 0, 4000, 0, 0, 1, 32, 5000, 15000);
	api = tb_api_rec(&t, 1, 6000, 15000, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
	api.api.name_id = S_MAIN;
	api.api.stack_id = 7;
	tb_add(&t, &api);
	k = tb_kernel_rec(900, 0, 0, 1, 32, 20000, 30000);
	tb_add(&t, &k);
	return tb_finish(&t);
}

static void python_mixed_site(void **state)
{
	struct gw_analysis *res;
	const struct gw_site *s;

	(void)state;
	res = mixed(NULL);
	assert_int_equal(res->n_sync_sites, 1);
	s = &res->sync_sites[0].site;
	assert_string_equal(s->text, "Trainer.step (train.py:13)");
	assert_int_equal(s->lang, GW_FRAME_PYTHON);
	assert_string_equal(s->file, "/home/u/proj/train.py");
	assert_int_equal(s->line, 13);
	assert_null(s->native); /* the address inside it is in no module: not the user's */
	assert_int_equal(s->n_frames, 2);
	assert_string_equal(s->frames[1], "main (train.py:12)");
	assert_int_equal(s->details[1].lang, GW_FRAME_PYTHON);
	assert_int_equal(s->details[1].line, 12);
	gw_analysis_free(res);

	res = mixed("");
	s = &res->sync_sites[0].site;
	assert_string_equal(s->text, "Tensor.item (_tensor.py:1003)");
	assert_int_equal(s->n_frames, 3);
	gw_analysis_free(res);

	res = mixed("train\\.py$|/torch/");
	s = &res->sync_sites[0].site;
	assert_string_equal(s->text, "Tensor.item (_tensor.py:1003)");
	assert_int_equal(s->lang, GW_FRAME_PYTHON);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_site),
		cmocka_unit_test(python_lines),
		cmocka_unit_test(python_mixed_site),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
