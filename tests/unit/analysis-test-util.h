/* SPDX-License-Identifier: MIT */
/* Builds hand-made record sequences for the analysis unit tests and runs the analyzer. */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis.h"

/* Test devices: 2048 threads, 32 blocks, 64 Ki registers, 228 KiB shared memory per SM, warps
 * of 32, like gpusim. At 256 threads and 32 registers that is 8 blocks per SM. */
#define T_BLOCKS_PER_SM 8
#define T_THREADS	256

struct tb {
	struct gw_analyzer *a;
	uint64_t corr;
};

static inline void tb_init_opt(struct tb *t, const struct gw_analysis_options *opt)
{
	t->corr = 0;
	assert_int_equal(gw_analyzer_new(opt, &t->a), 0);
	assert_int_equal(gw_analyzer_begin_trace(t->a, "test"), 0);
}

static inline void tb_init(struct tb *t)
{
	struct gw_analysis_options opt;

	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	opt.keep_gaps = true;
	tb_init_opt(t, &opt);
}

static inline void tb_add(struct tb *t, const struct gw_record *r)
{
	assert_int_equal(gw_analyzer_add(t->a, r), 0);
}

static inline void tb_device_mem(struct tb *t, uint64_t dev, uint64_t sms, uint64_t mem_bytes)
{
	struct gw_record r = {.type = GW_REC_DEVICE};

	r.device.device = dev;
	r.device.name = (struct gw_bytes){(const uint8_t *)"Test GPU", 8};
	r.device.sm_count = sms;
	r.device.memory_total_bytes = mem_bytes;
	r.device.max_threads_per_sm = 2048;
	r.device.max_blocks_per_sm = 32;
	r.device.regs_per_sm = 65536;
	r.device.smem_per_sm_bytes = 228 * 1024;
	r.device.warp_size = 32;
	tb_add(t, &r);
}

static inline void tb_device(struct tb *t, uint64_t dev, uint64_t sms)
{
	tb_device_mem(t, dev, sms, 80ull << 30);
}

static inline void tb_string(struct tb *t, uint64_t id, const char *text)
{
	struct gw_record r = {.type = GW_REC_STRING};

	r.string.id = id;
	r.string.kind = GW_STRING_KERNEL;
	r.string.text = (struct gw_bytes){(const uint8_t *)text, (uint32_t)strlen(text)};
	tb_add(t, &r);
}

static inline struct gw_record tb_api_rec(struct tb *t, uint64_t tid, uint64_t s, uint64_t e,
					  uint64_t dev, int category, int sync_kind)
{
	struct gw_record r = {.type = GW_REC_API};

	r.api.tid = tid;
	r.api.start_ns = s;
	r.api.end_ns = e;
	r.api.correlation = ++t->corr;
	r.api.category = (uint64_t)category;
	r.api.sync_kind = (uint64_t)sync_kind;
	r.api.device = dev;
	return r;
}

static inline struct gw_record tb_kernel_rec(uint64_t corr, uint64_t dev, uint64_t stream,
					     uint64_t name_id, uint64_t blocks, uint64_t s,
					     uint64_t e)
{
	struct gw_record k = {.type = GW_REC_KERNEL};

	k.kernel.device = dev;
	k.kernel.stream = stream;
	k.kernel.correlation = corr;
	k.kernel.start_ns = s;
	k.kernel.end_ns = e;
	k.kernel.name_id = name_id;
	k.kernel.grid_x = blocks;
	k.kernel.grid_y = 1;
	k.kernel.grid_z = 1;
	k.kernel.block_x = T_THREADS;
	k.kernel.block_y = 1;
	k.kernel.block_z = 1;
	k.kernel.registers_per_thread = 32;
	return k;
}

/* A launch call [as, ae] on thread tid and the kernel it caused, run over [ks, ke]. */
static inline uint64_t tb_launch(struct tb *t, uint64_t tid, uint64_t as, uint64_t ae, uint64_t dev,
				 uint64_t stream, uint64_t name_id, uint64_t blocks, uint64_t ks,
				 uint64_t ke)
{
	struct gw_record api = tb_api_rec(t, tid, as, ae, dev, GW_API_LAUNCH, GW_SYNC_NONE);
	struct gw_record k =
		tb_kernel_rec(api.api.correlation, dev, stream, name_id, blocks, ks, ke);

	api.api.kernel_name_id = name_id;
	tb_add(t, &api);
	tb_add(t, &k);
	return api.api.correlation;
}

/* A copy the GPU ran over [s, e] for the call of correlation corr; pageable: an async copy
 * from pageable host memory (CUPTI's memory kind 1) to the device (3). */
static inline struct gw_record tb_copy_rec(uint64_t corr, uint64_t stream, uint64_t s, uint64_t e,
					   bool pageable)
{
	struct gw_record cp = {.type = GW_REC_MEMCPY};

	cp.memcpy.correlation = corr;
	cp.memcpy.stream = stream;
	cp.memcpy.start_ns = s;
	cp.memcpy.end_ns = e;
	if (pageable) {
		cp.memcpy.src_kind = 1; /* CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE */
		cp.memcpy.dst_kind = 3;
		cp.memcpy.flags = 1; /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */
	}
	return cp;
}

/* A synchronizing call [s, e] on device dev. */
static inline void tb_sync(struct tb *t, uint64_t tid, uint64_t s, uint64_t e, uint64_t dev,
			   int category, int kind)
{
	struct gw_record r = tb_api_rec(t, tid, s, e, dev, category, kind);

	tb_add(t, &r);
}

static inline struct gw_analysis *tb_finish(struct tb *t)
{
	struct gw_analysis *res = NULL;

	assert_int_equal(gw_analyzer_finish(t->a, &res), 0);
	gw_analyzer_free(t->a);
	t->a = NULL;
	assert_non_null(res);
	return res;
}

/* SM-ns of a bucket, summed over devices. */
static inline double tb_sm(const struct gw_analysis *res, enum gw_bucket b)
{
	return res->sm_ns[b];
}

static inline void tb_assert_sums_to_one(const struct gw_analysis *res)
{
	double s = 0;

	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		s += res->breakdown[b];
	assert_true(s > 1 - 1e-9 && s < 1 + 1e-9);
}

#define assert_near(a, b, eps)                                                                     \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		if (!(_a - _b <= (eps) && _b - _a <= (eps)))                                       \
			fail_msg("%s = %.9g, expected %.9g (+- %g)", #a, _a, _b, (double)(eps));   \
	} while (0)
