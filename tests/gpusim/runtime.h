/* SPDX-License-Identifier: MIT */
/* Internal interface between the parts of the simulated runtime (libcudart.so.13 only). */
#ifndef GW_SIM_RUNTIME_H
#define GW_SIM_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>

#include "gpusim.h"

#define GW_SIM_STREAM_MAGIC 0x5354524541u
#define GW_SIM_EVENT_MAGIC  0x4556454e54u
#define GW_SIM_GRAPH_MAGIC  0x4752415048u
#define GW_SIM_EXEC_MAGIC   0x4558454321u

struct gw_sim_graph;
struct gw_sim_item;

struct gw_sim_stream {
	uint64_t magic;
	uint32_t id;
	uint32_t device;
	unsigned int flags;
	int priority;
	bool legacy;
	bool per_thread;
	uint64_t last_end_ns; /* end of its last operation (or of the last event it waits for) */
	struct gw_sim_graph *capture; /* non-NULL while capturing */
	struct gw_sim_stream *next_free;
	/* Held by a host function or a wait for a value (hold.c): their end is not known in
	 * advance, so the work issued behind them waits in `held` until a thread of gpusim's
	 * has run them, then is placed on the timeline. */
	bool gated;
	struct gw_sim_item *held, *held_tail;
};

struct gw_sim_event {
	uint64_t magic;
	uint32_t id;
	unsigned int flags;
	bool recorded;
	uint32_t pending; /* records of it waiting behind a host function or a wait */
	uint64_t t_ns;
	struct gw_sim_event *next_free;
};

/* Work issued to a stream behind a host function or a wait for a value (hold.c). */
enum gw_sim_item_kind {
	GW_SIM_ITEM_OP,		/* a kernel, copy or memset */
	GW_SIM_ITEM_EVENT,	/* an event record */
	GW_SIM_ITEM_HOST_FUNC,	/* cudaLaunchHostFunc, cuLaunchHostFunc */
	GW_SIM_ITEM_CALLBACK,	/* cudaStreamAddCallback, cuStreamAddCallback */
	GW_SIM_ITEM_WAIT_VALUE, /* cuStreamWaitValue32/64 */
};

struct gw_sim_item {
	struct gw_sim_item *next;
	enum gw_sim_item_kind kind;
	uint64_t start_ns; /* a hold: when its stream reaches it */
	/* GW_SIM_ITEM_OP */
	struct gw_sim_op op;
	uint64_t dur_ns;
	/* GW_SIM_ITEM_EVENT */
	struct gw_sim_event *event;
	/* GW_SIM_ITEM_HOST_FUNC, GW_SIM_ITEM_CALLBACK */
	cudaHostFn_t fn;
	cudaStreamCallback_t callback;
	cudaStream_t handle;
	void *data;
	/* GW_SIM_ITEM_WAIT_VALUE */
	const void *addr;
	uint64_t value;
	unsigned int flags;
	bool is64;
};

/* A registered __global__ function. */
struct gw_sim_kernel {
	const void *host_fun;
	const char *name;
	_Atomic uint64_t wave_ns; /* UINT64_MAX until resolved against GPUSIM_KERNEL_US */
	/* registers per thread << 32 | static shared memory bytes; UINT64_MAX until resolved
	 * against GPUSIM_KERNEL_REGS */
	_Atomic uint64_t resources;
	atomic_bool loaded; /* launched once (GPUSIM_MODULE_LOAD_US paid) */
};

struct gw_sim_node {
	struct gw_sim_kernel *kernel;
	dim3 grid;
	dim3 block;
	size_t smem;
	dim3 cluster;
	uint64_t dur_ns; /* a library's cost model; 0: waves x wave time */
};

struct gw_sim_graph {
	uint64_t magic;
	uint32_t id;
	size_t n_nodes;
	size_t cap_nodes;
	struct gw_sim_node *nodes;
};

/* Global runtime state; `lock` guards the timeline, streams and events. Each device has a
 * timeline of its own: its legacy stream, its blocking streams, its last end. */
struct gw_sim_runtime {
	pthread_mutex_t lock;
	pthread_cond_t hold_done; /* broadcast when a held stream is released */
	struct gw_sim_config cfg;
	struct gw_sim_stream legacy[GW_SIM_MAX_DEVICES];
	uint64_t device_last_end_ns[GW_SIM_MAX_DEVICES];
	/* latest end over all blocking non-legacy streams of each device */
	uint64_t blocking_max_end_ns[GW_SIM_MAX_DEVICES];
	uint32_t held[GW_SIM_MAX_DEVICES];	    /* streams held by a host function or wait */
	uint32_t held_blocking[GW_SIM_MAX_DEVICES]; /* of them, blocking non-legacy ones */
	uint64_t hold_until_ns; /* GPUSIM_HOLD_US after the first enqueue; 0: not yet */
	uint64_t *pending;	/* min-heap of the ends of unfinished operations */
	size_t n_pending;
	size_t cap_pending;
	uint32_t next_stream_id;
	uint32_t next_event_id;
	uint32_t next_graph_id;
	struct gw_sim_stream *free_streams;
	struct gw_sim_event *free_events;
};

extern struct gw_sim_runtime gw_sim_rt;
extern const struct gw_sim_hooks *_Atomic gw_sim_hooks_ptr;

/* config.c */
void gw_sim_config_load(struct gw_sim_config *cfg);
uint64_t gw_sim_kernel_wave_ns(const struct gw_sim_config *cfg, const char *name);
/* A kernel's registers per thread and static shared memory (GPUSIM_KERNEL_REGS, else 32 and 0). */
void gw_sim_kernel_resources(const struct gw_sim_config *cfg, const char *name, uint32_t *ret_regs,
			     uint32_t *ret_static_smem);

/* A kernel's usage from the GPUSIM_KERNEL_DRAM, _SM and _TENSOR knobs (dram and tensor 0, sm
 * sm_default, without a rule); occupancy is left to the caller. */
void gw_sim_kernel_usage(const struct gw_sim_config *cfg, const char *name, double sm_default,
			 struct gw_sim_usage *ret);

/* launch.c: what a kernel's launch holds of an SM, by the CUDA occupancy calculator's rules
 * for the simulated GPU (compute capability 9.0, the limits of gpusim.h). */
struct gw_sim_occupancy {
	uint32_t blocks_per_sm;	    /* 0: a block does not fit at all */
	uint32_t regs, static_smem; /* the kernel's */
	uint32_t carveout;	    /* the shared-memory carveout the driver picks: the least
				     * that costs no occupancy */
};
void gw_sim_occupancy(struct gw_sim_kernel *k, uint32_t threads_per_block, uint32_t dynamic_smem,
		      struct gw_sim_occupancy *ret);

/* timeline.c */
void gw_sim_init(void);
/* The calling thread's current device (cudaSetDevice), and setting it (-EINVAL: no such). */
unsigned int gw_sim_current_device(void);
int gw_sim_set_device(int device);
void gw_sim_spin_ns(uint64_t ns);
struct gw_sim_stream *gw_sim_stream_get(cudaStream_t handle, bool per_thread);
struct gw_sim_stream *gw_sim_stream_new(unsigned int flags, int priority);
void gw_sim_stream_free(struct gw_sim_stream *s);
struct gw_sim_event *gw_sim_event_get(cudaEvent_t handle);
struct gw_sim_event *gw_sim_event_new(unsigned int flags);
void gw_sim_event_free(struct gw_sim_event *e);
/* Places op on s's timeline lasting dur_ns (fills start/end/stream); launches obey the queue
 * depth. Calls the op hook. */
void gw_sim_enqueue(struct gw_sim_stream *s, struct gw_sim_op *op, uint64_t dur_ns, bool launch);
/* Time at which all work currently in s (resp. the device) has finished. */
uint64_t gw_sim_stream_end(struct gw_sim_stream *s);
uint64_t gw_sim_device_end(void);
uint64_t gw_sim_device_end_of(unsigned int device);
/* Whether s is held by a host function or a wait for a value now; whether e's time waits on
 * one (both as a query sees them: they do not wait). */
bool gw_sim_stream_held(struct gw_sim_stream *s);
bool gw_sim_event_pending(const struct gw_sim_event *e);
/* hold.c: issues a host function or a wait for a value (item, malloc'ed, taken over) to s:
 * everything issued to s after it waits for it; a thread of gpusim's runs it when s reaches
 * it. 0 or -errno. */
int gw_sim_stream_hold(struct gw_sim_stream *s, struct gw_sim_item *item);
/* timeline.c for hold.c, under the lock: places op on s's timeline as of now (fills
 * start/end/stream/device); the earliest time new work on s may start. */
void gw_sim_place_locked(struct gw_sim_stream *s, struct gw_sim_op *op, uint64_t dur_ns,
			 uint64_t now);
uint64_t gw_sim_ready_after_locked(const struct gw_sim_stream *s);
void gw_sim_advance_locked(struct gw_sim_stream *s, uint64_t end);
void gw_sim_event_set_locked(struct gw_sim_event *e, struct gw_sim_stream *s, uint64_t now);
void gw_sim_event_record(struct gw_sim_event *e, struct gw_sim_stream *s);
void gw_sim_stream_wait(struct gw_sim_stream *s, const struct gw_sim_event *e);
/* Whether e has been recorded, and its time. */
bool gw_sim_event_time(const struct gw_sim_event *e, uint64_t *ret_t_ns);

/* runtime.c: copies and their pieces, for the other entry points (peer.c, copies.c). */
struct gw_sim_copy_req {
	void *dst;
	const void *src;
	size_t dpitch;
	size_t spitch;
	size_t width;
	size_t height;
	enum cudaMemcpyKind kind;
	cudaStream_t stream;
	bool async;
	bool per_thread;
	size_t depth;  /* 3D copies only; 0 means 1 */
	size_t dslice; /* bytes between slices */
	size_t sslice;
	bool direct;	    /* the driver API's own entry point: no nested driver call */
	bool moved;	    /* the bytes were moved already (a batch moves all first) */
	uint64_t issued_ns; /* when the call issued it (a batch issues all at once); 0: now */
};
cudaError_t gw_sim_copy(const struct gw_sim_copy_req *r);
uint64_t gw_sim_transfer_ns(uint64_t bytes, double gbps);

/* memory.c */
enum gw_sim_mem {
	GW_SIM_MEM_PAGEABLE, /* not allocated by us */
	GW_SIM_MEM_DEVICE,
	GW_SIM_MEM_PINNED,
	GW_SIM_MEM_MANAGED,
	GW_SIM_MEM_SYMBOL,
	GW_SIM_MEM_REGISTERED, /* host memory pinned with cudaHostRegister: not ours to unmap */
};
int gw_sim_mem_alloc(enum gw_sim_mem kind, size_t bytes, void **ret_ptr);
/* Whether memory of this kind is the device's; its CUpti_ActivityMemoryKind. */
bool gw_sim_on_device(enum gw_sim_mem kind);
uint8_t gw_sim_activity_mem_kind(enum gw_sim_mem kind);
/* Frees the allocation starting at ptr; -ENOENT when ptr starts none of kind `kind`. */
int gw_sim_mem_free(enum gw_sim_mem kind, void *ptr, size_t *ret_bytes);
/* Kind of the allocation holding [ptr, ptr + bytes), with its base; PAGEABLE if none,
 * -EFAULT when ptr is inside an allocation but the range runs past its end. */
int gw_sim_mem_find(const void *ptr, size_t bytes, enum gw_sim_mem *ret_kind, void **ret_base);
/* Records [ptr, ptr + bytes) as registered host memory; -EEXIST if it overlaps any. */
int gw_sim_mem_register(void *ptr, size_t bytes);
uint64_t gw_sim_mem_used(void);
/* Takes (true) or releases (false) the allocation table's lock around fork(). */
void gw_sim_mem_fork_lock(bool lock);
void gw_sim_mem_free_all(void);

/* api.c: the per-call bracket that drives CUPTI callbacks and API records. */
void gw_sim_api_begin(struct gw_sim_api *a, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const char *name, const void *params, const char *symbol);
cudaError_t gw_sim_api_end(struct gw_sim_api *a, cudaError_t err);
uint32_t gw_sim_correlation(void);
void gw_sim_emit_memory(bool release, enum gw_sim_mem kind, const void *ptr, uint64_t bytes,
			const struct gw_sim_stream *s, bool async);
void gw_sim_emit_sync(CUpti_ActivitySynchronizationType type, uint64_t start_ns,
		      const struct gw_sim_stream *s, const struct gw_sim_event *e);
/* A query's record: result is the CUresult the query answers (CUDA_ERROR_NOT_READY = 600). */
void gw_sim_emit_query(CUpti_ActivitySynchronizationType type, uint64_t start_ns,
		       const struct gw_sim_stream *s, const struct gw_sim_event *e, bool query,
		       uint32_t result);

/* Runtime call bracket: params struct P of the real CUPTI type, then the body, then RT_END. */
#define RT_BEGIN(fn, ver, ...)                                                                     \
	fn##_##ver##_params gw_p_ = {__VA_ARGS__};                                                 \
	struct gw_sim_api gw_a_;                                                                   \
	gw_sim_api_begin(&gw_a_, CUPTI_CB_DOMAIN_RUNTIME_API,                                      \
			 CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn, &gw_p_, NULL)
#define RT_BEGIN0(fn, ver)                                                                         \
	struct gw_sim_api gw_a_;                                                                   \
	gw_sim_api_begin(&gw_a_, CUPTI_CB_DOMAIN_RUNTIME_API,                                      \
			 CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn, NULL, NULL)
/* A launch: the callbacks see the kernel's name as symbolName from API_ENTER on. */
#define RT_BEGIN_SYM(sym, fn, ver, ...)                                                            \
	fn##_##ver##_params gw_p_ = {__VA_ARGS__};                                                 \
	struct gw_sim_api gw_a_;                                                                   \
	gw_sim_api_begin(&gw_a_, CUPTI_CB_DOMAIN_RUNTIME_API,                                      \
			 CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn, &gw_p_, (sym))
#define RT_END(err) return gw_sim_api_end(&gw_a_, (err))

/* Driver call nested in the current runtime call (only traced when a hook is installed). */
#define DRV_BEGIN(fn, ptype, ...) DRV_BEGIN_SYM(NULL, fn, ptype, __VA_ARGS__)
/* A driver launch names its kernel in symbolName, as CUPTI's launch callbacks do. */
#define DRV_BEGIN_SYM(sym, fn, ptype, ...)                                                         \
	ptype gw_dp_ = {__VA_ARGS__};                                                              \
	struct gw_sim_api gw_d_;                                                                   \
	gw_sim_api_begin(&gw_d_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn, #fn,    \
			 &gw_dp_, (sym))
#define DRV_BEGIN0(fn)                                                                             \
	struct gw_sim_api gw_d_;                                                                   \
	gw_sim_api_begin(&gw_d_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn, #fn,    \
			 NULL, NULL)
#define DRV_END(err) gw_sim_api_end(&gw_d_, (err))

/* stats.c: GPUSIM_STATS, the simulator's own counts */
void gw_sim_stats_op(const struct gw_sim_op *op);
void gw_sim_stats_sync(bool query);
void gw_sim_stats_memory(bool release, uint64_t bytes);
void gw_sim_stats_unsupported(void);

/* errors.c */
void gw_sim_set_error(cudaError_t err);

/* launch.c */
cudaError_t gw_sim_launch_cluster(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
				  dim3 cluster, cudaStream_t stream, bool per_thread);
cudaError_t gw_sim_launch(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
			  cudaStream_t stream, bool per_thread);
/* The same without the nested cuLaunchKernel / cuGraphLaunch: for the driver API's own entry
 * points (driver.c), whose call is the application's. */
cudaError_t gw_sim_launch_direct(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
				 cudaStream_t stream, bool per_thread);
cudaError_t gw_sim_graph_launch_direct(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread);
struct gw_sim_kernel *gw_sim_kernel_find(const void *host_fun);
/* Takes (true) or releases (false) the registration table's lock around fork(). */
void gw_sim_registry_fork_lock(bool lock);
void *gw_sim_symbol_find(const void *host_var, size_t *ret_size);

/*
 * Exported entry points that the CUDA headers declare only for C++ (crt/host_runtime.h) or only
 * when compiling for the per-thread default stream (the _ptsz/_ptds names): prototypes for
 * -Wmissing-prototypes, matching the toolkit's.
 */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
char __cudaInitModule(void **fatCubinHandle);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
				     void **args);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				 cudaStream_t stream);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
					  unsigned int flags);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
			      size_t width, size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
				   size_t width, size_t height, enum cudaMemcpyKind kind,
				   cudaStream_t stream);
cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
				    size_t offset, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind);
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
					 cudaStream_t stream);
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
					 size_t offset, enum cudaMemcpyKind kind,
					 cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
					   size_t offset, enum cudaMemcpyKind kind,
					   cudaStream_t stream);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pStatus);

#endif
