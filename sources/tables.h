/* SPDX-License-Identifier: MIT */
/* Growable arrays and hash tables for the sources that build their own ids (strings, pairs). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable array of fixed-size elements. Zero-initialised is empty. */
struct gw_src_vec {
	void *data;
	size_t len, cap; /* in elements */
};

/* Appends one zeroed element of elem bytes; returns it, or NULL when out of memory. Pointers
 * into the array are invalidated by the next push. */
void *gw_src_vec_push(struct gw_src_vec *v, size_t elem);
/* Appends n bytes (the vector's elements are bytes); returns their offset or -ENOMEM. */
int64_t gw_src_vec_append(struct gw_src_vec *v, const void *data, size_t n);
void gw_src_vec_free(struct gw_src_vec *v);
/* qsort of the vector's elements (an empty vector has no data to give qsort). */
void gw_src_vec_sort(struct gw_src_vec *v, size_t elem, int (*cmp)(const void *, const void *));
/* The same order for elements whose cmp compares a uint32_t group first (a thread index at
 * group_off): grouped in one counting pass, then each group sorted only when it is not
 * already, as a trace's events of one thread mostly are. Falls back to gw_src_vec_sort. */
void gw_src_vec_sort_grouped(struct gw_src_vec *v, size_t elem, size_t group_off,
			     int (*cmp)(const void *, const void *));

/* Byte strings interned to dense ids 1, 2, ... Zero-initialised is empty. */
struct gw_src_strtab {
	struct gw_src_strtab_slot *slots;
	size_t cap;		 /* slots, a power of two */
	struct gw_src_vec ents;	 /* struct gw_src_string, by id - 1 */
	struct gw_src_vec bytes; /* the texts, back to back */
};

struct gw_src_string {
	uint64_t off;
	uint32_t len;
	uint32_t user; /* the caller's: starts at 0 */
};

/* The id of s[0, len), added when new (*ret_fresh true). Returns 0 or -ENOMEM. */
int gw_src_strtab_intern(struct gw_src_strtab *t, const void *s, size_t len, uint32_t *ret_id,
			 bool *ret_fresh);
/* The entry of id (1 ..), or NULL. Valid until the next intern. */
struct gw_src_string *gw_src_strtab_get(const struct gw_src_strtab *t, uint32_t id);
/* The text of an entry (not NUL-terminated). Valid until the next intern. */
const char *gw_src_strtab_text(const struct gw_src_strtab *t, const struct gw_src_string *e);
void gw_src_strtab_free(struct gw_src_strtab *t);

/* A map from a pair of 64-bit keys to a 32-bit value. Zero-initialised is empty. */
struct gw_src_map {
	struct gw_src_map_slot *slots;
	size_t cap, len;
};

/* The value slot of (a, b), inserted as 0 when absent (*ret_fresh true; may be NULL).
 * NULL when out of memory. Valid until the next insertion. */
uint32_t *gw_src_map_get(struct gw_src_map *m, uint64_t a, uint64_t b, bool *ret_fresh);
/* The value slot of (a, b), or NULL when absent. */
uint32_t *gw_src_map_find(const struct gw_src_map *m, uint64_t a, uint64_t b);
void gw_src_map_free(struct gw_src_map *m);
