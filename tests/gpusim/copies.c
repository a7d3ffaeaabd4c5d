/* SPDX-License-Identifier: MIT */
/*
 * Copies and memsets beyond the runtime's 1D, 2D and 3D ones: batches of copies (CUDA 12.8
 * and 13.0, one MEMCPY record per copy, all joined to the call), and the driver API's 2D and
 * 3D copies and its 16-bit and 2D memsets, called by the application itself (their call is the
 * outermost, a driver-domain one). Same cost model as runtime.c's.
 */
#include <string.h>

#include <cuda.h>

#include "runtime.h"

/* Declared by cuda.h only when compiling for the per-thread default stream. */
cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
				      const size_t *sizes, size_t count,
				      struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
				      size_t numAttrs, cudaStream_t stream);

static CUresult to_cu(cudaError_t err)
{
	switch (err) {
	case cudaSuccess:
		return CUDA_SUCCESS;
	case cudaErrorInvalidResourceHandle:
		return CUDA_ERROR_INVALID_HANDLE;
	case cudaErrorStreamCaptureUnsupported:
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A driver entry point the application called itself: its call is the outermost. */
#define CU_CALL(fn, body, ...)                                                                     \
	do {                                                                                       \
		fn##_params p_ = {__VA_ARGS__};                                                    \
		struct gw_sim_api a_;                                                              \
		gw_sim_api_begin(&a_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn,    \
				 #fn, &p_, NULL);                                                  \
		return to_cu(gw_sim_api_end(&a_, (body)));                                         \
	} while (0)

/* --- batches --- */

static cudaError_t batch(void *const *dsts, const void *const *srcs, const size_t *sizes,
			 size_t count, cudaStream_t stream, bool per_thread)
{
	enum gw_sim_mem dk, sk;
	uint64_t issued;

	if (!count || !dsts || !srcs || !sizes)
		return cudaErrorInvalidValue;
	/* The bytes move first, then the copies are issued at one time, back to back, as one
	 * call queues them: moving them one at a time, between the copies, would leave the
	 * device idle between. */
	for (size_t i = 0; i < count; i++) {
		if (!dsts[i] || !srcs[i] || gw_sim_mem_find(dsts[i], sizes[i], &dk, NULL) < 0 ||
		    gw_sim_mem_find(srcs[i], sizes[i], &sk, NULL) < 0)
			return cudaErrorInvalidValue;
		memmove(dsts[i], srcs[i], sizes[i]);
	}
	issued = gw_sim_now_ns();
	for (size_t i = 0; i < count; i++) {
		struct gw_sim_copy_req r = {
			.dst = dsts[i],
			.src = srcs[i],
			.dpitch = sizes[i],
			.spitch = sizes[i],
			.width = sizes[i],
			.height = 1,
			.kind = cudaMemcpyDefault,
			.stream = stream,
			.async = true,
			.per_thread = per_thread,
			.direct = true,
			.moved = true,
			.issued_ns = issued,
		};
		cudaError_t err = gw_sim_copy(&r);

		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}

cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes,
				 size_t count, struct cudaMemcpyAttributes *attrs,
				 size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyBatchAsync, v13000, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
		 stream);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync_v2_params, (CUdeviceptr *)dsts,
			  (CUdeviceptr *)srcs, (size_t *)sizes, count, (CUmemcpyAttributes *)attrs,
			  attrsIdxs, numAttrs, (CUstream)stream);
		err = batch(dsts, srcs, sizes, count, stream, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
				      const size_t *sizes, size_t count,
				      struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
				      size_t numAttrs, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyBatchAsync_ptsz, v13000, dsts, srcs, sizes, count, attrs, attrsIdxs,
		 numAttrs, stream);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemcpyBatchAsync_v2_ptsz, cuMemcpyBatchAsync_v2_ptsz_params,
			  (CUdeviceptr *)dsts, (CUdeviceptr *)srcs, (size_t *)sizes, count,
			  (CUmemcpyAttributes *)attrs, attrsIdxs, numAttrs, (CUstream)stream);
		err = batch(dsts, srcs, sizes, count, stream, true);
		DRV_END(err);
	}
	RT_END(err);
}

CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
				    size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
				    size_t numAttrs, CUstream hStream)
{
	CU_CALL(cuMemcpyBatchAsync_v2,
		batch((void *const *)dsts, (const void *const *)srcs, sizes, count,
		      (cudaStream_t)hStream, false),
		dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream);
}

/* --- the driver's 2D and 3D copies --- */

/* One side of a copy descriptor: its address at (x, y, z) of a pitched layout. */
static void *side(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array, size_t x,
		  size_t y, size_t z, size_t pitch, size_t height)
{
	const char *base = type == CU_MEMORYTYPE_HOST ? host : (const char *)(uintptr_t)dev;

	if (type == CU_MEMORYTYPE_ARRAY || array || !base)
		return NULL; /* CUDA arrays are not simulated */
	return (void *)(base + z * pitch * height + y * pitch + x);
}

static cudaError_t copy_2d(const CUDA_MEMCPY2D *c, CUstream stream, bool async)
{
	struct gw_sim_copy_req r;

	if (!c)
		return cudaErrorInvalidValue;
	r = (struct gw_sim_copy_req){
		.dst = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes,
			    c->dstY, 0, c->dstPitch, 0),
		.src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes,
			    c->srcY, 0, c->srcPitch, 0),
		.dpitch = c->dstPitch,
		.spitch = c->srcPitch,
		.width = c->WidthInBytes,
		.height = c->Height,
		.kind = cudaMemcpyDefault,
		.stream = (cudaStream_t)stream,
		.async = async,
		.direct = true,
	};
	return gw_sim_copy(&r);
}

static cudaError_t copy_3d(const CUDA_MEMCPY3D *c, CUstream stream, bool async)
{
	struct gw_sim_copy_req r;

	if (!c)
		return cudaErrorInvalidValue;
	r = (struct gw_sim_copy_req){
		.dst = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes,
			    c->dstY, c->dstZ, c->dstPitch, c->dstHeight),
		.src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes,
			    c->srcY, c->srcZ, c->srcPitch, c->srcHeight),
		.dpitch = c->dstPitch,
		.spitch = c->srcPitch,
		.width = c->WidthInBytes,
		.height = c->Height,
		.kind = cudaMemcpyDefault,
		.stream = (cudaStream_t)stream,
		.async = async,
		.depth = c->Depth,
		.dslice = c->dstPitch * c->dstHeight,
		.sslice = c->srcPitch * c->srcHeight,
		.direct = true,
	};
	if (r.depth > 1 && (r.dslice < r.dpitch * r.height || r.sslice < r.spitch * r.height))
		return cudaErrorInvalidValue;
	return gw_sim_copy(&r);
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	CU_CALL(cuMemcpy2D_v2, copy_2d(pCopy, NULL, false), pCopy);
}

CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
	CU_CALL(cuMemcpy2DUnaligned_v2, copy_2d(pCopy, NULL, false), pCopy);
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	CU_CALL(cuMemcpy2DAsync_v2, copy_2d(pCopy, hStream, true), pCopy, hStream);
}

CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	CU_CALL(cuMemcpy3D_v2, copy_3d(pCopy, NULL, false), pCopy);
}

CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	CU_CALL(cuMemcpy3DAsync_v2, copy_3d(pCopy, hStream, true), pCopy, hStream);
}

/* --- the driver's 16-bit and 2D memsets --- */

/* Height rows of width elements of elem bytes, pitch bytes apart, set to value. */
static cudaError_t memset_2d(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned int elem,
			     size_t width, size_t height, CUstream stream, bool async)
{
	struct gw_sim_op op = {.kind = GW_SIM_OP_MEMSET};
	char *p = (char *)(uintptr_t)dst;
	size_t row = width * elem, span = height ? pitch * (height - 1) + row : 0;
	struct gw_sim_stream *s;
	enum gw_sim_mem kind;

	if (!row || !height)
		return cudaSuccess;
	if (height > 1 && pitch < row)
		return cudaErrorInvalidPitchValue;
	if (!p || ((uintptr_t)p % elem) || gw_sim_mem_find(p, span, &kind, NULL) < 0 ||
	    !gw_sim_on_device(kind))
		return cudaErrorInvalidValue;
	s = gw_sim_stream_get((cudaStream_t)stream, false);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	for (size_t y = 0; y < height; y++)
		for (size_t x = 0; x < width; x++)
			memcpy(p + y * pitch + x * elem, &value, elem); /* little-endian */
	op.async = async;
	op.blocking = !async;
	op.bytes = row * height;
	op.value = value;
	op.dst_kind = gw_sim_activity_mem_kind(kind);
	op.correlation_id = gw_sim_correlation();
	gw_sim_enqueue(s, &op, gw_sim_transfer_ns(op.bytes, gw_sim_rt.cfg.d2d_gbps), false);
	if (!async)
		gw_sim_wait_until(op.end_ns);
	return cudaSuccess;
}

CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	CU_CALL(cuMemsetD16_v2, memset_2d(dstDevice, N * 2, us, 2, N, 1, NULL, false), dstDevice,
		us, N);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
				  CUstream hStream)
{
	CU_CALL(cuMemsetD16Async, memset_2d(dstDevice, N * 2, us, 2, N, 1, hStream, true),
		dstDevice, us, N, hStream);
}

#define MEMSET_2D(fn, fn_async, T, elem)                                                           \
	CUresult CUDAAPI fn(CUdeviceptr dstDevice, size_t dstPitch, T v, size_t Width,             \
			    size_t Height)                                                         \
	{                                                                                          \
		CU_CALL(fn, memset_2d(dstDevice, dstPitch, v, elem, Width, Height, NULL, false),   \
			dstDevice, dstPitch, v, Width, Height);                                    \
	}                                                                                          \
	CUresult CUDAAPI fn_async(CUdeviceptr dstDevice, size_t dstPitch, T v, size_t Width,       \
				  size_t Height, CUstream hStream)                                 \
	{                                                                                          \
		CU_CALL(fn_async,                                                                  \
			memset_2d(dstDevice, dstPitch, v, elem, Width, Height, hStream, true),     \
			dstDevice, dstPitch, v, Width, Height, hStream);                           \
	}
MEMSET_2D(cuMemsetD2D8_v2, cuMemsetD2D8Async, unsigned char, 1)
MEMSET_2D(cuMemsetD2D16_v2, cuMemsetD2D16Async, unsigned short, 2)
MEMSET_2D(cuMemsetD2D32_v2, cuMemsetD2D32Async, unsigned int, 4)
