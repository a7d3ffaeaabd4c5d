/* SPDX-License-Identifier: MIT */
/* The report model: every SM-second of one or more traces attributed to a bucket, with sites. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpuwhy/trace-format.h>

/* The buckets, in design.md's order (analysis/buckets.def is the one table). */
enum gw_bucket {
#define B(NAME, key, label, cause, remedy) GW_BUCKET_##NAME,
#include "buckets.def"
#undef B
	GW_BUCKET_COUNT
};

struct gw_bucket_info {
	const char *key;    /* JSON breakdown key, e.g. "host_sync" */
	const char *label;  /* for humans */
	int cause;	    /* 1-6: the cause of "memory full, compute idle"; 0 none */
	const char *remedy; /* one-line short remedy */
};

/* Indexed by enum gw_bucket. */
extern const struct gw_bucket_info gw_buckets[GW_BUCKET_COUNT];

/* The bucket whose key is `key`, or -EINVAL. */
int gw_bucket_from_key(const char *key);

/* The name of a kind of the trace format (analysis/kinds.def): key for JSON and text, label
 * for the page. */
struct gw_kind_name {
	const char *key;
	const char *label;
};

/* enum gw_sync_kind's name; "none" for a value the table does not know. */
const struct gw_kind_name *gw_sync_kind_name(unsigned kind);
/* enum gw_mem_kind's name; "unknown" for a value the table does not know. */
const struct gw_kind_name *gw_mem_kind_name(unsigned kind);

/* Every row, in the table's order, for renderers that list them (the page). */
extern const struct gw_kind_name gw_sync_kind_names[];
extern const unsigned gw_n_sync_kind_names;
extern const struct gw_kind_name gw_mem_kind_names[];
extern const unsigned gw_n_mem_kind_names;

/* Settings of an analysis. Call gw_analysis_options_init() first, then override. */
struct gw_analysis_options {
	uint64_t tiny_ns;	/* a kernel shorter than this is tiny (10 us) */
	uint64_t starve_ns;	/* a starved gap up to this is launch_overhead (100 us) */
	uint64_t queue_ns;	/* a gap before queued work up to this is launch_overhead, longer
				 * is blocked (20 us) */
	uint64_t skew_ns;	/* how far GPU and host times may disagree: N counts as queued
				 * when its launch returned this long before the gap (10 us) */
	unsigned timeline_bins; /* bins of the drawing timeline over the window (0: none) */
	bool keep_gaps;		/* fill gw_analysis.gaps (for the Perfetto export) */
	bool keep_events;	/* fill gw_analysis.view: every call and operation (Perfetto) */
	bool symbolize;		/* symbolize call sites with libdwfl (true) */
	unsigned top_n;		/* rows kept per site list (10) */
	/* Range names that make steps: a POSIX extended regular expression, matched without
	 * regard to case; NULL: GW_STEPS_DEFAULT, "" no steps. */
	const char *steps_pattern;
	/* Python frames whose file this POSIX extended regular expression matches are the
	 * framework's or the standard library's, never a site; NULL: GW_SITE_FILTER_DEFAULT, ""
	 * none. */
	const char *site_filter;
	/* Called now and then while gw_analyze_files() reads trace i of n (NULL: never). */
	void (*progress)(void *ctx, int i, int n, uint64_t bytes_read, uint64_t file_size);
	void *progress_ctx;
};

void gw_analysis_options_init(struct gw_analysis_options *opt);

/* The default step pattern: torch.profiler's ProfilerStep#N, and a whole name that is step,
 * iteration or iter, with a train/training/global prefix and a number after it, or not
 * ("step 17", "train_step", "Iteration#3"); never optimizer.step or step_fn. */
#define GW_STEPS_DEFAULT                                                                           \
	"^(profilerstep#[0-9]+|((train|training|global)[ _.-]?)?(step|iteration|iter)"             \
	"([ _#:=.-]*[0-9]+)?)$"

/* The default site filter: installed packages, the standard library, frozen and generated
 * code, and torch's own Python files. */
#define GW_SITE_FILTER_DEFAULT                                                                     \
	"(site-packages|dist-packages)/|/lib/python3|<frozen |<string>|(^|/)torch[/\\]"

/* Checks a site filter: 0, or -EINVAL with regcomp's reason in why. */
int gw_site_filter_check(const char *pattern, char *why, size_t why_size);

/* Checks a step pattern: 0, or -EINVAL with regcomp's reason in why. */
int gw_steps_pattern_check(const char *pattern, char *why, size_t why_size);

/* A device's limits, from its DEVICE record (gw_assumed_limits without one). */
struct gw_device_limits {
	uint64_t sm_count;
	uint64_t max_threads_per_sm;
	uint64_t max_blocks_per_sm;
	uint64_t regs_per_sm;
	uint64_t smem_per_sm_bytes;
	uint64_t warp_size;
	uint64_t cc_major, cc_minor;	   /* 0: unknown */
	uint64_t max_threads_per_block;	   /* 0: unknown (1024) */
	uint64_t max_regs_per_block;	   /* 0: unknown (the SM's) */
	uint64_t max_smem_per_block_bytes; /* without opt-in; 0: unknown (48 KiB) */
};

/* A kernel launch as occupancy sees it. */
struct gw_kernel_shape {
	uint64_t blocks, threads_per_block, regs_per_thread;
	uint64_t static_smem_bytes, dynamic_smem_bytes;
	uint64_t smem_executed_bytes; /* the SM carveout it ran with; 0 unknown (the largest) */
	uint64_t cluster_blocks;      /* blocks per thread-block cluster; 0 or 1: none */
	uint64_t context_sms;	      /* SMs of its (green) context; 0: the device's */
	bool smem_optin;	      /* its dynamic shared memory may exceed 48 KiB */
};

/* What limited the blocks an SM holds (several when they tie). */
enum {
	GW_OCC_LIMIT_THREADS = 1u << 0, /* warps: threads per SM */
	GW_OCC_LIMIT_REGISTERS = 1u << 1,
	GW_OCC_LIMIT_SHARED_MEMORY = 1u << 2,
	GW_OCC_LIMIT_BLOCKS = 1u << 3, /* the SM's block slots */
	GW_OCC_LIMIT_OTHER = 1u << 4,  /* barriers, virtual resources */
};

struct gw_occupancy {
	uint64_t blocks_per_sm; /* at least 1 */
	unsigned limits;	/* GW_OCC_LIMIT_* */
	bool exact;		/* by the CUDA occupancy calculator's rules for the device's
				 * compute capability; false: the plain per-SM limits */
};

/*
 * Blocks of kernel k one SM of device d holds at once. With a compute capability the CUDA
 * occupancy calculator knows (cuda_occupancy.h: 3.x to 12.x), its rules: registers allocated
 * per warp in units of 256, per SM sub-partition; shared memory in allocation units with the
 * per-block reservation (1 KiB from 8.0) against the executed carveout; warps; block slots.
 * Otherwise the plain limits (threads, registers, shared memory per SM, max blocks). A zero
 * resource does not limit; at least 1.
 */
void gw_occupancy(const struct gw_device_limits *d, const struct gw_kernel_shape *k,
		  struct gw_occupancy *ret);

/*
 * SM fill of one kernel: the share of the device's block slots (SMs x blocks_per_sm) its
 * waves keep busy, blocks / (ceil(blocks / per_wave) x slots), where a wave holds per_wave =
 * its context's SMs x blocks_per_sm, in whole clusters. Without contexts or clusters: waves if
 * below one, else waves / ceil(waves) (the tail effect). In [0, 1].
 */
double gw_kernel_fill(const struct gw_device_limits *d, const struct gw_kernel_shape *k);

/* The class of a kernel from its (demangled or mangled) name: GW_BUCKET_COMPUTE,
 * _COMMUNICATION, _LOW_INTENSITY or _BANDWIDTH_BOUND (analysis/kernel-classes.def).
 * *ret_classified (may be NULL) is false when no rule matched and compute is the default. */
enum gw_bucket gw_kernel_class(const char *name, bool *ret_classified);

/* A symbolized call site: the first frame outside libgpuwhy, the CUDA runtime, CUPTI, the
 * driver and gpusim, and the frames below it. */
/* One frame of a site's stack. */
struct gw_frame_detail {
	uint8_t lang;	/* enum gw_frame_lang: GW_FRAME_NATIVE or GW_FRAME_PYTHON */
	char *function; /* demangled, or the Python qualified name; NULL unknown */
	char *file;	/* NULL unknown */
	unsigned line;	/* 0 unknown */
	char *module;	/* native frames: basename of the object; NULL unknown */
};

struct gw_site {
	unsigned trace;	   /* index of the trace the stack came from */
	uint64_t stack_id; /* 0: no stack recorded */
	char *text;	   /* "function (file.c:88)", "module+0x1a2b" or "(no stack)" */
	char *function;	   /* demangled; NULL unknown */
	char *file;	   /* NULL without debug info */
	unsigned line;
	char *module; /* basename of the object */
	uint64_t offset;
	char **frames;			 /* display strings of the user frames, outermost last */
	struct gw_frame_detail *details; /* the same frames, field by field (NULL: none) */
	unsigned n_frames;
	/* A Python site (the innermost Python frame outside the framework and the standard
	 * library, doc/design.md, Sites): lang is GW_FRAME_PYTHON, and native is the native
	 * frame that issued the CUDA call under it, when the stack has one that is the user's
	 * (a C extension's function); NULL otherwise. */
	uint8_t lang;
	char *native;
};

/* A synchronizing call site (cause 6). */
struct gw_sync_site {
	struct gw_site site;
	char *api;		     /* "cudaDeviceSynchronize" */
	enum gw_sync_kind kind;	     /* explicit / copy / implicit */
	uint64_t count;		     /* calls */
	uint64_t wait_ns;	     /* sum of W: time the host waited while the device was busy */
	double exposed_sm_ns;	     /* host_sync SM-ns this site's debt took */
	uint64_t exposed_ns;	     /* the same in device time (SM-ns / SMs) */
	uint64_t host_work_after_ns; /* host_work in gaps right after it, beyond the debt */
};

/* Kernels shorter than tiny_ns, by name. */
struct gw_tiny_kernel {
	char *name;		/* demangled */
	uint64_t count;		/* tiny runs of it */
	uint64_t total_ns;	/* their GPU time */
	uint64_t gap_before_ns; /* idle device time right before them (their launch cost) */
	struct gw_site site;	/* a launch site (first launch with a stack) */
};

/* Allocations by call site. */
struct gw_alloc_site {
	struct gw_site site;
	enum gw_mem_kind kind;
	uint64_t count;
	uint64_t bytes;	      /* total allocated */
	uint64_t max_bytes;   /* largest single allocation */
	uint64_t never_freed; /* allocations still live at the end */
	uint64_t never_freed_bytes;
};

/* Queued work that waited (the blocked bucket), by the stream it waited on. */
struct gw_blocked_stream {
	unsigned trace;
	uint64_t device; /* CUDA device ordinal */
	uint64_t stream; /* the GPU records' stream id */
	uint64_t gaps;	 /* blocked gaps before this stream's work */
	uint64_t total_ns;
	uint64_t longest_ns;
	char *next;	     /* what waited after the longest: a kernel (demangled), "memcpy" or
			      * "memset" */
	bool launched;	     /* false: its launch call is not in the trace (before it began) */
	struct gw_site site; /* that work's launch site */
	char *held_by;	     /* the longest gap's: the wait for a value issued to the stream before
			      * that work (cuStreamWaitValue32, ...); NULL none in the trace */
	struct gw_site held_site; /* its call site (empty when held_by is NULL) */
};

/* Host functions (cudaLaunchHostFunc and friends) by call site: the GPU work queued behind one
 * waited while it ran on the host, which is host work (doc/causes.md). */
struct gw_host_func_site {
	char *api;	  /* the call */
	uint64_t calls;	  /* host functions issued from this site */
	uint64_t gaps;	  /* idle gaps before queued work they held */
	uint64_t held_ns; /* those gaps' time (host_work) */
	struct gw_site site;
};

/* A repeated sequence of 2-8 tiny kernels on one stream. */
struct gw_fusion_candidate {
	char **names; /* demangled, in launch order */
	unsigned n_kernels;
	uint64_t occurrences;
	uint64_t kernel_ns; /* GPU time of the kernels, all occurrences */
	uint64_t saved_ns;  /* idle time between them (what one fused kernel gives back) */
	struct gw_site site;
};

/* An attributed idle stretch of a device (state C, or its pieces), for timeline exports. */
struct gw_gap {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t device; /* index into gw_analysis.devices */
	uint8_t bucket;	 /* enum gw_bucket */
};

/* One bin of the drawing timeline: [start_ns, start_ns + bin_ns) of the merged window. */
struct gw_timeline_bin {
	double sm_ns[GW_BUCKET_COUNT]; /* all devices */
	double sm_busy;		       /* mean fill over the bin, SM-weighted */
	double kernel_active;	       /* share of the bin with a kernel running (any device) */
	uint64_t live_bytes_max;       /* device bytes live, all devices */
};

/*
 * The event view (gw_analysis_options.keep_events): every host call, GPU operation and
 * counter change of the inputs, with the analysis's own answers (device, class, fill), for
 * writers that draw a timeline. Names point into strings the view owns (NULL: unknown).
 * Calls, threads and operations are in the order they were read, trace by trace.
 */
struct gw_view_thread {
	unsigned trace;
	uint64_t tid;
	const char *name; /* NULL when the thread had none */
};

struct gw_view_call {
	unsigned trace;
	uint64_t tid, start_ns, end_ns, correlation;
	uint64_t stream; /* the handle the call passed */
	uint64_t bytes;
	uint32_t domain, cbid;
	const char *name;	    /* the API function */
	const char *kernel;	    /* launches: the kernel, demangled */
	uint8_t category;	    /* enum gw_api_category */
	uint8_t sync_kind;	    /* enum gw_sync_kind, as recorded */
	const struct gw_site *site; /* its stack's site (into gw_event_view.sites); NULL none */
};

enum gw_view_op_kind {
	GW_VIEW_KERNEL = 1,
	GW_VIEW_MEMCPY = 2,
	GW_VIEW_MEMSET = 3,
};

struct gw_view_op {
	unsigned trace;	   /* the process that ran it */
	unsigned device;   /* index into gw_analysis.devices */
	uint8_t kind;	   /* enum gw_view_op_kind */
	uint8_t cls;	   /* kernels: enum gw_bucket of the name */
	uint8_t copy_kind; /* copies: CUpti_ActivityMemcpyKind */
	uint64_t stream, correlation, start_ns, end_ns;
	uint64_t bytes;					   /* copies and memsets */
	const char *name;				   /* kernels, demangled */
	uint64_t grid[3], block[3], registers, smem_bytes; /* kernels, as recorded */
	float fill; /* kernels: the SM fill the attribution used */
};

/* A counter's value from time_ns on, for one device (index into gw_analysis.devices). */
struct gw_view_step {
	unsigned device;
	uint64_t time_ns;
	double value;
};

struct gw_event_view {
	struct gw_view_thread *threads;
	size_t n_threads;
	struct gw_view_call *calls;
	size_t n_calls;
	struct gw_view_op *ops;
	size_t n_ops;
	/* SM fill, min(1, sum of the running kernels' fills), at each change; in time order per
	 * device. fill_complete is false when a trace had too many kernels to keep every step:
	 * the timeline bins (sm_busy) stand in. */
	struct gw_view_step *fill;
	size_t n_fill;
	bool fill_complete;
	/* Live device memory (bytes) after each allocation and free, in time order per trace. */
	struct gw_view_step *memory;
	size_t n_memory;
	char **strings;	       /* what the names point to */
	struct gw_site *sites; /* what the calls' sites point to */
	size_t n_sites;
	size_t n_strings;
};

struct gw_counts {
	uint64_t kernels;
	uint64_t tiny_kernels;
	uint64_t launches; /* launch API calls (kernel and graph) */
	uint64_t host_syncs;
	uint64_t memcpy;
	uint64_t memset;
	uint64_t allocations;
	uint64_t frees;
	uint64_t syncs_by_kind[5];  /* host_syncs split by enum gw_sync_kind (index 0 unused) */
	uint64_t poll_queries;	    /* stream and event queries folded into polling waits */
	uint64_t host_functions;    /* host functions issued to streams */
	uint64_t value_waits;	    /* waits for a value in memory issued to streams */
	uint64_t peer_copies;	    /* copies between two devices (counted once, in memcpy too) */
	uint64_t captured_launches; /* made while their stream recorded a graph: not run, and not
				     * in launches (the graph's launch runs them) */
};

struct gw_memory {
	uint64_t peak_bytes; /* device memory live at the peak (device, async, VMM) */
	uint64_t final_bytes;
	double growth_bytes_per_s; /* least-squares slope of live bytes over time */
	uint64_t total_bytes;	   /* device memory; 0 unknown */
	double peak_fraction;	   /* peak / total; 0 unknown */
	uint64_t managed_peak_bytes;
	uint64_t pinned_peak_bytes;
	uint64_t never_freed;
	uint64_t never_freed_bytes;
	/* false: no trace recorded its allocations (an imported profile without memory events):
	 * the memory dimension is unknown, never "low" */
	bool recorded;
	/* a framework's caching allocator (imported profiles): the device bytes it held at the
	 * most (part of peak_bytes), and the bytes of live tensors at the most; 0 unknown */
	uint64_t allocator_reserved_peak_bytes;
	uint64_t allocator_allocated_peak_bytes;
	/* CUPTI's own activity buffers in device memory, all devices and processes (the
	 * profiler's, not the program's: outside peak_bytes; the run had that much less): what
	 * it allocates with each context, and the most it may grow to; 0 unknown */
	uint64_t cupti_buffer_bytes;
	uint64_t cupti_buffer_limit_bytes;
};

struct gw_utilization {
	double kernel_active;	 /* share of the window with any kernel running (nvidia-smi) */
	double sm_busy;		 /* mean SM fill: an estimate of DCGM SM_ACTIVE */
	double compute;		 /* the compute bucket */
	double memory_bandwidth; /* measured counters only; < 0: not measured (JSON null) */
};

/* One window of a measured counter: its mean from start_ns to end_ns, 0-1. */
struct gw_counter_point {
	uint64_t start_ns, end_ns;
	double value;
};

/* A measured counter of one device (METRIC records: NVML GPM metrics or utilization
 * samples), window by window in time order. */
struct gw_counter_series {
	unsigned device; /* index into gw_analysis.devices */
	enum gw_counter counter;
	const char *key; /* "dram_bw_util", "sm_util", "sm_occupancy", "tensor_util",
			      * "gpu_busy", "memory_busy" */
	struct gw_counter_point *points;
	size_t n;
	double mean; /* over the device's window, time-weighted */
};

/* What the windows say a group of operations uses while it runs: one kernel name, the rest
 * of one name class's kernels, or copies (least squares over the windows' mix of groups). */
struct gw_usage_estimate {
	unsigned device;  /* index into gw_analysis.devices */
	char *name;	  /* a kernel (demangled), "other <class> kernels", "device copies and
			  * memsets", "host copies" */
	bool kernels;	  /* false: copies and memsets */
	uint64_t busy_ns; /* its operations' time on the device, summed */
	unsigned windows; /* windows it took at least 5% of */
	double dram;	  /* DRAM counter while it runs, 0-1 */
	double dram_se;	  /* standard error; < 0 when the windows cannot tell it apart from the
			    * groups it always runs with */
	double sm, sm_se; /* SM_UTIL the same; sm < 0: no SM counter */
	enum gw_bucket name_class;     /* its kernels' class by name (compute for copies) */
	enum gw_bucket measured_class; /* by the counters; GW_BUCKET_COUNT: undecided */
	const char *confidence;	       /* "high", "medium" or "low" */
	bool applied;		       /* the counters decided its kernels' class */
};

/* Measured counters (the sampler's METRIC and SAMPLER records) and what they decided. */
struct gw_counters {
	bool measured;	    /* a device has windows */
	uint8_t source;	    /* enum gw_sampler_source of the windows */
	uint64_t period_ns; /* the sampler's period */
	char *reason;	    /* without windows: why (a SAMPLER record's); NULL unknown */
	struct gw_counter_series *series;
	unsigned n_series;
	/* per device: kernel names busiest first, the rest of each class, copies */
	struct gw_usage_estimate *estimates;
	unsigned n_estimates;
	unsigned windows;	   /* windows the estimates were fitted on */
	double dram_fit_rms;	   /* root mean square of the DRAM fit's residuals, 0-1 */
	double dram_r2;		   /* share of the windows' DRAM variance the fit explains */
	double reclassified_share; /* of kernel time: its class came from the counters and
				    * differs from its name's */
};

/* Kernels by name (all classes): what ran, how full, and where it was launched. */
struct gw_kernel_stat {
	char *name; /* demangled */
	enum gw_bucket cls;
	bool classified; /* false: no name rule matched, compute by default */
	uint64_t count;
	uint64_t total_ns;
	double mean_fill;      /* time-weighted SM fill */
	uint64_t chain_count;  /* runs inside a detected dependency chain */
	double unfilled_sm_ns; /* (1 - fill) x time x SMs, ignoring concurrency */
	struct gw_site site;   /* a launch site (first launch with a stack) */
};

/* One device of one trace. */
struct gw_device_result {
	unsigned trace;
	uint64_t id; /* CUDA device ordinal */
	char *name;
	uint64_t sm_count;
	uint64_t memory_total_bytes;
	bool described; /* false: no DEVICE record; limits are assumed (see warnings) */
	uint64_t start_ns, end_ns;
	double sm_ns[GW_BUCKET_COUNT];
	double budget_sm_ns; /* (end - start) * sm_count; sm_ns sums to it */
	double breakdown[GW_BUCKET_COUNT];
	uint64_t kernel_active_ns;
	uint64_t peak_bytes;
	unsigned processes; /* traces that used this GPU at the same time (1: this one only) */
};

/* One input trace. */
struct gw_trace_info {
	char *path;
	uint64_t pid;
	int64_t rank;
	char *command;		   /* argv joined by spaces */
	uint64_t capture_mode;	   /* enum gw_capture_mode: captured, or imported from which tool */
	uint64_t capture_start_ns; /* when capture started (the header's start_ns) */
	uint64_t records;
	uint64_t dropped_records;
	/* GPU records CUPTI could not time (start and end 0, as its documentation allows):
	 * counted, but not placed on the timeline */
	uint64_t untimed_gpu_ops;
	bool truncated;
	bool clean_exit;
	uint64_t start_ns, end_ns; /* its devices' window */
	double breakdown[GW_BUCKET_COUNT];
	enum gw_bucket dominant, top_idle; /* top_idle GW_BUCKET_COUNT: none was idle */
	struct gw_counts counts;
	uint64_t peak_bytes;
};

/* A step: the outermost range of a host thread whose name matches the step pattern. Its GPU
 * work is what its thread launched inside it (a thread with no steps of its own, such as
 * PyTorch's autograd thread, launches into the step of its process that is open at the
 * launch); its SM-time is that work's, and the idle time before each of its operations. */
struct gw_step {
	char *name;
	unsigned trace;
	uint64_t tid;
	uint64_t start_ns, end_ns; /* the range on its thread */
	uint64_t duration_ns;
	double sm_ns[GW_BUCKET_COUNT];	   /* SM-time attributed to its work */
	double breakdown[GW_BUCKET_COUNT]; /* fractions of its SM-time; all 0 without any */
	double device_ns;		   /* its SM-time over the SMs of its trace's devices */
	uint64_t ops;			   /* GPU operations launched in it */
};

/* A step more than a tenth slower than the median, and what grew. */
struct gw_slow_step {
	unsigned step;	       /* index into gw_steps.steps */
	int64_t over_ns;       /* its duration minus the median duration */
	enum gw_bucket bucket; /* the bucket whose device time grew the most over its median;
				* GW_BUCKET_COUNT when none grew by over a fifth of over_ns (its
				* host range outlasted its GPU work) */
	double bucket_over_ns; /* by this much (device ns) */
	char *what;	       /* what gave most of that bucket's time in the step: a call or a
				* kernel (demangled), "memcpy", "memset"; NULL none */
	struct gw_site site;   /* where it was called or launched */
};

struct gw_steps {
	struct gw_step *steps; /* by trace, then start */
	unsigned n;
	char *pattern;	 /* the pattern the steps matched */
	uint64_t ranges; /* host ranges in the inputs (push/pop, start/end) */
	/* step durations: the median (the mean of the middle two of an even count), the 90th
	 * percentile (nearest rank), the longest, the mean */
	uint64_t median_ns, p90_ns, max_ns, mean_ns;
	double median_bucket_ns[GW_BUCKET_COUNT]; /* each bucket's device ns: median over steps */
	double mean_bucket_ns[GW_BUCKET_COUNT];	  /* and mean over steps */
	double mean_breakdown[GW_BUCKET_COUNT];	  /* the steps' SM-time together, as fractions */
	double sm_share;			  /* the steps' share of all SM-time */
	struct gw_slow_step *slow;		  /* slowest first, at most 5 */
	unsigned n_slow;
	/* without steps: the most frequent range names, so a pattern can be chosen */
	char **names;
	uint64_t *name_counts;
	unsigned n_names;
};

struct gw_recommendation {
	enum gw_bucket bucket; /* the bucket it addresses; GW_BUCKET_COUNT: the quadrant */
	double fraction;       /* that bucket's share */
	char *text;	       /* with this run's numbers, a trade-off and a check to make */
};

/* The result. Times are trace-clock ns. With several traces, breakdown and everything below
 * are the merged view; traces[] has a row per trace. */
struct gw_analysis {
	struct gw_trace_info *traces;
	unsigned n_traces;
	struct gw_device_result *devices;
	unsigned n_devices;

	uint64_t start_ns, end_ns;	   /* earliest device start, latest device end */
	double breakdown[GW_BUCKET_COUNT]; /* SM-time fractions over all devices; sum to 1 */
	double sm_ns[GW_BUCKET_COUNT];
	double budget_sm_ns;
	enum gw_bucket dominant;
	enum gw_bucket top_idle; /* largest bucket other than compute; GW_BUCKET_COUNT if none */

	/* Cause 5 split (SM-ns): queued work (rule C1), inside launch calls, between them. */
	double launch_queued_sm_ns, launch_in_call_sm_ns, launch_between_sm_ns;
	uint64_t graph_tiny_kernels; /* tiny kernels that ran as nodes of a CUDA Graph launch */
	double unclassified_kernel_share; /* of kernel time: names matched no class rule */

	struct gw_counts counts;
	struct gw_memory memory;
	struct gw_utilization util;
	bool memory_high, compute_high; /* the quadrant */
	/* Host time CUDA spent starting up (OVERHEAD records), whether or not the GPU waited:
	 * the startup bucket is the part inside its windows with nothing queued. */
	struct gw_startup {
		uint64_t context_ns, contexts; /* context creation */
		uint64_t loading_ns, loadings; /* lazy function and module loading */
		uint64_t compile_ns, compiles; /* PTX compilation */
	} startup;

	struct gw_sync_site *sync_sites; /* by exposed idle, largest first */
	unsigned n_sync_sites;
	struct gw_tiny_kernel *tiny_kernels; /* by count, largest first */
	unsigned n_tiny_kernels;
	struct gw_alloc_site *alloc_sites; /* by bytes, largest first */
	unsigned n_alloc_sites;
	struct gw_fusion_candidate *fusion; /* by saved_ns, largest first */
	unsigned n_fusion;
	struct gw_blocked_stream *blocked; /* by total_ns, largest first */
	unsigned n_blocked;
	struct gw_host_func_site *host_funcs; /* by held_ns, then calls, largest first */
	unsigned n_host_funcs;
	struct gw_recommendation *recs; /* quadrant first, then causes by size */
	unsigned n_recs;

	struct gw_timeline_bin *bins;
	unsigned n_bins;
	uint64_t bin_ns;
	struct gw_gap *gaps;	    /* time order per device; only with keep_gaps */
	struct gw_event_view *view; /* only with keep_events */
	size_t n_gaps;

	char **warnings; /* for humans: truncated trace, drops, missing device records */
	unsigned n_warnings;

	size_t events_held; /* compact events held at the peak, for the memory-per-event figure */
	size_t bytes_held;

	struct gw_kernel_stat *kernels; /* by total_ns, largest first; at most 5 x top_n */
	unsigned n_kernels;

	struct gw_steps steps;
	struct gw_counters counters;
};

/*
 * Streaming analysis: feed the decoded records of one or more traces, then finish.
 * gw_analyzer_begin_trace() starts a trace (records before the first call belong to an
 * unnamed trace). Records may arrive in any order within a trace. BYTES and IPS inside a
 * record are copied. Memory held: a compact entry (<= 64 bytes) per GPU operation, per API
 * call that matters and per allocation. Returns >= 0 or -errno (-ENOMEM).
 */
struct gw_analyzer;
int gw_analyzer_new(const struct gw_analysis_options *opt, struct gw_analyzer **ret);
int gw_analyzer_begin_trace(struct gw_analyzer *a, const char *path);
int gw_analyzer_add(struct gw_analyzer *a, const struct gw_record *rec);
/* A warning about the inputs as a whole, for the report (copied). Returns 0 or -ENOMEM. */
int gw_analyzer_warn(struct gw_analyzer *a, const char *text);
/* What the reader knows about the current trace's end. */
void gw_analyzer_end_trace(struct gw_analyzer *a, bool truncated, bool clean_exit);
/* Attribute everything. *ret is owned by the caller (gw_analysis_free). The analyzer can
 * only be freed afterwards. */
int gw_analyzer_finish(struct gw_analyzer *a, struct gw_analysis **ret);
void gw_analyzer_free(struct gw_analyzer *a);

struct gw_source_type;

/* The input files of one analysis, and which of them failed, and why. */
struct gw_inputs {
	const char *const *paths;
	int n;
	const struct gw_source_type *format; /* NULL: each file's format from its content */
	int failed;			     /* out: the file an error belongs to, else -1 */
	char reason[256];		     /* out: why, for one line "FILE: reason" */
};

/*
 * Read and analyse the input files through their sources (sources/source.h). Returns 0, or
 * -errno with in->failed and in->reason set. A truncated input is not a failure: it is
 * analysed up to its last good record and a warning is added.
 */
int gw_analyze_files(struct gw_inputs *in, const struct gw_analysis_options *opt,
		     struct gw_analysis **ret);

void gw_analysis_free(struct gw_analysis *a);
