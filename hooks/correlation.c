/* SPDX-License-Identifier: MIT */
/* Inner call correlation ids aliased to the recorded (outermost) call's id. */
#include "correlation.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#define ALIAS_BITS  18
#define ALIAS_SLOTS (1u << ALIAS_BITS)

/* entry: inner << 32 | outer; 0 = empty (CUPTI's ids start at 1) */
static _Atomic uint64_t *table;

int gw_corr_init(void)
{
	void *p;

	if (table)
		return 0;
	p = mmap(NULL, ALIAS_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	table = p;
	return 0;
}

void gw_corr_alias(uint32_t inner, uint32_t outer)
{
	_Atomic uint64_t *t = table;

	if (t && inner != outer)
		atomic_store_explicit(&t[inner & (ALIAS_SLOTS - 1)], (uint64_t)inner << 32 | outer,
				      memory_order_release);
}

uint32_t gw_corr_resolve(uint32_t id)
{
	_Atomic uint64_t *t = table;
	uint64_t e;

	if (!t)
		return id;
	e = atomic_load_explicit(&t[id & (ALIAS_SLOTS - 1)], memory_order_acquire);
	return e >> 32 == id ? (uint32_t)e : id;
}
