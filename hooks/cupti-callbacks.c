/* SPDX-License-Identifier: MIT */
/* CUPTI API callbacks: one GW_REC_API record per recorded call, plus GW_REC_MEMORY for
 * allocations and frees, with stacks where include/gpuwhy/api-table.def and the sampling rule ask. */
#include <gpuwhy/trace-format.h>

#include "clock.h"
#include "capture-state.h"
#include "correlation.h"
#include "subscriber.h"
#include "intern.h"
#include "nvml-sampler.h"
#include "stacks.h"
#include "trace-writer.h"

/* The same rows indexed by callback id, so the callback finds its row in one load. per_thread:
 * the _ptsz form, whose stream 0 is the calling thread's default stream. */
struct api_info {
	const char *name;
	uint8_t present, category, sync_kind, mem_kind, per_thread;
};

#define PER_THREAD(fn) (__builtin_strstr(#fn, "_ptsz") != NULL)
#define INFO(fn, cat, sync, mem)                                                                   \
	{                                                                                          \
		.name = #fn, .present = 1, .category = GW_API_##cat, .sync_kind = GW_SYNC_##sync,  \
		.mem_kind = GW_MEM_##mem, .per_thread = PER_THREAD(fn)                             \
	}

static const struct api_info runtime_info[CUPTI_RUNTIME_TRACE_CBID_SIZE] = {
#define GW_RT(fn, cat, sync, mem, args) [CUPTI_RUNTIME_TRACE_CBID_##fn] = INFO(fn, cat, sync, mem),
#define GW_DRV(fn, cat, sync, mem, args)
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
};

static const struct api_info driver_info[CUPTI_DRIVER_TRACE_CBID_SIZE] = {
#define GW_RT(fn, cat, sync, mem, args)
#define GW_DRV(fn, cat, sync, mem, args) [CUPTI_DRIVER_TRACE_CBID_##fn] = INFO(fn, cat, sync, mem),
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
};

/*
 * Parameter readers: GW_ARGS_<name>(record, parameter struct type, parameters). Pointers that
 * the call fills (allocations) are read at the call's exit, which is when records are made.
 */
#define U(x)			((uint64_t)(uintptr_t)(x))
#define OUT(ptr)		((ptr) ? U(*(ptr)) : 0)
#define GW_ARGS_NONE(r, T, in_) (void)(in_)
#define GW_ARGS_LAUNCH_RT(r, T, in_)                                                               \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		set_launch(r, p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x,             \
			   p->blockDim.y, p->blockDim.z, p->sharedMem, U(p->stream));              \
	} while (0)
#define GW_ARGS_LAUNCH_RT_EX(r, T, in_)                                                            \
	do {                                                                                       \
		const cudaLaunchConfig_t *c = ((const T *)(in_))->config;                          \
		if (c)                                                                             \
			set_launch(r, c->gridDim.x, c->gridDim.y, c->gridDim.z, c->blockDim.x,     \
				   c->blockDim.y, c->blockDim.z, c->dynamicSmemBytes,              \
				   U(c->stream));                                                  \
	} while (0)
#define GW_ARGS_LAUNCH_DRV(r, T, in_)                                                              \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		set_launch(r, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,   \
			   p->blockDimZ, p->sharedMemBytes, U(p->hStream));                        \
	} while (0)
#define GW_ARGS_LAUNCH_DRV_EX(r, T, in_)                                                           \
	do {                                                                                       \
		const CUlaunchConfig *c = ((const T *)(in_))->config;                              \
		if (c)                                                                             \
			set_launch(r, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,         \
				   c->blockDimY, c->blockDimZ, c->sharedMemBytes, U(c->hStream));  \
	} while (0)
#define GW_ARGS_STREAM_RT(r, T, in_)	    ((r)->stream = U(((const T *)(in_))->stream))
#define GW_ARGS_STREAM_DRV(r, T, in_)	    ((r)->stream = U(((const T *)(in_))->hStream))
#define GW_ARGS_STREAM_RT_GRAPH(r, T, in_)  GW_ARGS_STREAM_RT(r, T, in_)
#define GW_ARGS_STREAM_DRV_GRAPH(r, T, in_) GW_ARGS_STREAM_DRV(r, T, in_)
#define GW_ARGS_STREAM_RT_EVENT(r, T, in_)  GW_ARGS_STREAM_RT(r, T, in_)
#define GW_ARGS_STREAM_DRV_EVENT(r, T, in_) GW_ARGS_STREAM_DRV(r, T, in_)
#define GW_MEMARGS(r, T, in_, out, size, strm)                                                     \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		(r)->dst = (out);                                                                  \
		(r)->bytes = (size);                                                               \
		(r)->stream = (strm);                                                              \
	} while (0)
#define GW_ARGS_ALLOC_RT(r, T, in_)	      GW_MEMARGS(r, T, in_, OUT(p->devPtr), p->size, 0)
#define GW_ARGS_ALLOC_RT_HOST(r, T, in_)      GW_MEMARGS(r, T, in_, OUT(p->ptr), p->size, 0)
#define GW_ARGS_ALLOC_RT_HOSTALLOC(r, T, in_) GW_MEMARGS(r, T, in_, OUT(p->pHost), p->size, 0)
#define GW_ARGS_ALLOC_RT_ASYNC(r, T, in_)                                                          \
	GW_MEMARGS(r, T, in_, OUT(p->devPtr), p->size, U(p->hStream))
#define GW_ARGS_ALLOC_RT_POOL(r, T, in_)  GW_MEMARGS(r, T, in_, OUT(p->ptr), p->size, U(p->stream))
#define GW_ARGS_FREE_RT(r, T, in_)	  GW_MEMARGS(r, T, in_, U(p->devPtr), 0, 0)
#define GW_ARGS_FREE_RT_HOST(r, T, in_)	  GW_MEMARGS(r, T, in_, U(p->ptr), 0, 0)
#define GW_ARGS_FREE_RT_ASYNC(r, T, in_)  GW_MEMARGS(r, T, in_, U(p->devPtr), 0, U(p->hStream))
#define GW_ARGS_ALLOC_DRV(r, T, in_)	  GW_MEMARGS(r, T, in_, OUT(p->dptr), p->bytesize, 0)
#define GW_ARGS_ALLOC_DRV_HOST(r, T, in_) GW_MEMARGS(r, T, in_, OUT(p->pp), p->bytesize, 0)
#define GW_ARGS_ALLOC_DRV_ASYNC(r, T, in_)                                                         \
	GW_MEMARGS(r, T, in_, OUT(p->dptr), p->bytesize, U(p->hStream))
#define GW_ARGS_ALLOC_DRV_VMM(r, T, in_) GW_MEMARGS(r, T, in_, OUT(p->handle), p->size, 0)
#define GW_ARGS_ALLOC_RT_PITCH(r, T, in_)                                                          \
	GW_MEMARGS(r, T, in_, OUT(p->devPtr), (p->pitch ? *p->pitch : 0) * p->height, 0)
#define GW_ARGS_ALLOC_DRV_PITCH(r, T, in_)                                                         \
	GW_MEMARGS(r, T, in_, OUT(p->dptr), (p->pPitch ? *p->pPitch : 0) * p->Height, 0)
#define GW_ARGS_ALLOC_RT_3D(r, T, in_)                                                             \
	GW_MEMARGS(r, T, in_, p->pitchedDevPtr ? U(p->pitchedDevPtr->ptr) : 0,                     \
		   p->pitchedDevPtr ? p->pitchedDevPtr->pitch * p->extent.height * p->extent.depth \
				    : 0,                                                           \
		   0)
#define GW_ARGS_FREE_DRV(r, T, in_)	  GW_MEMARGS(r, T, in_, U(p->dptr), 0, 0)
#define GW_ARGS_FREE_DRV_HOST(r, T, in_)  GW_MEMARGS(r, T, in_, U(p->p), 0, 0)
#define GW_ARGS_FREE_DRV_ASYNC(r, T, in_) GW_MEMARGS(r, T, in_, U(p->dptr), 0, U(p->hStream))
#define GW_ARGS_FREE_DRV_VMM(r, T, in_)	  GW_MEMARGS(r, T, in_, U(p->handle), 0, 0)
#define GW_COPYARGS(r, T, in_, d, s, n, k, strm)                                                   \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		(r)->dst = (d);                                                                    \
		(r)->src = (s);                                                                    \
		(r)->bytes = (n);                                                                  \
		(r)->copy_kind = (k);                                                              \
		(r)->stream = (strm);                                                              \
	} while (0)
#define GW_ARGS_COPY_RT(r, T, in_)                                                                 \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->count, (uint64_t)p->kind, 0)
#define GW_ARGS_COPY_RT_ASYNC(r, T, in_)                                                           \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->count, (uint64_t)p->kind, U(p->stream))
#define GW_ARGS_COPY_RT_2D(r, T, in_)                                                              \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), (uint64_t)p->width * p->height,               \
		    (uint64_t)p->kind, 0)
#define GW_ARGS_COPY_RT_2D_ASYNC(r, T, in_)                                                        \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), (uint64_t)p->width * p->height,               \
		    (uint64_t)p->kind, U(p->stream))
#define GW_ARGS_COPY_RT_TO_SYMBOL(r, T, in_)                                                       \
	GW_COPYARGS(r, T, in_, U(p->symbol), U(p->src), p->count, (uint64_t)p->kind, 0)
#define GW_ARGS_COPY_RT_TO_SYMBOL_ASYNC(r, T, in_)                                                 \
	GW_COPYARGS(r, T, in_, U(p->symbol), U(p->src), p->count, (uint64_t)p->kind, U(p->stream))
#define GW_ARGS_COPY_RT_FROM_SYMBOL(r, T, in_)                                                     \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->symbol), p->count, (uint64_t)p->kind, 0)
#define GW_ARGS_COPY_RT_FROM_SYMBOL_ASYNC(r, T, in_)                                               \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->symbol), p->count, (uint64_t)p->kind, U(p->stream))
#define GW_ARGS_COPY_RT_PEER(r, T, in_)                                                            \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->count, cudaMemcpyDeviceToDevice, 0)
#define GW_ARGS_COPY_RT_PEER_ASYNC(r, T, in_)                                                      \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->count, cudaMemcpyDeviceToDevice,           \
		    U(p->stream))
#define GW_ARGS_COPY_DRV_PEER(r, T, in_)                                                           \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcDevice), p->ByteCount,                     \
		    cudaMemcpyDeviceToDevice, 0)
#define GW_ARGS_COPY_DRV_PEER_ASYNC(r, T, in_)                                                     \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcDevice), p->ByteCount,                     \
		    cudaMemcpyDeviceToDevice, U(p->hStream))
/* 3D peer copies: pitched pointers (a CUDA array has no pointer; its bytes are the record's). */
#define GW_ARGS_COPY_RT_3D_PEER(r, T, in_)                                                         \
	GW_COPYARGS(                                                                               \
		r, T, in_, p->p ? U(p->p->dstPtr.ptr) : 0, p->p ? U(p->p->srcPtr.ptr) : 0,         \
		p->p ? (uint64_t)p->p->extent.width *                                              \
				p->p->extent.height *(p->p->extent.depth ? p->p->extent.depth : 1) \
		     : 0,                                                                          \
		cudaMemcpyDeviceToDevice, 0)
#define GW_ARGS_COPY_RT_3D_PEER_ASYNC(r, T, in_)                                                   \
	do {                                                                                       \
		GW_ARGS_COPY_RT_3D_PEER(r, T, in_);                                                \
		(r)->stream = U(((const T *)(in_))->stream);                                       \
	} while (0)
#define GW_ARGS_COPY_DRV_3D_PEER(r, T, in_)                                                        \
	GW_COPYARGS(r, T, in_, p->pCopy ? U(p->pCopy->dstDevice) : 0,                              \
		    p->pCopy ? U(p->pCopy->srcDevice) : 0,                                         \
		    p->pCopy ? (uint64_t)p->pCopy->WidthInBytes *                                  \
				       p->pCopy->Height *(p->pCopy->Depth ? p->pCopy->Depth : 1)   \
			     : 0,                                                                  \
		    cudaMemcpyDeviceToDevice, 0)
#define GW_ARGS_COPY_DRV_3D_PEER_ASYNC(r, T, in_)                                                  \
	do {                                                                                       \
		GW_ARGS_COPY_DRV_3D_PEER(r, T, in_);                                               \
		(r)->stream = U(((const T *)(in_))->hStream);                                      \
	} while (0)
/* The driver's 2D and 3D copies describe each side by its memory type. */
#define GW_ARGS_COPY_DRV_2D(r, T, in_) copy_desc_2d(r, ((const T *)(in_))->pCopy)
#define GW_ARGS_COPY_DRV_2D_ASYNC(r, T, in_)                                                       \
	do {                                                                                       \
		copy_desc_2d(r, ((const T *)(in_))->pCopy);                                        \
		(r)->stream = U(((const T *)(in_))->hStream);                                      \
	} while (0)
#define GW_ARGS_COPY_DRV_3D(r, T, in_) copy_desc_3d(r, ((const T *)(in_))->pCopy)
#define GW_ARGS_COPY_DRV_3D_ASYNC(r, T, in_)                                                       \
	do {                                                                                       \
		copy_desc_3d(r, ((const T *)(in_))->pCopy);                                        \
		(r)->stream = U(((const T *)(in_))->hStream);                                      \
	} while (0)
#define GW_ARGS_COPY_BATCH(r, T, in_)                                                              \
	copy_batch(r, (const size_t *)((const T *)(in_))->sizes, ((const T *)(in_))->count,        \
		   U(((const T *)(in_))->stream))
#define GW_ARGS_COPY_BATCH_DRV(r, T, in_)                                                          \
	copy_batch(r, (const size_t *)((const T *)(in_))->sizes, ((const T *)(in_))->count,        \
		   U(((const T *)(in_))->hStream))
#define GW_ARGS_COPY_BATCH_3D(r, T, in_)                                                           \
	((r)->stream = U(((const T *)(in_))->stream), (r)->copy_kind = cudaMemcpyDefault)
#define GW_ARGS_COPY_BATCH_3D_DRV(r, T, in_)                                                       \
	((r)->stream = U(((const T *)(in_))->hStream), (r)->copy_kind = cudaMemcpyDefault)
#define GW_ARGS_COPY_DRV(r, T, in_)                                                                \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->ByteCount, cudaMemcpyDefault, 0)
#define GW_ARGS_COPY_DRV_ASYNC(r, T, in_)                                                          \
	GW_COPYARGS(r, T, in_, U(p->dst), U(p->src), p->ByteCount, cudaMemcpyDefault, U(p->hStream))
#define GW_ARGS_COPY_DRV_HTOD(r, T, in_)                                                           \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcHost), p->ByteCount,                       \
		    cudaMemcpyHostToDevice, 0)
#define GW_ARGS_COPY_DRV_HTOD_ASYNC(r, T, in_)                                                     \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcHost), p->ByteCount,                       \
		    cudaMemcpyHostToDevice, U(p->hStream))
#define GW_ARGS_COPY_DRV_DTOH(r, T, in_)                                                           \
	GW_COPYARGS(r, T, in_, U(p->dstHost), U(p->srcDevice), p->ByteCount,                       \
		    cudaMemcpyDeviceToHost, 0)
#define GW_ARGS_COPY_DRV_DTOH_ASYNC(r, T, in_)                                                     \
	GW_COPYARGS(r, T, in_, U(p->dstHost), U(p->srcDevice), p->ByteCount,                       \
		    cudaMemcpyDeviceToHost, U(p->hStream))
#define GW_ARGS_COPY_DRV_DTOD(r, T, in_)                                                           \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcDevice), p->ByteCount,                     \
		    cudaMemcpyDeviceToDevice, 0)
#define GW_ARGS_COPY_DRV_DTOD_ASYNC(r, T, in_)                                                     \
	GW_COPYARGS(r, T, in_, U(p->dstDevice), U(p->srcDevice), p->ByteCount,                     \
		    cudaMemcpyDeviceToDevice, U(p->hStream))
#define GW_SETARGS(r, T, in_, d, n, strm)                                                          \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		(r)->dst = (d);                                                                    \
		(r)->bytes = (n);                                                                  \
		(r)->stream = (strm);                                                              \
	} while (0)
#define GW_ARGS_MEMSET_RT(r, T, in_) GW_SETARGS(r, T, in_, U(p->devPtr), p->count, 0)
#define GW_ARGS_MEMSET_RT_ASYNC(r, T, in_)                                                         \
	GW_SETARGS(r, T, in_, U(p->devPtr), p->count, U(p->stream))
#define GW_ARGS_MEMSET_DRV_D8(r, T, in_)  GW_SETARGS(r, T, in_, U(p->dstDevice), p->N, 0)
#define GW_ARGS_MEMSET_DRV_D32(r, T, in_) GW_SETARGS(r, T, in_, U(p->dstDevice), p->N * 4, 0)
#define GW_ARGS_MEMSET_DRV_D8_ASYNC(r, T, in_)                                                     \
	GW_SETARGS(r, T, in_, U(p->dstDevice), p->N, U(p->hStream))
#define GW_ARGS_MEMSET_DRV_D32_ASYNC(r, T, in_)                                                    \
	GW_SETARGS(r, T, in_, U(p->dstDevice), p->N * 4, U(p->hStream))
#define GW_ARGS_MEMSET_DRV_D16(r, T, in_) GW_SETARGS(r, T, in_, U(p->dstDevice), p->N * 2, 0)
#define GW_ARGS_MEMSET_DRV_D16_ASYNC(r, T, in_)                                                    \
	GW_SETARGS(r, T, in_, U(p->dstDevice), p->N * 2, U(p->hStream))
#define GW_MEMSET_2D(r, T, in_, elem, strm)                                                        \
	GW_SETARGS(r, T, in_, U(p->dstDevice), (uint64_t)p->Width * p->Height * (elem), strm)
#define GW_ARGS_MEMSET_DRV_2D8(r, T, in_)	 GW_MEMSET_2D(r, T, in_, 1, 0)
#define GW_ARGS_MEMSET_DRV_2D16(r, T, in_)	 GW_MEMSET_2D(r, T, in_, 2, 0)
#define GW_ARGS_MEMSET_DRV_2D32(r, T, in_)	 GW_MEMSET_2D(r, T, in_, 4, 0)
#define GW_ARGS_MEMSET_DRV_2D8_ASYNC(r, T, in_)	 GW_MEMSET_2D(r, T, in_, 1, U(p->hStream))
#define GW_ARGS_MEMSET_DRV_2D16_ASYNC(r, T, in_) GW_MEMSET_2D(r, T, in_, 2, U(p->hStream))
#define GW_ARGS_MEMSET_DRV_2D32_ASYNC(r, T, in_) GW_MEMSET_2D(r, T, in_, 4, U(p->hStream))
/* Queries: the stream, or the event (in dst); never an API record (poll_update). */
#define GW_ARGS_EVENT_RT(r, T, in_)		 ((r)->dst = U(((const T *)(in_))->event))
#define GW_ARGS_EVENT_DRV(r, T, in_)		 ((r)->dst = U(((const T *)(in_))->hEvent))
/* Host functions: the stream, the function (dst) and its argument (src); so, the STREAM_OP. */
#define GW_HOSTARGS(r, T, in_, strm, fn)                                                           \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		(r)->stream = U(strm);                                                             \
		(r)->dst = U(fn);                                                                  \
		(r)->src = U(p->userData);                                                         \
		so->kind = GW_STREAM_OP_HOST_FUNC;                                                 \
		so->address = (r)->dst;                                                            \
	} while (0)
#define GW_ARGS_HOST_FUNC_RT(r, T, in_)	     GW_HOSTARGS(r, T, in_, p->stream, p->fn)
#define GW_ARGS_HOST_CALLBACK_RT(r, T, in_)  GW_HOSTARGS(r, T, in_, p->stream, p->callback)
#define GW_ARGS_HOST_FUNC_DRV(r, T, in_)     GW_HOSTARGS(r, T, in_, p->hStream, p->fn)
#define GW_ARGS_HOST_CALLBACK_DRV(r, T, in_) GW_HOSTARGS(r, T, in_, p->hStream, p->callback)
/* Waits for a value: the stream and the word (dst); so, the STREAM_OP. */
#define GW_ARGS_WAIT_VALUE32(r, T, in_)                                                            \
	do {                                                                                       \
		const T *p = (in_);                                                                \
		(r)->stream = U(p->stream);                                                        \
		(r)->dst = U(p->addr);                                                             \
		*so = (struct gw_rec_stream_op){.kind = GW_STREAM_OP_WAIT_VALUE,                   \
						.address = (r)->dst,                               \
						.value = p->value,                                 \
						.flags = p->flags};                                \
	} while (0)
#define GW_ARGS_WAIT_VALUE64 GW_ARGS_WAIT_VALUE32
#define GW_ARGS_MEM_OPS(r, T, in_)                                                                 \
	mem_ops(r, so, U(((const T *)(in_))->stream), ((const T *)(in_))->count,                   \
		((const T *)(in_))->paramArray)

/* A 2D copy's descriptor: each side's address by its memory type, the direction from both. */
static uint64_t side(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray array)
{
	switch (t) {
	case CU_MEMORYTYPE_HOST:
		return U(host);
	case CU_MEMORYTYPE_ARRAY:
		return U(array);
	default:
		return U(dev);
	}
}

static uint64_t copy_kind_of(CUmemorytype src, CUmemorytype dst)
{
	bool from_host = src == CU_MEMORYTYPE_HOST, to_host = dst == CU_MEMORYTYPE_HOST;

	if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
		return cudaMemcpyDefault;
	return from_host ? (to_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
			 : (to_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
}

static void copy_desc_2d(struct gw_rec_api *r, const CUDA_MEMCPY2D *c)
{
	if (!c)
		return;
	r->dst = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray);
	r->src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray);
	r->bytes = (uint64_t)c->WidthInBytes * c->Height;
	r->copy_kind = copy_kind_of(c->srcMemoryType, c->dstMemoryType);
}

static void copy_desc_3d(struct gw_rec_api *r, const CUDA_MEMCPY3D *c)
{
	if (!c)
		return;
	r->dst = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray);
	r->src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray);
	r->bytes = (uint64_t)c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
	r->copy_kind = copy_kind_of(c->srcMemoryType, c->dstMemoryType);
}

/* The batch's bytes: its first GW_BATCH_SIZES copies (a callback must stay short). */
#define GW_BATCH_SIZES 4096
static void copy_batch(struct gw_rec_api *r, const size_t *sizes, size_t count, uint64_t stream)
{
	uint64_t sum = 0;

	for (size_t i = 0; sizes && i < count && i < GW_BATCH_SIZES; i++)
		sum += sizes[i];
	r->bytes = sum;
	r->stream = stream;
	r->copy_kind = cudaMemcpyDefault;
}

/* A batch of memory operations holds the stream when one of them is a wait: the first wait is
 * its STREAM_OP. */
static void mem_ops(struct gw_rec_api *r, struct gw_rec_stream_op *so, uint64_t stream,
		    unsigned count, const CUstreamBatchMemOpParams *ops)
{
	r->stream = stream;
	for (unsigned i = 0; ops && i < count && i < GW_BATCH_SIZES; i++) {
		const struct CUstreamMemOpWaitValueParams_st *w = &ops[i].waitValue;

		if (ops[i].operation != CU_STREAM_MEM_OP_WAIT_VALUE_32 &&
		    ops[i].operation != CU_STREAM_MEM_OP_WAIT_VALUE_64)
			continue;
		r->dst = U(w->address);
		*so = (struct gw_rec_stream_op){
			.kind = GW_STREAM_OP_WAIT_VALUE,
			.address = r->dst,
			.value = ops[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? w->value
										    : w->value64,
			.flags = w->flags,
		};
		return;
	}
}

static void set_launch(struct gw_rec_api *r, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		       unsigned by, unsigned bz, uint64_t smem, uint64_t stream)
{
	r->grid_x = gx;
	r->grid_y = gy;
	r->grid_z = gz;
	r->block_x = bx;
	r->block_y = by;
	r->block_z = bz;
	r->shared_mem_bytes = smem;
	r->stream = stream;
}

/* Reads a call's parameters into r, and into so for calls that hold a stream (STREAM_OP). */
static void read_args(struct gw_rec_api *r, struct gw_rec_stream_op *so,
		      CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params)
{
	if (!params)
		return;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
#define GW_RT(fn, cat, sync, mem, args)                                                            \
	case CUPTI_RUNTIME_TRACE_CBID_##fn:                                                        \
		GW_ARGS_##args(r, fn##_params, params);                                            \
		break;
#define GW_DRV(fn, cat, sync, mem, args)
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
		default:
			break;
		}
	} else {
		switch (cbid) {
#define GW_RT(fn, cat, sync, mem, args)
#define GW_DRV(fn, cat, sync, mem, args)                                                           \
	case CUPTI_DRIVER_TRACE_CBID_##fn:                                                         \
		GW_ARGS_##args(r, fn##_params, params);                                            \
		break;
#include "gpuwhy/api-table.def"
#undef GW_RT
#undef GW_DRV
		default:
			break;
		}
	}
}

/*
 * A polling wait in progress: a thread's queries of one stream or event since the first that
 * found the work unfinished. Its SYNC record is written when a query finds the work done; a
 * pause of more than GW_POLL_GAP_NS between two queries, or any other recorded call of the
 * thread in between, means the host was doing something else (PyTorch's allocator queries its
 * events between launches; NCCL's watchdog thread polls its events every 100 ms): the queries
 * so far are forgotten, not a wait. 10 ms lets a loop that sleeps a millisecond between polls,
 * or a thread the scheduler kept off its CPU for a few, still be one wait.
 */
#define GW_POLL_SLOTS  4
#define GW_POLL_GAP_NS 10000000ull
struct poll_slot {
	uint64_t handle;   /* the stream or event */
	uint64_t first_ns; /* the first unfinished query's enter */
	uint64_t last_ns;  /* the latest query's exit */
	uint32_t queries;
	uint8_t event; /* an event query, not a stream query */
	uint8_t used;
};

/* Hooked calls in progress on this thread: only the outermost is the application's call and
 * is recorded (a driver call inside a runtime call, or a runtime call inside
 * __cudaLaunchKernel, is the same call); its enter time and correlation id. */
struct call_stack {
	uint64_t start_ns;
	uint32_t depth;
	uint32_t outer;
	uint32_t anonymous_launches;
	uint32_t device;
	CUcontext context; /* the last context seen, and its device */
	uint32_t polls;	   /* slots in use */
	struct poll_slot poll[GW_POLL_SLOTS];
};

/* initial-exec: four lookups a launch through __tls_get_addr cost more than the rest of the
 * callback's bookkeeping; the struct is small enough for the loader's static TLS reserve when
 * the library is dlopen'ed (CUDA_INJECTION64_PATH). */
static __thread __attribute__((tls_model("initial-exec"))) struct call_stack calls;

static uint32_t device_of(struct call_stack *cs, CUcontext ctx)
{
	uint32_t dev = 0;

	if (!ctx)
		return 0;
	if (ctx == cs->context)
		return cs->device;
	/* A fork child never calls CUPTI: its state is the parent's. */
	if (!atomic_load_explicit(&gw_cupti_usable, memory_order_relaxed) ||
	    gw_cupti.cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS)
		dev = 0;
	cs->context = ctx;
	cs->device = dev;
	/* the sampler of measured counters samples the devices the program uses */
	gw_nvml_device_used(dev);
	return dev;
}

/* CUPTI's id of a stream handle (the GPU records' stream), 0 when CUPTI cannot say. */
static uint64_t stream_id(CUcontext ctx, uint64_t handle, bool per_thread)
{
	static __typeof__(cuptiGetStreamIdEx) *get;
	static _Atomic bool looked;
	uint32_t id = 0;

	if (!atomic_load_explicit(&gw_cupti_usable, memory_order_relaxed))
		return 0;
	if (!atomic_load_explicit(&looked, memory_order_acquire)) {
		*(void **)&get = gw_cupti_symbol("cuptiGetStreamIdEx");
		atomic_store_explicit(&looked, true, memory_order_release);
	}
	if (!get || get(ctx, (CUstream)(uintptr_t)handle, per_thread, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

/* A query of a stream or event returned (status: its return code): folds it into the thread's
 * polling waits; the query that ends one writes its SYNC record. */
static void poll_update(struct call_stack *cs, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			const struct api_info *info, const CUpti_CallbackData *cb,
			uint64_t start_ns)
{
	/* cudaErrorNotReady and CUDA_ERROR_NOT_READY are both 600 */
	enum { NOT_READY = 600 };
	struct gw_rec_api a = {0};
	struct gw_rec_stream_op so = {0};
	struct poll_slot *slot = NULL, *spare = NULL;
	uint64_t status = 0, handle, now = gw_now_ns();
	bool event = domain == CUPTI_CB_DOMAIN_RUNTIME_API
			     ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020
			     : cbid == CUPTI_DRIVER_TRACE_CBID_cuEventQuery;

	if (!atomic_load_explicit(&gw_cupti_cuda_seen, memory_order_relaxed))
		atomic_store(&gw_cupti_cuda_seen, true);
	if (cb->functionReturnValue)
		status = domain == CUPTI_CB_DOMAIN_RUNTIME_API
				 ? (uint64_t) * (const cudaError_t *)cb->functionReturnValue
				 : (uint64_t) * (const CUresult *)cb->functionReturnValue;
	read_args(&a, &so, domain, cbid, cb->functionParams);
	handle = event ? a.dst : a.stream;
	for (unsigned i = 0; i < GW_POLL_SLOTS; i++) {
		struct poll_slot *p = &cs->poll[i];

		if (p->used && p->handle == handle && p->event == event)
			slot = p;
		else if (!spare || !p->used || (spare->used && p->last_ns < spare->last_ns))
			spare = p; /* a free slot, else the one idle longest */
	}
	/* the host did something else since this handle's last query */
	if (slot && start_ns - slot->last_ns > GW_POLL_GAP_NS) {
		slot->used = 0;
		cs->polls--;
		spare = slot;
		slot = NULL;
	}
	if (status == NOT_READY) {
		if (!slot) {
			slot = spare;
			if (!slot->used)
				cs->polls++;
			*slot = (struct poll_slot){
				.handle = handle, .first_ns = start_ns, .event = event, .used = 1};
		}
		slot->queries++;
		slot->last_ns = now;
		return;
	}
	if (!slot)
		return; /* done at the first query: the host never waited */
	if (!status && gw_capturing()) {
		struct gw_rec_sync r = {
			.correlation = cb->correlationId,
			.start_ns = slot->first_ns,
			.end_ns = now,
			.type = event ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE
				      : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
			.stream = event ? 0 : stream_id(cb->context, handle, info->per_thread),
			.queries = slot->queries + 1ull,
			.tid = gw_thread_id(),
			.device = device_of(cs, cb->context),
			.name_id = gw_intern_string_static(
				GW_STRING_API, cb->functionName ? cb->functionName : info->name),
			.stack_id = gw_stacks_enabled() ? gw_stack_capture() : 0,
		};

		gw_emit(GW_REC_SYNC, &r);
	}
	slot->used = 0;
	cs->polls--;
}

static void record(struct call_stack *cs, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		   const struct api_info *info, const CUpti_CallbackData *cb, uint64_t start_ns)
{
	struct gw_rec_api r = {
		.start_ns = start_ns,
		.end_ns = gw_now_ns(),
		.correlation = cb->correlationId,
		.category = info->category,
		.sync_kind = info->sync_kind,
		.domain = domain,
		.cbid = cbid,
	};
	struct gw_rec_stream_op so = {0};
	/* Copies and memsets too: an async one from pageable memory is a sync, which only its
	 * GPU record tells; graph launches are few, and each stands for many kernels. */
	bool stack = gw_stacks_enabled() &&
		     (info->sync_kind != GW_SYNC_NONE || info->category == GW_API_ALLOC ||
		      info->category == GW_API_FREE || info->category == GW_API_MEMCPY ||
		      info->category == GW_API_MEMSET || info->category == GW_API_GRAPH_LAUNCH);

	/* Another call between a thread's queries: it was not spinning on them. */
	if (cs->polls) {
		memset(cs->poll, 0, sizeof(cs->poll));
		cs->polls = 0;
	}
	r.tid = gw_thread_id();
	if (!atomic_load_explicit(&gw_cupti_cuda_seen, memory_order_relaxed))
		atomic_store(&gw_cupti_cuda_seen, true);
	/* CUPTI's function names are constants of the library, as are the table's. */
	r.name_id = gw_intern_string_static(GW_STRING_API,
					    cb->functionName ? cb->functionName : info->name);
	if (cb->functionReturnValue)
		r.status = domain == CUPTI_CB_DOMAIN_RUNTIME_API
				   ? (uint64_t) * (const cudaError_t *)cb->functionReturnValue
				   : (uint64_t) * (const CUresult *)cb->functionReturnValue;
	r.device = device_of(cs, cb->context);
	read_args(&r, &so, domain, cbid, cb->functionParams);
	if (info->category == GW_API_LAUNCH) {
		uint32_t n;

		r.kernel_name_id = gw_intern_string(GW_STRING_KERNEL, cb->symbolName);
		n = r.kernel_name_id ? gw_intern_count_launch(r.kernel_name_id)
				     : ++cs->anonymous_launches;
		stack = stack || (gw_stacks_enabled() && gw_stack_sample_launch(n));
	}
	if ((info->category == GW_API_LAUNCH || info->category == GW_API_GRAPH_LAUNCH) &&
	    !r.status) /* approximate: threads racing here may lose a count */
		atomic_store_explicit(
			&gw_cupti_launches,
			atomic_load_explicit(&gw_cupti_launches, memory_order_relaxed) + 1,
			memory_order_relaxed);
	/* A host function or a wait for a value is named by its site when it holds work (few
	 * calls; cudaStreamWaitEvent, of the same category and frequent, has no STREAM_OP). */
	if (stack || (so.kind && gw_stacks_enabled()))
		r.stack_id = gw_stack_capture();
	gw_emit(GW_REC_API, &r);
	/* A host function or a wait for a value: which stream it holds, by CUPTI's id for it. */
	if (so.kind && !r.status) {
		so.correlation = r.correlation;
		so.tid = r.tid;
		so.device = r.device;
		so.stream = stream_id(cb->context, r.stream, info->per_thread);
		gw_emit(GW_REC_STREAM_OP, &so);
	}

	if ((info->category == GW_API_ALLOC || info->category == GW_API_FREE) && !r.status &&
	    r.dst) {
		struct gw_rec_memory m = {
			.time_ns = r.end_ns,
			.op = info->category == GW_API_ALLOC ? GW_MEMORY_ALLOC : GW_MEMORY_FREE,
			.mem_kind = info->mem_kind,
			.tid = r.tid,
			.correlation = r.correlation,
			.device = r.device,
			.address = r.dst,
			.bytes = r.bytes,
			.stream = r.stream,
			.stack_id = r.stack_id,
		};

		gw_emit(GW_REC_MEMORY, &m);
	}
}

/* A call that destroys a context, with whatever records CUPTI still holds for it. */
static bool is_teardown(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaThreadExit_v3020;
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2 ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2;
}

/*
 * A context was created: the time since the enclosing recorded call began (the first call of
 * the process, mostly: cudaFree(0), cudaSetDevice) went to creating it, 0.1-1 s on a GPU. An
 * OVERHEAD record, so that the report counts it as start-up and not as the call's waiting.
 */
static void context_created(const CUpti_ResourceData *rd)
{
	struct call_stack *cs = &calls;
	uint32_t device = UINT32_MAX;
	uint64_t now = gw_now_ns();
	struct gw_rec_overhead r = {
		.kind = GW_OVERHEAD_CONTEXT_CREATION,
		.tid = gw_thread_id(),
		.device = UINT64_MAX,
		.start_ns = cs->depth ? cs->start_ns : now,
		.end_ns = now,
	};

	if (!gw_capturing())
		return;
	if (rd && rd->context && gw_cupti.cuptiGetDeviceId &&
	    gw_cupti.cuptiGetDeviceId(rd->context, &device) == CUPTI_SUCCESS)
		r.device = device;
	gw_emit(GW_REC_OVERHEAD, &r);
}

void CUPTIAPI gw_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct call_stack *cs = &calls;
	const struct api_info *info;

	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			context_created(data);
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
			return;
		info = &runtime_info[cbid];
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
			return;
		info = &driver_info[cbid];
	} else {
		return;
	}
	if (!info->present || !cb)
		return;

	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (!cs->depth && is_teardown(domain, cbid))
			gw_cupti_flush_at_teardown();
		if (!cs->depth++) {
			cs->outer = cb->correlationId;
			cs->start_ns = gw_now_ns();
		} else {
			/* The GPU work may carry this inner call's id: it joins the outer call. */
			gw_corr_alias(cb->correlationId, cs->outer);
		}
		return;
	}
	/* An exit whose enter came before the subscription has nothing to pair with. */
	if (!cs->depth || --cs->depth)
		return;
	if (is_teardown(domain, cbid))
		gw_cupti_flush_at_teardown(); /* the device drained: what it ran is complete */
	if (info->category == GW_API_QUERY)
		poll_update(cs, domain, cbid, info, cb, cs->start_ns);
	else if (gw_capturing())
		record(cs, domain, cbid, info, cb, cs->start_ns);
}
