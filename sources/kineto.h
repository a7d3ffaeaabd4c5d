/* SPDX-License-Identifier: MIT */
/* The kineto source's state, shared by its parser (kineto.c) and its host side (kineto-host.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"
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
