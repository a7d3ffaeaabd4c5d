/* SPDX-License-Identifier: MIT */
/* The gpuwhy trace format: the only contract between capture (lib/, hooks/) and analysis. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * A trace file is:
 *
 *   file header   a zstd *skippable* frame (magic GW_SKIPPABLE_MAGIC) whose content is
 *                 GW_FILE_MAGIC (8 bytes), the format version (u32 little-endian), then one
 *                 encoded GW_REC_HEADER record. `zstd -d` skips it; `file` and the reader
 *                 recognise the trace by it.
 *   data frames   independent zstd frames, each decompressing to a sequence of records
 *                 (never part of one), with zstd's content checksum. Every delta cursor (see
 *                 below) restarts at zero at the start of a frame, so a frame decodes without
 *                 any other frame. A reader rejects a frame over 64 MiB decompressed; a file
 *                 cut inside a frame yields the records of the complete frames before it.
 *   footer        a GW_REC_FOOTER record, written only on a clean close, in the last frame.
 *
 * A record is: type (u8), version (u8), payload length (LEB128), payload. The payload is the
 * record's fields in the order of its GW_FIELDS_* list below, each encoded by its kind:
 *
 *   U64    unsigned LEB128
 *   I64    zigzag, then LEB128
 *   TIME   nanoseconds on the trace clock; zigzag LEB128 of (value - cursor), where the
 *          cursor is the previous TIME value of a record of the same type in this frame
 *          (the previous TIME field of the same record if there was one); cursor = value
 *   SEQ    like TIME with a cursor of its own per record type (correlation ids)
 *   BYTES  LEB128 length, then that many bytes (strings are not NUL-terminated)
 *   IPS    LEB128 count, then each instruction pointer as zigzag LEB128 of the difference
 *          to the previous one in the list (the first to 0)
 *
 * A reader skips record types it does not know (by length), ignores trailing payload bytes a
 * newer record version appended, and treats fields missing from a shorter payload as 0. New
 * fields are only ever appended; a change that breaks this bumps GW_FORMAT_VERSION.
 *
 * All times are CLOCK_MONOTONIC_RAW nanoseconds (GPU timestamps are put on this clock through
 * CUPTI's timestamp callback). doc/trace-format.md is the long form of this comment.
 */

#define GW_SKIPPABLE_MAGIC    0x184D2A5Bu      /* zstd skippable frame magic, nibble B */
#define GW_FILE_MAGIC	      "GPUWHY\x00\x01" /* 8 bytes */
#define GW_FILE_MAGIC_LEN     8
#define GW_FORMAT_VERSION     1u
#define GW_MAX_RECORD_PAYLOAD (1u << 20) /* a reader rejects longer records as corrupt */
#define GW_MAX_STACK_DEPTH    128

/* A byte string inside a decoded record. Points into the decoder's buffer: valid until the
 * reader moves to the next frame. */
struct gw_bytes {
	const uint8_t *data;
	uint32_t len;
};

/* An instruction-pointer list (a stack, innermost frame first). Decoded into the decoder's
 * scratch space: valid until the next record is decoded (copy it to keep it). */
struct gw_ips {
	const uint64_t *ips;
	uint32_t depth;
};

#define GW_CTYPE_U64   uint64_t
#define GW_CTYPE_I64   int64_t
#define GW_CTYPE_TIME  uint64_t
#define GW_CTYPE_SEQ   uint64_t
#define GW_CTYPE_BYTES struct gw_bytes
#define GW_CTYPE_IPS   struct gw_ips

/*
 * The records: R(NAME, name, type id, current version). Type ids are stable forever.
 */
#define GW_RECORDS(R)                                                                              \
	R(HEADER, header, 1, 1)                                                                    \
	R(DEVICE, device, 2, 1)                                                                    \
	R(STRING, string, 3, 1)                                                                    \
	R(STACK, stack, 4, 2)                                                                      \
	R(MODULE, module, 5, 1)                                                                    \
	R(THREAD, thread, 6, 1)                                                                    \
	R(FRAME, frame, 7, 1)                                                                      \
	R(PYCODE, pycode, 8, 1)                                                                    \
	R(API, api, 10, 1)                                                                         \
	R(KERNEL, kernel, 11, 2)                                                                   \
	R(MEMCPY, memcpy, 12, 2)                                                                   \
	R(MEMSET, memset, 13, 1)                                                                   \
	R(MEMORY, memory, 14, 1)                                                                   \
	R(SYNC, sync, 15, 2)                                                                       \
	R(COUNTER, counter, 16, 1)                                                                 \
	R(RANGE, range, 17, 1)                                                                     \
	R(OVERHEAD, overhead, 18, 1)                                                               \
	R(CONTEXT, context, 19, 1)                                                                 \
	R(DROPS, drops, 20, 1)                                                                     \
	R(NOTE, note, 21, 1)                                                                       \
	R(STREAM_OP, stream_op, 22, 1)                                                             \
	R(SAMPLER, sampler, 25, 1)                                                                 \
	R(METRIC, metric, 26, 1)                                                                   \
	R(FOOTER, footer, 30, 1)

/* The process and the capture. */
#define GW_FIELDS_header(F)                                                                        \
	F(U64, format_version)                                                                     \
	F(U64, flags) /* GW_HEADER_* */                                                            \
	F(U64, pid)                                                                                \
	F(U64, ppid)                                                                               \
	F(I64, rank)	 /* -1 when no RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK */               \
	F(U64, clock_id) /* CLOCK_MONOTONIC_RAW */                                                 \
	F(TIME, start_ns)                                                                          \
	F(U64, start_realtime_ns) /* wall clock at start_ns, for humans */                         \
	F(U64, capture_mode)	  /* enum gw_capture_mode */                                       \
	F(U64, cupti_version)	  /* cuptiGetVersion(), 0 when not loaded */                       \
	F(BYTES, host)                                                                             \
	F(BYTES, command) /* argv joined by NUL bytes */                                           \
	F(BYTES, cupti_path)

/* One GPU, from CUPTI's device record. */
#define GW_FIELDS_device(F)                                                                        \
	F(U64, device)                                                                             \
	F(BYTES, name)                                                                             \
	F(U64, sm_count)                                                                           \
	F(U64, cc_major)                                                                           \
	F(U64, cc_minor)                                                                           \
	F(U64, memory_total_bytes)                                                                 \
	F(U64, memory_bandwidth_kbps) /* peak DRAM bandwidth, KiB/s; 0 unknown */                  \
	F(U64, max_threads_per_sm)                                                                 \
	F(U64, max_blocks_per_sm)                                                                  \
	F(U64, regs_per_sm)                                                                        \
	F(U64, smem_per_sm_bytes)                                                                  \
	F(U64, max_threads_per_block)                                                              \
	F(U64, max_regs_per_block)                                                                 \
	F(U64, max_smem_per_block_bytes)                                                           \
	F(U64, warp_size)                                                                          \
	F(BYTES, uuid)

/* An interned string: kernel names, API function names, thread names. Ids start at 1. */
#define GW_FIELDS_string(F)                                                                        \
	F(U64, id)                                                                                 \
	F(U64, kind) /* enum gw_string_kind */                                                     \
	F(BYTES, text)

/* A deduplicated call stack, innermost frame first. Ids start at 1; 0 means "no stack". */
#define GW_FIELDS_stack(F)                                                                         \
	F(U64, id)                                                                                 \
	F(IPS, ips)                                                                                \
	F(U64, ips_kind) /* v2, enum gw_stack_kind: raw return addresses or FRAME ids */

/* A loaded object, so stacks can be symbolized offline (dl_iterate_phdr). */
#define GW_FIELDS_module(F)                                                                        \
	F(TIME, time_ns)                                                                           \
	F(U64, event) /* enum gw_module_event */                                                   \
	F(U64, base)  /* load bias: runtime address - ELF address */                               \
	F(U64, start) /* lowest mapped address of its PT_LOAD segments */                          \
	F(U64, size)                                                                               \
	F(BYTES, build_id)                                                                         \
	F(BYTES, path)

/* A frame the trace names rather than addresses: a Python function of an imported profile, a
 * symbolized frame of another tool's backtrace. Ids start at 1. */
#define GW_FIELDS_frame(F)                                                                         \
	F(U64, id)                                                                                 \
	F(U64, lang)	    /* enum gw_frame_lang */                                               \
	F(U64, function_id) /* string: the function's (qualified) name */                          \
	F(U64, file_id)	    /* string: the source file; 0 unknown */                               \
	F(U64, line)	    /* 0 unknown */                                                        \
	F(U64, module_id)   /* string: the object file; 0 unknown */

/* A Python code object (a function, a module's body, a class body), once per trace: a stack's
 * Python frame is its id and an instruction offset, and the line is worked out offline from
 * the line table. Ids start at 1. */
#define GW_FIELDS_pycode(F)                                                                        \
	F(U64, id)                                                                                 \
	F(U64, version)	     /* the interpreter's (major << 8) | minor: how to read line_table */  \
	F(U64, file_id)	     /* string (GW_STRING_PYTHON_FILE): co_filename */                     \
	F(U64, function_id)  /* string (GW_STRING_PYTHON_FUNCTION): co_qualname (3.10: co_name) */ \
	F(U64, first_line)   /* co_firstlineno */                                                  \
	F(BYTES, line_table) /* co_linetable: 3.10's PEP 626 table, 3.11's location table */       \
	F(U64, flags)	     /* GW_PYCODE_* */

/* A host thread, on first sight. */
#define GW_FIELDS_thread(F)                                                                        \
	F(TIME, time_ns)                                                                           \
	F(U64, tid)                                                                                \
	F(BYTES, name)

/* One CUDA API call made by the application, from CUPTI's callbacks (enter and exit). */
#define GW_FIELDS_api(F)                                                                           \
	F(U64, tid)                                                                                \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(SEQ, correlation) /* joins the GPU records this call caused */                           \
	F(U64, category)    /* enum gw_api_category */                                             \
	F(U64, sync_kind)   /* enum gw_sync_kind: does the call wait for the GPU */                \
	F(U64, domain)	    /* CUpti_CallbackDomain */                                             \
	F(U64, cbid)	    /* CUPTI callback id within the domain */                              \
	F(U64, name_id)	    /* string: the API function's name */                                  \
	F(U64, stack_id)                                                                           \
	F(U64, status) /* the call's return code */                                                \
	F(U64, device)                                                                             \
	F(U64, stream) /* the cudaStream_t / CUstream handle passed, 0 default */                  \
	F(U64, bytes)  /* copies, memsets, allocations */                                          \
	F(U64, dst)    /* destination / allocated / freed pointer */                               \
	F(U64, src)                                                                                \
	F(U64, copy_kind)      /* cudaMemcpyKind for copies */                                     \
	F(U64, kernel_name_id) /* string: launches */                                              \
	F(U64, grid_x)                                                                             \
	F(U64, grid_y)                                                                             \
	F(U64, grid_z)                                                                             \
	F(U64, block_x)                                                                            \
	F(U64, block_y)                                                                            \
	F(U64, block_z)                                                                            \
	F(U64, shared_mem_bytes)

/* A kernel as the GPU ran it (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). */
#define GW_FIELDS_kernel(F)                                                                        \
	F(U64, device)                                                                             \
	F(U64, stream) /* CUPTI stream id (not the handle) */                                      \
	F(SEQ, correlation)                                                                        \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, name_id)                                                                            \
	F(U64, grid_x)                                                                             \
	F(U64, grid_y)                                                                             \
	F(U64, grid_z)                                                                             \
	F(U64, block_x)                                                                            \
	F(U64, block_y)                                                                            \
	F(U64, block_z)                                                                            \
	F(U64, registers_per_thread)                                                               \
	F(U64, static_smem_bytes)                                                                  \
	F(U64, dynamic_smem_bytes)                                                                 \
	F(U64, graph_id)	    /* 0 unless launched from a CUDA graph */                      \
	F(U64, smem_executed_bytes) /* v2: the SM's shared-memory carveout; 0 unknown */           \
	F(U64, smem_optin)	    /* v2: 1: its smem limit is the opt-in one */                  \
	F(U64, cluster_x)	    /* v2: thread-block cluster; 0 unknown or none */              \
	F(U64, cluster_y)                                                                          \
	F(U64, cluster_z)                                                                          \
	F(U64, context_id) /* v2: CUPTI's context id (CONTEXT records); 0 unknown */

/* A copy as the GPU ran it. Kinds are CUPTI's CUpti_ActivityMemcpyKind and
 * CUpti_ActivityMemoryKind values (pageable = 1, pinned = 2, device = 3, ...). A peer-to-peer
 * copy (CUPTI's MEMCPY2 record, copy_kind PTOP = 10) names both its devices. */
#define GW_FIELDS_memcpy(F)                                                                        \
	F(U64, device)                                                                             \
	F(U64, stream)                                                                             \
	F(SEQ, correlation)                                                                        \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, bytes)                                                                              \
	F(U64, copy_kind)                                                                          \
	F(U64, src_kind)                                                                           \
	F(U64, dst_kind)                                                                           \
	F(U64, flags) /* CUpti_ActivityFlag: ASYNC */                                              \
	F(U64, graph_id)                                                                           \
	F(U64, src_device) /* v2, peer copies: the source device + 1; 0 not a peer copy */         \
	F(U64, dst_device) /* v2, peer copies: the destination device + 1; 0 not a peer copy */

/* A memset as the GPU ran it. */
#define GW_FIELDS_memset(F)                                                                        \
	F(U64, device)                                                                             \
	F(U64, stream)                                                                             \
	F(SEQ, correlation)                                                                        \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, bytes)                                                                              \
	F(U64, value)                                                                              \
	F(U64, mem_kind)                                                                           \
	F(U64, flags)                                                                              \
	F(U64, graph_id)

/* An allocation or a free, recorded at the API call's exit (so it has a stack). */
#define GW_FIELDS_memory(F)                                                                        \
	F(TIME, time_ns)                                                                           \
	F(U64, op)	 /* enum gw_memory_op */                                                   \
	F(U64, mem_kind) /* enum gw_mem_kind */                                                    \
	F(U64, tid)                                                                                \
	F(SEQ, correlation)                                                                        \
	F(U64, device)                                                                             \
	F(U64, address)                                                                            \
	F(U64, bytes) /* 0 for a free: the reader pairs it with its allocation */                  \
	F(U64, stream)                                                                             \
	F(U64, stack_id)

/* A synchronization: CUPTI's record of one synchronizing call (CUPTI_ACTIVITY_KIND_
 * SYNCHRONIZATION, as imported traces carry it), or a polling wait gpuwhy's capture folded
 * from a thread's queries of one stream or event (queries > 0): from the first query that
 * found the work unfinished to the one that found it done. */
#define GW_FIELDS_sync(F)                                                                          \
	F(SEQ, correlation) /* a polling wait: its last query's */                                 \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, type) /* CUpti_ActivitySynchronizationType */                                       \
	F(U64, stream)                                                                             \
	F(U64, event)                                                                              \
	F(U64, queries)	 /* v2: queries folded into a polling wait; 0 one synchronizing call */    \
	F(U64, tid)	 /* v2, polling waits: the thread that spun */                             \
	F(U64, device)	 /* v2, polling waits */                                                   \
	F(U64, name_id)	 /* v2, polling waits: string, the query function's name */                \
	F(U64, stack_id) /* v2, polling waits: the last query's stack */

/* A sample of a quantity over time: a framework allocator's reserved bytes, a hardware
 * counter. The value holds until the next sample of the same device and counter. */
#define GW_FIELDS_counter(F)                                                                       \
	F(TIME, time_ns)                                                                           \
	F(U64, device)                                                                             \
	F(U64, counter) /* enum gw_counter */                                                      \
	F(U64, value)

/* A named span of time: an NVTX range of a host thread (push/pop or start/end), a mark (a
 * range of no length), or an imported profile's step, annotation or GPU-timeline annotation.
 * Written when the range ends, so a range still open when the trace closes is not in it. */
#define GW_FIELDS_range(F)                                                                         \
	F(U64, tid) /* the thread that opened it; 0 for a GPU range */                             \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, kind)	  /* enum gw_range_kind */                                                 \
	F(U64, name_id)	  /* string (GW_STRING_RANGE): a registered name; 0: the name below */     \
	F(BYTES, name)	  /* the name, when not a registered string (UTF-8, cut at 256 bytes) */   \
	F(U64, domain_id) /* string (GW_STRING_DOMAIN): its NVTX domain; 0 the default one */      \
	F(U64, depth)	  /* push/pop: ranges of its domain open on its thread around it */        \
	F(U64, category)  /* NVTX category; 0 none */                                              \
	F(U64, end_tid)	  /* start/end: the thread that ended it, if not the opener */             \
	F(U64, device)	  /* GPU ranges: the device */                                             \
	F(U64, stream)	  /* GPU ranges: the stream id of the GPU records */                       \
	F(U64, flags)	  /* GW_RANGE_* */

/* Start-up work the host did for CUDA: creating a context, loading a module or a function
 * lazily, compiling PTX. */
#define GW_FIELDS_overhead(F)                                                                      \
	F(U64, kind)   /* enum gw_overhead_kind */                                                 \
	F(U64, tid)    /* the thread it held; 0 unknown */                                         \
	F(U64, device) /* UINT64_MAX unknown */                                                    \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)

/* A CUDA context, once: a green context runs its kernels on part of the device's SMs. */
#define GW_FIELDS_context(F)                                                                       \
	F(U64, device)                                                                             \
	F(U64, context_id)                                                                         \
	F(U64, green)	 /* 1 for a green context */                                               \
	F(U64, sm_count) /* the SMs its kernels may use; 0: all of the device's */

/* Events lost since the previous DROPS record of the same source. */
#define GW_FIELDS_drops(F)                                                                         \
	F(TIME, time_ns)                                                                           \
	F(U64, source) /* enum gw_drop_source */                                                   \
	F(U64, count)

/* Something a reader of the trace must know: capture degraded, a limit hit. */
#define GW_FIELDS_note(F)                                                                          \
	F(TIME, time_ns)                                                                           \
	F(U64, level) /* enum gw_note_level */                                                     \
	F(BYTES, text)

/* Work a stream runs that has no GPU record of its own: a host function (the stream waits while
 * it runs on a CUDA thread), a wait for a value in memory. Written with its call's API record,
 * whose correlation id it carries. */
#define GW_FIELDS_stream_op(F)                                                                     \
	F(SEQ, correlation)                                                                        \
	F(U64, kind) /* enum gw_stream_op_kind */                                                  \
	F(U64, tid)                                                                                \
	F(U64, device)                                                                             \
	F(U64, stream)	/* CUPTI's stream id, as the GPU records carry it; 0 unknown */            \
	F(U64, address) /* the host function; the memory word waited on */                         \
	F(U64, value)	/* a wait: the value waited for */                                         \
	F(U64, flags)	/* a wait: CUstreamWaitValue_flags (the comparison) */
/* The sampler of a device's measured counters (NVML), once per device when it starts, or once
 * with source NONE and the reason when there is none: the report says why bandwidth was not
 * measured. */
#define GW_FIELDS_sampler(F)                                                                       \
	F(TIME, time_ns)                                                                           \
	F(U64, device)	  /* CUDA device ordinal; UINT64_MAX: all (no sampler at all) */           \
	F(U64, source)	  /* enum gw_sampler_source */                                             \
	F(U64, period_ns) /* how often it samples */                                               \
	F(U64, status)	  /* NONE: the NVML return code that refused, 0 none */                    \
	F(BYTES, reason)  /* NONE: why, for humans */                                              \
	F(BYTES, uuid)	  /* the device's NVML uuid text ("GPU-...") */

/* A device counter measured over a window of time (NVML GPM metrics, utilization samples):
 * its mean from start_ns to end_ns, in millionths of the counter's full scale. */
#define GW_FIELDS_metric(F)                                                                        \
	F(U64, device)	/* CUDA device ordinal */                                                  \
	F(U64, counter) /* enum gw_counter, 64 and up */                                           \
	F(TIME, start_ns)                                                                          \
	F(TIME, end_ns)                                                                            \
	F(U64, value) /* 0 to 1000000 = 0 to 100% */

/* Written only on a clean close: its absence means the process died mid-run. */
#define GW_FIELDS_footer(F)                                                                        \
	F(TIME, end_ns)                                                                            \
	F(U64, records) /* records written, this one excluded */                                   \
	F(U64, dropped) /* records dropped, all sources */                                         \
	F(U64, flags)	/* GW_FOOTER_* */

/* The decoded record structs: struct gw_rec_api and so on. */
#define GW_FIELD_MEMBER(kind, name) GW_CTYPE_##kind name;
#define GW_RECORD_STRUCT(NAME, name, id, ver)                                                      \
	struct gw_rec_##name {                                                                     \
		GW_FIELDS_##name(GW_FIELD_MEMBER)                                                  \
	};
GW_RECORDS(GW_RECORD_STRUCT)
#undef GW_RECORD_STRUCT

enum gw_rec_type {
#define GW_RECORD_ENUM(NAME, name, id, ver) GW_REC_##NAME = id,
	GW_RECORDS(GW_RECORD_ENUM)
#undef GW_RECORD_ENUM
};

enum gw_rec_version {
#define GW_RECORD_VERSION(NAME, name, id, ver) GW_REC_##NAME##_VERSION = ver,
	GW_RECORDS(GW_RECORD_VERSION)
#undef GW_RECORD_VERSION
};

/* Any record, tagged by its type. */
struct gw_record {
	uint8_t type;	 /* enum gw_rec_type; may be one this reader does not know */
	uint8_t version; /* as written */
	union {
#define GW_RECORD_UNION(NAME, name, id, ver) struct gw_rec_##name name;
		GW_RECORDS(GW_RECORD_UNION)
#undef GW_RECORD_UNION
	};
};

enum gw_header_flags {
	GW_HEADER_STACKS = 1u << 0, /* stacks were captured */
	GW_HEADER_FORKED = 1u << 1, /* this process is a fork child of ppid */
};

enum gw_footer_flags {
	GW_FOOTER_SIGNAL = 1u << 0, /* closed from a termination signal handler */
	GW_FOOTER_EXEC = 1u << 1,   /* closed because the process exec'd another program image */
};

enum gw_capture_mode {
	GW_CAPTURE_NONE = 0, /* no GPU events: see the NOTE records for why */
	GW_CAPTURE_CUPTI = 1,
	GW_CAPTURE_IMPORT_KINETO = 2, /* converted from a torch.profiler (Kineto) JSON trace */
	GW_CAPTURE_IMPORT_NSYS = 3,   /* converted from an Nsight Systems SQLite export */
};

enum gw_string_kind {
	GW_STRING_KERNEL = 1, /* mangled kernel name */
	GW_STRING_API = 2,    /* CUDA API function name */
	GW_STRING_OTHER = 3,
	GW_STRING_RANGE = 4,	       /* a range's registered name (nvtxDomainRegisterString) */
	GW_STRING_DOMAIN = 5,	       /* an NVTX domain's name */
	GW_STRING_PYTHON_FILE = 6,     /* a Python code object's file name (PYCODE) */
	GW_STRING_PYTHON_FUNCTION = 7, /* a Python code object's qualified name (PYCODE) */
};

enum gw_range_kind {
	GW_RANGE_PUSH_POP = 1,	/* nested on its thread: nvtxRangePush/Pop, an annotation */
	GW_RANGE_START_END = 2, /* nvtxRangeStart/End: may end on another thread, need not nest */
	GW_RANGE_MARK = 3,	/* an instant (nvtxMark): start_ns == end_ns */
	GW_RANGE_GPU = 4,	/* a span of a device's timeline (a profiler's GPU annotation) */
};

enum gw_range_flags {
	GW_RANGE_NAME_CUT = 1u << 0, /* the name was longer than the record holds */
};

/* The longest range name a record holds, in bytes. */
#define GW_RANGE_NAME_MAX 256

enum gw_stack_kind {
	GW_STACK_ADDRESSES = 0, /* return addresses, symbolized offline with MODULE records */
	GW_STACK_FRAMES = 1,	/* FRAME ids */
	/* return addresses and, where the interpreter ran them, Python frames: GW_PYFRAME_* words
	 * (bit 63 set, which no user-space address has) */
	GW_STACK_MIXED = 2,
};

/*
 * A Python frame in a GW_STACK_MIXED stack: GW_PYFRAME_TAG, GW_PYFRAME_ENTRY when the
 * interpreter was entered from C at this frame (its frames outside it were run by another
 * activation of the interpreter loop, further out on the native stack), the PYCODE id in bits
 * 32-61 and the byte offset of the instruction running in bits 0-31 (GW_PYFRAME_NO_OFFSET:
 * unknown). A capture puts each run of Python frames where its interpreter loop's native frame
 * was, so the stack reads from the CUDA call out to the program's start in one order.
 */
#define GW_PYFRAME_TAG	     (1ull << 63)
#define GW_PYFRAME_ENTRY     (1ull << 62)
#define GW_PYFRAME_CODE_MAX  0x3fffffffu
#define GW_PYFRAME_NO_OFFSET 0xffffffffu
#define GW_PYFRAME(code_id, offset, entry)                                                         \
	(GW_PYFRAME_TAG | ((entry) ? GW_PYFRAME_ENTRY : 0) |                                       \
	 ((uint64_t)((code_id)&GW_PYFRAME_CODE_MAX) << 32) | (uint32_t)(offset))
#define GW_PYFRAME_IS(word)	 (((word)&GW_PYFRAME_TAG) != 0)
#define GW_PYFRAME_CODE_ID(word) ((uint32_t)((word) >> 32) & GW_PYFRAME_CODE_MAX)
#define GW_PYFRAME_OFFSET(word)	 ((uint32_t)(word))

enum gw_pycode_flags {
	/* the line table was longer than GW_PYCODE_TABLE_MAX and is not in the record: the
	 * frames of this code have no line */
	GW_PYCODE_TABLE_CUT = 1u << 0,
};

/* The longest line table a PYCODE record holds, in bytes. */
#define GW_PYCODE_TABLE_MAX (64u << 10)

enum gw_frame_lang {
	GW_FRAME_NATIVE = 1,
	GW_FRAME_PYTHON = 2,
};

enum gw_overhead_kind {
	GW_OVERHEAD_CONTEXT_CREATION = 1, /* inside the process's first CUDA call, mostly */
	GW_OVERHEAD_MODULE_LOADING = 2,	  /* a module the runtime loaded */
	GW_OVERHEAD_FUNCTION_LOADING = 3, /* a kernel loaded at its first launch (lazy loading) */
	GW_OVERHEAD_COMPILER = 4,	  /* the driver compiling PTX */
};

enum gw_counter {
	/* a framework's caching allocator: device bytes it holds (what nvidia-smi shows) and,
	 * of those, the bytes of live tensors */
	GW_COUNTER_ALLOCATOR_RESERVED = 1,
	GW_COUNTER_ALLOCATOR_ALLOCATED = 2,
	/* CUPTI's own device memory for each context of the device (activity buffers): what it
	 * allocates as the context is created (buffer size x buffers allocated up front), and
	 * the most it may grow to under a dense flow of kernels (buffer size x pool limit) */
	GW_COUNTER_CUPTI_BUFFER_BYTES = 32,
	GW_COUNTER_CUPTI_BUFFER_LIMIT_BYTES = 33,
	/* measured device counters (METRIC records, NVML): 64-95 */
	GW_COUNTER_DRAM_BW_UTIL = 64, /* GPM: DRAM bandwidth used / its theoretical peak */
	GW_COUNTER_SM_UTIL = 65,      /* GPM: share of SMs busy */
	GW_COUNTER_SM_OCCUPANCY = 66, /* GPM: warps resident / the SMs' maximum */
	GW_COUNTER_TENSOR_UTIL = 67,  /* GPM: share of time any tensor pipe was busy */
	GW_COUNTER_GPU_BUSY = 68,     /* utilization sample: share of time a kernel ran */
	GW_COUNTER_MEMORY_BUSY = 69,  /* utilization sample: share of time device memory was
					 * read or written (not a share of bandwidth) */
};

/* Full scale of a METRIC value. */
#define GW_METRIC_SCALE 1000000u

enum gw_sampler_source {
	GW_SAMPLER_NONE = 0,	/* no counters: see the reason */
	GW_SAMPLER_GPM = 1,	/* NVML GPM metrics (Hopper and later) */
	GW_SAMPLER_SAMPLES = 2, /* NVML utilization samples (nvmlDeviceGetSamples) */
};

enum gw_module_event {
	GW_MODULE_LOADED = 1,
	GW_MODULE_UNLOADED = 2,
};

enum gw_api_category {
	GW_API_OTHER = 0,
	GW_API_LAUNCH = 1, /* a kernel launch */
	GW_API_GRAPH_LAUNCH = 2,
	GW_API_MEMCPY = 3,
	GW_API_MEMSET = 4,
	GW_API_ALLOC = 5,
	GW_API_FREE = 6,
	GW_API_SYNC = 7,	/* device / stream / event synchronize */
	GW_API_EVENT = 8,	/* event record */
	GW_API_STREAM_WAIT = 9, /* stream wait event, wait for a value in memory */
	GW_API_HOST_FUNC = 10,	/* a host function run in stream order (cudaLaunchHostFunc) */
	/* a stream or event query: capture folds a thread's polling into one SYNC record */
	GW_API_QUERY = 11,
	/* a stream starts or stops recording a graph: launches on it in between are graph
	 * nodes, not launches */
	GW_API_CAPTURE_BEGIN = 14,
	GW_API_CAPTURE_END = 15,
};

enum gw_sync_kind {
	GW_SYNC_NONE = 0,     /* never waits for the GPU */
	GW_SYNC_EXPLICIT = 1, /* device/stream/event synchronize */
	GW_SYNC_COPY = 2,     /* a synchronous copy or memset, or an async one that
	                                 touches pageable memory */
	GW_SYNC_IMPLICIT = 3, /* free and friends: an implicit device synchronization */
	GW_SYNC_POLL = 4,     /* queries spun on until the work was done (a SYNC record) */
};

enum gw_stream_op_kind {
	GW_STREAM_OP_HOST_FUNC = 1,  /* cudaLaunchHostFunc, cudaStreamAddCallback, ... */
	GW_STREAM_OP_WAIT_VALUE = 2, /* cuStreamWaitValue32/64, a wait in cuStreamBatchMemOp */
};

enum gw_memory_op {
	GW_MEMORY_ALLOC = 1,
	GW_MEMORY_FREE = 2,
};

enum gw_mem_kind {
	GW_MEM_DEVICE = 1, /* cudaMalloc, cuMemAlloc */
	GW_MEM_ASYNC = 2,  /* cudaMallocAsync, pools */
	GW_MEM_MANAGED = 3,
	GW_MEM_HOST_PINNED = 4,
	GW_MEM_VMM = 5, /* cuMemCreate */
	/* a block of a framework's caching allocator: it lives inside device memory the
	 * allocator already holds, so it is not device memory of its own */
	GW_MEM_TENSOR = 6,
};

enum gw_drop_source {
	GW_DROP_THREAD_BUFFER = 1, /* a thread's buffer was full: the writer fell behind */
	GW_DROP_CUPTI = 2,	   /* CUPTI's own dropped activity records */
	GW_DROP_WRITE = 3,	   /* a frame could not be written (disk full, limit) */
};

enum gw_note_level {
	GW_NOTE_INFO = 0,
	GW_NOTE_WARNING = 1,
};
