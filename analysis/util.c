/* SPDX-License-Identifier: MIT */
/* Small containers and helpers shared by the analysis: arrays, a hash map, sorting, names. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

/* libstdc++'s demangler (the Itanium C++ ABI function); we link libstdc++ for it. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define GW_VEC_MAP_BYTES      (1u << 20)
#define GW_VEC_POPULATE_BYTES (256u << 10)

/* Faults in the next part of a mapped array with one call: a page fault per 4 KiB page costs
 * more than filling the page (and huge pages, in a VM, can cost more still: they come from
 * memory the host has not backed yet). A failure only leaves the pages to fault one by one. */
static void vec_populate(struct gw_vec *v, size_t elem)
{
	size_t from = v->cap * elem, to = from + GW_VEC_POPULATE_BYTES;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)v->data + from) & ~(page - 1);

	if (to > v->room * elem)
		to = v->room * elem;
	madvise((void *)lo, (uintptr_t)v->data + to - lo, MADV_POPULATE_WRITE);
	v->cap = to / elem;
}

void gw_populate(void *p, size_t bytes)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);

	if (bytes >= GW_VEC_MAP_BYTES && hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

int gw_vec_grow(struct gw_vec *v, size_t elem)
{
	size_t cap, bytes;
	void *d;

	if (v->mapped && v->cap < v->room) {
		vec_populate(v, elem);
		return 0;
	}
	cap = v->mapped ? v->room * 2 : v->cap ? v->cap * 2 : 64;
	bytes = cap * elem;
	if (bytes < GW_VEC_MAP_BYTES) {
		d = realloc(v->data, bytes);
		if (!d)
			return -1;
		v->data = d;
		v->cap = cap;
		return 0;
	}
	if (v->mapped) {
		d = mremap(v->data, v->room * elem, bytes, MREMAP_MAYMOVE);
		if (d == MAP_FAILED)
			return -1;
	} else {
		d = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (d == MAP_FAILED)
			return -1;
		if (v->len)
			memcpy(d, v->data, v->len * elem);
		free(v->data);
		v->mapped = true;
		v->cap = v->len;
	}
	v->data = d;
	v->room = cap;
	vec_populate(v, elem);
	return 0;
}

void *gw_vec_detach(struct gw_vec *v)
{
	void *d = v->data;

	if (v->mapped) {
		d = malloc(v->len * v->elem + 1);
		if (d)
			memcpy(d, v->data, v->len * v->elem);
		munmap(v->data, v->room * v->elem);
	}
	memset(v, 0, sizeof(*v));
	return d;
}

void gw_vec_free(struct gw_vec *v)
{
	if (!v)
		return;
	if (v->mapped)
		munmap(v->data, v->room * v->elem);
	else
		free(v->data);
	memset(v, 0, sizeof(*v));
}

static uint64_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));

	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return h;
}

static struct gw_hmap_slot *hmap_slot(const struct gw_hmap *m, uint64_t k1, uint64_t k2)
{
	size_t i = hash2(k1, k2) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].k1 != k1 || m->slots[i].k2 != k2))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static int hmap_grow(struct gw_hmap *m)
{
	struct gw_hmap old = *m;
	size_t cap = m->cap ? m->cap * 2 : 64;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -1;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].used)
			*hmap_slot(m, old.slots[i].k1, old.slots[i].k2) = old.slots[i];
	free(old.slots);
	return 0;
}

uint64_t *gw_hmap_get(struct gw_hmap *m, uint64_t k1, uint64_t k2, bool *ret_new)
{
	struct gw_hmap_slot *s;

	if ((m->len + 1) * 4 > m->cap * 3 && hmap_grow(m) < 0)
		return NULL;
	s = hmap_slot(m, k1, k2);
	if (ret_new)
		*ret_new = !s->used;
	if (!s->used) {
		s->used = true;
		s->k1 = k1;
		s->k2 = k2;
		s->value = 0;
		m->len++;
	}
	return &s->value;
}

uint64_t *gw_hmap_find(const struct gw_hmap *m, uint64_t k1, uint64_t k2)
{
	struct gw_hmap_slot *s;

	if (!m->cap)
		return NULL;
	s = hmap_slot(m, k1, k2);
	return s->used ? &s->value : NULL;
}

void gw_hmap_del(struct gw_hmap *m, uint64_t k1, uint64_t k2)
{
	struct gw_hmap_slot *s;
	size_t i, j;

	if (!m->cap)
		return;
	s = hmap_slot(m, k1, k2);
	if (!s->used)
		return;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	i = (size_t)(s - m->slots);
	m->slots[i].used = false;
	m->len--;
	for (j = (i + 1) & (m->cap - 1); m->slots[j].used; j = (j + 1) & (m->cap - 1)) {
		struct gw_hmap_slot t = m->slots[j];

		m->slots[j].used = false;
		*hmap_slot(m, t.k1, t.k2) = t;
	}
}

void gw_hmap_free(struct gw_hmap *m)
{
	if (!m)
		return;
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static void merge(char *a, char *tmp, size_t lo, size_t mid, size_t hi, size_t size,
		  int (*cmp)(const void *, const void *, void *), void *ctx)
{
	size_t i = lo, j = mid, k = 0;

	/* Already in order across the seam: nothing to do (the common case for trace data). */
	if (cmp(a + (mid - 1) * size, a + mid * size, ctx) <= 0)
		return;
	while (i < mid && j < hi) {
		if (cmp(a + j * size, a + i * size, ctx) < 0)
			memcpy(tmp + k++ * size, a + j++ * size, size);
		else
			memcpy(tmp + k++ * size, a + i++ * size, size);
	}
	while (i < mid)
		memcpy(tmp + k++ * size, a + i++ * size, size);
	while (j < hi)
		memcpy(tmp + k++ * size, a + j++ * size, size);
	memcpy(a + lo * size, tmp, k * size);
}

int gw_sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	      void *ctx)
{
	char *a = base, *tmp;
	size_t *runs, nruns = 0, i;

	if (n < 2)
		return 0;
	for (i = 1; i < n && cmp(a + (i - 1) * size, a + i * size, ctx) <= 0; i++)
		;
	if (i == n)
		return 0;
	runs = malloc((n + 1) * sizeof(*runs));
	tmp = malloc(n * size);
	if (!runs || !tmp) {
		free(runs);
		free(tmp);
		return -1;
	}
	/* Ascending runs, then pairwise merges until one run is left. */
	runs[nruns++] = 0;
	for (i = 1; i < n; i++)
		if (cmp(a + (i - 1) * size, a + i * size, ctx) > 0)
			runs[nruns++] = i;
	runs[nruns] = n;
	while (nruns > 1) {
		size_t w = 0;

		for (i = 0; i + 1 < nruns; i += 2) {
			merge(a, tmp, runs[i], runs[i + 1], runs[i + 2], size, cmp, ctx);
			runs[w++] = runs[i];
		}
		if (i < nruns)
			runs[w++] = runs[i];
		runs[w] = n;
		nruns = w;
	}
	free(runs);
	free(tmp);
	return 0;
}

struct gw_sort_plain {
	int (*cmp)(const void *, const void *);
};

static int sort_plain(const void *x, const void *y, void *ctx)
{
	return ((const struct gw_sort_plain *)ctx)->cmp(x, y);
}

int gw_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct gw_sort_plain c = {cmp};

	return gw_sort_r(base, n, size, sort_plain, &c);
}

char *gw_demangle(const char *name)
{
	int status = -1;
	char *d = NULL;

	if (!name)
		return NULL;
	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0)
		return d;
	free(d);
	return strdup(name);
}

char *gw_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}
