/* SPDX-License-Identifier: MIT */
/* Device, pinned and managed memory: lazily committed host mappings, with a capacity limit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime.h"

struct alloc {
	uintptr_t base;
	size_t bytes;
	size_t map_bytes;
	enum gw_sim_mem kind;
};

/* Live allocations; lookups are binary searches. */
static struct {
	pthread_mutex_t lock;
	struct alloc *v;
	size_t n;
	size_t cap;
	uint64_t device_used;
} mem = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool counts_on_device(enum gw_sim_mem kind)
{
	return kind == GW_SIM_MEM_DEVICE || kind == GW_SIM_MEM_MANAGED;
}

/* Index of the first allocation with base <= p, or n. The table is sorted by descending base:
 * mmap hands out addresses downwards, so new allocations append and recent ones free cheaply. */
static size_t at_or_below(uintptr_t p)
{
	size_t lo = 0, hi = mem.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (mem.v[mid].base > p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int gw_sim_mem_alloc(enum gw_sim_mem kind, size_t bytes, void **ret_ptr)
{
	size_t map_bytes = bytes ? (bytes + 4095) & ~(size_t)4095 : 4096;
	/* __device__ variables are registered before main: that must not read the knobs yet. */
	uint64_t limit = counts_on_device(kind) ? gw_sim_config()->mem_bytes : 0;
	void *p;
	size_t i;
	int r = 0;

	pthread_mutex_lock(&mem.lock);
	if (counts_on_device(kind) && (bytes > limit || mem.device_used + bytes > limit)) {
		r = -ENOMEM;
		goto out;
	}
	if (mem.n == mem.cap) {
		size_t cap = mem.cap ? mem.cap * 2 : 256;
		struct alloc *v = realloc(mem.v, cap * sizeof(*v));

		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		mem.v = v;
		mem.cap = cap;
	}
	p = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		r = -ENOMEM;
		goto out;
	}
	i = at_or_below((uintptr_t)p);
	memmove(&mem.v[i + 1], &mem.v[i], (mem.n - i) * sizeof(*mem.v));
	mem.v[i] = (struct alloc){(uintptr_t)p, bytes, map_bytes, kind};
	mem.n++;
	if (counts_on_device(kind))
		mem.device_used += bytes;
	*ret_ptr = p;
out:
	pthread_mutex_unlock(&mem.lock);
	return r;
}

int gw_sim_mem_free(enum gw_sim_mem kind, void *ptr, size_t *ret_bytes)
{
	size_t i;
	struct alloc a;
	int r = -ENOENT;

	pthread_mutex_lock(&mem.lock);
	i = at_or_below((uintptr_t)ptr);
	if (i == mem.n || mem.v[i].base != (uintptr_t)ptr)
		goto out;
	a = mem.v[i];
	if (a.kind != kind && !(kind == GW_SIM_MEM_DEVICE && a.kind == GW_SIM_MEM_MANAGED))
		goto out;
	memmove(&mem.v[i], &mem.v[i + 1], (mem.n - i - 1) * sizeof(*mem.v));
	mem.n--;
	if (counts_on_device(a.kind))
		mem.device_used -= a.bytes;
	if (a.map_bytes)
		munmap((void *)a.base, a.map_bytes);
	if (ret_bytes)
		*ret_bytes = a.bytes;
	r = 0;
out:
	pthread_mutex_unlock(&mem.lock);
	return r;
}

int gw_sim_mem_find(const void *ptr, size_t bytes, enum gw_sim_mem *ret_kind, void **ret_base)
{
	uintptr_t p = (uintptr_t)ptr;
	const struct alloc *a;
	size_t i;
	int r = 0;

	*ret_kind = GW_SIM_MEM_PAGEABLE;
	if (ret_base)
		*ret_base = NULL;
	pthread_mutex_lock(&mem.lock);
	i = at_or_below(p);
	if (i == mem.n)
		goto out;
	a = &mem.v[i];
	if (p >= a->base + (a->bytes ? a->bytes : 1))
		goto out;
	*ret_kind = a->kind;
	if (ret_base)
		*ret_base = (void *)a->base;
	if (bytes > a->bytes - (p - a->base))
		r = -EFAULT;
out:
	pthread_mutex_unlock(&mem.lock);
	return r;
}

int gw_sim_mem_register(void *ptr, size_t bytes)
{
	uintptr_t p = (uintptr_t)ptr;
	size_t i;
	int r = 0;

	pthread_mutex_lock(&mem.lock);
	i = at_or_below(p + bytes - 1);
	/* the last allocation starting at or below the range's end must end before the range */
	if (i < mem.n && mem.v[i].base + (mem.v[i].bytes ? mem.v[i].bytes : 1) > p) {
		r = -EEXIST;
		goto out;
	}
	if (mem.n == mem.cap) {
		size_t cap = mem.cap ? mem.cap * 2 : 256;
		struct alloc *v = realloc(mem.v, cap * sizeof(*v));

		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		mem.v = v;
		mem.cap = cap;
	}
	memmove(&mem.v[i + 1], &mem.v[i], (mem.n - i) * sizeof(*mem.v));
	mem.v[i] = (struct alloc){p, bytes, 0, GW_SIM_MEM_REGISTERED};
	mem.n++;
out:
	pthread_mutex_unlock(&mem.lock);
	return r;
}

void gw_sim_mem_fork_lock(bool lock)
{
	if (lock)
		pthread_mutex_lock(&mem.lock);
	else
		pthread_mutex_unlock(&mem.lock);
}

uint64_t gw_sim_mem_used(void)
{
	uint64_t v;

	pthread_mutex_lock(&mem.lock);
	v = mem.device_used;
	pthread_mutex_unlock(&mem.lock);
	return v;
}

void gw_sim_mem_free_all(void)
{
	pthread_mutex_lock(&mem.lock);
	for (size_t i = 0; i < mem.n;) {
		struct alloc a = mem.v[i];

		if (a.kind == GW_SIM_MEM_SYMBOL) {
			i++;
			continue;
		}
		if (a.map_bytes)
			munmap((void *)a.base, a.map_bytes);
		if (counts_on_device(a.kind))
			mem.device_used -= a.bytes;
		memmove(&mem.v[i], &mem.v[i + 1], (mem.n - i - 1) * sizeof(*mem.v));
		mem.n--;
	}
	pthread_mutex_unlock(&mem.lock);
}
