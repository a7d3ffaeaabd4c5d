/* SPDX-License-Identifier: MIT */
/* Growable arrays and hash tables for the sources that build their own ids (strings, pairs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tables.h"

void *gw_src_vec_push(struct gw_src_vec *v, size_t elem)
{
	if (v->len == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		void *d;

		if (cap > SIZE_MAX / elem)
			return NULL;
		d = realloc(v->data, cap * elem);
		if (!d)
			return NULL;
		v->data = d;
		v->cap = cap;
	}
	return memset((char *)v->data + v->len++ * elem, 0, elem);
}

int64_t gw_src_vec_append(struct gw_src_vec *v, const void *data, size_t n)
{
	size_t at = v->len;

	if (n > SIZE_MAX / 2 - at)
		return -ENOMEM;
	/* allocated even for nothing: offsets into the vector must have a base to add to */
	if (at + n > v->cap || !v->data) {
		size_t cap = v->cap ? v->cap : 4096;
		void *d;

		while (cap < at + n)
			cap *= 2;
		d = realloc(v->data, cap);
		if (!d)
			return -ENOMEM;
		v->data = d;
		v->cap = cap;
	}
	if (n)
		memcpy((char *)v->data + at, data, n);
	v->len = at + n;
	return (int64_t)at;
}

void gw_src_vec_free(struct gw_src_vec *v)
{
	free(v->data);
	*v = (struct gw_src_vec){0};
}

void gw_src_vec_sort(struct gw_src_vec *v, size_t elem, int (*cmp)(const void *, const void *))
{
	if (v->len > 1)
		qsort(v->data, v->len, elem, cmp);
}

static uint32_t group_at(const uint8_t *p, size_t group_off)
{
	uint32_t g;

	memcpy(&g, p + group_off, sizeof(g));
	return g;
}

static void sort_run(uint8_t *p, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp(p + (i - 1) * elem, p + i * elem) > 0) {
			qsort(p, n, elem, cmp);
			return;
		}
}

void gw_src_vec_sort_grouped(struct gw_src_vec *v, size_t elem, size_t group_off,
			     int (*cmp)(const void *, const void *))
{
	uint8_t *data = v->data, *out;
	uint32_t groups = 0;
	size_t *start;

	for (size_t i = 0; i < v->len; i++) {
		uint32_t g = group_at(data + i * elem, group_off);

		groups = g >= groups ? g + 1 : groups;
	}
	/* few elements, or group numbers far beyond their count: the plain sort */
	if (v->len < 64 || groups > v->len) {
		gw_src_vec_sort(v, elem, cmp);
		return;
	}
	start = calloc((size_t)groups + 1, sizeof(*start));
	out = malloc(v->len * elem);
	if (!start || !out) {
		free(start);
		free(out);
		gw_src_vec_sort(v, elem, cmp);
		return;
	}
	for (size_t i = 0; i < v->len; i++)
		start[group_at(data + i * elem, group_off) + 1]++;
	for (uint32_t g = 0; g < groups; g++)
		start[g + 1] += start[g];
	/* stable: each group keeps the file's order, then start[g] is group g's end */
	for (size_t i = 0; i < v->len; i++)
		memcpy(out + start[group_at(data + i * elem, group_off)]++ * elem, data + i * elem,
		       elem);
	for (size_t g = 0, from = 0; g < groups; from = start[g++])
		sort_run(out + from * elem, start[g] - from, elem, cmp);
	free(start);
	free(v->data);
	v->data = out;
	v->cap = v->len;
}

struct gw_src_strtab_slot {
	uint64_t hash;
	uint32_t id; /* 0: empty */
};

struct gw_src_string *gw_src_strtab_get(const struct gw_src_strtab *t, uint32_t id)
{
	return id && id <= t->ents.len ? &((struct gw_src_string *)t->ents.data)[id - 1] : NULL;
}

const char *gw_src_strtab_text(const struct gw_src_strtab *t, const struct gw_src_string *e)
{
	return (const char *)t->bytes.data + e->off;
}

static int strtab_grow(struct gw_src_strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct gw_src_strtab_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].id)
			continue;
		for (j = t->slots[i].hash & (cap - 1); s[j].id; j = (j + 1) & (cap - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

int gw_src_strtab_intern(struct gw_src_strtab *t, const void *s, size_t len, uint32_t *ret_id,
			 bool *ret_fresh)
{
	uint64_t h = XXH3_64bits(s, len);
	struct gw_src_string *e;
	int64_t off;
	size_t j;
	int r;

	*ret_fresh = false;
	if ((t->ents.len + 1) * 2 > t->cap && (r = strtab_grow(t)) < 0)
		return r;
	for (j = h & (t->cap - 1); t->slots[j].id; j = (j + 1) & (t->cap - 1)) {
		e = gw_src_strtab_get(t, t->slots[j].id);
		if (t->slots[j].hash == h && e->len == len &&
		    memcmp(gw_src_strtab_text(t, e), s, len) == 0) {
			*ret_id = t->slots[j].id;
			return 0;
		}
	}
	if (len > UINT32_MAX || t->ents.len >= UINT32_MAX - 1)
		return -ENOMEM;
	off = gw_src_vec_append(&t->bytes, s, len);
	if (off < 0)
		return (int)off;
	e = gw_src_vec_push(&t->ents, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->off = (uint64_t)off;
	e->len = (uint32_t)len;
	t->slots[j].hash = h;
	t->slots[j].id = (uint32_t)t->ents.len;
	*ret_id = t->slots[j].id;
	*ret_fresh = true;
	return 0;
}

void gw_src_strtab_free(struct gw_src_strtab *t)
{
	free(t->slots);
	gw_src_vec_free(&t->ents);
	gw_src_vec_free(&t->bytes);
	*t = (struct gw_src_strtab){0};
}

struct gw_src_map_slot {
	uint64_t a, b;
	uint32_t v;
	bool used;
};

static size_t map_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull + (a << 6));

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return (size_t)(h ^ (h >> 32));
}

static struct gw_src_map_slot *map_slot(const struct gw_src_map *m, uint64_t a, uint64_t b)
{
	size_t j;

	for (j = map_hash(a, b) & (m->cap - 1); m->slots[j].used; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].a == a && m->slots[j].b == b)
			break;
	return &m->slots[j];
}

uint32_t *gw_src_map_find(const struct gw_src_map *m, uint64_t a, uint64_t b)
{
	struct gw_src_map_slot *s;

	if (!m->cap)
		return NULL;
	s = map_slot(m, a, b);
	return s->used ? &s->v : NULL;
}

uint32_t *gw_src_map_get(struct gw_src_map *m, uint64_t a, uint64_t b, bool *ret_fresh)
{
	struct gw_src_map_slot *s;

	if ((m->len + 1) * 2 > m->cap) {
		struct gw_src_map old = *m;

		m->cap = old.cap ? old.cap * 2 : 256;
		m->slots = calloc(m->cap, sizeof(*m->slots));
		if (!m->slots) {
			*m = old;
			return NULL;
		}
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].used)
				*map_slot(m, old.slots[i].a, old.slots[i].b) = old.slots[i];
		free(old.slots);
	}
	s = map_slot(m, a, b);
	if (ret_fresh)
		*ret_fresh = !s->used;
	if (!s->used) {
		*s = (struct gw_src_map_slot){.a = a, .b = b, .used = true};
		m->len++;
	}
	return &s->v;
}

void gw_src_map_free(struct gw_src_map *m)
{
	free(m->slots);
	*m = (struct gw_src_map){0};
}
