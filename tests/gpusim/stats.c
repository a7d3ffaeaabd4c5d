/* SPDX-License-Identifier: MIT */
/*
 * GPUSIM_STATS=path: what the simulator itself did, written as JSON when the process exits. An
 * independent count for tests that check what a profiler saw against what really happened on
 * the (simulated) device: it is counted where the work is placed on the timeline, whether or
 * not CUPTI is in use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static atomic_ullong n_kernels, n_gemms, n_memcpys, n_memsets, n_syncs, n_queries;
static atomic_ullong n_allocs, n_frees, alloc_bytes, n_unsupported;

void gw_sim_stats_op(const struct gw_sim_op *op)
{
	switch (op->kind) {
	case GW_SIM_OP_KERNEL:
		atomic_fetch_add_explicit(&n_kernels, 1, memory_order_relaxed);
		break;
	case GW_SIM_OP_MEMCPY:
		atomic_fetch_add_explicit(&n_memcpys, 1, memory_order_relaxed);
		break;
	case GW_SIM_OP_MEMSET:
		atomic_fetch_add_explicit(&n_memsets, 1, memory_order_relaxed);
		break;
	}
}

void gw_sim_stats_sync(bool query)
{
	atomic_fetch_add_explicit(query ? &n_queries : &n_syncs, 1, memory_order_relaxed);
}

void gw_sim_stats_memory(bool release, uint64_t bytes)
{
	if (release) {
		atomic_fetch_add_explicit(&n_frees, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&alloc_bytes, bytes, memory_order_relaxed);
}

void gw_sim_stats_unsupported(void)
{
	atomic_fetch_add_explicit(&n_unsupported, 1, memory_order_relaxed);
}

/* Called by the simulated cuBLAS for each GEMM it launches (the launch itself counts as a
 * kernel). */
void gw_sim_stats_gemm(void)
{
	atomic_fetch_add_explicit(&n_gemms, 1, memory_order_relaxed);
}

/* At exit, so a fork child's counts do not mix with its parent's: each process writes its
 * own file when the path holds %p (the pid), else the last one to exit wins. */
__attribute__((destructor)) static void stats_write(void)
{
	const char *pattern = getenv("GPUSIM_STATS");
	char path[4096];
	FILE *f;

	if (!pattern || !*pattern)
		return;
	if (snprintf(path, sizeof(path), "%s", pattern) >= (int)sizeof(path))
		return;
	for (char *p = path; (p = strstr(p, "%p"));) {
		char rest[4096];

		snprintf(rest, sizeof(rest), "%s", p + 2);
		snprintf(p, sizeof(path) - (size_t)(p - path), "%d%s", (int)getpid(), rest);
	}
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f,
		"{\"kernels\": %llu, \"gemms\": %llu, \"memcpys\": %llu, \"memsets\": %llu, "
		"\"syncs\": %llu, \"queries\": %llu, \"allocations\": %llu, \"frees\": %llu, "
		"\"allocated_bytes\": %llu, \"unsupported_calls\": %llu}\n",
		atomic_load(&n_kernels), atomic_load(&n_gemms), atomic_load(&n_memcpys),
		atomic_load(&n_memsets), atomic_load(&n_syncs), atomic_load(&n_queries),
		atomic_load(&n_allocs), atomic_load(&n_frees), atomic_load(&alloc_bytes),
		atomic_load(&n_unsupported));
	fclose(f);
}
