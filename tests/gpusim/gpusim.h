/* SPDX-License-Identifier: MIT */
/* Internal interface of the simulated GPU, shared by libcudart.so.13 and libcupti.so.13. */
#ifndef GW_SIM_GPUSIM_H
#define GW_SIM_GPUSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

/* Device limits of the virtual GPU (see README.md). */
#define GW_SIM_THREADS_PER_SM	2048
#define GW_SIM_REGS_PER_SM	65536
#define GW_SIM_REGS_PER_THREAD	32
#define GW_SIM_SMEM_PER_SM	(228 * 1024)
#define GW_SIM_SMEM_PER_BLOCK	(227 * 1024)
#define GW_SIM_BLOCKS_PER_SM	32
#define GW_SIM_MAX_THREADS	1024
#define GW_SIM_DEVICE_NAME	"gpusim (simulated H100-like GPU)"
#define GW_SIM_LEGACY_STREAM_ID 7 /* each device's legacy stream, as CUPTI numbers them */
#define GW_SIM_CONTEXT_ID	1 /* device 0's context; device d's is d + 1 */
#define GW_SIM_MAX_DEVICES	8

/* A GPUSIM_KERNEL_* entry: kernels whose mangled name contains substr get its values. */
struct gw_sim_kernel_rule {
	char *substr;
	double value[2];
	unsigned n_values;
};

/* Knobs read once from the environment (GPUSIM_*); times already converted to ns. */
struct gw_sim_config {
	uint32_t devices; /* GPUSIM_DEVICES: simulated GPUs, each its own timeline */
	uint32_t sms;
	uint64_t mem_bytes;
	uint64_t launch_ns;
	uint64_t queue_ns;
	uint64_t wave_ns;
	uint64_t copy_ns;
	double h2d_gbps;
	double d2h_gbps;
	double d2d_gbps;
	double p2p_gbps; /* GPUSIM_P2P_GBPS: between two devices */
	uint32_t queue_depth;
	uint64_t init_ns;	 /* GPUSIM_INIT_MS: the first call creates the context */
	uint64_t module_load_ns; /* GPUSIM_MODULE_LOAD_US: a kernel's first launch loads it */
	uint64_t hold_ns;	 /* GPUSIM_HOLD_US: the device starts nothing before then */
	bool nested_shared_correlation; /* GPUSIM_NESTED_CORRELATION=shared */
	bool gpu_driver_correlation;	/* GPUSIM_GPU_CORRELATION=driver */
	uint32_t green_sms; /* GPUSIM_GREEN_SMS: the context is a green one with that many */
	size_t n_kernel_us;
	struct gw_sim_kernel_rule *kernel_us; /* GPUSIM_KERNEL_US: µs per wave */
	size_t n_kernel_regs;
	struct gw_sim_kernel_rule *kernel_regs; /* GPUSIM_KERNEL_REGS: registers[:static smem] */
	/* GPUSIM_KERNEL_DRAM, _SM, _TENSOR: what a kernel uses of the device while it runs, as
	 * the simulated NVML counters report it (a share, 0-1) */
	size_t n_kernel_dram, n_kernel_sm, n_kernel_tensor;
	struct gw_sim_kernel_rule *kernel_dram, *kernel_sm, *kernel_tensor;
};

/* What an operation uses of the device while it runs: shares of the full scale of the
 * simulated NVML counters (libnvidia-ml.so.1). */
struct gw_sim_usage {
	double dram;	  /* DRAM bandwidth / its peak (GPUSIM_D2D_GBPS) */
	double sm;	  /* SMs holding one of its blocks / all SMs */
	double occupancy; /* warps resident / the SMs' maximum */
	double tensor;	  /* tensor pipes busy */
};

/* The simulated counters' means over a window of the timeline (each operation's usage
 * weighted by its overlap; concurrent operations add up, capped at 1), and the share of the
 * window with any kernel running and with device memory in use. */
struct gw_sim_activity {
	struct gw_sim_usage mean;
	double kernel_busy, memory_busy;
};

enum gw_sim_op_kind {
	GW_SIM_OP_KERNEL,
	GW_SIM_OP_MEMCPY,
	GW_SIM_OP_MEMSET,
};

/* One operation placed on the virtual device timeline, as handed to the CUPTI stand-in. */
struct gw_sim_op {
	enum gw_sim_op_kind kind;
	uint64_t queued_ns; /* set before gw_sim_enqueue: when its call issued it (0: then) */
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t stream_id;
	uint32_t device; /* the device whose stream runs it */
	uint32_t correlation_id;
	uint32_t graph_id;
	uint64_t graph_node_id;
	/* the calling thread waits for it (a synchronous copy or memset): on a stream held by a
	 * host function or a wait for a value, the call waits for the hold to end first */
	bool blocking;
	/* GW_SIM_OP_KERNEL */
	const char *name;
	dim3 grid;
	dim3 block;
	uint32_t static_smem;
	uint32_t dynamic_smem;
	uint32_t regs;	   /* registers per thread */
	uint32_t carveout; /* the SM's shared-memory carveout it ran with */
	dim3 cluster;	   /* thread-block cluster; 1 x 1 x 1 none */
	/* GW_SIM_OP_MEMCPY, GW_SIM_OP_MEMSET */
	uint64_t bytes;
	uint8_t copy_kind; /* CUpti_ActivityMemcpyKind */
	uint8_t src_kind;  /* CUpti_ActivityMemoryKind */
	uint8_t dst_kind;
	bool async;
	uint32_t value;
	/* a copy between two devices: CUPTI's MEMCPY2 record (CUpti_ActivityMemcpyPtoP4) */
	bool peer;
	uint32_t src_device, dst_device;
	/* what it uses of the device (kernels: the GPUSIM_KERNEL_DRAM/SM/TENSOR knobs; copies
	 * and memsets: their rate over the peak) */
	struct gw_sim_usage usage;
};

/* An allocation or release of device, pinned or managed memory. */
struct gw_sim_mem_event {
	bool release;
	bool async;
	uint8_t mem_kind; /* CUpti_ActivityMemoryKind */
	uint64_t address;
	uint64_t bytes;
	uint64_t t_ns;
	uint32_t stream_id;
	uint32_t correlation_id;
};

/* A host wait on the device, or a query of a stream or event (the CUPTI SYNCHRONIZATION
 * activity; CUPTI makes one for every query by default). */
struct gw_sim_sync_event {
	CUpti_ActivitySynchronizationType type;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t stream_id;
	uint32_t event_id;
	uint32_t correlation_id;
	bool query;	 /* cudaStreamQuery / cudaEventQuery */
	uint32_t result; /* CUresult of a query: CUDA_ERROR_NOT_READY when not done */
};

/* One API call in flight on the calling thread (runtime, or driver nested in a runtime call). */
struct gw_sim_api {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	const char *name;
	const void *params;
	const char *symbol;
	uint32_t correlation_id;
	uint32_t traced; /* set by the hooks: what api_exit has to do */
	uint64_t start_ns;
	uint64_t correlation_data;
	cudaError_t ret;
	bool keep_error; /* the call reports the last error: it must not set it */
	struct gw_sim_api *outer;
};

/*
 * What libcupti.so.13 plugs into the runtime. Every function is called on the thread making the
 * CUDA call, outside the runtime's locks; records passed by pointer are only valid for the call.
 */
struct gw_sim_hooks {
	void (*api_enter)(struct gw_sim_api *api);
	void (*api_exit)(struct gw_sim_api *api);
	void (*op)(const struct gw_sim_op *op);
	void (*memory)(const struct gw_sim_mem_event *ev);
	void (*sync)(const struct gw_sim_sync_event *ev);
	void (*device)(void);
	/* the context now exists (it was created inside the current call) */
	void (*context_created)(void);
	/* host time the current call spent on CUDA's own start-up work (kind:
	 * CUpti_ActivityOverheadKind) */
	void (*overhead)(uint32_t kind, uint64_t start_ns, uint64_t end_ns);
};

/* Exported by libcudart.so.13 for libcupti.so.13 (the gw_sim_ prefix keeps them apart). */

/* Installs (or with NULL removes) the hooks; the struct must outlive the process. */
void gw_sim_set_hooks(const struct gw_sim_hooks *hooks);
/* CLOCK_MONOTONIC_RAW in ns: the clock of the virtual timeline. */
uint64_t gw_sim_now_ns(void);
/* Returns once gw_sim_now_ns() >= t_ns (sleeps, then spins the last stretch). */
void gw_sim_wait_until(uint64_t t_ns);
/* The knobs (read from the environment on first use). Never NULL. */
const struct gw_sim_config *gw_sim_config(void);
/* True once the runtime has initialized its device (first runtime call). */
bool gw_sim_device_ready(void);
/* Initializes the device as the driver's cuInit does (loading CUDA_INJECTION64_PATH once),
 * for a CUPTI that initializes the driver itself. */
void gw_sim_driver_init(void);
/* The CUPTI stream id of a stream handle; -EINVAL for an unknown handle. */
int gw_sim_stream_id(cudaStream_t stream, bool per_thread, uint32_t *ret_id);
/* The context of the calling thread's current device (each device has one). */
CUcontext gw_sim_context(void);
/* Device d's context; the device of a context, or -1 for a handle that is none. */
CUcontext gw_sim_device_context(unsigned int d);
int gw_sim_context_device(CUcontext ctx);
/* The simulated counters over [t0_ns, t1_ns] of the timeline (t1_ns > t0_ns): the timeline
 * keeps the last 65,536 operations' usage (work queued before NVML was loaded counts too). */
void gw_sim_activity(uint32_t device, uint64_t t0_ns, uint64_t t1_ns, struct gw_sim_activity *ret);

/* For gpusim's simulated libraries (cuBLAS): the next kernel launched on the calling thread
 * lasts ns on the device instead of waves x wave time (its own cost model; 0: none). */
void gw_sim_set_next_kernel_ns(uint64_t ns);
/* Counts a GEMM for GPUSIM_STATS (the simulated cuBLAS, before launching it). */
void gw_sim_stats_gemm(void);

#endif
