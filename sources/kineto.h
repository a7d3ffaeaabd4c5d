/* SPDX-License-Identifier: MIT */
/* The kineto source's state: its JSON walk (kineto.c), events (kineto-events.c), host side. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "gpuwhy/trace-format.h"
#include "api-names.h"
#include "source.h"
#include "tables.h"

/*
 * Records leave the source through a queue: the JSON parser calls back with events and each
 * event yields zero or more records. BYTES and IPS of queued records live in an arena that is
 * emptied when the queue is, so they stay valid until the caller's next call.
 */
struct gw_kin_out {
	struct gw_src_vec queue; /* struct gw_kin_queued */
	size_t head;		 /* next to hand out */
	struct gw_src_vec arena; /* bytes */
};

/* A host thread: a runtime call, an operator or a Python function ran on it. */
struct gw_kin_thread {
	int64_t tid;
	uint64_t first_ns;
};

/* A Python function or an operator on a host thread, from its start to its end. */
struct gw_kin_span {
	uint64_t start_ns, end_ns;
	uint32_t tidx; /* index into threads */
	uint32_t ref;  /* Python: a frame id; operator: a stack node */
	uint32_t flags;
};

/* A runtime or driver call, or an allocator event, kept until the stacks are known. */
struct gw_kin_call {
	uint64_t start_ns, end_ns;
	uint64_t corr;	/* API: correlation; MEMORY: the block's address */
	uint64_t bytes; /* MEMORY: the block's size (a free: 0) */
	uint32_t tidx;
	uint32_t name_id; /* API: string */
	uint32_t cbid;
	uint32_t node;	  /* stack node, filled by the sweep */
	int32_t device;	  /* -1 until resolved (API); MEMORY: the device */
	uint8_t type;	  /* GW_REC_API or GW_REC_MEMORY */
	uint8_t category; /* API: enum gw_api_category; MEMORY: enum gw_memory_op */
	uint8_t sync_kind;
	uint8_t domain;
};

/* A frame: a Python function ("train.py(87): step") or an operator ("aten::item"). */
struct gw_kin_frame {
	uint32_t function_id, file_id; /* strings */
	uint32_t line;
	uint8_t lang; /* enum gw_frame_lang */
	bool emitted;
};

/* A node of the stack trie: a frame below its caller's node (0: the root). */
struct gw_kin_node {
	uint32_t parent, frame;
	uint32_t stack_id; /* STACK record id once emitted, else 0 */
};

/* A (correlation, device) pair: cuda_sync events and GPU work off the first device. */
struct gw_kin_corr_dev {
	uint64_t corr;
	int64_t device;
};

struct gw_kin_host {
	struct gw_src_vec threads;	 /* struct gw_kin_thread */
	struct gw_src_map thread_map;	 /* (tid, 0) -> index + 1 */
	struct gw_src_map thread_names;	 /* (tid, 0) -> string id, from metadata events */
	struct gw_src_vec python;	 /* struct gw_kin_span */
	struct gw_src_vec ops;		 /* struct gw_kin_span */
	struct gw_src_vec calls;	 /* struct gw_kin_call */
	struct gw_src_vec frames;	 /* struct gw_kin_frame, by id - 1 */
	struct gw_src_map frame_map;	 /* (function << 32 | file, line << 8 | lang) -> id */
	struct gw_src_vec nodes;	 /* struct gw_kin_node, by id - 1 */
	struct gw_src_map node_map;	 /* (parent, frame) -> id */
	struct gw_src_map callstack_map; /* (string id of an operator's "Call stack", 0) -> node */
	struct gw_src_vec sync_devs;	 /* struct gw_kin_corr_dev: cuda_sync events */
	struct gw_src_vec other_devs;	 /* struct gw_kin_corr_dev: GPU work off device0 */
	int64_t device0;		 /* the first device that ran GPU work */
	bool any_device, many_devices;
	uint32_t next_stack_id;
	size_t emit_at; /* the next call to hand out */
};

enum {
	GW_KIN_SPAN_CALLSTACK = 1u << 0, /* an operator's node is its Python "Call stack" */
};

/* Strings, interned once; STRING records are written on first use (user bit 0). */
struct gw_kin_strings {
	struct gw_src_strtab tab;
};

struct gw_kin;

/* A record appended to the queue, zeroed but for its type and version; NULL: out of memory. */
struct gw_record *gw_kin_push(struct gw_kin_out *o, uint8_t type);
/* The same, with bytes copied to the arena for the record's one BYTES or IPS field (STRING
 * text, THREAD and DEVICE name, NOTE text, STACK ips: n uint64_t). */
struct gw_record *gw_kin_push_data(struct gw_kin_out *o, uint8_t type, const void *data, size_t n);

/* The id of a string, interned; its STRING record (of kind) is queued the first time the
 * id is emitted. Returns 0 or -ENOMEM. */
int gw_kin_intern(struct gw_kin_strings *s, const char *text, size_t len, uint32_t *ret_id);
int gw_kin_emit_string(struct gw_kin_strings *s, struct gw_kin_out *o, uint32_t id, uint8_t kind);

/* Host side (kineto-host.c). All return 0 or -ENOMEM unless said otherwise. */

/* The index of host thread tid, added on first sight at time ns. */
int gw_kin_thread(struct gw_kin_host *h, int64_t tid, uint64_t ns, uint32_t *ret_idx);
/* Names host thread tid (from a thread_name metadata event, which may come before or after
 * the thread's events). */
int gw_kin_thread_name(struct gw_kin_host *h, int64_t tid, uint32_t name_id);
/* The frame id of a Python function's or operator's event name ("file.py(12): fn"). */
int gw_kin_frame(struct gw_kin_host *h, struct gw_kin_strings *s, const char *name, size_t len,
		 uint8_t lang, uint32_t *ret_frame);
/* The stack node of frame called from node parent (0: the root). */
int gw_kin_node(struct gw_kin_host *h, uint32_t parent, uint32_t frame, uint32_t *ret_node);
/* The stack node of an operator's "Call stack" text: frames innermost first, ';'-separated. */
int gw_kin_callstack(struct gw_kin_host *h, struct gw_kin_strings *s, const char *text, size_t len,
		     uint32_t *ret_node);
/* Notes GPU work of device on correlation corr, and a cuda_sync event's device. */
int gw_kin_gpu_device(struct gw_kin_host *h, uint64_t corr, int64_t device);
int gw_kin_sync_device(struct gw_kin_host *h, uint64_t corr, int64_t device);
/* After the input: each call's stack node and device, THREAD records. */
int gw_kin_host_finish(struct gw_kin_host *h, struct gw_kin_strings *s, struct gw_kin_out *o);
/* Queues the next calls (API and MEMORY records, with the STRING, FRAME and STACK records they
 * need first). Returns 1 while calls remain, 0 when all were queued, or -ENOMEM. */
int gw_kin_host_emit(struct gw_kin_host *h, struct gw_kin_strings *s, struct gw_kin_out *o);
void gw_kin_host_free(struct gw_kin_host *h);

/* ---- the parse: kineto.c walks the JSON, kineto-events.c turns each event into records ---- */

#define GW_KIN_KEY_DEPTHS  8	/* map depths whose current key is tracked */
#define GW_KIN_MAX_DEVICES 1024 /* a trace naming more is refused */
#define GW_KIN_API_NAMES   16	/* runtime call names classified lately */

/* Numeric fields of an event and of its args. */
enum gw_kin_num {
	GW_F_TS,
	GW_F_DUR,
	GW_F_PID,
	GW_F_TID,
	GW_F_DEVICE,
	GW_F_STREAM,
	GW_F_CORR,
	GW_F_REGS,
	GW_F_SMEM,
	GW_F_BYTES,
	GW_F_CBID,
	GW_F_DEV_TYPE,
	GW_F_DEV_ID,
	GW_F_ADDR,
	GW_F_MEM_BYTES,
	GW_F_TOTAL_ALLOC,
	GW_F_TOTAL_RESERVED,
	GW_F_WAIT_EVENT,
	GW_F_COUNT
};

/* Keys, at every level the parser reads: 1 + enum gw_kin_num for the numeric ones. */
enum gw_kin_key {
	GW_K_NONE = 0,
	GW_K_NUM = 1,
	GW_K_PH = 100,
	GW_K_CAT,
	GW_K_NAME,
	GW_K_ARGS,
	GW_K_GRID,
	GW_K_BLOCK,
	GW_K_SYNC_KIND,
	GW_K_CALL_STACK,
	GW_K_ARG_NAME,
	GW_T_EVENTS = 200,
	GW_T_DEVPROPS,
	GW_T_DIST,
	GW_T_BASE,
	GW_D_RANK,
	GW_P_ID =
		300, /* deviceProperties: GW_P_ID .. GW_P_OPTIN index struct gw_kin_devprop's values */
	GW_P_NAME,
	GW_P_MEM,
	GW_P_MAJOR,
	GW_P_MINOR,
	GW_P_THREADS_BLOCK,
	GW_P_THREADS_SM,
	GW_P_REGS_BLOCK,
	GW_P_REGS_SM,
	GW_P_WARP,
	GW_P_SMEM_BLOCK,
	GW_P_SMEM_SM,
	GW_P_SMS,
	GW_P_OPTIN,
	GW_P_END
};

/* Event categories: current names and the 2020 format's capitalised ones. */
enum gw_kin_cat {
	GW_C_OTHER,
	GW_C_KERNEL,
	GW_C_MEMCPY,
	GW_C_MEMSET,
	GW_C_RUNTIME,
	GW_C_DRIVER,
	GW_C_SYNC,
	GW_C_PYTHON,
	GW_C_CPU_OP,
	GW_C_ANNOTATION,     /* user_annotation: record_function, ProfilerStep#N */
	GW_C_GPU_ANNOTATION, /* gpu_user_annotation: the same on a stream's timeline */
};

/* What a field holds after parsing. */
enum gw_kin_state {
	GW_V_ABSENT = 0, /* also null */
	GW_V_OK,
	GW_V_STRING, /* a string where a number belongs */
	GW_V_TYPE,   /* a boolean, an array or an object where a number belongs */
	GW_V_RANGE,  /* a number outside int64_t */
	GW_V_FRACTION,
};

struct gw_kin_val {
	int64_t v;
	uint64_t off; /* where it ended in the JSON text */
	uint8_t state;
};

/* The event being read. */
struct gw_kin_ev {
	uint64_t off;
	char ph;
	uint8_t cat;
	uint8_t sync_type;
	struct gw_kin_val num[GW_F_COUNT];
	uint64_t dims[2][3]; /* grid, block */
	uint8_t ndims[2];
	struct gw_kin_val dims_val[2]; /* the arrays: GW_V_OK, or GW_V_TYPE when malformed */
	struct gw_src_vec name;	       /* bytes */
	struct gw_src_vec aux;	       /* bytes: args "Call stack" or, for metadata, "name" */
	uint16_t aux_key;
};

/* One entry of deviceProperties. */
struct gw_kin_devprop {
	struct gw_kin_val v[GW_P_END - GW_P_ID];
	uint32_t name_id; /* string */
};

/* A block's size from an allocator event of the 2021 format, which has no address and no
 * totals: the allocated curve is rebuilt from these at the end. */
struct gw_kin_delta {
	uint64_t time_ns;
	int64_t device;
	int64_t bytes; /* negative: freed */
	uint64_t seq;  /* order in the file, for equal times */
};

/* The last reserved-bytes sample of a device: the counter only changes when it does. */
struct gw_kin_reserved {
	int64_t device;
	int64_t bytes;
};

enum gw_kin_phase {
	GW_PH_PARSE,
	GW_PH_HOST,
	GW_PH_DONE,
};

enum gw_kin_sect {
	GW_SECT_NONE,
	GW_SECT_EVENTS,
	GW_SECT_DEVPROPS,
	GW_SECT_DIST,
};

/* A runtime or driver call's name, as classified: the same few names come again and again. */
struct gw_kin_api_name {
	char text[64]; /* cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags is 55 */
	uint8_t len;
	bool found;
	struct gw_api_class cls;
};

struct gw_kin {
	struct gw_source *src;
	/* input */
	int fd;
	bool gzip;
	struct gw_gunzip *gz; /* a .gz file's bytes, inflated ahead */
	bool input_done;
	uint8_t *inbuf; /* read from a plain file */
	uint64_t file_size, file_read;
	uint64_t json_off; /* JSON bytes given to the parser before the current chunk */
	yajl_handle y;
	/* where the parser is */
	unsigned depth, ev_depth;
	/* a value the walk skips opened at this depth (0: none): what is inside is not read */
	unsigned skip_depth;
	bool top_seen, top_map, in_ev, in_args, in_dev;
	int dims; /* -1, or 0 (grid) / 1 (block) while reading that array */
	uint8_t sect;
	uint16_t key[GW_KIN_KEY_DEPTHS];
	struct gw_kin_ev ev;
	struct gw_kin_devprop dev;
	/* what the trace said */
	bool saw_events, base_late, header_done;
	int64_t base_ns, rank, host_pid;
	uint64_t events, chrome_events, gpu_ops;
	struct gw_src_vec devprops; /* struct gw_kin_devprop */
	struct gw_src_vec devices;  /* int64_t: devices that ran GPU work */
	struct gw_src_vec reserved; /* struct gw_kin_reserved */
	struct gw_src_vec deltas;   /* struct gw_kin_delta */
	size_t delta_at;	    /* the next to queue */
	/* records out */
	enum gw_kin_phase phase;
	struct gw_kin_out out;
	struct gw_kin_strings strings;
	struct gw_src_strtab ids; /* pid and tid strings that are not numbers */
	struct gw_kin_host host;
	struct gw_kin_api_name api_names[GW_KIN_API_NAMES];
	unsigned api_names_next; /* the slot the next new name takes */
	/* an error: the first one ends the parse */
	int err;
	char reason[256];
	char cut[320]; /* why the input ended early, for the NOTE; "" when it did not */
};

/* kineto.c: the first error wins and stops the parse; returns err. */
int gw_kin_fail(struct gw_kin *k, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "byte 123" of the JSON text (in a gzip file, of its decompressed text), into buf. */
const char *gw_kin_where(const struct gw_kin *k, uint64_t off, char *buf, size_t n);
/* An event or args key's name, for messages. */
const char *gw_kin_field_name(enum gw_kin_num f);

/* kineto-events.c: the event in k->ev is complete; queues what it becomes. 0 or -errno. */
int gw_kin_event(struct gw_kin *k);
/* The CUPTI synchronization type a cuda_sync_kind names ("Stream Sync"), 0 unknown. */
uint8_t gw_kin_sync_type(const char *text, size_t len);
/* The input is read (the document checked): queues the records kept for the end (header,
 * devices, threads, notes) and readies the rest. 0 or -errno. */
int gw_kin_end(struct gw_kin *k);
/* Queues more of what was kept for the end: 1 while some remains, 0 done, or -errno. */
int gw_kin_more(struct gw_kin *k);
/* The next queued record into *ret; false when the queue is empty. */
bool gw_kin_pop(struct gw_kin_out *o, struct gw_record *ret);
/* The caller is done with what was handed out: the queue and its arena start over. */
void gw_kin_out_reset(struct gw_kin_out *o);
