/* SPDX-License-Identifier: MIT */
/* Lock-free open-addressing tables that give strings and stacks their ids, emitting each once. */
#include "intern.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "modules.h"
#include "trace-writer.h"

#define STRING_SLOTS (1u << 16)
#define STACK_SLOTS  (1u << 18)
#define PYCODE_SLOTS (1u << 16)
#define ARENA_BYTES  (16u << 20)
#define MAX_PROBES   64

/*
 * A slot holds a key hash (0 = empty) and, once one is published, the key's id. Ids count up
 * from 1 in the order keys are first seen, not by slot: a trace of a few hundred kernel names
 * then spends one or two bytes on each id it writes, and the reader decodes them on its
 * shortest path. A thread that finds a slot claimed but its id not yet published draws an id
 * itself rather than wait for the claiming thread; the first to publish wins, and a losing
 * draw is only a gap in the ids.
 */
struct table {
	_Atomic uint64_t *keys;
	_Atomic uint32_t *ids; /* by slot; 0 until published */
	_Atomic uint32_t next_id;
	uint32_t mask;
};

static struct table strings, stacks, pycodes;
static const char *_Atomic *string_text; /* interned copies, by slot: the cache checks them */
static _Atomic uint32_t *launch_counts;	 /* by string id */
static char *arena;
static _Atomic size_t arena_used;
static _Atomic bool ready;

/*
 * A process-wide direct-mapped cache from a string's address to its slot, packed into one word
 * ((address << 16) | slot) so a racing reader never sees a torn entry. A hit is confirmed by
 * comparing the text with the interned copy, so a stale entry (a buffer reused for another
 * string) is only a miss. Not thread-local: libgpuwhy.so's TLS must stay tiny to be
 * dlopen'able (CUDA_INJECTION64_PATH) next to initial-exec TLS.
 */
#define CACHE_SLOTS 4096
static _Atomic uint64_t *cache;

uint64_t gw_hash_bytes(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int gw_intern_init(void)
{
	if (atomic_load(&ready))
		return 0;
	strings.keys = map(STRING_SLOTS * sizeof(uint64_t));
	strings.ids = map(STRING_SLOTS * sizeof(uint32_t));
	strings.mask = STRING_SLOTS - 1;
	stacks.keys = map(STACK_SLOTS * sizeof(uint64_t));
	stacks.ids = map(STACK_SLOTS * sizeof(uint32_t));
	stacks.mask = STACK_SLOTS - 1;
	pycodes.keys = map(PYCODE_SLOTS * sizeof(uint64_t));
	pycodes.ids = map(PYCODE_SLOTS * sizeof(uint32_t));
	pycodes.mask = PYCODE_SLOTS - 1;
	string_text = map(STRING_SLOTS * sizeof(char *));
	launch_counts = map(STRING_SLOTS * sizeof(uint32_t));
	cache = map(CACHE_SLOTS * sizeof(uint64_t));
	arena = map(ARENA_BYTES);
	if (!strings.keys || !strings.ids || !stacks.keys || !stacks.ids || !pycodes.keys ||
	    !pycodes.ids || !string_text || !launch_counts || !cache || !arena)
		return -ENOMEM;
	atomic_store(&ready, true);
	return 0;
}

void gw_intern_reset(void)
{
	if (!atomic_load(&ready))
		return;
	/* MADV_DONTNEED on private anonymous memory gives zero pages back. */
	madvise((void *)strings.keys, STRING_SLOTS * sizeof(uint64_t), MADV_DONTNEED);
	madvise((void *)strings.ids, STRING_SLOTS * sizeof(uint32_t), MADV_DONTNEED);
	madvise((void *)stacks.keys, STACK_SLOTS * sizeof(uint64_t), MADV_DONTNEED);
	madvise((void *)stacks.ids, STACK_SLOTS * sizeof(uint32_t), MADV_DONTNEED);
	madvise((void *)pycodes.keys, PYCODE_SLOTS * sizeof(uint64_t), MADV_DONTNEED);
	madvise((void *)pycodes.ids, PYCODE_SLOTS * sizeof(uint32_t), MADV_DONTNEED);
	atomic_store(&strings.next_id, 0);
	atomic_store(&stacks.next_id, 0);
	atomic_store(&pycodes.next_id, 0);
	madvise((void *)string_text, STRING_SLOTS * sizeof(char *), MADV_DONTNEED);
	madvise((void *)launch_counts, STRING_SLOTS * sizeof(uint32_t), MADV_DONTNEED);
	madvise((void *)cache, CACHE_SLOTS * sizeof(uint64_t), MADV_DONTNEED);
	atomic_store(&arena_used, 0);
}

/* The id of a claimed slot (index slot - 1), drawn and published here when no thread has
 * yet; 0 once the ids are spent (the table's size: as many as keys it can hold). */
static uint32_t slot_id(struct table *t, uint64_t slot)
{
	_Atomic uint32_t *id = &t->ids[slot - 1];
	uint32_t cur = atomic_load_explicit(id, memory_order_acquire), drawn;

	if (cur)
		return cur;
	drawn = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
	if (drawn > t->mask + 1)
		return 0;
	if (atomic_compare_exchange_strong_explicit(id, &cur, drawn, memory_order_acq_rel,
						    memory_order_acquire))
		return drawn;
	return cur; /* another thread published first */
}

/* Returns the slot index + 1 and whether this call claimed it; 0 when the table is full. */
static uint64_t claim(struct table *t, uint64_t key, bool *ret_new)
{
	uint32_t i = (uint32_t)(key ^ (key >> 29)) & t->mask;

	*ret_new = false;
	for (unsigned probe = 0; probe < MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		uint64_t cur = atomic_load_explicit(&t->keys[i], memory_order_acquire);

		if (cur == key)
			return i + 1;
		if (cur)
			continue;
		if (atomic_compare_exchange_strong(&t->keys[i], &cur, key)) {
			*ret_new = true;
			return i + 1;
		}
		if (cur == key)
			return i + 1;
	}
	return 0;
}

/* Copies text after a byte holding its kind; returns the copy of the text. */
static const char *arena_copy(unsigned kind, const char *text, size_t len)
{
	size_t at = atomic_fetch_add(&arena_used, len + 2);
	char *dst;

	if (at + len + 2 > ARENA_BYTES)
		return NULL;
	dst = arena + at;
	dst[0] = (char)kind;
	memcpy(dst + 1, text, len);
	dst[len + 1] = '\0';
	return dst + 1;
}

/* confirm: compare the text of a cache hit with the interned copy (the address may have been
 * reused for another string since). */
static inline uint64_t intern_string(unsigned kind, const char *text, bool confirm)
{
	uint64_t key, slot, entry;
	_Atomic uint64_t *cached;
	const char *interned;
	uint32_t id;
	size_t len;
	bool fresh;

	if (!text || !atomic_load_explicit(&ready, memory_order_relaxed))
		return 0;
	cached = &cache[((uintptr_t)text >> 3) & (CACHE_SLOTS - 1)];
	entry = atomic_load_explicit(cached, memory_order_relaxed);
	if (entry >> 16 == (uintptr_t)text) {
		slot = entry & 0xffff;
		interned = atomic_load_explicit(&string_text[slot], memory_order_acquire);
		/* The kind is the byte before the interned text. */
		if (interned && (unsigned char)interned[-1] == kind &&
		    (!confirm || !strcmp(text, interned)) &&
		    (id = atomic_load_explicit(&strings.ids[slot], memory_order_acquire)))
			return id;
	}

	len = strlen(text);
	key = gw_hash_bytes(gw_hash_bytes(GW_HASH_SEED, &kind, sizeof(kind)), text, len) | 1;
	slot = claim(&strings, key, &fresh);
	if (!slot || !(id = slot_id(&strings, slot)))
		return 0;
	if (fresh) {
		struct gw_rec_string rec = {
			.id = id,
			.kind = kind,
			.text = {(const uint8_t *)text, (uint32_t)len},
		};

		atomic_store_explicit(&string_text[slot - 1], arena_copy(kind, text, len),
				      memory_order_release);
		gw_emit(GW_REC_STRING, &rec);
	}
	atomic_store_explicit(cached, ((uint64_t)(uintptr_t)text << 16) | (slot - 1),
			      memory_order_relaxed);
	return id;
}

uint64_t gw_intern_string(unsigned kind, const char *text)
{
	return intern_string(kind, text, true);
}

uint64_t gw_intern_string_static(unsigned kind, const char *text)
{
	return intern_string(kind, text, false);
}

uint64_t gw_intern_stack_kind(const uint64_t *ips, uint32_t depth, unsigned kind)
{
	uint64_t key, slot;
	uint32_t id;
	bool fresh;

	if (!depth || !atomic_load_explicit(&ready, memory_order_relaxed))
		return 0;
	key = GW_HASH_SEED ^ kind;
	/* Word at a time: a byte-wise hash of a 30-frame stack would cost more than the unwind. */
	for (uint32_t i = 0; i < depth; i++) {
		key = (key ^ ips[i]) * 0x9e3779b97f4a7c15ull;
		key ^= key >> 32;
	}
	key |= 1;
	slot = claim(&stacks, key, &fresh);
	if (!slot || !(id = slot_id(&stacks, slot)))
		return 0;
	if (fresh) {
		struct gw_rec_stack rec = {.id = id, .ips = {ips, depth}, .ips_kind = kind};
		uint64_t native[GW_MAX_STACK_DEPTH];
		uint32_t n = 0;

		/* A new stack may run through an object loaded since the last module scan. */
		for (uint32_t i = 0; i < depth && n < GW_MAX_STACK_DEPTH; i++)
			if (kind != GW_STACK_MIXED || !GW_PYFRAME_IS(ips[i]))
				native[n++] = ips[i];
		gw_modules_check(native, n);
		gw_emit(GW_REC_STACK, &rec);
	}
	return id;
}

uint64_t gw_intern_stack(const uint64_t *ips, uint32_t depth)
{
	return gw_intern_stack_kind(ips, depth, GW_STACK_ADDRESSES);
}

uint64_t gw_intern_pycode(uint64_t key, bool *ret_new)
{
	uint64_t slot;
	uint32_t id;

	*ret_new = false;
	if (!atomic_load_explicit(&ready, memory_order_relaxed))
		return 0;
	slot = claim(&pycodes, key | 1, ret_new);
	if (!slot || !(id = slot_id(&pycodes, slot)) || id > GW_PYFRAME_CODE_MAX) {
		*ret_new = false;
		return 0;
	}
	return id;
}

uint32_t gw_intern_count_launch(uint64_t name_id)
{
	uint32_t n;

	if (!name_id || name_id > STRING_SLOTS)
		return 0;
	/* Not a read-modify-write: an increment lost to a race only moves a sample. */
	n = atomic_load_explicit(&launch_counts[name_id - 1], memory_order_relaxed) + 1;
	atomic_store_explicit(&launch_counts[name_id - 1], n, memory_order_relaxed);
	return n;
}
