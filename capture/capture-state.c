/* SPDX-License-Identifier: MIT */
/* The per-event capture state: on/off, stacks, thread ids and their THREAD records. */
#include "capture-state.h"

#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "trace-writer.h"

_Atomic bool gw_capture_on;
bool gw_stacks_on;
struct gw_lifecycle_hooks gw_lifecycle;

static __thread __attribute__((tls_model("initial-exec"))) uint64_t thread_tid;

bool gw_capture_wake(void)
{
	return gw_lifecycle.wake && gw_lifecycle.wake();
}

uint64_t gw_thread_id(void)
{
	struct gw_rec_thread rec;
	char name[17] = "";

	if (thread_tid)
		return thread_tid;
	if (gw_lifecycle.thread_first_event)
		gw_lifecycle.thread_first_event();
	thread_tid = (uint64_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, name);
	rec = (struct gw_rec_thread){
		.time_ns = gw_now_ns(),
		.tid = thread_tid,
		.name = {(const uint8_t *)name, (uint32_t)strlen(name)},
	};
	gw_emit(GW_REC_THREAD, &rec);
	return thread_tid;
}

void gw_thread_id_fork_child(void)
{
	thread_tid = 0;
}
