/* SPDX-License-Identifier: MIT */
/* The CUPTI subscriber: loading libcupti, the API callbacks and the activity buffers. */
#pragma once

#include <stdatomic.h>
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
	X(cuptiGetDeviceId)                                                                        \
	X(cuptiGetCallbackName)

struct gw_cupti_api {
#define GW_CUPTI_POINTER(f) __typeof__(f) *f;
	GW_CUPTI_FUNCTIONS(GW_CUPTI_POINTER)
#undef GW_CUPTI_POINTER
};

/* The loaded library: functions valid after gw_cupti_load, the version after
 * gw_cupti_subscribe succeeded. gw_cupti_loaded_before: it was in the process already. */
extern struct gw_cupti_api gw_cupti;
extern uint32_t gw_cupti_version;
extern char gw_cupti_path[4096 + 64];
extern bool gw_cupti_loaded_before;

/* The oldest CUPTI whose records gpuwhy can read: API 13 (CUDA 11.0) brought the kernel, copy
 * and memset records with graphId (Kernel5, Memcpy4, Memset3) at the offsets gpuwhy reads. */
#define GW_CUPTI_MIN_API 13

/* Whether CUPTI may be called in this process: true once subscribed, false in a fork child
 * (CUPTI has no fork support: a call there may never return). */
extern _Atomic bool gw_cupti_usable;
/* Set at the first recorded CUDA call: CUPTI is flushed only from then on. */
extern _Atomic bool gw_cupti_cuda_seen;
/* Successful launch and graph-launch calls recorded (approximate: a count lost to a race
 * between threads is no matter), for noticing a second CUPTI client. */
extern _Atomic uint64_t gw_cupti_launches;
/* Callbacks of the table that this CUPTI does not know (an older CUPTI: CUPTI 12 has no
 * cuCtxSynchronize_v2), set by gw_cupti_enable: version noise, not refusals. */
extern unsigned gw_cupti_unknown_callbacks;

/* The activity kinds gpuwhy enables. RUNTIME and DRIVER API records would repeat the
 * callbacks' records at a second cost per call, so they stay off (doc/capture.md); so do
 * SYNCHRONIZATION records, one per synchronizing call (the API record has it) and one per
 * stream or event query that found its work done (PyTorch's allocator makes thousands): the
 * callbacks fold a polling loop's queries into one SYNC record instead. MEMCPY2 is the
 * peer-to-peer copies'. */
#define GW_CUPTI_ACTIVITY_KINDS                                                                    \
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,                                   \
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,                 \
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,                           \
		CUPTI_ACTIVITY_KIND_OVERHEAD

/* The CUPTI API versions whose records carry what gpuwhy reads beyond GW_CUPTI_MIN_API's:
 * kernel clusters (Kernel8, CUDA 11.8) and green contexts (Context2; green contexts came with
 * CUDA 12.4, and 12.5's CUPTI is the first gpuwhy trusts to describe them). */
#define GW_CUPTI_API_CLUSTERS	    18
#define GW_CUPTI_API_GREEN_CONTEXTS 23

/* Whether a libcudart is loaded in the process (so CUDA may start before any hook of ours). */
bool gw_cudart_loaded(void);

/*
 * Loads libcupti: explicit (GPUWHY_CUPTI_PATH) if not NULL, else the one the process already
 * has (PyTorch's, jaxlib's: two CUPTIs against one driver would fight), else next to the
 * process's libcudart, the CUDA toolkit, Python's nvidia/cuda_cupti/lib beside a wheel's
 * libcudart, then the plain soname. Returns 0 or -ENOENT / -ENOSYS, with a reason in why.
 */
int gw_cupti_load(const char *explicit_path, char *why, size_t why_size);

/*
 * Subscribes the callback, registers the timestamp callback (CLOCK_MONOTONIC_RAW) and the
 * activity buffer callbacks. Enables nothing yet. -EBUSY when another subscriber holds CUPTI
 * (error 39), -ENOTSUP for a CUPTI older than GW_CUPTI_MIN_API, another -errno otherwise; a
 * reason in why.
 */
int gw_cupti_subscribe(char *why, size_t why_size);

/* Enables the callbacks of include/gpuwhy/api-table.def and the activity kinds, and reads how
 * much device memory CUPTI's activity buffers take (gw_cupti_buffer_bytes). Returns how many
 * CUPTI refused (0 = all on); callbacks it does not know are counted in
 * gw_cupti_unknown_callbacks instead. */
int gw_cupti_enable(void);

/* CUPTI's device memory for each context, from its activity attributes (0: unknown): what it
 * allocates up front (buffer size x preallocated buffers) and the most it may take (buffer
 * size x pool limit); none when it keeps its buffers in pinned host memory. Written as
 * COUNTER records with each context's device. */
extern uint64_t gw_cupti_buffer_bytes, gw_cupti_buffer_limit_bytes;

/* A function of the loaded libcupti by name, or NULL (none loaded, or it lacks it). */
void *gw_cupti_symbol(const char *name);

/* Gives back the subscription (when the trace could not be started after all). */
void gw_cupti_unsubscribe(void);

/* Asks CUPTI for its completed (forced: also incomplete) activity buffers; they are converted
 * into records on return, or on CUPTI's thread. Never call with a gpuwhy lock held. */
void gw_cupti_flush(bool forced);

/* Called as a call that destroys a context (cudaDeviceReset, cuCtxDestroy, ...) begins and as
 * it returns: hands CUPTI's completed records back, when CUPTI may be called. */
void gw_cupti_flush_at_teardown(void);

/*
 * Starts the thread that converts the buffers CUPTI completes and flushes CUPTI every
 * GW_CUPTI_FLUSH_NS once the program made its first recorded CUDA call, so that GPU records
 * reach the file soon after CUPTI lets them go. 0 or -errno.
 */
#define GW_CUPTI_FLUSH_NS 50000000ull
int gw_cupti_flusher_start(void);

/*
 * At exit: has the flusher force CUPTI's last buffers out (when CUPTI may be called) and
 * convert them, and stops it; waits at most timeout_ns. -ETIMEDOUT when it did not finish
 * (stuck inside CUPTI): it is left behind and converts nothing more. 0 otherwise.
 */
int gw_cupti_finish(uint64_t timeout_ns);

/* In a fork child, where the flusher thread does not exist: forgets it without joining. */
void gw_cupti_flusher_forget(void);

/* Whether activity records are converted (true while a writer runs in this process). */
void gw_cupti_set_activity(bool on);

/* The trace's start time: notes say "+S s" from it. */
void gw_cupti_set_epoch(uint64_t start_ns);

/* Allocates the activity buffer pool and the correlation alias table. 0 or -ENOMEM. */
int gw_cupti_pool_init(void);

/* Another CUPTI client's call that takes from gpuwhy, seen by libgpuwhy.so's interposers
 * (lib/entry.c): a NOTE saying what is lost from when, once per kind of call. caller: the
 * object that made the call, or NULL. */
enum gw_cupti_foreign {
	GW_FOREIGN_BUFFERS,   /* cuptiActivityRegisterCallbacks */
	GW_FOREIGN_TIMESTAMP, /* cuptiActivityRegisterTimestampCallback */
	GW_FOREIGN_DISABLE,   /* cuptiActivityDisable of a kind gpuwhy enabled */
	GW_FOREIGN_FINALIZE,  /* cuptiFinalize */
};
void gw_cupti_foreign_call(enum gw_cupti_foreign what, const char *caller);

/* NOTE records for what was seen before the trace began (gw_cupti_start_notes) and what the
 * exit found (gw_cupti_exit_notes: operations CUPTI could not time, no DEVICE record). */
void gw_cupti_start_notes(void);
void gw_cupti_exit_notes(void);

/* One line: how many kernel, copy and memset records carried an inner call's correlation id
 * (the driver call's inside a runtime call) rather than the recorded call's: which of the two
 * a CUPTI gives, said at exit with GPUWHY_DEBUG=1. */
void gw_cupti_join_stats(char *text, size_t size);

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
