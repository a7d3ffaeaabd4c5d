/* SPDX-License-Identifier: MIT */
/* Kernel registration and launches as nvcc-generated code makes them, and capture into graphs. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_occupancy.h>

#include "runtime.h"

/* Registered kernels and __device__ variables, keyed by host address (open addressing). */
struct entry {
	const void *key;
	void *value;
	size_t size;
};

struct table {
	struct entry *v;
	size_t cap; /* power of two */
	size_t n;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table kernels, vars;
static int fatbin_handle;

static size_t slot(const struct table *t, const void *key)
{
	size_t h = ((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull;
	size_t i = h & (t->cap - 1);

	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int table_put(struct table *t, const void *key, void *value, size_t size)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct table g = {calloc(t->cap ? t->cap * 2 : 64, sizeof(struct entry)),
				  t->cap ? t->cap * 2 : 64, 0};

		if (!g.v)
			return -ENOMEM;
		for (size_t j = 0; j < t->cap; j++)
			if (t->v[j].key) {
				g.v[slot(&g, t->v[j].key)] = t->v[j];
				g.n++;
			}
		free(t->v);
		*t = g;
	}
	i = slot(t, key);
	if (!t->v[i].key)
		t->n++;
	t->v[i] = (struct entry){key, value, size};
	return 0;
}

static struct entry *table_get(struct table *t, const void *key)
{
	struct entry *e;

	if (!t->cap)
		return NULL;
	e = &t->v[slot(t, key)];
	return e->key ? e : NULL;
}

void gw_sim_registry_fork_lock(bool lock)
{
	if (lock)
		pthread_mutex_lock(&reg_lock);
	else
		pthread_mutex_unlock(&reg_lock);
}

struct gw_sim_kernel *gw_sim_kernel_find(const void *host_fun)
{
	struct entry *e;
	void *k;

	pthread_mutex_lock(&reg_lock);
	e = table_get(&kernels, host_fun);
	k = e ? e->value : NULL;
	pthread_mutex_unlock(&reg_lock);
	return k;
}

void *gw_sim_symbol_find(const void *host_var, size_t *ret_size)
{
	struct entry *e;
	void *p = NULL;

	pthread_mutex_lock(&reg_lock);
	e = table_get(&vars, host_var);
	if (e) {
		p = e->value;
		*ret_size = e->size;
	}
	pthread_mutex_unlock(&reg_lock);
	return p;
}

void **__cudaRegisterFatBinary(void *fatCubin)
{
	(void)fatCubin;
	return (void **)(void *)&fatbin_handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

/* Registrations stay: kernel names are referenced by activity records until the end. */
void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 1;
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize)
{
	struct gw_sim_kernel *k = calloc(1, sizeof(*k));

	(void)fatCubinHandle, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid;
	(void)bDim, (void)gDim, (void)wSize;
	if (!k)
		return;
	k->host_fun = hostFun;
	k->name = deviceName;
	atomic_init(&k->wave_ns, UINT64_MAX);
	atomic_init(&k->resources, UINT64_MAX);
	pthread_mutex_lock(&reg_lock);
	if (table_put(&kernels, hostFun, k, 0) < 0)
		free(k);
	pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
		       const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
		       const char *deviceName, int ext, size_t size, int constant, int global)
{
	void *p;

	(void)fatCubinHandle, (void)deviceAddress, (void)deviceName, (void)ext;
	(void)constant, (void)global;
	/* The device copy starts as the host's initial value, as the loaded module's would. */
	if (gw_sim_mem_alloc(GW_SIM_MEM_SYMBOL, size, &p) < 0)
		return;
	memcpy(p, hostVar, size);
	pthread_mutex_lock(&reg_lock);
	table_put(&vars, hostVar, p, size);
	pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
			      const char *deviceName, int ext, size_t size, int constant,
			      int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
			      const char *deviceName, int ext, size_t size, int constant,
			      int global)
{
	void *p;

	(void)fatCubinHandle, (void)deviceAddress, (void)deviceName, (void)ext;
	(void)constant, (void)global;
	if (gw_sim_mem_alloc(GW_SIM_MEM_SYMBOL, size, &p) < 0)
		return;
	*hostVarPtrAddress = p;
}

/* --- call configuration: <<<...>>> pushes, the device stub pops --- */

struct call_config {
	dim3 grid;
	dim3 block;
	size_t smem;
	cudaStream_t stream;
};

static __thread struct call_config config_stack[16];
static __thread unsigned int config_depth;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
				     struct CUstream_st *stream);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
				     struct CUstream_st *stream)
{
	if (config_depth == sizeof(config_stack) / sizeof(config_stack[0]))
		return 1;
	config_stack[config_depth++] = (struct call_config){gridDim, blockDim, sharedMem, stream};
	return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
				       void *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
				       void *stream)
{
	struct call_config c;

	if (!config_depth)
		return cudaErrorMissingConfiguration;
	c = config_stack[--config_depth];
	*gridDim = c.grid;
	*blockDim = c.block;
	*sharedMem = c.smem;
	*(cudaStream_t *)stream = c.stream;
	return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);

	if (!kernel)
		return cudaErrorInvalidValue;
	*kernel = (cudaKernel_t)(void *)k;
	return k ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

/* --- the launch itself --- */

/* The simulated GPU as the occupancy calculator describes a device: an H100 SXM's limits. */
static cudaOccDeviceProp sim_props(void)
{
	return (cudaOccDeviceProp){
		.computeMajor = 9,
		.computeMinor = 0,
		.maxThreadsPerBlock = GW_SIM_MAX_THREADS,
		.maxThreadsPerMultiprocessor = GW_SIM_THREADS_PER_SM,
		.regsPerBlock = GW_SIM_REGS_PER_SM,
		.regsPerMultiprocessor = GW_SIM_REGS_PER_SM,
		.warpSize = 32,
		.sharedMemPerBlock = 48 * 1024,
		.sharedMemPerMultiprocessor = GW_SIM_SMEM_PER_SM,
		.numSms = (int)gw_sim_rt.cfg.sms,
		.sharedMemPerBlockOptin = GW_SIM_SMEM_PER_BLOCK,
		.reservedSharedMemPerBlock = GW_SIM_SMEM_PER_SM - GW_SIM_SMEM_PER_BLOCK,
	};
}

static void kernel_resources(struct gw_sim_kernel *k, uint32_t *ret_regs, uint32_t *ret_static)
{
	uint64_t v = k ? atomic_load_explicit(&k->resources, memory_order_relaxed) : UINT64_MAX;

	if (v == UINT64_MAX) {
		gw_sim_kernel_resources(&gw_sim_rt.cfg, k ? k->name : NULL, ret_regs, ret_static);
		if (k)
			atomic_store_explicit(&k->resources,
					      (uint64_t)*ret_regs << 32 | *ret_static,
					      memory_order_relaxed);
		return;
	}
	*ret_regs = (uint32_t)(v >> 32);
	*ret_static = (uint32_t)v;
}

/* The least carveout of the architecture's sizes that holds n blocks of per_block bytes. */
static uint32_t carveout_for(const cudaOccDeviceProp *p, uint64_t bytes)
{
	size_t v = bytes > (uint64_t)p->sharedMemPerMultiprocessor ? p->sharedMemPerMultiprocessor
								   : (size_t)bytes;

	if (cudaOccAlignUpShmemSizeVoltaPlus(&v, p) != CUDA_OCC_SUCCESS)
		v = p->sharedMemPerMultiprocessor;
	return (uint32_t)v;
}

void gw_sim_occupancy(struct gw_sim_kernel *k, uint32_t threads_per_block, uint32_t dynamic_smem,
		      struct gw_sim_occupancy *ret)
{
	cudaOccDeviceProp p = sim_props();
	cudaOccFuncAttributes f = {0};
	cudaOccDeviceState state = {0};
	cudaOccResult r = {0};

	kernel_resources(k, &ret->regs, &ret->static_smem);
	state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
	f.maxThreadsPerBlock = INT_MAX;
	f.numRegs = (int)ret->regs;
	f.sharedSizeBytes = ret->static_smem;
	f.partitionedGCConfig = PARTITIONED_GC_OFF;
	/* gpusim takes any dynamic size up to the opt-in limit, as if the program opted in */
	f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
	f.maxDynamicSharedSizeBytes = dynamic_smem;
	f.numBlockBarriers = 1;
	ret->blocks_per_sm = 0;
	ret->carveout = (uint32_t)p.sharedMemPerMultiprocessor;
	if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &state, (int)threads_per_block,
						    dynamic_smem) != CUDA_OCC_SUCCESS ||
	    r.activeBlocksPerMultiprocessor <= 0)
		return;
	ret->blocks_per_sm = (uint32_t)r.activeBlocksPerMultiprocessor;
	/* The driver's default carveout costs the kernel no occupancy: the least size that
	 * holds as many blocks as the other limits allow. */
	ret->carveout =
		carveout_for(&p, (uint64_t)ret->blocks_per_sm * r.allocatedSharedMemPerBlock);
}

static uint32_t blocks_per_sm(struct gw_sim_kernel *k, uint32_t threads, size_t smem)
{
	struct gw_sim_occupancy o;

	gw_sim_occupancy(k, threads, smem > UINT32_MAX ? UINT32_MAX : (uint32_t)smem, &o);
	return o.blocks_per_sm;
}

static uint64_t kernel_wave_ns(struct gw_sim_kernel *k)
{
	uint64_t w = atomic_load_explicit(&k->wave_ns, memory_order_relaxed);

	if (w == UINT64_MAX) {
		w = gw_sim_kernel_wave_ns(&gw_sim_rt.cfg, k->name);
		atomic_store_explicit(&k->wave_ns, w, memory_order_relaxed);
	}
	return w;
}

static cudaError_t check_config(dim3 grid, dim3 block, size_t smem)
{
	uint64_t threads = (uint64_t)block.x * block.y * block.z;

	if (!threads || threads > GW_SIM_MAX_THREADS || block.x > 1024 || block.y > 1024 ||
	    block.z > 64)
		return cudaErrorInvalidConfiguration;
	if (!grid.x || !grid.y || !grid.z || grid.x > 0x7fffffffu || grid.y > 65535 ||
	    grid.z > 65535)
		return cudaErrorInvalidConfiguration;
	if (smem > GW_SIM_SMEM_PER_BLOCK)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

static cudaError_t capture_node(struct gw_sim_graph *g, struct gw_sim_kernel *k, dim3 grid,
				dim3 block, size_t smem, dim3 cluster, uint64_t dur_ns)
{
	if (g->n_nodes == g->cap_nodes) {
		size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
		struct gw_sim_node *v = realloc(g->nodes, cap * sizeof(*v));

		if (!v)
			return cudaErrorMemoryAllocation;
		g->nodes = v;
		g->cap_nodes = cap;
	}
	g->nodes[g->n_nodes++] = (struct gw_sim_node){k, grid, block, smem, cluster, dur_ns};
	return cudaSuccess;
}

/* Set by a simulated library (gw_sim_set_next_kernel_ns) for the next launch on its thread. */
static __thread uint64_t next_kernel_ns;

void gw_sim_set_next_kernel_ns(uint64_t ns)
{
	next_kernel_ns = ns;
}

/* dur_ns: the kernel's duration from a library's own cost model; 0: waves x wave time. */
static void enqueue_kernel(struct gw_sim_stream *s, struct gw_sim_kernel *k, dim3 grid, dim3 block,
			   size_t smem, dim3 cluster, uint32_t graph_id, uint64_t node_id,
			   uint64_t dur_ns)
{
	uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
	uint64_t in_cluster = (uint64_t)cluster.x * cluster.y * cluster.z;
	uint32_t sms = gw_sim_rt.cfg.green_sms ? gw_sim_rt.cfg.green_sms : gw_sim_rt.cfg.sms;
	struct gw_sim_occupancy o;
	uint64_t per_wave, waves;
	struct gw_sim_op op;

	gw_sim_occupancy(k, block.x * block.y * block.z, (uint32_t)smem, &o);
	/* a block that fits nowhere still runs, one at a time (check_config let it through) */
	per_wave = (uint64_t)sms * (o.blocks_per_sm ? o.blocks_per_sm : 1);
	/* a wave holds whole clusters: their blocks are placed together */
	if (in_cluster > 1)
		per_wave = per_wave >= in_cluster ? per_wave / in_cluster * in_cluster : in_cluster;
	waves = (blocks + per_wave - 1) / per_wave;
	op = (struct gw_sim_op){
		.kind = GW_SIM_OP_KERNEL,
		.correlation_id = gw_sim_correlation(),
		.graph_id = graph_id,
		.graph_node_id = node_id,
		.name = k->name,
		.grid = grid,
		.block = block,
		.static_smem = o.static_smem,
		.dynamic_smem = (uint32_t)smem,
		.regs = o.regs,
		.carveout = o.carveout,
		.cluster = cluster,
	};
	/* The counters NVML would show: the SMs holding a block of its first wave, the warps
	 * resident then, and the knobs' DRAM and tensor use (the SMs' too, when a knob says). */
	gw_sim_kernel_usage(&gw_sim_rt.cfg, k->name,
			    (double)(blocks < sms ? blocks : sms) / gw_sim_rt.cfg.sms, &op.usage);
	op.usage.occupancy = (double)(blocks < per_wave ? blocks : per_wave) *
			     ((block.x * block.y * block.z + 31) / 32) /
			     ((double)gw_sim_rt.cfg.sms * (GW_SIM_THREADS_PER_SM / 32));
	if (op.usage.occupancy > 1)
		op.usage.occupancy = 1;
	gw_sim_enqueue(s, &op, dur_ns ? dur_ns : waves * kernel_wave_ns(k), true);
}

/* The launch itself, inside whatever API call brackets it. */
static cudaError_t launch_body(struct gw_sim_kernel *k, struct gw_sim_stream *s, dim3 grid,
			       dim3 block, size_t smem, dim3 cluster)
{
	uint64_t dur_ns = next_kernel_ns;

	next_kernel_ns = 0;
	gw_sim_spin_ns(gw_sim_rt.cfg.launch_ns);
	/* Lazy module loading (CUDA 12.2 and later): a kernel's first launch loads it, and CUPTI
	 * reports the time as an overhead record. */
	if (gw_sim_rt.cfg.module_load_ns && !atomic_exchange(&k->loaded, true)) {
		const struct gw_sim_hooks *h =
			atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
		uint64_t t0 = gw_sim_now_ns();

		gw_sim_wait_until(t0 + gw_sim_rt.cfg.module_load_ns);
		if (h && h->overhead)
			h->overhead(CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, t0,
				    gw_sim_now_ns());
	}
	if (s->capture)
		return capture_node(s->capture, k, grid, block, smem, cluster, dur_ns);
	enqueue_kernel(s, k, grid, block, smem, cluster, 0, 0, dur_ns);
	return cudaSuccess;
}

static cudaError_t launch_check(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
				cudaStream_t stream, bool per_thread, struct gw_sim_stream **ret_s)
{
	cudaError_t err;

	if (!k)
		return cudaErrorInvalidDeviceFunction;
	err = check_config(grid, block, smem);
	if (err != cudaSuccess)
		return err;
	*ret_s = gw_sim_stream_get(stream, per_thread);
	return *ret_s ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

static const dim3 no_cluster = {1, 1, 1};

cudaError_t gw_sim_launch(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
			  cudaStream_t stream, bool per_thread)
{
	return gw_sim_launch_cluster(k, grid, block, smem, no_cluster, stream, per_thread);
}

cudaError_t gw_sim_launch_cluster(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
				  dim3 cluster, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s;
	cudaError_t err = launch_check(k, grid, block, smem, stream, per_thread, &s);

	if (err != cudaSuccess)
		return err;
	{
		DRV_BEGIN_SYM(k->name, cuLaunchKernel, cuLaunchKernel_params,
			      .f = (CUfunction)(void *)k, .gridDimX = grid.x, .gridDimY = grid.y,
			      .gridDimZ = grid.z, .blockDimX = block.x, .blockDimY = block.y,
			      .blockDimZ = block.z, .sharedMemBytes = (unsigned int)smem,
			      .hStream = stream);
		err = launch_body(k, s, grid, block, smem, cluster);
		DRV_END(err);
	}
	return err;
}

cudaError_t gw_sim_launch_direct(struct gw_sim_kernel *k, dim3 grid, dim3 block, size_t smem,
				 cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s;
	cudaError_t err = launch_check(k, grid, block, smem, stream, per_thread, &s);

	return err != cudaSuccess ? err : launch_body(k, s, grid, block, smem, no_cluster);
}

/*
 * CUPTI 13 names __cudaLaunchKernel's callback id but publishes no parameter struct for it:
 * what its callbacks see as functionParams is CUPTI's own business. gpusim hands them a block
 * whose every word is a poison value, so that a client guessing a layout (that of
 * cudaLaunchKernel_v7000_params, say) reads nonsense instead of a plausible grid.
 */
struct unpublished_params {
	cudaKernel_t kernel;
	uint64_t poison[15];
};

static struct unpublished_params unpublished(cudaKernel_t kernel)
{
	struct unpublished_params p = {.kernel = kernel};

	for (size_t i = 0; i < sizeof(p.poison) / sizeof(p.poison[0]); i++)
		p.poison[i] = 0xdeadbeefdeadbeefull;
	return p;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = (struct gw_sim_kernel *)(void *)kernel;
	struct unpublished_params gw_p_ = unpublished(kernel);
	struct gw_sim_api gw_a_;

	(void)args;
	gw_sim_api_begin(&gw_a_, CUPTI_CB_DOMAIN_RUNTIME_API,
			 CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel",
			 &gw_p_, k ? k->name : NULL);
	RT_END(gw_sim_launch(k, gridDim, blockDim, sharedMem, stream, false));
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = (struct gw_sim_kernel *)(void *)kernel;
	struct unpublished_params gw_p_ = unpublished(kernel);
	struct gw_sim_api gw_a_;

	(void)args;
	gw_sim_api_begin(&gw_a_, CUPTI_CB_DOMAIN_RUNTIME_API,
			 CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
			 "__cudaLaunchKernel_ptsz", &gw_p_, k ? k->name : NULL);
	RT_END(gw_sim_launch(k, gridDim, blockDim, sharedMem, stream, true));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			     size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchKernel, v7000, func, gridDim, blockDim, args,
		     sharedMem, stream);

	RT_END(gw_sim_launch(k, gridDim, blockDim, sharedMem, stream, false));
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchKernel_ptsz, v7000, func, gridDim, blockDim,
		     args, sharedMem, stream);

	RT_END(gw_sim_launch(k, gridDim, blockDim, sharedMem, stream, true));
}

/* A cooperative launch runs like any other here: all its blocks must fit at once, though. */
static cudaError_t launch_cooperative(const void *func, dim3 grid, dim3 block, size_t smem,
				      cudaStream_t stream, bool per_thread)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
	uint32_t per_sm = blocks_per_sm(k, block.x * block.y * block.z, smem);

	if (k && check_config(grid, block, smem) == cudaSuccess &&
	    blocks > (uint64_t)per_sm * gw_sim_rt.cfg.sms)
		return cudaErrorCooperativeLaunchTooLarge;
	return gw_sim_launch(k, grid, block, smem, stream, per_thread);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchCooperativeKernel, v9000, func, gridDim,
		     blockDim, args, sharedMem, stream);

	RT_END(launch_cooperative(func, gridDim, blockDim, sharedMem, stream, false));
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchCooperativeKernel_ptsz, v9000, func, gridDim,
		     blockDim, args, sharedMem, stream);

	RT_END(launch_cooperative(func, gridDim, blockDim, sharedMem, stream, true));
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, bool per_thread)
{
	dim3 cluster = no_cluster;

	if (!config || (config->numAttrs && !config->attrs))
		return cudaErrorInvalidValue;
	for (unsigned i = 0; i < config->numAttrs; i++) {
		const cudaLaunchAttribute *a = &config->attrs[i];

		if (a->id != cudaLaunchAttributeClusterDimension)
			continue;
		/* at most 8 blocks a cluster portably, 16 with the non-portable opt-in */
		if (!a->val.clusterDim.x || !a->val.clusterDim.y || !a->val.clusterDim.z ||
		    (uint64_t)a->val.clusterDim.x * a->val.clusterDim.y * a->val.clusterDim.z >
			    16 ||
		    config->gridDim.x % a->val.clusterDim.x ||
		    config->gridDim.y % a->val.clusterDim.y ||
		    config->gridDim.z % a->val.clusterDim.z)
			return cudaErrorInvalidValue;
		cluster = (dim3){a->val.clusterDim.x, a->val.clusterDim.y, a->val.clusterDim.z};
	}
	return gw_sim_launch_cluster(gw_sim_kernel_find(func), config->gridDim, config->blockDim,
				     config->dynamicSmemBytes, cluster, config->stream, per_thread);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchKernelExC, v11060, config, func, args);

	RT_END(launch_ex(config, func, false));
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
				     void **args)
{
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);
	RT_BEGIN_SYM(k ? k->name : NULL, cudaLaunchKernelExC_ptsz, v11060, config, func, args);

	RT_END(launch_ex(config, func, true));
}

/* --- occupancy and function attributes, by the same rule as the timing --- */

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
							  int blockSize, size_t dynamicSMemSize)
{
	RT_BEGIN(cudaOccupancyMaxActiveBlocksPerMultiprocessor, v6050, numBlocks, func, blockSize,
		 dynamicSMemSize);
	cudaError_t err = cudaSuccess;

	if (!numBlocks || blockSize <= 0)
		err = cudaErrorInvalidValue;
	else if (!gw_sim_kernel_find(func))
		err = cudaErrorInvalidDeviceFunction;
	else
		*numBlocks = (int)blocks_per_sm(gw_sim_kernel_find(func), (uint32_t)blockSize,
						dynamicSMemSize);
	RT_END(err);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
								   int blockSize,
								   size_t dynamicSMemSize,
								   unsigned int flags)
{
	(void)flags;
	return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize,
							     dynamicSMemSize);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	RT_BEGIN(cudaFuncGetAttributes, v3020, attr, func);
	cudaError_t err = cudaSuccess;

	if (!attr)
		err = cudaErrorInvalidValue;
	else if (!gw_sim_kernel_find(func))
		err = cudaErrorInvalidDeviceFunction;
	else {
		uint32_t regs, static_smem;

		kernel_resources(gw_sim_kernel_find(func), &regs, &static_smem);
		memset(attr, 0, sizeof(*attr));
		attr->maxThreadsPerBlock = GW_SIM_MAX_THREADS;
		attr->numRegs = (int)regs;
		attr->sharedSizeBytes = static_smem;
		attr->ptxVersion = 90;
		attr->binaryVersion = 90;
		attr->maxDynamicSharedSizeBytes = 48 * 1024;
		attr->preferredShmemCarveout = -1;
	}
	RT_END(err);
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	(void)attr, (void)value;
	gw_sim_init();
	return gw_sim_kernel_find(func) ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

/* --- stream capture and graphs: sequences of kernel launches, replayed in order --- */

static struct gw_sim_graph *graph_new(uint64_t magic)
{
	struct gw_sim_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->magic = magic;
	pthread_mutex_lock(&gw_sim_rt.lock);
	g->id = gw_sim_rt.next_graph_id++;
	pthread_mutex_unlock(&gw_sim_rt.lock);
	return g;
}

static void graph_free(struct gw_sim_graph *g)
{
	if (!g)
		return;
	g->magic = 0;
	free(g->nodes);
	free(g);
}

static struct gw_sim_graph *graph_get(const void *handle, uint64_t magic)
{
	struct gw_sim_graph *g = (struct gw_sim_graph *)handle;

	return g && g->magic == magic ? g : NULL;
}

static cudaError_t begin_capture(cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->legacy)
		return cudaErrorStreamCaptureUnsupported;
	if (s->capture)
		return cudaErrorIllegalState;
	s->capture = graph_new(GW_SIM_GRAPH_MAGIC);
	return s->capture ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	RT_BEGIN(cudaStreamBeginCapture, v10000, stream, mode);

	RT_END(begin_capture(stream, false));
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	RT_BEGIN(cudaStreamBeginCapture_ptsz, v10000, stream, mode);

	RT_END(begin_capture(stream, true));
}

static cudaError_t end_capture(cudaStream_t stream, cudaGraph_t *pGraph, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!pGraph)
		return cudaErrorInvalidValue;
	if (!s->capture)
		return cudaErrorIllegalState;
	*pGraph = (cudaGraph_t)(void *)s->capture;
	s->capture = NULL;
	return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	RT_BEGIN(cudaStreamEndCapture, v10000, stream, pGraph);

	RT_END(end_capture(stream, pGraph, false));
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	RT_BEGIN(cudaStreamEndCapture_ptsz, v10000, stream, pGraph);

	RT_END(end_capture(stream, pGraph, true));
}

static cudaError_t is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pStatus,
				bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!pStatus)
		return cudaErrorInvalidValue;
	*pStatus = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pStatus)
{
	RT_BEGIN(cudaStreamIsCapturing, v10000, stream, pStatus);

	RT_END(is_capturing(stream, pStatus, false));
}

cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pStatus)
{
	RT_BEGIN(cudaStreamIsCapturing_ptsz, v10000, stream, pStatus);

	RT_END(is_capturing(stream, pStatus, true));
}

static cudaError_t instantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph)
{
	struct gw_sim_graph *g = graph_get(graph, GW_SIM_GRAPH_MAGIC), *x;

	if (!pGraphExec || !g)
		return cudaErrorInvalidValue;
	x = graph_new(GW_SIM_EXEC_MAGIC);
	if (!x)
		return cudaErrorMemoryAllocation;
	x->nodes = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof(*x->nodes));
	if (!x->nodes) {
		graph_free(x);
		return cudaErrorMemoryAllocation;
	}
	if (g->n_nodes)
		memcpy(x->nodes, g->nodes, g->n_nodes * sizeof(*x->nodes));
	x->n_nodes = x->cap_nodes = g->n_nodes;
	*pGraphExec = (cudaGraphExec_t)(void *)x;
	return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				 unsigned long long flags)
{
	RT_BEGIN(cudaGraphInstantiate, v12000, pGraphExec, graph, flags);

	RT_END(instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					  unsigned long long flags)
{
	RT_BEGIN(cudaGraphInstantiateWithFlags, v11040, pGraphExec, graph, flags);

	RT_END(instantiate(pGraphExec, graph));
}

static cudaError_t graph_check(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread,
			       struct gw_sim_graph **ret_x, struct gw_sim_stream **ret_s)
{
	*ret_x = graph_get(exec, GW_SIM_EXEC_MAGIC);
	*ret_s = gw_sim_stream_get(stream, per_thread);
	if (!*ret_x)
		return cudaErrorInvalidValue;
	if (!*ret_s)
		return cudaErrorInvalidResourceHandle;
	if ((*ret_s)->capture)
		return cudaErrorStreamCaptureUnsupported;
	return cudaSuccess;
}

static void graph_body(struct gw_sim_graph *x, struct gw_sim_stream *s)
{
	gw_sim_spin_ns(gw_sim_rt.cfg.launch_ns);
	for (size_t i = 0; i < x->n_nodes; i++)
		enqueue_kernel(s, x->nodes[i].kernel, x->nodes[i].grid, x->nodes[i].block,
			       x->nodes[i].smem, x->nodes[i].cluster, x->id,
			       ((uint64_t)x->id << 32) | (i + 1), x->nodes[i].dur_ns);
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_graph *x;
	struct gw_sim_stream *s;
	cudaError_t err = graph_check(exec, stream, per_thread, &x, &s);

	if (err != cudaSuccess)
		return err;
	{
		DRV_BEGIN(cuGraphLaunch, cuGraphLaunch_params, .hGraph = (CUgraphExec)exec,
			  .hStream = stream);
		graph_body(x, s);
		DRV_END(cudaSuccess);
	}
	return cudaSuccess;
}

cudaError_t gw_sim_graph_launch_direct(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_graph *x;
	struct gw_sim_stream *s;
	cudaError_t err = graph_check(exec, stream, per_thread, &x, &s);

	if (err == cudaSuccess)
		graph_body(x, s);
	return err;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	RT_BEGIN(cudaGraphLaunch, v10000, graphExec, stream);

	RT_END(graph_launch(graphExec, stream, false));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	RT_BEGIN(cudaGraphLaunch_ptsz, v10000, graphExec, stream);

	RT_END(graph_launch(graphExec, stream, true));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	RT_BEGIN(cudaGraphDestroy, v10000, graph);
	struct gw_sim_graph *g = graph_get(graph, GW_SIM_GRAPH_MAGIC);

	graph_free(g);
	RT_END(g || !graph ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	RT_BEGIN(cudaGraphExecDestroy, v10000, graphExec);
	struct gw_sim_graph *x = graph_get(graphExec, GW_SIM_EXEC_MAGIC);

	graph_free(x);
	RT_END(x || !graphExec ? cudaSuccess : cudaErrorInvalidValue);
}
