/* SPDX-License-Identifier: MIT */
/* Small containers and helpers shared by the analysis: arrays, a hash map, sorting, names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable array of fixed-size elements. Zero-initialized is empty. Large arrays live in
 * their own mapping and grow with mremap, so growing never copies them; their pages are
 * faulted in ahead, a part at a time (cap: the elements usable now, room: mapped). */
struct gw_vec {
	void *data;
	size_t len, cap, elem, room;
	bool mapped;
};

/* Faults in the whole pages of [p, p + bytes) with one call, for a large buffer that will be
 * written in full (a hint: a failure leaves the pages to fault one by one). */
void gw_populate(void *p, size_t bytes);

/* Makes room for one more element; returns -ENOMEM or 0. */
int gw_vec_grow(struct gw_vec *v, size_t elem);

/* Appends one zeroed element; returns it, or NULL on -ENOMEM. */
static inline void *gw_vec_push(struct gw_vec *v, size_t elem)
{
	char *p;

	if (__builtin_expect(v->len == v->cap, 0) && gw_vec_grow(v, elem) < 0)
		return NULL;
	v->elem = elem;
	p = (char *)v->data + v->len++ * elem;
	__builtin_memset(p, 0, elem);
	return p;
}

/* The elements in malloc'd memory (for handing to a caller that frees them with free()); the
 * vector is left empty. NULL when empty or on -ENOMEM. */
void *gw_vec_detach(struct gw_vec *v);
void gw_vec_free(struct gw_vec *v);

/* A map from a pair of u64 keys to a u64 value (open addressing). Zero-initialized is empty. */
struct gw_hmap {
	struct gw_hmap_slot {
		uint64_t k1, k2, value;
		bool used;
	} * slots;
	size_t cap, len;
};

/* The value slot for (k1, k2), inserted with *ret_new = true and value 0 when absent; NULL on
 * -ENOMEM. The pointer is valid until the next insertion. */
uint64_t *gw_hmap_get(struct gw_hmap *m, uint64_t k1, uint64_t k2, bool *ret_new);
/* Lookup without insertion; NULL when absent. */
uint64_t *gw_hmap_find(const struct gw_hmap *m, uint64_t k1, uint64_t k2);
/* Removes (k1, k2) if present. */
void gw_hmap_del(struct gw_hmap *m, uint64_t k1, uint64_t k2);
void gw_hmap_free(struct gw_hmap *m);

/* Stable natural merge sort: O(n) on sorted input, O(n log n) otherwise; cmp gets ctx.
 * Returns 0 or -ENOMEM. */
int gw_sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	      void *ctx);
/* The same without a context. */
int gw_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Demangled C++ name (malloc'd), or a copy of the name when it is not mangled; NULL on -ENOMEM. */
char *gw_demangle(const char *name);

/* asprintf that returns the string or NULL. */
char *gw_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
