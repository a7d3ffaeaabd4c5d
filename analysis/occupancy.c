/* SPDX-License-Identifier: MIT */
/* How many blocks of a kernel an SM holds at once, as the hardware allocates it, and the SM
 * fill that follows (doc/causes.md, "the three states"). */
#include <limits.h>
#include <math.h>

#include <cuda_occupancy.h>

#include "analysis.h"

/* What the CUDA occupancy calculator (the toolkit's cuda_occupancy.h, NVIDIA's own rules)
 * knows: compute capability 3.x to its __CUDA_OCC_MAJOR__. */
static bool calculator_knows(const struct gw_device_limits *d)
{
	switch (d->cc_major) {
	case 3:
	case 5:
	case 6:
	case 7:
	case 8:
	case 9:
	case 10:
	case 11:
	case 12:
		return d->cc_major <= __CUDA_OCC_MAJOR__;
	default:
		return false;
	}
}

static int clamp_int(uint64_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/*
 * The device as the calculator wants it. CUPTI's device record gives the per-SM limits and the
 * non-opt-in per-block shared memory; the rest is the architecture's: every block reserves
 * 1 KiB of shared memory from compute capability 8.0 on (cudaDevAttrReservedSharedMemoryPerBlock),
 * and the opt-in per-block limit is the SM's shared memory less that reservation.
 */
static void calculator_device(const struct gw_device_limits *d, uint64_t smem_per_sm,
			      cudaOccDeviceProp *p)
{
	uint64_t reserved = d->cc_major >= 8 ? 1024 : 0;

	*p = (cudaOccDeviceProp){0};
	p->computeMajor = (int)d->cc_major;
	p->computeMinor = (int)d->cc_minor;
	p->maxThreadsPerBlock =
		clamp_int(d->max_threads_per_block ? d->max_threads_per_block : 1024);
	p->maxThreadsPerMultiprocessor = clamp_int(d->max_threads_per_sm);
	p->regsPerBlock = clamp_int(d->max_regs_per_block ? d->max_regs_per_block : d->regs_per_sm);
	p->regsPerMultiprocessor = clamp_int(d->regs_per_sm);
	p->warpSize = clamp_int(d->warp_size ? d->warp_size : 32);
	p->sharedMemPerMultiprocessor = smem_per_sm;
	p->sharedMemPerBlockOptin = smem_per_sm > reserved ? smem_per_sm - reserved : 0;
	p->sharedMemPerBlock = d->max_smem_per_block_bytes
				       ? d->max_smem_per_block_bytes
				       : (smem_per_sm < 49152 ? smem_per_sm : 49152);
	if (p->sharedMemPerBlock > p->sharedMemPerBlockOptin)
		p->sharedMemPerBlockOptin = p->sharedMemPerBlock;
	p->numSms = clamp_int(d->sm_count ? d->sm_count : 1);
	p->reservedSharedMemPerBlock = reserved;
}

static unsigned limits_of(unsigned occ)
{
	unsigned v = 0;

	v |= occ & OCC_LIMIT_WARPS ? GW_OCC_LIMIT_THREADS : 0;
	v |= occ & OCC_LIMIT_REGISTERS ? GW_OCC_LIMIT_REGISTERS : 0;
	v |= occ & OCC_LIMIT_SHARED_MEMORY ? GW_OCC_LIMIT_SHARED_MEMORY : 0;
	v |= occ & OCC_LIMIT_BLOCKS ? GW_OCC_LIMIT_BLOCKS : 0;
	v |= occ & (OCC_LIMIT_BARRIERS | OCC_LIMIT_VIRTUAL_RESOURCES) ? GW_OCC_LIMIT_OTHER : 0;
	return v;
}

/* The calculator's answer; false when it cannot give one (an input it refuses). */
static bool by_calculator(const struct gw_device_limits *d, const struct gw_kernel_shape *k,
			  struct gw_occupancy *ret)
{
	uint64_t smem_sm = d->smem_per_sm_bytes;
	cudaOccFuncAttributes f = {0};
	cudaOccDeviceState state = {0};
	cudaOccDeviceProp p;
	cudaOccResult r = {0};

	state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
	if (k->smem_executed_bytes && smem_sm && d->cc_major >= 7) {
		/* The carveout the SM ran with, as a percentage the calculator maps back onto
		 * the architecture's sizes: rounded down, so that it aligns up to the size
		 * itself (sizes are further apart than one percent of the SM's memory). */
		uint64_t pct = k->smem_executed_bytes * 100 / smem_sm;

		state.carveoutConfig = (int)(pct > 100 ? 100 : pct);
	}
	calculator_device(d, smem_sm, &p);
	f.maxThreadsPerBlock = INT_MAX;
	f.numRegs = clamp_int(k->regs_per_thread);
	f.sharedSizeBytes = k->static_smem_bytes;
	f.partitionedGCConfig = PARTITIONED_GC_OFF;
	f.shmemLimitConfig = k->smem_optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
	f.maxDynamicSharedSizeBytes = k->dynamic_smem_bytes;
	f.numBlockBarriers = 1;
	if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &state,
						    clamp_int(k->threads_per_block),
						    k->dynamic_smem_bytes) != CUDA_OCC_SUCCESS)
		return false;
	if (r.activeBlocksPerMultiprocessor <= 0 && !k->smem_optin) {
		/* It ran, so it fits: the opt-in limit was set where the trace does not say. */
		f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
		if (cudaOccMaxActiveBlocksPerMultiprocessor(
			    &r, &p, &f, &state, clamp_int(k->threads_per_block),
			    k->dynamic_smem_bytes) != CUDA_OCC_SUCCESS)
			return false;
	}
	if (r.activeBlocksPerMultiprocessor <= 0)
		return false;
	ret->blocks_per_sm = (uint64_t)r.activeBlocksPerMultiprocessor;
	ret->limits = limits_of(r.limitingFactors);
	ret->exact = true;
	return true;
}

static uint64_t limit_by(uint64_t have, uint64_t need)
{
	return need ? have / need : UINT64_MAX;
}

/* Without a compute capability the calculator knows: threads, registers and shared memory per
 * block against the SM's, without allocation granularities. */
static void by_plain_limits(const struct gw_device_limits *d, const struct gw_kernel_shape *k,
			    struct gw_occupancy *ret)
{
	uint64_t warp = d->warp_size ? d->warp_size : 32;
	uint64_t threads = (k->threads_per_block + warp - 1) / warp * warp;
	uint64_t smem = k->static_smem_bytes + k->dynamic_smem_bytes;
	uint64_t n = d->max_blocks_per_sm ? d->max_blocks_per_sm : UINT64_MAX, v;
	unsigned limit = d->max_blocks_per_sm ? GW_OCC_LIMIT_BLOCKS : 0;

	if (d->max_threads_per_sm && (v = limit_by(d->max_threads_per_sm, threads)) <= n)
		limit = (v < n ? 0 : limit) | GW_OCC_LIMIT_THREADS, n = v;
	if (d->regs_per_sm && (v = limit_by(d->regs_per_sm, k->regs_per_thread * threads)) <= n)
		limit = (v < n ? 0 : limit) | GW_OCC_LIMIT_REGISTERS, n = v;
	if (d->smem_per_sm_bytes && (v = limit_by(d->smem_per_sm_bytes, smem)) <= n)
		limit = (v < n ? 0 : limit) | GW_OCC_LIMIT_SHARED_MEMORY, n = v;
	ret->blocks_per_sm = n == UINT64_MAX || n == 0 ? 1 : n;
	ret->limits = limit;
	ret->exact = false;
}

void gw_occupancy(const struct gw_device_limits *d, const struct gw_kernel_shape *k,
		  struct gw_occupancy *ret)
{
	if (!(calculator_knows(d) && by_calculator(d, k, ret)))
		by_plain_limits(d, k, ret);
}

double gw_kernel_fill(const struct gw_device_limits *d, const struct gw_kernel_shape *k)
{
	uint64_t sms = d->sm_count ? d->sm_count : 1, ctx_sms = sms, cluster, per_wave;
	struct gw_occupancy o;
	double waves;

	if (k->blocks == 0)
		return 0.0;
	/* A green context's kernels run on its SMs only. */
	if (k->context_sms && k->context_sms < sms)
		ctx_sms = k->context_sms;
	gw_occupancy(d, k, &o);
	per_wave = ctx_sms * o.blocks_per_sm;
	/* Blocks of a cluster are placed together: a wave holds whole clusters only. */
	cluster = k->cluster_blocks > 1 ? k->cluster_blocks : 1;
	per_wave = per_wave / cluster * cluster;
	if (!per_wave)
		per_wave = cluster; /* larger than the device: one cluster at a time */
	/* The share of the device's block slots its waves keep busy: the last wave may be
	 * partial, and slots a context or whole clusters leave out stay idle. */
	waves = ceil((double)k->blocks / (double)per_wave);
	return fmin(1.0, (double)k->blocks / (waves * (double)(sms * o.blocks_per_sm)));
}
