/* SPDX-License-Identifier: MIT */
/* Finds and loads libcupti at run time, subscribes gpuwhy and enables what it records. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "subscriber.h"

#ifndef GW_CUDA_ROOT
#define GW_CUDA_ROOT "/usr/local/cuda"
#endif

struct gw_cupti_api gw_cupti;
uint32_t gw_cupti_version;
char gw_cupti_path[4096 + 64];
bool gw_cupti_loaded_before;
_Atomic bool gw_cupti_usable;
unsigned gw_cupti_unknown_callbacks;
uint64_t gw_cupti_buffer_bytes, gw_cupti_buffer_limit_bytes;

static CUpti_SubscriberHandle subscriber;
static void *cupti_handle;

struct cudart_location {
	char dir[4096];
	char major[16]; /* "13" from libcudart.so.13; empty when unversioned */
};

static int find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
	struct cudart_location *loc = data;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *ver;
	size_t dir_len;

	(void)size;
	if (!slash || strncmp(slash + 1, "libcudart.so", 12))
		return 0;
	dir_len = (size_t)(slash - info->dlpi_name);
	if (dir_len >= sizeof(loc->dir))
		return 0;
	memcpy(loc->dir, info->dlpi_name, dir_len);
	loc->dir[dir_len] = '\0';
	ver = slash + 1 + 12;
	if (*ver == '.')
		snprintf(loc->major, sizeof(loc->major), "%.*s", (int)strcspn(ver + 1, "."),
			 ver + 1);
	return 1;
}

bool gw_cudart_loaded(void)
{
	struct cudart_location loc;

	return dl_iterate_phdr(find_cudart, &loc) != 0;
}

/* A libcupti the process has loaded already (PyTorch's libkineto links one). */
static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *slash = strrchr(info->dlpi_name, '/');
	char *path = data;

	(void)size;
	if (!slash || strncmp(slash + 1, "libcupti.so", 11))
		return 0;
	snprintf(path, sizeof(gw_cupti_path), "%s", info->dlpi_name);
	return 1;
}

/* A dlopen that failed for want of a file descriptor (its message is all dlopen says), and
 * the path it was for: without one, every candidate fails, and "none found" would mislead. */
static char no_fd_path[4096], last_error[1024];

static void *try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const char *err;

	if (h) {
		snprintf(gw_cupti_path, sizeof(gw_cupti_path), "%s", path);
		return h;
	}
	err = dlerror();
	snprintf(last_error, sizeof(last_error), "%s", err ? err : "unknown error");
	if (err && (strstr(err, strerror(EMFILE)) || strstr(err, strerror(ENFILE))))
		snprintf(no_fd_path, sizeof(no_fd_path), "%s", path);
	return NULL;
}

static void *search(const char *explicit_path, char *why, size_t why_size)
{
	struct cudart_location loc = {.dir = ""};
	char path[4096 + 64];
	void *h;

	no_fd_path[0] = '\0';
	if (explicit_path) {
		if (!(h = try_open(explicit_path)))
			snprintf(why, why_size, "cannot load %s: %s%s", explicit_path, last_error,
				 no_fd_path[0] ? " (no file descriptor left)" : "");
		return h;
	}

	/* The process's own: RTLD_NOLOAD only takes a reference, it loads nothing. */
	if (dl_iterate_phdr(find_cupti, path) && (h = dlopen(path, RTLD_NOW | RTLD_NOLOAD))) {
		snprintf(gw_cupti_path, sizeof(gw_cupti_path), "%s", path);
		gw_cupti_loaded_before = true;
		return h;
	}

	if (dl_iterate_phdr(find_cudart, &loc)) {
		/* Beside libcudart (toolkit lib64 and gpusim), the toolkit's extras, and a pip
		 * wheel's layout: nvidia/cuda_runtime/lib next to nvidia/cuda_cupti/lib. */
		static const char *const rel[] = {"", "/../extras/CUPTI/lib64",
						  "/../../cuda_cupti/lib"};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			if (*loc.major) {
				snprintf(path, sizeof(path), "%s%s/libcupti.so.%s", loc.dir, rel[i],
					 loc.major);
				if ((h = try_open(path)))
					return h;
			}
			snprintf(path, sizeof(path), "%s%s/libcupti.so", loc.dir, rel[i]);
			if ((h = try_open(path)))
				return h;
		}
	}
	{
		/* lib/: the toolkit as the CUDA 13 wheels lay it out (nvidia/cu13/lib). */
		static const char *const fixed[] = {
			GW_CUDA_ROOT "/lib64/libcupti.so",
			GW_CUDA_ROOT "/extras/CUPTI/lib64/libcupti.so",
			GW_CUDA_ROOT "/lib/libcupti.so",
			"/usr/local/cuda/lib64/libcupti.so",
			"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
			"/usr/local/cuda/lib/libcupti.so",
			"libcupti.so." GW_CUPTI_SOVERSION,
			"libcupti.so",
		};

		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			if ((h = try_open(fixed[i])))
				return h;
	}
	if (no_fd_path[0])
		snprintf(why, why_size,
			 "cannot load libcupti: too many open files (no file descriptor left to "
			 "open %s; the program uses all its RLIMIT_NOFILE allows)",
			 no_fd_path);
	else
		snprintf(why, why_size, "no libcupti found (set GPUWHY_CUPTI_PATH)");
	return NULL;
}

int gw_cupti_load(const char *explicit_path, char *why, size_t why_size)
{
	void *h = search(explicit_path, why, why_size);

	if (!h)
		return -ENOENT;
	cupti_handle = h;
#define GW_CUPTI_RESOLVE(f)                                                                        \
	gw_cupti.f = (__typeof__(f) *)dlsym(h, #f);                                                \
	if (!gw_cupti.f) {                                                                         \
		snprintf(why, why_size, "%s lacks %s", gw_cupti_path, #f);                         \
		return -ENOSYS;                                                                    \
	}
	GW_CUPTI_FUNCTIONS(GW_CUPTI_RESOLVE)
#undef GW_CUPTI_RESOLVE
	return 0;
}

static const char *result_text(CUptiResult r)
{
	const char *text = NULL;

	if (gw_cupti.cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
		text = "unknown error";
	return text;
}

static uint64_t CUPTIAPI timestamp(void)
{
	return gw_now_ns();
}

int gw_cupti_subscribe(char *why, size_t why_size)
{
	CUptiResult r = gw_cupti.cuptiSubscribe(&subscriber, gw_cupti_on_callback, NULL);

	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_size, "cuptiSubscribe: error %d (%s)%s", (int)r, result_text(r),
			 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
				 ? ": another tool holds CUPTI"
				 : "");
		return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? -EBUSY : -EIO;
	}
	/* CUPTI asks for cuptiSubscribe before any other call (multi-subscriber mode). */
	if (gw_cupti.cuptiGetVersion(&gw_cupti_version) != CUPTI_SUCCESS)
		gw_cupti_version = 0;
	if (gw_cupti_version < GW_CUPTI_MIN_API) {
		snprintf(why, why_size,
			 "%s is CUPTI API version %u, older than CUDA 11.0's (%u), whose records "
			 "gpuwhy reads",
			 gw_cupti_path, gw_cupti_version, GW_CUPTI_MIN_API);
		gw_cupti_unsubscribe();
		return -ENOTSUP;
	}
	/* Registered once per process: re-registering corrupts kernel timestamps. */
	r = gw_cupti.cuptiActivityRegisterTimestampCallback(timestamp);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_size, "cuptiActivityRegisterTimestampCallback: error %d (%s)",
			 (int)r, result_text(r));
		goto fail;
	}
	r = gw_cupti.cuptiActivityRegisterCallbacks(gw_cupti_buffer_requested,
						    gw_cupti_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_size, "cuptiActivityRegisterCallbacks: error %d (%s)", (int)r,
			 result_text(r));
		goto fail;
	}
	atomic_store(&gw_cupti_usable, true);
	return 0;
fail:
	gw_cupti_unsubscribe();
	return -EIO;
}

void *gw_cupti_symbol(const char *name)
{
	return cupti_handle ? dlsym(cupti_handle, name) : NULL;
}

void gw_cupti_unsubscribe(void)
{
	if (subscriber)
		gw_cupti.cuptiUnsubscribe(subscriber);
	subscriber = NULL;
}

/* An activity attribute of size_t or uint8_t, or 0 when this CUPTI does not say. */
static uint64_t attribute(__typeof__(cuptiActivityGetAttribute) *get, CUpti_ActivityAttribute a,
			  size_t size)
{
	uint64_t v = 0;

	if (!get || get(a, &size, &v) != CUPTI_SUCCESS)
		return 0;
	return size == 1 ? (v & 0xff) : v;
}

/*
 * CUPTI's device memory per context, by its own attributes (cupti_activity.h): buffers of
 * DEVICE_BUFFER_SIZE (3.2 MB by default), PRE_ALLOCATE_VALUE of them (3) allocated with the
 * context, up to POOL_LIMIT (250) under a dense flow of kernels, copies and memsets; in device
 * memory since CUDA 12.0 update 1 unless MEM_ALLOCATION_TYPE_HOST_PINNED asks for host memory.
 * CUPTI says the real amount "might be larger": these are the least it takes.
 */
static void read_buffer_bytes(void)
{
	__typeof__(cuptiActivityGetAttribute) *get;
	uint64_t size, pre, limit;

	*(void **)&get = dlsym(cupti_handle, "cuptiActivityGetAttribute");
	gw_cupti_buffer_bytes = gw_cupti_buffer_limit_bytes = 0;
	size = attribute(get, CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, sizeof(size_t));
	pre = attribute(get, CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, sizeof(size_t));
	limit = attribute(get, CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, sizeof(size_t));
	if (!size || attribute(get, CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, 1))
		return;
	/* a CUPTI without the preallocation attribute (before 12.0) allocated 3 */
	gw_cupti_buffer_bytes = size * (pre ? pre : 3);
	gw_cupti_buffer_limit_bytes = limit ? size * limit : 0;
}

int gw_cupti_enable(void)
{
	static const CUpti_ActivityKind kinds[] = {GW_CUPTI_ACTIVITY_KINDS};
	__typeof__(cuptiActivityEnableAllSyncRecords) *all_sync;
	const char *name;
	int failed = 0;

	gw_cupti_unknown_callbacks = 0;
	for (unsigned i = 0; i < gw_api_rows_count; i++) {
		if (gw_cupti.cuptiEnableCallback(1, subscriber, gw_api_rows[i].domain,
						 gw_api_rows[i].cbid) == CUPTI_SUCCESS)
			continue;
		/* An id this CUPTI has no name for is newer than it: not a refusal. */
		if (gw_cupti.cuptiGetCallbackName(gw_api_rows[i].domain, gw_api_rows[i].cbid,
						  &name) != CUPTI_SUCCESS)
			gw_cupti_unknown_callbacks++;
		else
			failed++;
	}
	/* Context creation, for the start-up line of the report; a CUPTI without it loses
	 * only that line. */
	(void)gw_cupti.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (gw_cupti.cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
			failed++;
	/* SYNCHRONIZATION is not enabled; should another client enable it, CUPTI 12.8 and later
	 * at least make no record for each poll of a stream or event query. */
	*(void **)&all_sync = dlsym(cupti_handle, "cuptiActivityEnableAllSyncRecords");
	if (all_sync)
		all_sync(0);
	read_buffer_bytes();
	return failed;
}

void gw_cupti_flush(bool forced)
{
	gw_cupti.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}
