/* SPDX-License-Identifier: MIT */
/* Keeps the list of loaded objects (path, bias, range, build id) and emits it into the trace. */
#include "modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "trace-writer.h"

#define MAX_MODULES  1024
#define MAX_BUILD_ID 64

struct module {
	uint64_t start, end, base;
	bool present; /* seen by the current scan */
};

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module modules[MAX_MODULES];
static _Atomic uint32_t module_count; /* entries below it are complete */
static uint64_t self_start, self_end;
/* fork() does not reset the lock dl_iterate_phdr takes: a thread inside it (unw_backtrace
 * walks the objects too) when another forks leaves it held in the child, whose first stack
 * or scan then waits forever. Walkers count themselves; fork waits for them to leave. */
static _Atomic unsigned walkers;
static _Atomic bool forking;
static _Atomic uint32_t generation; /* scans that found an object not seen before */
static bool scan_added;

static size_t build_id(const struct dl_phdr_info *info, uint8_t *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) && nh->n_descsz <= MAX_BUILD_ID) {
				memcpy(out, desc, nh->n_descsz);
				return nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static struct module *find(uint64_t start, uint64_t base)
{
	uint32_t n = atomic_load_explicit(&module_count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++)
		if (modules[i].start == start && modules[i].base == base)
			return &modules[i];
	return NULL;
}

static void emit(const struct module *m, uint64_t event, const uint8_t *bid, size_t bid_len,
		 const char *path)
{
	struct gw_rec_module rec = {
		.time_ns = gw_now_ns(),
		.event = event,
		.base = m->base,
		.start = m->start,
		.size = m->end - m->start,
		.build_id = {bid, (uint32_t)bid_len},
		.path = {(const uint8_t *)path, (uint32_t)strlen(path)},
	};

	gw_emit(GW_REC_MODULE, &rec);
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint8_t bid[MAX_BUILD_ID];
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	struct module *m;
	uint32_t n;
	size_t bid_len;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	m = find(lo, info->dlpi_addr);
	if (m) {
		m->present = true;
		return 0;
	}
	n = atomic_load_explicit(&module_count, memory_order_relaxed);
	if (n == MAX_MODULES)
		return 0;
	m = &modules[n];
	*m = (struct module){.start = lo, .end = hi, .base = info->dlpi_addr, .present = true};
	atomic_store_explicit(&module_count, n + 1, memory_order_release);
	scan_added = true;

	if (!path || !*path) {
		/* The main program has no name in the loader's list. */
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[len > 0 ? len : 0] = '\0';
		path = exe;
	} else if (path[0] != '/' && realpath(path, exe)) {
		/* dlopen("build/libx.so") (ctypes with a relative path) names it as given: the
		 * report, run elsewhere, would not find it. Made absolute from the working directory
		 * now, which is the one the load used unless the program changed it since. */
		path = exe;
	}
	bid_len = build_id(info, bid);
	emit(m, GW_MODULE_LOADED, bid, bid_len, path);
	return 0;
}

static void find_self(void)
{
	Dl_info di;
	uint32_t n = atomic_load_explicit(&module_count, memory_order_acquire);

	if (self_end || !dladdr((void *)find_self, &di))
		return;
	for (uint32_t i = 0; i < n; i++) {
		if ((uint64_t)(uintptr_t)di.dli_fbase >= modules[i].start &&
		    (uint64_t)(uintptr_t)di.dli_fbase < modules[i].end) {
			self_start = modules[i].start;
			self_end = modules[i].end;
		}
	}
}

bool gw_modules_walk_begin(bool wait)
{
	for (;;) {
		atomic_fetch_add(&walkers, 1);
		if (!atomic_load(&forking))
			return true;
		atomic_fetch_sub(&walkers, 1);
		if (!wait)
			return false;
		while (atomic_load(&forking))
			sched_yield();
	}
}

void gw_modules_walk_end(void)
{
	atomic_fetch_sub(&walkers, 1);
}

void gw_modules_fork_prepare(void)
{
	uint64_t give_up = gw_now_ns() + 1000000000u;

	atomic_store(&forking, true);
	/* A walk takes microseconds; the bound only keeps a stuck thread from stopping fork. */
	while (atomic_load(&walkers) && gw_now_ns() < give_up)
		sched_yield();
}

void gw_modules_fork_parent(void)
{
	atomic_store(&forking, false);
}

void gw_modules_fork_child(void)
{
	/* a walker that backed off after the fork began was copied mid-count */
	atomic_store(&walkers, 0);
	atomic_store(&forking, false);
}

void gw_modules_scan(void)
{
	uint32_t n;

	gw_modules_walk_begin(true);
	pthread_mutex_lock(&scan_lock);
	n = atomic_load_explicit(&module_count, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		modules[i].present = false;
	scan_added = false;
	dl_iterate_phdr(scan_one, NULL);
	if (scan_added)
		atomic_fetch_add_explicit(&generation, 1, memory_order_release);
	for (uint32_t i = 0; i < n; i++) {
		if (modules[i].present || modules[i].end == modules[i].start)
			continue;
		emit(&modules[i], GW_MODULE_UNLOADED, NULL, 0, "");
		/* An empty range never matches an address again. */
		modules[i].end = modules[i].start;
	}
	find_self();
	pthread_mutex_unlock(&scan_lock);
	gw_modules_walk_end();
}

static bool known(uint64_t ip)
{
	uint32_t n = atomic_load_explicit(&module_count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++)
		if (ip >= modules[i].start && ip < modules[i].end)
			return true;
	return false;
}

void gw_modules_check(const uint64_t *ips, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!known(ips[i])) {
			gw_modules_scan();
			return;
		}
	}
}

uint32_t gw_modules_generation(void)
{
	return atomic_load_explicit(&generation, memory_order_acquire);
}

bool gw_modules_is_self(uint64_t ip)
{
	return ip >= self_start && ip < self_end;
}

void gw_modules_reset(void)
{
	atomic_store(&module_count, 0);
}
