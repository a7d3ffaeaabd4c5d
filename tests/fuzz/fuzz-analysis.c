/* SPDX-License-Identifier: MIT */
/* Fuzz target for the attribution (gw_analyzer) and the text, JSON and HTML report writers. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "report-html.h"
#include "report-json.h"
#include "report-text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The input is not a trace file but a program for a record generator: each byte decides what
 * comes next (which record, which device, stream, correlation id, how long), so mutations
 * move through record space rather than through zstd frames and LEB128 lengths that would
 * reject most of them. Values are mostly realistic, sometimes 0, huge or reversed.
 */
struct gen {
	const uint8_t *p;
	size_t n;
	uint64_t now; /* a clock that mostly moves forward */
	unsigned records;
};

/* An invariant failed: say which (the line), then abort so that libFuzzer keeps the input. */
#define VIOLATED() violated(__LINE__)
static void violated(int line)
{
	fprintf(stderr, "fuzz-analysis: invariant at fuzz-analysis.c:%d violated\n", line);
	abort();
}

/* Bounds the work per input: 4 KiB of input may expand to at most this many records. */
#define MAX_RECORDS 20000u

static uint8_t u8(struct gen *g)
{
	if (!g->n)
		return 0;
	g->n--;
	return *g->p++;
}

static uint64_t un(struct gen *g, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | u8(g);
	return v;
}

/* Mostly small, sometimes zero, extreme or a power of two. */
static uint64_t val(struct gen *g)
{
	uint8_t s = u8(g);

	switch (s >> 5) {
	case 0:
		return 0;
	case 1:
		return s & 31;
	case 2:
		return u8(g);
	case 3:
		return un(g, 2);
	case 4:
		return un(g, 4);
	case 5:
		return un(g, 8);
	case 6:
		return UINT64_MAX - (s & 31);
	default:
		return 1ull << (s & 63);
	}
}

/* A launch configuration dimension: 1, a small count, a typical grid, or anything. */
static uint64_t dim(struct gen *g)
{
	uint8_t s = u8(g);

	switch (s >> 6) {
	case 0:
		return 1;
	case 1:
		return (s & 63) + 1;
	case 2:
		return (uint64_t)(s & 63) * 128;
	default:
		return val(g);
	}
}

/* A time: the clock plus a step (forward mostly), or a raw value. */
static uint64_t tm(struct gen *g)
{
	uint8_t s = u8(g);

	switch (s >> 6) {
	case 0:
		g->now += s & 63;
		return g->now;
	case 1:
		g->now += (uint64_t)un(g, 1) * 1000;
		return g->now;
	case 2:
		/* out of order: before the clock */
		return g->now - (g->now < 100000 ? g->now : (uint64_t)un(g, 2) * 16);
	default:
		return val(g);
	}
}

/* A duration: tiny, microseconds, milliseconds, zero or anything. */
static uint64_t dur(struct gen *g)
{
	uint8_t s = u8(g);

	switch (s >> 6) {
	case 0:
		return (uint64_t)(s & 63) * 100;
	case 1:
		return (uint64_t)un(g, 1) * 1000;
	case 2:
		return (uint64_t)un(g, 2) * 1000;
	default:
		return (s & 1) ? 0 : val(g);
	}
}

/* Kernel and API names that hit every class rule, mangled and not, and junk. */
static const char *const names[] = {
	"_Z11gemm_kernelPKfS0_Pfi",
	"_Z15elementwise_addPKfS0_Pfm",
	"_Z16transpose_kernelPKfPfii",
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
	"_Z8rnn_stepPfPKfi",
	"_Z10layer_normPfPKfi",
	"volta_sgemm_128x64_nn",
	"_Z5scalePff",
	"cudaDeviceSynchronize",
	"cudaMemcpy",
	"_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi",
	"_Z",
	"",
	"_ZZZZZZZZZZZZZZZZZZZ",
	"k\xc3\xa9rnel \"quoted\" <tag> \\ \x01\x7f",
	"\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xff",
};

static struct gw_bytes bytes(struct gen *g)
{
	uint8_t s = u8(g);
	struct gw_bytes b;

	if (s < 0x80) {
		const char *t = names[s % (sizeof(names) / sizeof(names[0]))];

		b.data = (const uint8_t *)t;
		b.len = (uint32_t)strlen(t);
		return b;
	}
	b.len = (uint32_t)(s & 63);
	if (b.len > g->n)
		b.len = (uint32_t)g->n;
	b.data = g->p;
	g->p += b.len;
	g->n -= b.len;
	return b;
}

/* Ids from a small pool so that records join: strings, stacks, correlations, streams. */
static uint64_t small_id(struct gen *g, unsigned pool)
{
	uint8_t s = u8(g);

	return s == 255 ? val(g) : s % pool;
}

static void add(struct gw_analyzer *a, const struct gw_record *rec)
{
	/* gw_analyzer_add fails only for memory; a failure here would be a bug in the target */
	int r = gw_analyzer_add(a, rec);

	if (r < 0) {
		fprintf(stderr, "fuzz-analysis: gw_analyzer_add: %s\n", strerror(-r));
		VIOLATED();
	}
}

static void gen_api(struct gen *g, struct gw_record *r)
{
	uint64_t s = tm(g);

	r->type = GW_REC_API;
	r->api.tid = u8(g) % 4;
	r->api.start_ns = s;
	r->api.end_ns = s + dur(g);
	r->api.correlation = small_id(g, 64);
	r->api.category = u8(g) % 11;
	r->api.sync_kind = u8(g) % 5;
	r->api.name_id = small_id(g, 16);
	r->api.stack_id = small_id(g, 16);
	r->api.device = small_id(g, 3);
	r->api.stream = small_id(g, 4);
	r->api.bytes = val(g);
	r->api.dst = small_id(g, 16);
	r->api.copy_kind = u8(g) % 12;
	r->api.kernel_name_id = small_id(g, 16);
	r->api.grid_x = dim(g);
	r->api.block_x = dim(g);
}

static void gen_kernel(struct gen *g, struct gw_record *r)
{
	uint64_t s = tm(g);

	r->type = GW_REC_KERNEL;
	r->kernel.device = small_id(g, 3);
	r->kernel.stream = small_id(g, 4);
	r->kernel.correlation = small_id(g, 64);
	r->kernel.start_ns = s;
	r->kernel.end_ns = s + dur(g);
	r->kernel.name_id = small_id(g, 16);
	r->kernel.grid_x = dim(g);
	r->kernel.grid_y = u8(g) < 224 ? 1 : dim(g);
	r->kernel.grid_z = u8(g) < 240 ? 1 : dim(g);
	r->kernel.block_x = dim(g);
	r->kernel.block_y = 1;
	r->kernel.block_z = 1;
	r->kernel.registers_per_thread = u8(g) < 192 ? 32 : val(g);
	r->kernel.static_smem_bytes = u8(g) < 192 ? 0 : val(g);
	r->kernel.dynamic_smem_bytes = u8(g) < 224 ? 0 : val(g);
	r->kernel.graph_id = u8(g) < 240 ? 0 : val(g);
}

/* A launch call and its kernel, back to back on one stream: REPEAT's unit. */
static void launch(struct gw_analyzer *a, struct gen *g, uint64_t corr, uint64_t name_id,
		   uint64_t stream, uint64_t blocks, uint64_t kernel_ns)
{
	struct gw_record r;

	memset(&r, 0, sizeof(r));
	r.type = GW_REC_API;
	r.api = (struct gw_rec_api){.tid = 0,
				    .start_ns = g->now,
				    .end_ns = g->now + 4000,
				    .correlation = corr,
				    .category = GW_API_LAUNCH,
				    .kernel_name_id = name_id,
				    .grid_x = blocks,
				    .block_x = 128};
	add(a, &r);
	memset(&r, 0, sizeof(r));
	r.type = GW_REC_KERNEL;
	r.kernel = (struct gw_rec_kernel){.stream = stream,
					  .correlation = corr,
					  .start_ns = g->now + 5000,
					  .end_ns = g->now + 5000 + kernel_ns,
					  .name_id = name_id,
					  .grid_x = blocks,
					  .block_x = 128,
					  .block_y = 1,
					  .block_z = 1,
					  .registers_per_thread = 32};
	add(a, &r);
	g->now += 5000 + kernel_ns + 1000;
}

/* Emits one record (or a repeated pattern) from the next bytes. */
static void gen_one(struct gw_analyzer *a, struct gen *g, uint64_t *corr_next)
{
	static uint64_t ips[8];
	struct gw_record r;
	uint8_t op = u8(g);

	memset(&r, 0, sizeof(r));
	r.version = 1;
	switch (op % 22) {
	case 0:
		r.type = GW_REC_DEVICE;
		r.device.device = small_id(g, 3);
		r.device.sm_count = u8(g) < 128 ? 132 : val(g);
		r.device.memory_total_bytes = u8(g) < 128 ? 80ull << 30 : val(g);
		r.device.max_threads_per_sm = u8(g) < 192 ? 2048 : val(g);
		r.device.max_blocks_per_sm = u8(g) < 192 ? 32 : val(g);
		r.device.regs_per_sm = u8(g) < 192 ? 65536 : val(g);
		r.device.smem_per_sm_bytes = u8(g) < 192 ? 228 * 1024 : val(g);
		r.device.warp_size = u8(g) < 224 ? 32 : val(g);
		r.device.name = bytes(g);
		break;
	case 1:
		r.type = GW_REC_STRING;
		r.string.id = small_id(g, 16);
		r.string.kind = u8(g) % 4;
		r.string.text = bytes(g);
		break;
	case 2: {
		unsigned depth = u8(g) % 9;

		for (unsigned i = 0; i < depth; i++)
			ips[i] = u8(g) < 128 ? 0x400000 + un(g, 2) : val(g);
		r.type = GW_REC_STACK;
		r.stack.id = small_id(g, 16);
		r.stack.ips = (struct gw_ips){ips, depth};
		break;
	}
	case 3:
		r.type = GW_REC_THREAD;
		r.thread.time_ns = tm(g);
		r.thread.tid = u8(g) % 4;
		r.thread.name = bytes(g);
		break;
	case 4:
	case 5:
	case 6:
		gen_api(g, &r);
		break;
	case 7:
	case 8:
	case 9:
		gen_kernel(g, &r);
		break;
	case 10: {
		uint64_t s = tm(g);

		r.type = GW_REC_MEMCPY;
		r.memcpy.device = small_id(g, 3);
		r.memcpy.stream = small_id(g, 4);
		r.memcpy.correlation = small_id(g, 64);
		r.memcpy.start_ns = s;
		r.memcpy.end_ns = s + dur(g);
		r.memcpy.bytes = val(g);
		r.memcpy.copy_kind = u8(g) % 12;
		r.memcpy.src_kind = u8(g) % 8;
		r.memcpy.dst_kind = u8(g) % 8;
		r.memcpy.flags = u8(g) % 2;
		if (u8(g) < 64) { /* a peer copy: both devices (+ 1), any of them */
			r.memcpy.src_device = small_id(g, 4);
			r.memcpy.dst_device = small_id(g, 4);
		}
		break;
	}
	case 11: {
		uint64_t s = tm(g);

		r.type = GW_REC_MEMSET;
		r.memset.device = small_id(g, 3);
		r.memset.stream = small_id(g, 4);
		r.memset.correlation = small_id(g, 64);
		r.memset.start_ns = s;
		r.memset.end_ns = s + dur(g);
		r.memset.bytes = val(g);
		r.memset.mem_kind = u8(g) % 8;
		break;
	}
	case 12:
	case 13:
		r.type = GW_REC_MEMORY;
		r.memory.time_ns = tm(g);
		r.memory.op = u8(g) % 4;
		r.memory.mem_kind = u8(g) % 7;
		r.memory.tid = u8(g) % 4;
		r.memory.correlation = small_id(g, 64);
		r.memory.device = small_id(g, 3);
		r.memory.address = small_id(g, 16) << 20;
		r.memory.bytes = u8(g) < 128 ? un(g, 2) << 12 : val(g);
		r.memory.stream = small_id(g, 4);
		r.memory.stack_id = small_id(g, 16);
		break;
	case 14: {
		uint64_t s = tm(g);

		uint8_t v = u8(g);

		if (v < 64) { /* a host function or a wait for a value held a stream */
			r.type = GW_REC_STREAM_OP;
			r.stream_op.correlation = small_id(g, 64);
			r.stream_op.kind = u8(g) % 4;
			r.stream_op.tid = u8(g) % 4;
			r.stream_op.device = small_id(g, 3);
			r.stream_op.stream = small_id(g, 4);
			r.stream_op.address = val(g);
			break;
		}
		if (v < 80) { /* CUPTI's buffers on a device */
			r.type = GW_REC_COUNTER;
			r.counter.time_ns = s;
			r.counter.device = small_id(g, 3);
			r.counter.counter = u8(g) < 128 ? GW_COUNTER_CUPTI_BUFFER_BYTES
							: GW_COUNTER_CUPTI_BUFFER_LIMIT_BYTES;
			r.counter.value = val(g);
			break;
		}
		r.type = GW_REC_SYNC;
		r.sync.correlation = small_id(g, 64);
		r.sync.start_ns = s;
		r.sync.end_ns = s + dur(g);
		r.sync.type = u8(g) % 6;
		r.sync.stream = small_id(g, 4);
		r.sync.event = val(g);
		if (v < 192) { /* a polling wait */
			r.sync.queries = val(g);
			r.sync.tid = u8(g) % 4;
			r.sync.device = small_id(g, 3);
			r.sync.name_id = small_id(g, 16);
			r.sync.stack_id = small_id(g, 16);
		}
		break;
	}
	case 15:
		r.type = GW_REC_DROPS;
		r.drops.time_ns = tm(g);
		r.drops.source = u8(g) % 4;
		r.drops.count = val(g);
		break;
	case 16:
		r.type = GW_REC_NOTE;
		r.note.time_ns = tm(g);
		r.note.level = u8(g) % 3;
		r.note.text = bytes(g);
		break;
	case 17:
		r.type = GW_REC_HEADER;
		r.header.format_version = 1;
		r.header.flags = u8(g) % 4;
		r.header.pid = val(g);
		r.header.rank = (int64_t)val(g);
		r.header.start_ns = tm(g);
		r.header.capture_mode = u8(g) % 3;
		r.header.command = bytes(g);
		r.header.host = bytes(g);
		break;
	case 18:
		r.type = GW_REC_MODULE;
		r.module.time_ns = tm(g);
		r.module.event = u8(g) % 3;
		r.module.base = u8(g) < 224 ? 0x400000 : val(g);
		r.module.start = 0x400000;
		r.module.size = val(g);
		r.module.path = bytes(g);
		break;
	case 19:
		/* or a type this reader does not know (ids from 64 are unassigned) */
		r.type = u8(g) < 128 ? GW_REC_FOOTER : 64 + u8(g) % 192;
		r.footer.end_ns = tm(g);
		r.footer.records = val(g);
		r.footer.dropped = val(g);
		break;
	case 20: {
		bool truncated;

		/* a second trace: merging, per-trace rows */
		truncated = u8(g) & 1;
		gw_analyzer_end_trace(a, truncated, u8(g) & 1);
		if (gw_analyzer_begin_trace(a, "fuzz-trace") < 0)
			VIOLATED();
		return;
	}
	default: {
		/* A loop: a period of 1-4 kernels launched back to back, repeated 1-40 times,
		 * under-filled or not: the shape of a dependency chain or of tiny launches. */
		unsigned period = u8(g) % 4 + 1, reps = u8(g) % 40 + 1;
		uint64_t stream = small_id(g, 4), blocks = dim(g), kernel_ns = dur(g) % 100000;
		uint64_t name0 = u8(g) % 16;

		/* names 8-15: each repetition is a step, an NVTX range around its launches */
		bool steps = name0 & 8;

		for (unsigned i = 0; i < reps && g->records < MAX_RECORDS; i++) {
			uint64_t start = g->now;

			for (unsigned k = 0; k < period; k++, g->records += 2)
				launch(a, g, (*corr_next)++, name0 + k, stream, blocks, kernel_ns);
			if (steps) {
				memset(&r, 0, sizeof(r));
				r.type = GW_REC_RANGE;
				r.version = 1;
				r.range =
					(struct gw_rec_range){.start_ns = start,
							      .end_ns = g->now,
							      .kind = GW_RANGE_PUSH_POP,
							      .name = {(const uint8_t *)"step", 4}};
				add(a, &r);
				g->records++;
			}
		}
		return;
	}
	}
	g->records++;
	add(a, &r);
}

/* |x - y| within rounding of doubles summed over many pieces of a total of `scale`. */
static bool close_to(double x, double y, double scale)
{
	return fabs(x - y) <= 1e-6 * scale + 1e-9;
}

static void check_fractions(const double *bd, bool has_budget)
{
	double sum = 0;

	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (!isfinite(bd[b]) || bd[b] < -1e-9 || bd[b] > 1 + 1e-6)
			VIOLATED();
		sum += bd[b];
	}
	if (has_budget ? !close_to(sum, 1, 1) : sum != 0)
		VIOLATED();
}

/* A bucket table that must sum to a budget: finite, none negative, the sum within rounding. */
static void check_sm_ns(const double *sm_ns, double budget)
{
	double sum = 0;

	if (!isfinite(budget) || budget < 0)
		VIOLATED();
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (!isfinite(sm_ns[b]) || sm_ns[b] < -1e-6 * budget - 1e-9)
			VIOLATED();
		sum += sm_ns[b];
	}
	if (!close_to(sum, budget, budget))
		VIOLATED();
}

static void check_unit(double v)
{
	if (!isfinite(v) || v < -1e-9 || v > 1 + 1e-6)
		VIOLATED();
}

/* The invariants of design.md's SM-time accounting, for the result and every row of it. */
static void check_analysis(const struct gw_analysis *res)
{
	double budget = 0, bins[GW_BUCKET_COUNT] = {0};

	/* A device's budget is its window times its SMs; the result's, the sum over devices. */
	for (unsigned d = 0; d < res->n_devices; d++) {
		const struct gw_device_result *dev = &res->devices[d];
		double window = (double)(dev->end_ns - dev->start_ns) * (double)dev->sm_count;

		if (dev->end_ns < dev->start_ns || !close_to(dev->budget_sm_ns, window, window))
			VIOLATED();
		check_sm_ns(dev->sm_ns, dev->budget_sm_ns);
		check_fractions(dev->breakdown, dev->budget_sm_ns > 0);
		budget += dev->budget_sm_ns;
	}
	if (!close_to(res->budget_sm_ns, budget, budget))
		VIOLATED();
	check_sm_ns(res->sm_ns, res->budget_sm_ns);
	check_fractions(res->breakdown, res->budget_sm_ns > 0);
	for (unsigned t = 0; t < res->n_traces; t++) {
		bool has_budget = false;

		for (unsigned d = 0; d < res->n_devices; d++)
			has_budget |=
				res->devices[d].trace == t && res->devices[d].budget_sm_ns > 0;
		check_fractions(res->traces[t].breakdown, has_budget);
	}
	check_unit(res->util.kernel_active);
	check_unit(res->util.sm_busy);
	/* the fill is counted only while kernels run */
	if (res->util.sm_busy > res->util.kernel_active + 1e-6)
		VIOLATED();
	check_unit(res->util.compute);
	check_unit(res->unclassified_kernel_share);
	if (!isfinite(res->memory.peak_fraction) || res->memory.peak_fraction < 0 ||
	    !isfinite(res->memory.growth_bytes_per_s))
		VIOLATED();
	if (!isfinite(res->launch_queued_sm_ns) || !isfinite(res->launch_in_call_sm_ns) ||
	    !isfinite(res->launch_between_sm_ns) || res->launch_queued_sm_ns < 0 ||
	    res->launch_in_call_sm_ns < 0 || res->launch_between_sm_ns < 0)
		VIOLATED();
	for (unsigned i = 0; i < res->n_sync_sites; i++)
		if (!isfinite(res->sync_sites[i].exposed_sm_ns) ||
		    res->sync_sites[i].exposed_sm_ns < 0)
			VIOLATED();
	for (unsigned i = 0; i < res->n_kernels; i++) {
		check_unit(res->kernels[i].mean_fill);
		if (!isfinite(res->kernels[i].unfilled_sm_ns))
			VIOLATED();
	}
	for (unsigned i = 0; i < res->n_recs; i++)
		if (!res->recs[i].text || !isfinite(res->recs[i].fraction))
			VIOLATED();
	/* Steps hold parts of the SM-time, never more than all of it, each its own shares. */
	{
		double steps_sm = 0;

		for (unsigned i = 0; i < res->steps.n; i++) {
			const struct gw_step *st = &res->steps.steps[i];
			double sm = 0;

			for (int b = 0; b < GW_BUCKET_COUNT; b++) {
				if (!isfinite(st->sm_ns[b]) || st->sm_ns[b] < -1e-6)
					VIOLATED();
				sm += st->sm_ns[b];
			}
			check_fractions(st->breakdown, sm > 0);
			if (st->end_ns < st->start_ns || !isfinite(st->device_ns))
				VIOLATED();
			steps_sm += sm;
		}
		if (steps_sm > res->budget_sm_ns * (1 + 1e-6) + 1e-6 || res->steps.n_slow > 5 ||
		    !isfinite(res->steps.sm_share))
			VIOLATED();
		for (unsigned i = 0; i < res->steps.n_slow; i++)
			if (res->steps.slow[i].step >= res->steps.n)
				VIOLATED();
	}
	/* The drawing timeline redraws the same SM-time: its bins add up to the buckets. */
	for (unsigned i = 0; i < res->n_bins; i++)
		for (int b = 0; b < GW_BUCKET_COUNT; b++) {
			if (!isfinite(res->bins[i].sm_ns[b]) || res->bins[i].sm_ns[b] < -1e-6)
				VIOLATED();
			bins[b] += res->bins[i].sm_ns[b];
		}
	for (int b = 0; b < GW_BUCKET_COUNT && res->n_bins; b++)
		if (!close_to(bins[b], res->sm_ns[b], res->budget_sm_ns))
			VIOLATED();
}

/*
 * A strict JSON checker: RFC 8259 syntax, strings of valid UTF-8 (no overlong forms, no
 * surrogates), no control characters, finite numbers only (a NaN printed as "nan" fails).
 * Returns the position after the value, or NULL.
 */
static const char *json_value(const char *p, const char *end, int depth);

static const char *json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static const char *json_string(const char *p, const char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	p++;
	while (p < end && *p != '"') {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (p + i >= end ||
					    !strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 5;
			} else if (*p && strchr("\"\\/bfnrt", *p)) {
				p++;
			} else {
				return NULL;
			}
			continue;
		}
		if (c < 0x80) {
			p++;
			continue;
		}
		{
			int len = c >= 0xc2 && c <= 0xdf   ? 2
				  : c >= 0xe0 && c <= 0xef ? 3
				  : c >= 0xf0 && c <= 0xf4 ? 4
							   : 0;
			uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);

			if (!len || end - p < len)
				return NULL;
			for (int i = 1; i < len; i++) {
				if (((unsigned char)p[i] & 0xc0) != 0x80)
					return NULL;
				cp = cp << 6 | ((unsigned char)p[i] & 0x3f);
			}
			if ((len == 3 && cp < 0x800) ||
			    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff))
				return NULL;
			p += len;
		}
	}
	return p < end ? p + 1 : NULL;
}

static const char *json_number(const char *p, const char *end)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (p < end && *p == '.') {
		if (++p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, const char *end, int depth)
{
	p = json_ws(p, end);
	if (p >= end || depth > 64)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p, end), end);
				if (!p || (p = json_ws(p, end)) >= end || *p != ':')
					return NULL;
				p++;
			}
			p = json_value(p, end, depth + 1);
			if (!p || (p = json_ws(p, end)) >= end)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p != ',')
				return NULL;
			p++;
		}
	}
	if (*p == '"')
		return json_string(p, end);
	for (const char *const *w = (const char *const[]){"true", "false", "null", NULL}; *w; w++)
		if ((size_t)(end - p) >= strlen(*w) && !memcmp(p, *w, strlen(*w)))
			return p + strlen(*w);
	return json_number(p, end);
}

/* Aborts unless the report is one JSON value, printing it so that the failure can be read. */
static void check_json(const char *s, size_t len)
{
	const char *p = json_value(s, s + len, 0);

	if (!p || json_ws(p, s + len) != s + len) {
		fprintf(stderr, "fuzz-analysis: invalid JSON report:\n%.*s\n", (int)len, s);
		VIOLATED();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct gen g = {.p = data, .n = size, .now = 1000000000};
	struct gw_analysis_options opt;
	struct gw_analyzer *a = NULL;
	struct gw_analysis *res = NULL;
	uint64_t corr_next = 1000;
	char *json = NULL;
	size_t json_len = 0;
	FILE *js;
	uint8_t mode = u8(&g);

	if (!sink)
		sink = fopen("/dev/null", "w");
	/* The first byte picks the options: thresholds at their defaults, 0 or huge; the
	 * drawing timeline and the gaps the HTML page and Perfetto export ask for. */
	gw_analysis_options_init(&opt);
	opt.symbolize = false; /* the stacks' addresses are made up: nothing to open */
	if (mode & 1)
		opt.tiny_ns = (mode & 2) ? 0 : UINT64_MAX;
	if (mode & 4)
		opt.starve_ns = (mode & 8) ? 0 : UINT64_MAX;
	if (mode & 16)
		opt.timeline_bins = (mode & 32) ? 1 : 2000;
	opt.keep_gaps = mode & 64;
	opt.top_n = (mode & 128) ? 1 : 10;

	if (gw_analyzer_new(&opt, &a) < 0)
		VIOLATED();
	while (g.n && g.records < MAX_RECORDS)
		gen_one(a, &g, &corr_next);
	if (gw_analyzer_finish(a, &res) < 0)
		VIOLATED();
	check_analysis(res);

	if (gw_report_text(res, &opt, sink, mode & 2) < 0)
		VIOLATED();
	js = open_memstream(&json, &json_len);
	if (!js || gw_report_json(res, &opt, js) < 0 || fclose(js) != 0)
		VIOLATED();
	check_json(json, json_len);
	free(json);
	/* The page is large and slow to write: only when the input asks for its drawing. */
	if ((mode & 0x50) == 0x50 && gw_report_html(res, &opt, sink) < 0)
		VIOLATED();

	gw_analysis_free(res);
	gw_analyzer_free(a);
	return 0;
}
