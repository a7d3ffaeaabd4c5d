/* SPDX-License-Identifier: MIT */
/* CUDA runtime entry points for memory, copies, streams, events, syncs and device queries. */
#include <errno.h>
#include <string.h>

#include "runtime.h"

/* --- allocation --- */

static cudaError_t alloc_common(enum gw_sim_mem kind, void **ptr, size_t size,
				const struct gw_sim_stream *s, bool async)
{
	int r;

	if (!ptr)
		return cudaErrorInvalidValue;
	if (!size && kind != GW_SIM_MEM_PINNED) {
		*ptr = NULL;
		return cudaSuccess;
	}
	r = gw_sim_mem_alloc(kind, size, ptr);
	if (r < 0)
		return cudaErrorMemoryAllocation;
	gw_sim_emit_memory(false, kind, *ptr, size, s, async);
	return cudaSuccess;
}

static cudaError_t free_common(enum gw_sim_mem kind, void *ptr, const struct gw_sim_stream *s,
			       bool async)
{
	size_t bytes;

	if (!ptr)
		return cudaSuccess;
	if (gw_sim_mem_free(kind, ptr, &bytes) < 0)
		return cudaErrorInvalidValue;
	gw_sim_emit_memory(true, kind, ptr, bytes, s, async);
	return cudaSuccess;
}

/* cudaFree and cudaFreeHost wait for the whole device first, as CUDA's do. */
static void implicit_device_sync(void)
{
	gw_sim_wait_until(gw_sim_device_end());
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	RT_BEGIN(cudaMalloc, v3020, devPtr, size);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemAlloc_v2, cuMemAlloc_v2_params, (CUdeviceptr *)devPtr, size);
		err = alloc_common(GW_SIM_MEM_DEVICE, devPtr, size, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

/* Rows padded to 512 bytes, as CUDA's texture alignment pads them. */
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	RT_BEGIN(cudaMallocPitch, v3020, devPtr, pitch, width, height);
	cudaError_t err;
	size_t p = (width + 511) / 512 * 512;

	if (!pitch)
		RT_END(cudaErrorInvalidValue);
	*pitch = p;
	{
		DRV_BEGIN(cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, (CUdeviceptr *)devPtr,
			  pitch, width, height, 4);
		err = alloc_common(GW_SIM_MEM_DEVICE, devPtr, p * height, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaFree(void *devPtr)
{
	RT_BEGIN(cudaFree, v3020, devPtr);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemFree_v2, cuMemFree_v2_params, (CUdeviceptr)devPtr);
		implicit_device_sync();
		err = free_common(GW_SIM_MEM_DEVICE, devPtr, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	RT_BEGIN(cudaMallocManaged, v6000, devPtr, size, flags);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemAllocManaged, cuMemAllocManaged_params, (CUdeviceptr *)devPtr, size,
			  flags);
		err = alloc_common(GW_SIM_MEM_MANAGED, devPtr, size, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	RT_BEGIN(cudaMallocHost, v3020, ptr, size);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemAllocHost_v2, cuMemAllocHost_v2_params, ptr, size);
		err = alloc_common(GW_SIM_MEM_PINNED, ptr, size, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	RT_BEGIN(cudaHostAlloc, v3020, pHost, size, flags);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemHostAlloc, cuMemHostAlloc_params, pHost, size, flags);
		err = alloc_common(GW_SIM_MEM_PINNED, pHost, size, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaFreeHost(void *ptr)
{
	RT_BEGIN(cudaFreeHost, v3020, ptr);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemFreeHost, cuMemFreeHost_params, ptr);
		implicit_device_sync();
		err = free_common(GW_SIM_MEM_PINNED, ptr, NULL, false);
		DRV_END(err);
	}
	RT_END(err);
}

static cudaError_t malloc_async(void **devPtr, size_t size, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	cudaError_t err;

	if (!s)
		return cudaErrorInvalidResourceHandle;
	{
		DRV_BEGIN(cuMemAllocAsync, cuMemAllocAsync_params, (CUdeviceptr *)devPtr, size,
			  stream);
		err = alloc_common(GW_SIM_MEM_DEVICE, devPtr, size, s, true);
		DRV_END(err);
	}
	return err;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	RT_BEGIN(cudaMallocAsync, v11020, devPtr, size, hStream);

	RT_END(malloc_async(devPtr, size, hStream, false));
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	RT_BEGIN(cudaMallocAsync_ptsz, v11020, devPtr, size, hStream);

	RT_END(malloc_async(devPtr, size, hStream, true));
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
				    cudaStream_t stream)
{
	RT_BEGIN(cudaMallocFromPoolAsync, v11020, ptr, size, memPool, stream);

	RT_END(malloc_async(ptr, size, stream, false));
}

/* The bytes are released at once: kernels never run, so nothing can still read them. */
static cudaError_t free_async(void *devPtr, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	cudaError_t err;

	if (!s)
		return cudaErrorInvalidResourceHandle;
	{
		DRV_BEGIN(cuMemFreeAsync, cuMemFreeAsync_params, (CUdeviceptr)devPtr, stream);
		err = free_common(GW_SIM_MEM_DEVICE, devPtr, s, true);
		DRV_END(err);
	}
	return err;
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	RT_BEGIN(cudaFreeAsync, v11020, devPtr, hStream);

	RT_END(free_async(devPtr, hStream, false));
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
					 cudaStream_t stream)
{
	RT_BEGIN(cudaMallocFromPoolAsync_ptsz, v11020, ptr, size, memPool, stream);

	RT_END(malloc_async(ptr, size, stream, true));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	RT_BEGIN(cudaFreeAsync_ptsz, v11020, devPtr, hStream);

	RT_END(free_async(devPtr, hStream, true));
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	RT_BEGIN(cudaMemGetInfo, v3020, free, total);
	uint64_t used = gw_sim_mem_used();

	if (free)
		*free = gw_sim_rt.cfg.mem_bytes - used;
	if (total)
		*total = gw_sim_rt.cfg.mem_bytes;
	RT_END(free && total ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	RT_BEGIN(cudaPointerGetAttributes, v4000, attributes, ptr);
	enum gw_sim_mem kind;

	if (!attributes)
		RT_END(cudaErrorInvalidValue);
	gw_sim_mem_find(ptr, 0, &kind, NULL);
	memset(attributes, 0, sizeof(*attributes));
	attributes->device = 0;
	switch (kind) {
	case GW_SIM_MEM_DEVICE:
	case GW_SIM_MEM_SYMBOL:
		attributes->type = cudaMemoryTypeDevice;
		attributes->devicePointer = (void *)ptr;
		break;
	case GW_SIM_MEM_MANAGED:
		attributes->type = cudaMemoryTypeManaged;
		attributes->devicePointer = (void *)ptr;
		attributes->hostPointer = (void *)ptr;
		break;
	case GW_SIM_MEM_PINNED:
	case GW_SIM_MEM_REGISTERED:
		attributes->type = cudaMemoryTypeHost;
		attributes->devicePointer = (void *)ptr;
		attributes->hostPointer = (void *)ptr;
		break;
	case GW_SIM_MEM_PAGEABLE:
		attributes->type = cudaMemoryTypeUnregistered;
		attributes->device = -2;
		break;
	}
	RT_END(cudaSuccess);
}

/* --- copies and memsets: the bytes move at the call, the device time follows the model --- */

bool gw_sim_on_device(enum gw_sim_mem kind)
{
	return kind == GW_SIM_MEM_DEVICE || kind == GW_SIM_MEM_MANAGED || kind == GW_SIM_MEM_SYMBOL;
}

uint8_t gw_sim_activity_mem_kind(enum gw_sim_mem kind)
{
	switch (kind) {
	case GW_SIM_MEM_DEVICE:
	case GW_SIM_MEM_SYMBOL:
		return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case GW_SIM_MEM_MANAGED:
		return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
	case GW_SIM_MEM_PINNED:
	case GW_SIM_MEM_REGISTERED:
		return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	case GW_SIM_MEM_PAGEABLE:
		break;
	}
	return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

uint64_t gw_sim_transfer_ns(uint64_t bytes, double gbps)
{
	/* GB/s with GB = 1e9 is bytes per ns. */
	return gw_sim_rt.cfg.copy_ns + (gbps > 0 ? (uint64_t)((double)bytes / gbps + 0.5) : 0);
}

union drv_copy_params {
	cuMemcpyHtoD_v2_params htod;
	cuMemcpyDtoH_v2_params dtoh;
	cuMemcpyDtoD_v2_params dtod;
	cuMemcpy_params any;
	cuMemcpyHtoDAsync_v2_params htod_async;
	cuMemcpyDtoHAsync_v2_params dtoh_async;
	cuMemcpyDtoDAsync_v2_params dtod_async;
	cuMemcpyAsync_params any_async;
};

/* The driver call the runtime makes for a 1D copy of this direction. */
static void drv_copy_begin(struct gw_sim_api *d, union drv_copy_params *p, uint8_t dir,
			   const struct gw_sim_copy_req *r, size_t bytes)
{
	CUdeviceptr dst = (CUdeviceptr)r->dst, src = (CUdeviceptr)r->src;
	CUpti_CallbackId cbid;
	const char *name;

	switch (dir) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		if (r->async) {
			p->htod_async =
				(cuMemcpyHtoDAsync_v2_params){dst, r->src, bytes, r->stream};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
			name = "cuMemcpyHtoDAsync_v2";
		} else {
			p->htod = (cuMemcpyHtoD_v2_params){dst, r->src, bytes};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
			name = "cuMemcpyHtoD_v2";
		}
		break;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		if (r->async) {
			p->dtoh_async =
				(cuMemcpyDtoHAsync_v2_params){r->dst, src, bytes, r->stream};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2;
			name = "cuMemcpyDtoHAsync_v2";
		} else {
			p->dtoh = (cuMemcpyDtoH_v2_params){r->dst, src, bytes};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2;
			name = "cuMemcpyDtoH_v2";
		}
		break;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		if (r->async) {
			p->dtod_async = (cuMemcpyDtoDAsync_v2_params){dst, src, bytes, r->stream};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2;
			name = "cuMemcpyDtoDAsync_v2";
		} else {
			p->dtod = (cuMemcpyDtoD_v2_params){dst, src, bytes};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2;
			name = "cuMemcpyDtoD_v2";
		}
		break;
	default:
		if (r->async) {
			p->any_async = (cuMemcpyAsync_params){dst, src, bytes, r->stream};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync;
			name = "cuMemcpyAsync";
		} else {
			p->any = (cuMemcpy_params){dst, src, bytes};
			cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpy;
			name = "cuMemcpy";
		}
		break;
	}
	gw_sim_api_begin(d, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, p, NULL);
}

cudaError_t gw_sim_copy(const struct gw_sim_copy_req *r)
{
	size_t depth = r->depth ? r->depth : 1;
	size_t bytes = r->width * r->height * depth;
	size_t dspan = bytes ? r->dslice * (depth - 1) + r->dpitch * (r->height - 1) + r->width : 0;
	size_t sspan = bytes ? r->sslice * (depth - 1) + r->spitch * (r->height - 1) + r->width : 0;
	enum gw_sim_mem dk, sk;
	struct gw_sim_stream *s;
	struct gw_sim_op op = {.kind = GW_SIM_OP_MEMCPY};
	union drv_copy_params dp;
	struct gw_sim_api d;
	bool dev_dst, dev_src, pageable;
	double gbps;

	if (r->height > 1 && (r->dpitch < r->width || r->spitch < r->width))
		return cudaErrorInvalidPitchValue;
	if ((unsigned int)r->kind > cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	if (!bytes)
		return cudaSuccess;
	if (!r->dst || !r->src)
		return cudaErrorInvalidValue;
	if (gw_sim_mem_find(r->dst, dspan, &dk, NULL) < 0 ||
	    gw_sim_mem_find(r->src, sspan, &sk, NULL) < 0)
		return cudaErrorInvalidValue;
	dev_dst = gw_sim_on_device(dk);
	dev_src = gw_sim_on_device(sk);
	switch (r->kind) {
	case cudaMemcpyHostToDevice:
		if (!dev_dst)
			return cudaErrorInvalidValue;
		dev_src = false;
		break;
	case cudaMemcpyDeviceToHost:
		if (!dev_src)
			return cudaErrorInvalidValue;
		dev_dst = false;
		break;
	case cudaMemcpyDeviceToDevice:
		if (!dev_src || !dev_dst)
			return cudaErrorInvalidValue;
		break;
	case cudaMemcpyHostToHost:
		dev_src = dev_dst = false;
		break;
	case cudaMemcpyDefault:
		break;
	}
	s = gw_sim_stream_get(r->stream, r->per_thread);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	if (dev_src && dev_dst) {
		op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
		gbps = gw_sim_rt.cfg.d2d_gbps;
	} else if (dev_dst) {
		op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		gbps = gw_sim_rt.cfg.h2d_gbps;
	} else if (dev_src) {
		op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
		gbps = gw_sim_rt.cfg.d2h_gbps;
	} else {
		op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
		gbps = gw_sim_rt.cfg.h2d_gbps;
	}
	pageable =
		(!dev_src && sk == GW_SIM_MEM_PAGEABLE) || (!dev_dst && dk == GW_SIM_MEM_PAGEABLE);
	if (!r->direct)
		drv_copy_begin(&d, &dp, op.copy_kind, r, bytes);
	for (size_t z = 0; z < depth && !r->moved; z++)
		for (size_t row = 0; row < r->height; row++)
			memmove((char *)r->dst + z * r->dslice + row * r->dpitch,
				(const char *)r->src + z * r->sslice + row * r->spitch, r->width);
	op.bytes = bytes;
	op.src_kind = gw_sim_activity_mem_kind(
		dev_src || sk != GW_SIM_MEM_PAGEABLE ? sk : GW_SIM_MEM_PAGEABLE);
	op.dst_kind = gw_sim_activity_mem_kind(dk);
	op.async = r->async;
	op.queued_ns = r->issued_ns;
	op.blocking = !r->async || pageable;
	op.correlation_id = gw_sim_correlation();
	gw_sim_enqueue(s, &op, gw_sim_transfer_ns(bytes, gbps), false);
	/* Synchronous copies, and async ones through pageable memory, return when done. */
	if (op.blocking)
		gw_sim_wait_until(op.end_ns);
	if (!r->direct)
		gw_sim_api_end(&d, cudaSuccess);
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpy, v3020, dst, src, count, kind);
	struct gw_sim_copy_req r = {dst, src, count, count, count, 1, kind, NULL, false, false};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpy_ptds, v7000, dst, src, count, kind);
	struct gw_sim_copy_req r = {dst, src, count, count, count, 1, kind, NULL, false, true};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyAsync, v3020, dst, src, count, kind, stream);
	struct gw_sim_copy_req r = {dst, src, count, count, count, 1, kind, stream, true, false};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				 cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyAsync_ptsz, v7000, dst, src, count, kind, stream);
	struct gw_sim_copy_req r = {dst, src, count, count, count, 1, kind, stream, true, true};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			 size_t height, enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpy2D, v3020, dst, dpitch, src, spitch, width, height, kind);
	struct gw_sim_copy_req r = {dst,    src,  dpitch, spitch, width,
				    height, kind, NULL,	  false,  false};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
			      size_t width, size_t height, enum cudaMemcpyKind kind,
			      cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpy2DAsync, v3020, dst, dpitch, src, spitch, width, height, kind, stream);
	struct gw_sim_copy_req r = {dst,    src,  dpitch, spitch, width,
				    height, kind, stream, true,	  false};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
			      size_t width, size_t height, enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpy2D_ptds, v7000, dst, dpitch, src, spitch, width, height, kind);
	struct gw_sim_copy_req r = {dst,    src,  dpitch, spitch, width,
				    height, kind, NULL,	  false,  true};

	RT_END(gw_sim_copy(&r));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
				   size_t width, size_t height, enum cudaMemcpyKind kind,
				   cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpy2DAsync_ptsz, v7000, dst, dpitch, src, spitch, width, height, kind,
		 stream);
	struct gw_sim_copy_req r = {dst,    src,  dpitch, spitch, width,
				    height, kind, stream, true,	  true};

	RT_END(gw_sim_copy(&r));
}

/* Pitched pointers only: CUDA arrays are not simulated. */
static cudaError_t copy_3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream, bool async,
			   bool per_thread)
{
	struct gw_sim_copy_req r;

	if (!p || p->srcArray || p->dstArray)
		return cudaErrorInvalidValue;
	r = (struct gw_sim_copy_req){
		.dst = (char *)p->dstPtr.ptr + p->dstPos.z * p->dstPtr.pitch * p->dstPtr.ysize +
		       p->dstPos.y * p->dstPtr.pitch + p->dstPos.x,
		.src = (const char *)p->srcPtr.ptr +
		       p->srcPos.z * p->srcPtr.pitch * p->srcPtr.ysize +
		       p->srcPos.y * p->srcPtr.pitch + p->srcPos.x,
		.dpitch = p->dstPtr.pitch,
		.spitch = p->srcPtr.pitch,
		.width = p->extent.width,
		.height = p->extent.height,
		.kind = p->kind,
		.stream = stream,
		.async = async,
		.per_thread = per_thread,
		.depth = p->extent.depth,
		.dslice = p->dstPtr.pitch * p->dstPtr.ysize,
		.sslice = p->srcPtr.pitch * p->srcPtr.ysize,
	};
	if (r.depth > 1 && (r.dslice < r.dpitch * r.height || r.sslice < r.spitch * r.height))
		return cudaErrorInvalidValue;
	return gw_sim_copy(&r);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
	RT_BEGIN(cudaMemcpy3D, v3020, p);

	RT_END(copy_3d(p, NULL, false, false));
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpy3DAsync, v3020, p, stream);

	RT_END(copy_3d(p, stream, true, false));
}

static cudaError_t symbol_range(const void *symbol, size_t count, size_t offset, char **ret)
{
	size_t size;
	char *p = gw_sim_symbol_find(symbol, &size);

	if (!p)
		return cudaErrorInvalidSymbol;
	if (offset > size || count > size - offset)
		return cudaErrorInvalidValue;
	*ret = p + offset;
	return cudaSuccess;
}

static cudaError_t to_symbol(const void *symbol, const void *src, size_t count, size_t offset,
			     enum cudaMemcpyKind kind, cudaStream_t stream, bool async,
			     bool per_thread)
{
	struct gw_sim_copy_req r = {NULL, src,	count,	count, count,
				    1,	  kind, stream, async, per_thread};
	char *p;
	cudaError_t err = symbol_range(symbol, count, offset, &p);

	if (err != cudaSuccess)
		return err;
	if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
	    kind != cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	r.dst = p;
	return gw_sim_copy(&r);
}

static cudaError_t from_symbol(void *dst, const void *symbol, size_t count, size_t offset,
			       enum cudaMemcpyKind kind, cudaStream_t stream, bool async,
			       bool per_thread)
{
	struct gw_sim_copy_req r = {dst, NULL, count,  count, count,
				    1,	 kind, stream, async, per_thread};
	char *p;
	cudaError_t err = symbol_range(symbol, count, offset, &p);

	if (err != cudaSuccess)
		return err;
	if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
	    kind != cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	r.src = p;
	return gw_sim_copy(&r);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
			       enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpyToSymbol, v3020, symbol, src, count, offset, kind);

	RT_END(to_symbol(symbol, src, count, offset, kind, NULL, false, false));
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
				    size_t offset, enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpyToSymbol_ptds, v7000, symbol, src, count, offset, kind);

	RT_END(to_symbol(symbol, src, count, offset, kind, NULL, false, true));
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
				    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyToSymbolAsync, v3020, symbol, src, count, offset, kind, stream);

	RT_END(to_symbol(symbol, src, count, offset, kind, stream, true, false));
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
					 size_t offset, enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyToSymbolAsync_ptsz, v7000, symbol, src, count, offset, kind, stream);

	RT_END(to_symbol(symbol, src, count, offset, kind, stream, true, true));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
					   size_t offset, enum cudaMemcpyKind kind,
					   cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyFromSymbolAsync_ptsz, v7000, dst, symbol, count, offset, kind, stream);

	RT_END(from_symbol(dst, symbol, count, offset, kind, stream, true, true));
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
				 enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpyFromSymbol, v3020, dst, symbol, count, offset, kind);

	RT_END(from_symbol(dst, symbol, count, offset, kind, NULL, false, false));
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind)
{
	RT_BEGIN(cudaMemcpyFromSymbol_ptds, v7000, dst, symbol, count, offset, kind);

	RT_END(from_symbol(dst, symbol, count, offset, kind, NULL, false, true));
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyFromSymbolAsync, v3020, dst, symbol, count, offset, kind, stream);

	RT_END(from_symbol(dst, symbol, count, offset, kind, stream, true, false));
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	size_t size;
	void *p;

	gw_sim_init();
	if (!devPtr)
		return cudaErrorInvalidValue;
	p = gw_sim_symbol_find(symbol, &size);
	if (!p)
		return cudaErrorInvalidSymbol;
	*devPtr = p;
	return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
	gw_sim_init();
	if (!size)
		return cudaErrorInvalidValue;
	return gw_sim_symbol_find(symbol, size) ? cudaSuccess : cudaErrorInvalidSymbol;
}

static cudaError_t do_memset(void *ptr, int value, size_t count, cudaStream_t stream, bool async,
			     bool per_thread)
{
	struct gw_sim_op op = {.kind = GW_SIM_OP_MEMSET};
	struct gw_sim_stream *s;
	enum gw_sim_mem kind;

	if (!count)
		return cudaSuccess;
	if (!ptr || gw_sim_mem_find(ptr, count, &kind, NULL) < 0 || !gw_sim_on_device(kind))
		return cudaErrorInvalidValue;
	s = gw_sim_stream_get(stream, per_thread);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	if (async) {
		DRV_BEGIN(cuMemsetD8Async, cuMemsetD8Async_params, (CUdeviceptr)ptr,
			  (unsigned char)value, count, stream);
		memset(ptr, value, count);
		op.async = true;
		op.bytes = count;
		op.value = (uint32_t)(unsigned char)value;
		op.dst_kind = gw_sim_activity_mem_kind(kind);
		op.correlation_id = gw_sim_correlation();
		gw_sim_enqueue(s, &op, gw_sim_transfer_ns(count, gw_sim_rt.cfg.d2d_gbps), false);
		DRV_END(cudaSuccess);
	} else {
		DRV_BEGIN(cuMemsetD8_v2, cuMemsetD8_v2_params, (CUdeviceptr)ptr,
			  (unsigned char)value, count);
		memset(ptr, value, count);
		op.bytes = count;
		op.value = (uint32_t)(unsigned char)value;
		op.dst_kind = gw_sim_activity_mem_kind(kind);
		op.blocking = true;
		op.correlation_id = gw_sim_correlation();
		gw_sim_enqueue(s, &op, gw_sim_transfer_ns(count, gw_sim_rt.cfg.d2d_gbps), false);
		gw_sim_wait_until(op.end_ns);
		DRV_END(cudaSuccess);
	}
	return cudaSuccess;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	RT_BEGIN(cudaMemset, v3020, devPtr, value, count);

	RT_END(do_memset(devPtr, value, count, NULL, false, false));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	RT_BEGIN(cudaMemset_ptds, v7000, devPtr, value, count);

	RT_END(do_memset(devPtr, value, count, NULL, false, true));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	RT_BEGIN(cudaMemsetAsync, v3020, devPtr, value, count, stream);

	RT_END(do_memset(devPtr, value, count, stream, true, false));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	RT_BEGIN(cudaMemsetAsync_ptsz, v7000, devPtr, value, count, stream);

	RT_END(do_memset(devPtr, value, count, stream, true, true));
}

/* --- streams --- */

static cudaError_t stream_create(cudaStream_t *pStream, unsigned int flags, int priority)
{
	struct gw_sim_stream *s;

	if (!pStream || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return cudaErrorInvalidValue;
	s = gw_sim_stream_new(flags, priority);
	if (!s)
		return cudaErrorMemoryAllocation;
	*pStream = (cudaStream_t)(void *)s;
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	RT_BEGIN(cudaStreamCreate, v3020, pStream);

	RT_END(stream_create(pStream, cudaStreamDefault, 0));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	RT_BEGIN(cudaStreamCreateWithFlags, v5000, pStream, flags);

	RT_END(stream_create(pStream, flags, 0));
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	RT_BEGIN(cudaStreamCreateWithPriority, v5050, pStream, flags, priority);

	RT_END(stream_create(pStream, flags, priority));
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	gw_sim_init();
	if (leastPriority)
		*leastPriority = 0;
	if (greatestPriority)
		*greatestPriority = -5;
	return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	RT_BEGIN(cudaStreamDestroy, v5050, stream);
	struct gw_sim_stream *s = stream ? gw_sim_stream_get(stream, false) : NULL;

	if (!s || s->legacy || s->per_thread)
		RT_END(cudaErrorInvalidResourceHandle);
	gw_sim_stream_free(s);
	RT_END(cudaSuccess);
}

static cudaError_t stream_sync(cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	uint64_t t0 = gw_sim_now_ns();

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	{
		DRV_BEGIN(cuStreamSynchronize, cuStreamSynchronize_params, stream);
		gw_sim_wait_until(gw_sim_stream_end(s));
		gw_sim_emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, t0, s,
				 NULL);
		DRV_END(cudaSuccess);
	}
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	RT_BEGIN(cudaStreamSynchronize, v3020, stream);

	RT_END(stream_sync(stream, false));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	RT_BEGIN(cudaStreamSynchronize_ptsz, v7000, stream);

	RT_END(stream_sync(stream, true));
}

static cudaError_t stream_query(cudaStream_t stream, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	uint64_t t0 = gw_sim_now_ns();
	bool done;

	if (!s)
		return cudaErrorInvalidResourceHandle;
	/* a stream held by a host function or a wait is not done, and a query does not wait */
	done = !gw_sim_stream_held(s) && gw_sim_stream_end(s) <= t0;
	gw_sim_emit_query(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, t0, s, NULL, true,
			  done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
	return done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	RT_BEGIN(cudaStreamQuery, v3020, stream);

	RT_END(stream_query(stream, false));
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	RT_BEGIN(cudaStreamQuery_ptsz, v7000, stream);

	RT_END(stream_query(stream, true));
}

static cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event, bool per_thread)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);
	struct gw_sim_event *e = gw_sim_event_get(event);

	if (!s || !e)
		return cudaErrorInvalidResourceHandle;
	{
		DRV_BEGIN(cuStreamWaitEvent, cuStreamWaitEvent_params, stream, event, 0);
		gw_sim_stream_wait(s, e);
		DRV_END(cudaSuccess);
	}
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	RT_BEGIN(cudaStreamWaitEvent, v3020, stream, event, flags);

	RT_END(stream_wait_event(stream, event, false));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	RT_BEGIN(cudaStreamWaitEvent_ptsz, v7000, stream, event, flags);

	RT_END(stream_wait_event(stream, event, true));
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
	struct gw_sim_stream *s;

	gw_sim_init();
	s = gw_sim_stream_get(hStream, false);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!flags)
		return cudaErrorInvalidValue;
	*flags = s->flags;
	return cudaSuccess;
}

/* --- events --- */

static cudaError_t event_create(cudaEvent_t *event, unsigned int flags)
{
	struct gw_sim_event *e;

	if (!event || (flags & ~(unsigned int)(cudaEventBlockingSync | cudaEventDisableTiming |
					       cudaEventInterprocess)))
		return cudaErrorInvalidValue;
	e = gw_sim_event_new(flags);
	if (!e)
		return cudaErrorMemoryAllocation;
	*event = (cudaEvent_t)(void *)e;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	RT_BEGIN(cudaEventCreate, v3020, event);

	RT_END(event_create(event, cudaEventDefault));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	RT_BEGIN(cudaEventCreateWithFlags, v3020, event, flags);

	RT_END(event_create(event, flags));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	RT_BEGIN(cudaEventDestroy, v3020, event);
	struct gw_sim_event *e = gw_sim_event_get(event);

	if (!e)
		RT_END(cudaErrorInvalidResourceHandle);
	gw_sim_event_free(e);
	RT_END(cudaSuccess);
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream, bool per_thread)
{
	struct gw_sim_event *e = gw_sim_event_get(event);
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!e || !s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	{
		DRV_BEGIN(cuEventRecord, cuEventRecord_params, event, stream);
		gw_sim_event_record(e, s);
		DRV_END(cudaSuccess);
	}
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	RT_BEGIN(cudaEventRecord, v3020, event, stream);

	RT_END(event_record(event, stream, false));
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	RT_BEGIN(cudaEventRecord_ptsz, v7000, event, stream);

	RT_END(event_record(event, stream, true));
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	RT_BEGIN(cudaEventRecordWithFlags, v11010, event, stream, flags);

	RT_END(event_record(event, stream, false));
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
					  unsigned int flags)
{
	RT_BEGIN(cudaEventRecordWithFlags_ptsz, v11010, event, stream, flags);

	RT_END(event_record(event, stream, true));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	RT_BEGIN(cudaEventSynchronize, v3020, event);
	struct gw_sim_event *e = gw_sim_event_get(event);
	uint64_t t0 = gw_sim_now_ns();

	if (!e)
		RT_END(cudaErrorInvalidResourceHandle);
	{
		DRV_BEGIN(cuEventSynchronize, cuEventSynchronize_params, event);
		uint64_t t;

		if (gw_sim_event_time(e, &t))
			gw_sim_wait_until(t);
		gw_sim_emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, t0, NULL,
				 e);
		DRV_END(cudaSuccess);
	}
	RT_END(cudaSuccess);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	RT_BEGIN(cudaEventQuery, v3020, event);
	struct gw_sim_event *e = gw_sim_event_get(event);
	uint64_t t;

	uint64_t t0 = gw_sim_now_ns();
	bool done;

	if (!e)
		RT_END(cudaErrorInvalidResourceHandle);
	done = !gw_sim_event_pending(e) && (!gw_sim_event_time(e, &t) || t <= t0);
	gw_sim_emit_query(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, t0, NULL, e, true,
			  done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
	RT_END(done ? cudaSuccess : cudaErrorNotReady);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	RT_BEGIN(cudaEventElapsedTime, v12080, ms, start, end);
	struct gw_sim_event *a = gw_sim_event_get(start), *b = gw_sim_event_get(end);
	uint64_t now = gw_sim_now_ns(), ta, tb;

	if (!ms)
		RT_END(cudaErrorInvalidValue);
	if (!a || !b || !gw_sim_event_time(a, &ta) || !gw_sim_event_time(b, &tb) ||
	    ((a->flags | b->flags) & cudaEventDisableTiming))
		RT_END(cudaErrorInvalidResourceHandle);
	if (ta > now || tb > now)
		RT_END(cudaErrorNotReady);
	*ms = (float)(((double)tb - (double)ta) / 1e6);
	RT_END(cudaSuccess);
}

/* --- device --- */

cudaError_t cudaDeviceSynchronize(void)
{
	RT_BEGIN0(cudaDeviceSynchronize, v3020);
	uint64_t t0 = gw_sim_now_ns();
	{
		DRV_BEGIN0(cuCtxSynchronize);
		gw_sim_wait_until(gw_sim_device_end());
		gw_sim_emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, t0, NULL,
				 NULL);
		DRV_END(cudaSuccess);
	}
	RT_END(cudaSuccess);
}

cudaError_t cudaDeviceReset(void)
{
	RT_BEGIN0(cudaDeviceReset, v3020);

	gw_sim_wait_until(gw_sim_device_end());
	gw_sim_mem_free_all();
	RT_END(cudaSuccess);
}

cudaError_t cudaGetDeviceCount(int *count)
{
	RT_BEGIN(cudaGetDeviceCount, v3020, count);

	if (!count)
		RT_END(cudaErrorInvalidValue);
	*count = (int)gw_sim_rt.cfg.devices;
	RT_END(cudaSuccess);
}

cudaError_t cudaGetDevice(int *device)
{
	RT_BEGIN(cudaGetDevice, v3020, device);

	if (!device)
		RT_END(cudaErrorInvalidValue);
	*device = (int)gw_sim_current_device();
	RT_END(cudaSuccess);
}

cudaError_t cudaSetDevice(int device)
{
	RT_BEGIN(cudaSetDevice, v3020, device);

	RT_END(gw_sim_set_device(device) < 0 ? cudaErrorInvalidDevice : cudaSuccess);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	RT_BEGIN(cudaSetDeviceFlags, v3020, flags);

	RT_END(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	RT_BEGIN(cudaGetDeviceProperties, v12000, prop, device);
	const struct gw_sim_config *cfg = &gw_sim_rt.cfg;

	if (!prop)
		RT_END(cudaErrorInvalidValue);
	if (device < 0 || (uint32_t)device >= cfg->devices)
		RT_END(cudaErrorInvalidDevice);
	memset(prop, 0, sizeof(*prop));
	strncpy(prop->name, GW_SIM_DEVICE_NAME, sizeof(prop->name) - 1);
	memcpy(prop->uuid.bytes, "gpusim-device-00", 16);
	prop->uuid.bytes[15] = (char)('0' + device);
	prop->pciDeviceID = device;
	prop->totalGlobalMem = cfg->mem_bytes;
	prop->sharedMemPerBlock = 48 * 1024;
	prop->regsPerBlock = GW_SIM_REGS_PER_SM;
	prop->warpSize = 32;
	prop->memPitch = SIZE_MAX;
	prop->maxThreadsPerBlock = GW_SIM_MAX_THREADS;
	prop->maxThreadsDim[0] = 1024;
	prop->maxThreadsDim[1] = 1024;
	prop->maxThreadsDim[2] = 64;
	prop->maxGridSize[0] = 0x7fffffff;
	prop->maxGridSize[1] = 65535;
	prop->maxGridSize[2] = 65535;
	prop->totalConstMem = 64 * 1024;
	prop->major = 9;
	prop->minor = 0;
	prop->textureAlignment = 512;
	prop->texturePitchAlignment = 32;
	prop->multiProcessorCount = (int)cfg->sms;
	prop->canMapHostMemory = 1;
	prop->concurrentKernels = 1;
	prop->asyncEngineCount = 2;
	prop->unifiedAddressing = 1;
	prop->memoryBusWidth = 5120;
	prop->l2CacheSize = 50 * 1024 * 1024;
	prop->maxThreadsPerMultiProcessor = GW_SIM_THREADS_PER_SM;
	prop->streamPrioritiesSupported = 1;
	prop->globalL1CacheSupported = 1;
	prop->localL1CacheSupported = 1;
	prop->sharedMemPerMultiprocessor = GW_SIM_SMEM_PER_SM;
	prop->regsPerMultiprocessor = GW_SIM_REGS_PER_SM;
	prop->managedMemory = 1;
	prop->concurrentManagedAccess = 1;
	prop->computePreemptionSupported = 1;
	prop->cooperativeLaunch = 1;
	prop->sharedMemPerBlockOptin = GW_SIM_SMEM_PER_BLOCK;
	prop->maxBlocksPerMultiProcessor = GW_SIM_BLOCKS_PER_SM;
	prop->reservedSharedMemPerBlock = 1024;
	prop->memoryPoolsSupported = 1;
	prop->clusterLaunch = 1;
	RT_END(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	RT_BEGIN(cudaDeviceGetAttribute, v5000, value, attr, device);
	const struct gw_sim_config *cfg = &gw_sim_rt.cfg;
	int v;

	if (!value)
		RT_END(cudaErrorInvalidValue);
	if (device < 0 || (uint32_t)device >= cfg->devices)
		RT_END(cudaErrorInvalidDevice);
	switch (attr) {
	case cudaDevAttrMaxThreadsPerBlock:
		v = GW_SIM_MAX_THREADS;
		break;
	case cudaDevAttrMaxBlockDimX:
	case cudaDevAttrMaxBlockDimY:
		v = 1024;
		break;
	case cudaDevAttrMaxBlockDimZ:
		v = 64;
		break;
	case cudaDevAttrMaxGridDimX:
		v = 0x7fffffff;
		break;
	case cudaDevAttrMaxGridDimY:
	case cudaDevAttrMaxGridDimZ:
		v = 65535;
		break;
	case cudaDevAttrMaxSharedMemoryPerBlock:
		v = 48 * 1024;
		break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin:
		v = GW_SIM_SMEM_PER_BLOCK;
		break;
	case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
		v = GW_SIM_SMEM_PER_SM;
		break;
	case cudaDevAttrTotalConstantMemory:
		v = 64 * 1024;
		break;
	case cudaDevAttrWarpSize:
		v = 32;
		break;
	case cudaDevAttrMaxRegistersPerBlock:
	case cudaDevAttrMaxRegistersPerMultiprocessor:
		v = GW_SIM_REGS_PER_SM;
		break;
	case cudaDevAttrMultiProcessorCount:
		v = (int)cfg->sms;
		break;
	case cudaDevAttrMaxThreadsPerMultiProcessor:
		v = GW_SIM_THREADS_PER_SM;
		break;
	case cudaDevAttrMaxBlocksPerMultiprocessor:
		v = GW_SIM_BLOCKS_PER_SM;
		break;
	case cudaDevAttrComputeCapabilityMajor:
		v = 9;
		break;
	case cudaDevAttrComputeCapabilityMinor:
		v = 0;
		break;
	case cudaDevAttrConcurrentKernels:
	case cudaDevAttrUnifiedAddressing:
	case cudaDevAttrManagedMemory:
	case cudaDevAttrConcurrentManagedAccess:
	case cudaDevAttrCanMapHostMemory:
	case cudaDevAttrMemoryPoolsSupported:
	case cudaDevAttrCooperativeLaunch:
	case cudaDevAttrStreamPrioritiesSupported:
		v = 1;
		break;
	case cudaDevAttrAsyncEngineCount:
		v = 2;
		break;
	case cudaDevAttrGlobalMemoryBusWidth:
		v = 5120;
		break;
	case cudaDevAttrL2CacheSize:
		v = 50 * 1024 * 1024;
		break;
	default:
		v = 0;
		break;
	}
	*value = v;
	RT_END(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	RT_BEGIN(cudaRuntimeGetVersion, v3020, runtimeVersion);

	if (!runtimeVersion)
		RT_END(cudaErrorInvalidValue);
	*runtimeVersion = CUDART_VERSION;
	RT_END(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	RT_BEGIN(cudaDriverGetVersion, v3020, driverVersion);

	if (!driverVersion)
		RT_END(cudaErrorInvalidValue);
	*driverVersion = CUDA_VERSION;
	RT_END(cudaSuccess);
}
