/* SPDX-License-Identifier: MIT */
/*
 * Several devices (GPUSIM_DEVICES): peer access and copies between two devices. A peer copy
 * runs on a stream of one device and moves data between two; CUPTI records it as a MEMCPY2
 * (CUpti_ActivityMemcpyPtoP4) naming both, not as a MEMCPY.
 */
#include <string.h>

#include <cuda.h>

#include "runtime.h"

/* Declared by cuda.h only when compiling for the per-thread default stream. */
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
				   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount);
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
					CUdeviceptr srcDevice, CUcontext srcContext,
					size_t ByteCount, CUstream hStream);

static bool valid_device(int d)
{
	return d >= 0 && (uint32_t)d < gw_sim_rt.cfg.devices;
}

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
	RT_BEGIN(cudaDeviceCanAccessPeer, v4000, canAccessPeer, device, peerDevice);

	if (!canAccessPeer)
		RT_END(cudaErrorInvalidValue);
	if (!valid_device(device) || !valid_device(peerDevice))
		RT_END(cudaErrorInvalidDevice);
	*canAccessPeer = device != peerDevice;
	RT_END(cudaSuccess);
}

/* Peer access is always possible here and changes nothing: every device sees all memory. */
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
	RT_BEGIN(cudaDeviceEnablePeerAccess, v4000, peerDevice, flags);

	if (!valid_device(peerDevice) || (unsigned int)peerDevice == gw_sim_current_device())
		RT_END(cudaErrorInvalidDevice);
	RT_END(flags ? cudaErrorInvalidValue : cudaSuccess);
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
	RT_BEGIN(cudaDeviceDisablePeerAccess, v4000, peerDevice);

	RT_END(valid_device(peerDevice) ? cudaSuccess : cudaErrorInvalidDevice);
}

/*
 * A copy of count bytes from src on device src_dev to dst on dst_dev. async: on stream, in its
 * order; else (cudaMemcpyPeer) on the current device's legacy stream, "serialized with respect
 * to all pending and future asynchronous work in the current device, srcDevice, and
 * dstDevice", and, as CUDA says of it, "asynchronous with respect to the host": it starts
 * after all work issued to the three devices, their legacy streams' later work waits for it,
 * and the call returns without waiting.
 */
static cudaError_t peer_copy(void *dst, int dst_dev, const void *src, int src_dev, size_t count,
			     cudaStream_t stream, bool async, bool per_thread)
{
	struct gw_sim_op op = {.kind = GW_SIM_OP_MEMCPY};
	uint64_t dur = gw_sim_transfer_ns(count, gw_sim_rt.cfg.p2p_gbps);
	enum gw_sim_mem dk, sk;
	struct gw_sim_stream *s;
	const struct gw_sim_hooks *h;
	unsigned int cur = gw_sim_current_device();

	if (!valid_device(dst_dev) || !valid_device(src_dev))
		return cudaErrorInvalidDevice;
	if (!count)
		return cudaSuccess;
	if (!dst || !src || gw_sim_mem_find(dst, count, &dk, NULL) < 0 ||
	    gw_sim_mem_find(src, count, &sk, NULL) < 0 || !gw_sim_on_device(dk) ||
	    !gw_sim_on_device(sk))
		return cudaErrorInvalidValue;
	s = gw_sim_stream_get(stream, per_thread);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (s->capture)
		return cudaErrorStreamCaptureUnsupported;
	memmove(dst, src, count);
	op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	op.src_kind = op.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	op.bytes = count;
	op.async = async;
	op.peer = true;
	op.src_device = (uint32_t)src_dev;
	op.dst_device = (uint32_t)dst_dev;
	op.correlation_id = gw_sim_correlation();
	if (async) {
		gw_sim_enqueue(s, &op, dur, false);
		return cudaSuccess;
	}
	/* the three devices' work so far (a device's held streams first released) */
	gw_sim_device_end_of((unsigned int)src_dev);
	gw_sim_device_end_of((unsigned int)dst_dev);
	gw_sim_device_end_of(cur);
	pthread_mutex_lock(&gw_sim_rt.lock);
	gw_sim_advance_locked(&gw_sim_rt.legacy[cur], gw_sim_rt.device_last_end_ns[src_dev]);
	gw_sim_advance_locked(&gw_sim_rt.legacy[cur], gw_sim_rt.device_last_end_ns[dst_dev]);
	gw_sim_advance_locked(&gw_sim_rt.legacy[cur], gw_sim_rt.device_last_end_ns[cur]);
	gw_sim_place_locked(&gw_sim_rt.legacy[cur], &op, dur, gw_sim_now_ns());
	gw_sim_advance_locked(&gw_sim_rt.legacy[src_dev], op.end_ns);
	gw_sim_advance_locked(&gw_sim_rt.legacy[dst_dev], op.end_ns);
	pthread_mutex_unlock(&gw_sim_rt.lock);
	h = atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	if (h)
		h->op(&op);
	return cudaSuccess;
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
	RT_BEGIN(cudaMemcpyPeer, v4000, dst, dstDevice, src, srcDevice, count);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemcpyPeer, cuMemcpyPeer_params, (CUdeviceptr)dst,
			  gw_sim_device_context((unsigned int)dstDevice), (CUdeviceptr)src,
			  gw_sim_device_context((unsigned int)srcDevice), count);
		err = peer_copy(dst, dstDevice, src, srcDevice, count, NULL, false, false);
		DRV_END(err);
	}
	RT_END(err);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
				size_t count, cudaStream_t stream)
{
	RT_BEGIN(cudaMemcpyPeerAsync, v4000, dst, dstDevice, src, srcDevice, count, stream);
	cudaError_t err;
	{
		DRV_BEGIN(cuMemcpyPeerAsync, cuMemcpyPeerAsync_params, (CUdeviceptr)dst,
			  gw_sim_device_context((unsigned int)dstDevice), (CUdeviceptr)src,
			  gw_sim_device_context((unsigned int)srcDevice), count, (CUstream)stream);
		err = peer_copy(dst, dstDevice, src, srcDevice, count, stream, true, false);
		DRV_END(err);
	}
	RT_END(err);
}

static CUresult to_cu(cudaError_t err)
{
	switch (err) {
	case cudaSuccess:
		return CUDA_SUCCESS;
	case cudaErrorInvalidResourceHandle:
		return CUDA_ERROR_INVALID_HANDLE;
	case cudaErrorInvalidDevice:
		return CUDA_ERROR_INVALID_CONTEXT;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* The driver API's own peer copies: the call is the application's. */
static CUresult drv_peer(CUpti_CallbackId cbid, const char *name, const void *params,
			 CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
			 size_t count, CUstream stream, bool async, bool per_thread)
{
	struct gw_sim_api a;
	cudaError_t err;

	gw_sim_api_begin(&a, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, params, NULL);
	err = peer_copy((void *)dst, gw_sim_context_device(dst_ctx), (const void *)src,
			gw_sim_context_device(src_ctx), count, (cudaStream_t)stream, async,
			per_thread);
	return to_cu(gw_sim_api_end(&a, err));
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
			      CUcontext srcContext, size_t ByteCount)
{
	cuMemcpyPeer_params p = {dstDevice, dstContext, srcDevice, srcContext, ByteCount};

	return drv_peer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, "cuMemcpyPeer", &p, dstDevice,
			dstContext, srcDevice, srcContext, ByteCount, NULL, false, false);
}

CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
				   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{
	cuMemcpyPeer_ptds_params p = {dstDevice, dstContext, srcDevice, srcContext, ByteCount};

	return drv_peer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds, "cuMemcpyPeer_ptds", &p,
			dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, false, true);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
				   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
				   CUstream hStream)
{
	cuMemcpyPeerAsync_params p = {dstDevice,  dstContext, srcDevice,
				      srcContext, ByteCount,  hStream};

	return drv_peer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync, "cuMemcpyPeerAsync", &p,
			dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true,
			false);
}

CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
					CUdeviceptr srcDevice, CUcontext srcContext,
					size_t ByteCount, CUstream hStream)
{
	cuMemcpyPeerAsync_ptsz_params p = {dstDevice,  dstContext, srcDevice,
					   srcContext, ByteCount,  hStream};

	return drv_peer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync_ptsz",
			&p, dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true,
			true);
}
