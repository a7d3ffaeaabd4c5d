/* SPDX-License-Identifier: MIT */
/* Random record sequences: the analyzer never fails or crashes, and its buckets sum to 1. */
#include "analysis-test-util.h"

static uint64_t rng = 0x853c49e6748fea9bull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Mostly small values, sometimes extreme ones: what a corrupt but decodable trace holds. */
static uint64_t val(void)
{
	switch (next() % 8) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX - next() % 4;
	case 2:
		return next();
	default:
		return next() % 64;
	}
}

static uint64_t t_ns(void)
{
	return next() % 8 ? 1000000 + next() % 5000000 : val();
}

static void random_record(struct tb *t, uint8_t *buf, uint64_t *ips)
{
	struct gw_record r;
	unsigned depth = (unsigned)(next() % 6);

	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < 64; i++)
		buf[i] = (uint8_t)next();
	for (unsigned i = 0; i < depth; i++)
		ips[i] = val();
	switch (next() % 10) {
	case 0:
		r.type = GW_REC_DEVICE;
		r.device = (struct gw_rec_device){.device = next() % 3,
						  .sm_count = val(),
						  .max_threads_per_sm = val(),
						  .max_blocks_per_sm = val(),
						  .regs_per_sm = val(),
						  .smem_per_sm_bytes = val(),
						  .warp_size = val(),
						  .memory_total_bytes = val()};
		r.device.name = (struct gw_bytes){buf, (uint32_t)(next() % 64)};
		break;
	case 1:
		r.type = GW_REC_STRING;
		r.string = (struct gw_rec_string){.id = next() % 16, .kind = 1};
		r.string.text = (struct gw_bytes){buf, (uint32_t)(next() % 64)};
		break;
	case 2:
		r.type = GW_REC_STACK;
		r.stack.id = next() % 16;
		r.stack.ips = (struct gw_ips){ips, depth};
		break;
	case 3:
	case 4: {
		uint64_t s = t_ns();

		r.type = GW_REC_API;
		r.api = (struct gw_rec_api){.tid = next() % 3,
					    .start_ns = s,
					    .end_ns = s + val(),
					    .correlation = next() % 64,
					    .category = next() % 11,
					    .sync_kind = next() % 5,
					    .name_id = next() % 16,
					    .stack_id = next() % 16,
					    .device = next() % 3};
		break;
	}
	case 5:
	case 6: {
		uint64_t s = t_ns();

		r.type = GW_REC_KERNEL;
		r.kernel = (struct gw_rec_kernel){.device = next() % 3,
						  .stream = next() % 4,
						  .correlation = next() % 64,
						  .start_ns = s,
						  .end_ns = next() % 8 ? s + next() % 50000 : val(),
						  .name_id = next() % 16,
						  .grid_x = val(),
						  .grid_y = val(),
						  .grid_z = val(),
						  .block_x = val(),
						  .block_y = val(),
						  .block_z = val(),
						  .registers_per_thread = val(),
						  .static_smem_bytes = val(),
						  .dynamic_smem_bytes = val()};
		break;
	}
	case 7: {
		uint64_t s = t_ns();

		r.type = next() % 2 ? GW_REC_MEMCPY : GW_REC_MEMSET;
		r.memcpy = (struct gw_rec_memcpy){.device = next() % 3,
						  .stream = next() % 4,
						  .correlation = next() % 64,
						  .start_ns = s,
						  .end_ns = s + next() % 20000,
						  .src_kind = next() % 4,
						  .dst_kind = next() % 4};
		break;
	}
	case 8:
		r.type = GW_REC_MEMORY;
		r.memory = (struct gw_rec_memory){.time_ns = t_ns(),
						  .op = next() % 4,
						  .mem_kind = next() % 7,
						  .device = next() % 3,
						  .address = next() % 16,
						  .bytes = val(),
						  .stack_id = next() % 16};
		break;
	default:
		r.type = (uint8_t)(next() % 40);
		break;
	}
	tb_add(t, &r);
}

static void random_sequences(void **state)
{
	static uint8_t buf[64];
	static uint64_t ips[8];

	(void)state;
	for (int round = 0; round < 300; round++) {
		struct gw_analysis_options opt;
		struct gw_analysis *res;
		struct tb t;
		double sum = 0;
		int n = (int)(next() % 400);

		gw_analysis_options_init(&opt);
		opt.symbolize = false;
		opt.keep_gaps = round % 2;
		opt.timeline_bins = (unsigned)(next() % 300);
		tb_init_opt(&t, &opt);
		for (int i = 0; i < n; i++)
			random_record(&t, buf, ips);
		res = tb_finish(&t);
		for (int b = 0; b < GW_BUCKET_COUNT; b++) {
			assert_true(res->breakdown[b] >= -1e-9);
			sum += res->breakdown[b];
		}
		if (res->budget_sm_ns > 0)
			assert_near(sum, 1.0, 1e-6);
		gw_analysis_free(res);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_sequences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
