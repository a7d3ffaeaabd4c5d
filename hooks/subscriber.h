/* SPDX-License-Identifier: MIT */
/* The CUPTI subscriber: loading libcupti, the API callbacks and the activity buffers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* The CUPTI functions gpuwhy calls, resolved from the dlopen'ed library (never linked). */
#define GW_CUPTI_FUNCTIONS(X)                                                                      \
	X(cuptiGetVersion)                                                                         \
	X(cuptiGetResultString)                                                                    \
	X(cuptiSubscribe)                                                                          \
	X(cuptiUnsubscribe)                                                                        \
	X(cuptiEnableCallback)                                                                     \
	X(cuptiActivityEnable)                                                                     \
	X(cuptiActivityRegisterCallbacks)                                                          \
	X(cuptiActivityRegisterTimestampCallback)                                                  \
	X(cuptiActivityFlushAll)                                                                   \
	X(cuptiActivityGetNextRecord)                                                              \
	X(cuptiActivityGetNumDroppedRecords)                                                       \
	X(cuptiGetDeviceId)

struct gw_cupti_api {
#define GW_CUPTI_POINTER(f) __typeof__(f) *f;
	GW_CUPTI_FUNCTIONS(GW_CUPTI_POINTER)
#undef GW_CUPTI_POINTER
};

/* The loaded library: functions valid after gw_cupti_load, the version after
 * gw_cupti_subscribe succeeded. */
extern struct gw_cupti_api gw_cupti;
extern uint32_t gw_cupti_version;
extern char gw_cupti_path[4096 + 64];

/* The activity kinds gpuwhy enables. RUNTIME and DRIVER API records would repeat the
 * callbacks' records at a second cost per call, so they stay off (doc/capture.md). */
#define GW_CUPTI_ACTIVITY_KINDS                                                                    \
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,                         \
		CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,                            \
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION

/* Whether a libcudart is loaded in the process (so CUDA may start before any hook of ours). */
bool gw_cudart_loaded(void);

/*
 * Loads libcupti: explicit (GPUWHY_CUPTI_PATH) if not NULL, else next to the process's
 * libcudart, the CUDA toolkit, Python's nvidia/cuda_cupti/lib beside a wheel's libcudart,
 * then the plain soname. Returns 0 or -ENOENT / -ENOSYS, with a reason in why.
 */
int gw_cupti_load(const char *explicit_path, char *why, size_t why_size);

/*
 * Subscribes the callback, registers the timestamp callback (CLOCK_MONOTONIC_RAW) and the
 * activity buffer callbacks. Enables nothing yet. -EBUSY when another subscriber holds CUPTI
 * (error 39), another -errno otherwise; a reason in why.
 */
int gw_cupti_subscribe(char *why, size_t why_size);

/* Enables the callbacks of include/gpuwhy/api-table.def and the activity kinds. Returns how many of
 * them failed (0 = all on). */
int gw_cupti_enable(void);

/* Gives back the subscription (when the trace could not be started after all). */
void gw_cupti_unsubscribe(void);

/* Asks CUPTI for its completed (forced: also incomplete) activity buffers; they are converted
 * into records on return, or on CUPTI's thread. Never call with a gpuwhy lock held. */
void gw_cupti_flush(bool forced);

/* Starts / stops the thread that flushes CUPTI's buffers every GW_CUPTI_FLUSH_NS, so that GPU
 * records reach the file as fast as host ones. */
#define GW_CUPTI_FLUSH_NS 50000000ull
int gw_cupti_flusher_start(void);
void gw_cupti_flusher_stop(void);

/* In a fork child, where the flusher thread does not exist: forgets it without joining. */
void gw_cupti_flusher_forget(void);

/* Whether activity records are converted (true while a writer runs in this process). */
void gw_cupti_set_activity(bool on);

/* Allocates the activity buffer pool. 0 or -ENOMEM. */
int gw_cupti_pool_init(void);

/* CUPTI callbacks (cupti-callbacks.c, cupti-activity.c). */
void CUPTIAPI gw_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data);
void CUPTIAPI gw_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI gw_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid_size);

/* Every runtime / driver callback id of include/gpuwhy/api-table.def, for enabling them. */
struct gw_api_row {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	const char *name;
	uint8_t category;  /* enum gw_api_category */
	uint8_t sync_kind; /* enum gw_sync_kind */
	uint8_t mem_kind;  /* enum gw_mem_kind, 0 when not an allocation or free */
};
/* The memory kind of a row that is no allocation or free (the table writes 0). */
#define GW_MEM_0 0
extern const struct gw_api_row gw_api_rows[];
extern const unsigned gw_api_rows_count;
