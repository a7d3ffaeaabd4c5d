/* SPDX-License-Identifier: MIT */
/* Interning of strings (kernel and API names) and call stacks into trace ids, without locks. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <gpuwhy/trace-format.h>

/*
 * Maps memory for the tables (once; no-op after). Returns 0 or -errno. Until it succeeded,
 * the intern functions return 0 ("none").
 */
int gw_intern_init(void);

/*
 * Forgets every id, so that the next trace (a fork child's) gets its STRING and STACK records
 * again. Only when no other thread can be inside the intern functions (a fork child).
 */
void gw_intern_reset(void);

/*
 * The id of text (NUL-terminated) of kind enum gw_string_kind, emitting a GW_REC_STRING record
 * the first time. Any thread, lock-free, no allocation. 0 when text is NULL or a table is full.
 * Ids count up from 1 in the order texts are first seen (a race between threads may skip
 * one), so they stay small in the trace. A process-wide cache keyed by the pointer makes
 * repeated calls with the same pointer cheap.
 */
uint64_t gw_intern_string(unsigned kind, const char *text);

/*
 * Same, for text that keeps its address and its contents for the life of the process (CUPTI's
 * function names, string literals): a repeated call skips comparing the text.
 */
uint64_t gw_intern_string_static(unsigned kind, const char *text);

/*
 * The id of the stack ips[0..depth) (innermost first), emitting a GW_REC_STACK record the first
 * time. Stacks are identified by a 64-bit hash of their addresses; ids count up from 1 as for
 * strings. 0 when depth is 0 or the table is full. Any thread, lock-free, no allocation.
 */
uint64_t gw_intern_stack(const uint64_t *ips, uint32_t depth);

/*
 * The same for a stack of another kind (enum gw_stack_kind): GW_STACK_MIXED holds Python frame
 * words beside the addresses, which the module check passes over.
 */
uint64_t gw_intern_stack_kind(const uint64_t *ips, uint32_t depth, unsigned kind);

/*
 * The id of a Python code object from a 64-bit key (a hash of its address and of the objects
 * it names, so that another code object made at a freed one's address gets an id of its own).
 * *ret_new is true when this call drew the id: the caller then emits its PYCODE record. Ids
 * count up from 1 as for strings; 0 when the table is full. Any thread, lock-free.
 */
uint64_t gw_intern_pycode(uint64_t key, bool *ret_new);

/*
 * How many times a kernel name id was launched, this launch included (for launch sampling).
 * 0 for ids beyond the table. Threads launching the same kernel at once may lose a count.
 */
uint32_t gw_intern_count_launch(uint64_t name_id);

/* 64-bit FNV-1a over len bytes, continued from h (start with GW_HASH_SEED). */
#define GW_HASH_SEED 0xcbf29ce484222325ull
uint64_t gw_hash_bytes(uint64_t h, const void *data, size_t len);
