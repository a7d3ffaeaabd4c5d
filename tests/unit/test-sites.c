/* SPDX-License-Identifier: MIT */
/* Call sites of named frames (imported traces): the innermost frame outside the framework. */
#include <stdio.h>

#include "analysis-test-util.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_site),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
