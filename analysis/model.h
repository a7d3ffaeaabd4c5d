/* SPDX-License-Identifier: MIT */
/*
 * The analysis's internal model: the compact tables collect (stage 1) fills and the later
 * stages read and annotate, in order: join, runs, steps, attribute, memory, results, sites,
 * advice.
 * A stage reads what the stages before it left in the model; none calls back into an
 * earlier stage's file. model.c holds the lookups every stage may use.
 */
#pragma once

#include <regex.h>

#include "analysis.h"
#include "symbolize.h"
#include "util.h"

enum {
	GW_OP_KERNEL = 1,
	GW_OP_MEMCPY = 2,
	GW_OP_MEMSET = 3,
};

enum {
	GW_OPF_OVERLAP = 1u << 0,  /* a kernel of another stream overlaps it */
	GW_OPF_CHAIN = 1u << 1,	   /* part of a detected dependency chain */
	GW_OPF_PAGEABLE = 1u << 2, /* a copy touching pageable host memory */
	GW_OPF_TINY = 1u << 3,
	/* a host function (HOSTFN) or a wait for a value (WAITVAL) was issued to its stream
	 * after the stream's previous operation: it could not start before that ran (a_held) */
	GW_OPF_HOSTFN = 1u << 4,
	GW_OPF_WAITVAL = 1u << 5,
};

/* A GPU operation: 56 bytes. */
/* A kernel's launch shape as the op table holds it: 16 bytes (gw_an_kernel_shape expands it). */
struct gw_launch_shape {
	uint32_t blocks, smem; /* grid blocks; static + dynamic shared memory per block */
	uint16_t threads, ctx; /* threads per block; the trace's CUPTI context id, clamped */
	uint8_t regs;	       /* registers per thread */
	uint8_t carveout_kib;  /* the SM's executed shared-memory carveout, KiB; 0 unknown */
	uint8_t cluster;       /* blocks per thread-block cluster; 0 or 1 none */
	uint8_t optin;	       /* 1: the kernel's opt-in shared-memory limit */
};

struct gw_op {
	uint64_t start_ns, end_ns;
	union {
		uint64_t corr;	      /* until the join: the correlation id */
		struct {	      /* from the join on: */
			uint32_t api; /* index into apis, UINT32_MAX none */
			float fill;   /* SM fill (kernels; 0 for copies and memsets) */
		};
	};
	uint32_t name_id, stream;     /* name_id and stream are the trace's own */
	struct gw_launch_shape shape; /* kernels */
	uint16_t dev;		      /* index into the analyzer's device table */
	uint16_t trace;		      /* a GPU several processes shared holds ops of each */
	uint8_t kind, flags;
	uint8_t cls; /* kernels: enum gw_bucket (the join); copies: CUpti_ActivityMemcpyKind */
};

/* A stream: its trace's id for it, within its trace (processes sharing a GPU both have a
 * stream 7). */
static inline uint64_t gw_op_stream(const struct gw_op *op)
{
	return (uint64_t)op->trace << 32 | op->stream;
}

/* An API call that issues or waits for work: 48 bytes. */
struct gw_api {
	uint64_t corr, start_ns, end_ns;
	uint32_t tid, stack_id, name_id;
	uint16_t trace, device;
	uint8_t category, sync_kind;
};

/* Work a stream ran that has no GPU record (a STREAM_OP record): a host function, a wait for a
 * value. dev is resolved by the join (UINT16_MAX: a device without GPU operations). */
struct gw_hold {
	uint64_t corr, device, stream;
	uint32_t api; /* its call, index into apis (the join); UINT32_MAX none */
	uint16_t trace, dev;
	uint8_t kind; /* enum gw_stream_op_kind */
};

/* Memory events besides GW_MEMORY_ALLOC and _FREE: a caching allocator's counter samples,
 * bytes = the value from time_ns on. */
enum {
	GW_MEV_RESERVED = 16,
	GW_MEV_ALLOCATED = 17,
};

/* An allocation or free, or a counter sample: 40 bytes. */
struct gw_mev {
	uint64_t time_ns, addr, bytes;
	uint32_t stack_id;
	uint16_t trace, device;
	uint8_t op, kind;
};

/* The event view's material (keep_events), names still string ids. */
struct gw_vcall {
	uint64_t tid, start_ns, end_ns, corr, stream, bytes;
	uint32_t name_id, kernel_id, domain, cbid, stack_id;
	uint16_t trace;
	uint8_t category, sync_kind;
};

struct gw_vop {
	uint64_t stream, corr, start_ns, end_ns, bytes;
	uint64_t grid[3], block[3], registers, smem_bytes;
	uint32_t name_id;
	struct gw_launch_shape shape; /* as the op table holds it, so the view's fill is the
				       * attribution's */
	uint16_t dev;		      /* index into the analyzer's device table */
	uint16_t trace;
	uint8_t kind, copy_kind;
};

struct gw_vthread {
	uint64_t tid;
	char *name;
	uint16_t trace;
};

/* A host range of a trace (RANGE records of kind push/pop or start/end): 32 bytes. */
struct gw_range {
	uint64_t start_ns, end_ns;
	uint32_t tid;
	uint32_t name; /* index into range_names */
	uint16_t trace;
	uint8_t kind; /* enum gw_range_kind */
};

/* A range name of a trace: its text, or a STRING id resolved by the steps stage. */
struct gw_range_name {
	char *text;	  /* NULL until resolved (a registered name) */
	uint64_t name_id; /* the registered name's STRING id; 0 for a name the records held */
	uint64_t count;	  /* ranges of this name */
	uint16_t trace;
	bool step; /* the steps stage: the name matches the step pattern */
};

/* A METRIC record: a measured counter's mean over a window (device: the trace's id until the
 * counters stage). 32 bytes. */
struct gw_metric_ent {
	uint64_t start_ns, end_ns;
	float value; /* 0-1 */
	uint32_t device;
	uint16_t trace;
	uint8_t counter; /* enum gw_counter - 64 */
};

/* A SAMPLER record: how a trace's device was sampled, or why not. */
struct gw_sampler_ent {
	uint64_t device; /* the trace's id; UINT64_MAX: every device */
	uint64_t period_ns;
	char *reason;
	uint16_t trace;
	uint8_t source;
};

/* Up to this many contributors of each bucket are kept for each watched step. */
#define GW_STEP_CONTRIBUTORS 4
/* The slowest steps watched by the sweep, so the report can name what made them slow. */
#define GW_STEP_WATCHED	     5

/* What a piece of a watched step's SM-time came from: a synchronizing call (its site) or a GPU
 * operation (a kernel's name, its launch's stack). */
enum {
	GW_CONTRIB_SYNC = 1,
	GW_CONTRIB_KERNEL = 2,
	GW_CONTRIB_COPY = 3,
	GW_CONTRIB_SET = 4,
};

struct gw_contrib {
	double sm_ns;
	uint32_t name_id, stack_id; /* the call's name (syncs) or the kernel's; the stack */
	uint16_t trace;
	uint8_t kind; /* GW_CONTRIB_*; 0 empty */
};

/* A step: the outermost range matching the step pattern on its thread. Its SM-time is the time
 * its operations ran (op_step) and the idle time while it was open on the host. */
struct gw_step_st {
	uint64_t start_ns, end_ns;
	uint32_t tid, name; /* name: index into range_names */
	uint16_t trace;
	uint8_t watch; /* index into step_watch + 1; 0 not watched */
	uint64_t ops;  /* GPU operations launched in it */
	double sm_ns[GW_BUCKET_COUNT];
};

struct gw_step_watch {
	struct gw_contrib top[GW_BUCKET_COUNT][GW_STEP_CONTRIBUTORS];
};

/* Steps past this many stop being kept: the view's fill falls back to the bins. */
#define GW_VIEW_MAX_FILL_STEPS (4u << 20)

struct gw_stack {
	uint64_t *ips; /* return addresses, FRAME ids (GW_STACK_FRAMES), or return addresses and
			* GW_PYFRAME words (GW_STACK_MIXED) */
	uint32_t depth;
	uint8_t kind; /* enum gw_stack_kind */
};

/* A span of host time. */
struct gw_span {
	uint64_t start_ns, end_ns;
};

/* A CONTEXT record: a green context's kernels run on sm_count of the device's SMs. */
struct gw_context_ent {
	uint64_t id, sm_count; /* sm_count 0: all of the device's */
};

/* A FRAME record: a frame the trace names (imported traces). */
struct gw_frame_ent {
	uint32_t function_id, file_id, module_id, line;
	uint8_t lang; /* enum gw_frame_lang */
};

/* A PYCODE record: a Python code object of a captured trace. */
struct gw_pycode_ent {
	uint32_t file_id, function_id, first_line;
	uint16_t version; /* (major << 8) | minor: how to read the table */
	uint32_t table_len;
	uint8_t *table; /* co_linetable; NULL when empty or cut */
};

struct gw_string_ent {
	char *text;
	uint8_t cls; /* kernel class + 1 (0x80: a rule matched); 0 not yet classified */
};

struct gw_module_rec {
	char *path;
	uint64_t base, start, size;
};

struct gw_trace_st {
	struct gw_trace_info info;
	struct gw_vec strings;	   /* struct gw_string_ent */
	struct gw_hmap string_map; /* (0, id) -> index + 1 */
	struct gw_vec stacks;	   /* struct gw_stack */
	struct gw_hmap stack_map;  /* (0, id) -> index + 1 */
	struct gw_vec frames;	   /* struct gw_frame_ent */
	struct gw_hmap frame_map;  /* (0, id) -> index + 1 */
	struct gw_vec pycodes;	   /* struct gw_pycode_ent */
	struct gw_hmap pycode_map; /* (0, id) -> index + 1 */
	struct gw_vec modules;	   /* struct gw_module_rec */
	struct gw_vec contexts;	   /* struct gw_context_ent, few: searched in order */
	struct gw_vec capturing;   /* streams recording a graph now, in API order (collect.c) */
	struct gw_vec startup;	   /* struct gw_span: CUDA's start-up work (OVERHEAD records);
				    * sorted and merged by the join */
	struct gw_startup startup_totals;
	struct gw_vec notes; /* char *: the texts of warning NOTE records */
	char *host;	     /* the header's host: GPUs are shared within one host */
	uint64_t drops_sum, footer_dropped;
	bool footer_seen, reader_said_clean, have_end_status;
	bool exec_ended; /* its footer says the process exec'd: the next image's trace follows */
	bool memory_recorded;	/* false: an import without MEMORY or allocator COUNTER records */
	uint64_t max_launch_ns; /* longest launch call: bounds the in-call search */
	struct gw_symbolizer *sym;
	bool sym_tried;
};

struct gw_dev_st {
	struct gw_device_result r;
	struct gw_device_limits lim;
	size_t op_begin, op_end; /* slice of the sorted op table */
	/* live_bytes: device allocations; reserved_bytes: what a caching allocator held (its
	 * counter); allocated_bytes: what it handed to tensors (its counter, else the sum of its
	 * tensor blocks). The device's memory is the largest of the three (they overlap: the
	 * allocator's own cudaMalloc calls, when recorded, are inside what it reports held, and
	 * its tensors inside that); a trace with tensors alone still shows their memory. */
	uint64_t live_bytes, reserved_bytes, allocated_bytes, peak_bytes;
	uint64_t tensor_bytes, allocated_peak_bytes, reserved_peak_bytes;
	bool allocated_counter; /* an allocated-bytes counter was seen: it, not the tensors */
	/* CUPTI's own buffers in this device's memory (COUNTER records, per context: summed over
	 * the processes that shared the GPU); 0 unknown */
	uint64_t cupti_bytes, cupti_limit_bytes;
	double fill_sm_ns;
	bool streams;	       /* kernels on more than one stream */
	uint64_t first_stream; /* gw_op_stream of its first kernel, UINT64_MAX none */
	bool add_streams; /* the same, noted in add order (valid when the ops needed no sort) */
	uint32_t add_first_stream; /* UINT32_MAX: none yet */
	bool runs_done;		   /* chains and fusion runs were found during the join */
	/* A physical GPU: its uuid (empty: unknown) and when its trace saw it busy; devices of
	 * one host and uuid whose windows meet are one GPU that processes shared (join.c). */
	char *uuid;
	uint32_t uuid_len;
	uint64_t first_ns, last_ns;
	struct gw_vec sharers; /* uint16_t: the other traces that used this GPU */
};

/* A fusion candidate cache, keyed as a->fusion_map is (the same sequences recur). */
struct gw_fusion_cache {
	uint64_t k1[64], k2[64];
	uint32_t idx[64]; /* index into a->fusion + 1; 0 empty */
};

/* The open chain segment and tiny run of a walk over one stream's kernels (SIZE_MAX: none
 * open), for gw_runs_step. */
struct gw_runs {
	size_t chain, tiny;
	struct gw_fusion_cache fc;
};

struct gw_sync_acc {
	uint16_t trace;
	uint8_t kind;
	uint32_t stack_id, name_id;
	uint64_t count, wait_ns, exposed_ns, host_work_after_ns;
	double exposed_sm_ns;
};

struct gw_tiny_acc {
	uint16_t trace;
	uint32_t name_id, stack_id;
	uint64_t count, total_ns, gap_before_ns;
};

struct gw_fusion_acc {
	uint16_t trace;
	uint8_t n;
	uint32_t names[8];
	uint32_t stack_id;
	uint64_t occurrences, kernel_ns, saved_ns;
};

struct gw_kernel_acc {
	uint16_t trace;
	uint32_t name_id, stack_id;
	uint8_t cls;
	uint64_t count, total_ns, chain_count;
	double fill_ns, unfilled_sm_ns;
};

struct gw_blocked_acc {
	uint16_t trace, dev;
	uint32_t stream;
	uint64_t gaps, total_ns, longest_ns;
	uint32_t longest_name_id, longest_stack_id; /* the op after the longest gap */
	uint32_t held_api; /* the longest gap's: a wait for a value that held it, UINT32_MAX none */
	uint8_t longest_kind;
	bool longest_launched;
};

/* Host functions by call site: calls, and the idle time of queued work they held. */
struct gw_hostfn_acc {
	uint16_t trace;
	uint32_t name_id, stack_id;
	uint64_t calls, gaps, held_ns;
};

struct gw_alloc_acc {
	uint16_t trace;
	uint8_t kind;
	uint32_t stack_id;
	uint64_t count, bytes, max_bytes, never_freed, never_freed_bytes;
};

struct gw_analyzer {
	struct gw_analysis_options opt;
	regex_t site_filter; /* opt.site_filter compiled, when site_filter_set */
	bool site_filter_set;
	struct gw_vec traces;		      /* struct gw_trace_st */
	struct gw_vec devs;		      /* struct gw_dev_st */
	struct gw_hmap dev_map;		      /* (trace, device id) -> index + 1 */
	uint64_t last_dev_trace, last_dev_id; /* the last dev_index() answer */
	int last_dev;
	struct gw_vec ops;	 /* struct gw_op */
	struct gw_vec apis;	 /* struct gw_api */
	struct gw_vec mevs;	 /* struct gw_mev */
	struct gw_vec sync_apis; /* uint32_t: apis that may wait (sync or copy), in add order */
	bool apis_resorted;	 /* sorting moved the apis: sync_apis is stale */
	bool apis_unsorted;	 /* an api arrived out of (trace, corr) order */
	bool ops_unsorted;	 /* an op arrived out of (dev, start) order */
	bool sync_outside;	 /* the join made a call wait that is not in sync_apis */
	uint32_t *kidx;		 /* per kernel: a device's kernels in (stream, start) order */

	struct gw_vec syncs; /* struct gw_sync_acc */
	struct gw_hmap sync_map;
	struct gw_vec tiny; /* struct gw_tiny_acc */
	struct gw_hmap tiny_map;
	struct gw_vec fusion; /* struct gw_fusion_acc */
	struct gw_hmap fusion_map;
	struct gw_vec kstats; /* struct gw_kernel_acc */
	struct gw_hmap kstat_map;
	struct gw_vec allocs;  /* struct gw_alloc_acc */
	struct gw_vec blocked; /* struct gw_blocked_acc */
	struct gw_hmap blocked_map;
	struct gw_vec holds;	 /* struct gw_hold; by (trace, dev, stream, corr) after the join */
	struct gw_hmap held_map; /* (0, op index) -> the hold before it + 1 (the join) */
	struct gw_vec hostfns;	 /* struct gw_hostfn_acc */
	struct gw_hmap hostfn_map; /* (trace << 32 | name, stack) -> index + 1 */
	struct gw_hmap alloc_map;
	struct gw_vec gaps;	/* struct gw_gap */
	struct gw_vec warnings; /* char *: gw_analyzer_warn's, first in the report's list */

	/* ranges and steps (collect, steps, attribute) */
	struct gw_vec ranges;	       /* struct gw_range: host ranges, in add order */
	struct gw_vec range_names;     /* struct gw_range_name */
	struct gw_hmap range_name_map; /* (trace << 1 | registered, hash or id) -> index + 1 */
	uint64_t other_ranges;	       /* marks and GPU ranges: counted, not kept */
	struct gw_vec steps;	       /* struct gw_step_st, by (trace, tid, start) */
	uint32_t *op_step;	       /* per op (in the sorted table): its step + 1, 0 none */
	uint32_t *step_time;	       /* step indices by (trace, start) */
	size_t *step_trace;	       /* step_time's slice of trace t: [step_trace[t], [t + 1]) */
	struct gw_step_watch watch[GW_STEP_WATCHED];
	unsigned n_watch;
	struct gw_contrib slow_who[GW_STEP_WATCHED]; /* results: each slow step's top contributor */

	/* keep_events: the view's material (collect, attribute, memory), built by view.c */
	struct gw_vec vcalls;	/* struct gw_vcall */
	struct gw_vec vops;	/* struct gw_vop */
	struct gw_vec vthreads; /* struct gw_vthread */
	struct gw_vec vfill;	/* struct gw_view_step, device = device table index */
	struct gw_vec vmem;	/* struct gw_view_step */
	struct gw_vec vsites;	/* struct gw_site: the calls' stacks, resolved by the sites stage */
	struct gw_hmap vsite_map; /* (trace, stack id) -> index + 1 into vsites */
	bool vfill_capped;

	/* measured counters (collect, counters) */
	struct gw_vec metrics;	/* struct gw_metric_ent */
	struct gw_vec samplers; /* struct gw_sampler_ent */

	struct gw_analysis *res; /* being built by finish */
	uint64_t kernel_ns, unclassified_ns;
	bool finished;
};

/* Trace i, or NULL. */
static inline struct gw_trace_st *gw_an_trace(struct gw_analyzer *a, unsigned i)
{
	return i < a->traces.len ? &((struct gw_trace_st *)a->traces.data)[i] : NULL;
}

/* The limits of a device no DEVICE record described. */
extern const struct gw_device_limits gw_assumed_limits;

/* How much of [t0, t1] trace t's start-up spans cover (merged: after the join). */
uint64_t gw_an_startup_overlap(const struct gw_trace_st *t, uint64_t t0, uint64_t t1);

/* The occupancy model's view of a launch shape of trace t: its context's SMs looked up. */
void gw_an_kernel_shape(const struct gw_trace_st *t, const struct gw_launch_shape *s,
			struct gw_kernel_shape *k);

/* Device table index for (trace, device id), created on first sight with assumed limits.
 * Returns the index or -errno. */
int gw_an_device(struct gw_analyzer *a, unsigned trace, uint64_t id);

/* The string entry of id in trace t, or NULL. */
struct gw_string_ent *gw_an_string_ent(const struct gw_trace_st *t, uint64_t id);

/* The text of string id in trace, or NULL. */
const char *gw_an_string(struct gw_analyzer *a, unsigned trace, uint64_t id);

/* Binary min-heap of op indices keyed by end time: the operations running at an instant. */
/* Binary min-heap of op indices keyed by end time. */
struct gw_heap {
	uint32_t *v;
	size_t n;
};

static inline void gw_heap_push(struct gw_heap *h, const struct gw_op *ops, uint32_t x)
{
	size_t i = h->n++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (ops[h->v[p]].end_ns <= ops[x].end_ns)
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = x;
}

static inline uint32_t gw_heap_pop(struct gw_heap *h, const struct gw_op *ops)
{
	uint32_t top = h->v[0], x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && ops[h->v[c + 1]].end_ns < ops[h->v[c]].end_ns)
			c++;
		if (ops[x].end_ns <= ops[h->v[c]].end_ns)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* The stages, in the order gw_analyzer_finish runs them; each returns >= 0 or -errno. */

/* join.c: sorts ops, apis and memory events; joins each op to its API call (op.api),
 * classifies kernels (op.cls), computes their fill and TINY flag, marks pageable async copies
 * as syncs, sets each device's op slice and window. With every device's kernels in add order
 * on one stream, runs (below) are found in the same walk (dev.runs_done). */
int gw_join(struct gw_analyzer *a);

/* counters.c: the measured counters' series per device, each kernel name's (and copy kind's)
 * DRAM and SM use estimated from the windows, and the class the counters give the kernels whose
 * estimate is clear enough (op.cls changed; causes.md, Measured counters). */
int gw_measure_counters(struct gw_analyzer *a);

/* runs.c: position i of idx, device-relative kernel indices of device d in (stream, start)
 * order, or the end (i == m; m is SIZE_MAX while the walk goes on): closes the chain segment
 * and tiny run that position i ends (marking chains, adding fusion candidates), opens those it
 * starts. Needs the ops' fill and api and the TINY and OVERLAP flags of positions up to i. */
int gw_runs_step(struct gw_analyzer *a, struct gw_dev_st *d, const uint32_t *idx, size_t i,
		 size_t m, struct gw_runs *st);
/* runs.c: OVERLAP flags, and chains and fusion candidates of the devices join left for it. */
int gw_find_runs(struct gw_analyzer *a);

/* steps.c: the steps (outermost ranges matching the step pattern on their thread), each GPU
 * operation's step (op_step) by its launch call, the steps of each trace in time order
 * (step_time, step_trace) and the slowest steps watched. */
int gw_find_steps(struct gw_analyzer *a);

/* attribute.c: the sweep of each device: per-device buckets, sync sites' waits and exposure,
 * kernel and tiny-kernel tallies, bins and gaps. */
int gw_attribute(struct gw_analyzer *a);

/* memory.c: live bytes, peaks, growth, allocation sites, never-freed. */
int gw_account_memory(struct gw_analyzer *a);

/* results.c: trace and device rows, counts, the merged breakdown, warnings. */
int gw_build_results(struct gw_analyzer *a);

/* sites.c: the ranked site lists, symbolized. */
int gw_build_sites(struct gw_analyzer *a);

/* advice.c: recommendations from the finished numbers in a->res. */
int gw_advise(struct gw_analyzer *a);

/* view.c: with keep_events, the event view (a->res->view) from the material collected. */
int gw_build_view(struct gw_analyzer *a);
/* view.c: frees a view and its strings; accepts NULL. */
void gw_event_view_free(struct gw_event_view *v);
