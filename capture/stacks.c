/* SPDX-License-Identifier: MIT */
/* Unwinds the current thread and turns the stack into a deduplicated id. */
#include "stacks.h"

#include <libunwind.h>

#include <gpuwhy/trace-format.h>

#include "intern.h"
#include "modules.h"
#include "python-frames.h"

/* Deep enough for framework code between the application's call site and the CUDA call. */
#define UNWIND_DEPTH 64

uint64_t gw_stack_capture(void)
{
	void *raw[UNWIND_DEPTH];
	uint64_t ips[UNWIND_DEPTH], mixed[GW_MAX_STACK_DEPTH];
	uint32_t depth = 0, merged;
	int first = 0, n;

	/* during another thread's fork, no stack rather than a child that hangs */
	if (!gw_modules_walk_begin(false))
		return 0;
	n = unw_backtrace(raw, UNWIND_DEPTH);
	gw_modules_walk_end();
	while (first < n && gw_modules_is_self((uint64_t)(uintptr_t)raw[first]))
		first++;
	for (int i = first; i < n; i++)
		ips[depth++] = (uint64_t)(uintptr_t)raw[i];
	/* In a Python program, the thread's Python frames join the native ones. */
	merged = gw_python_merge(ips, depth, mixed, GW_MAX_STACK_DEPTH);
	if (merged)
		return gw_intern_stack_kind(mixed, merged, GW_STACK_MIXED);
	if (!depth)
		return 0;
	return gw_intern_stack(ips, depth);
}
