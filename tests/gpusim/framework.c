/* SPDX-License-Identifier: MIT */
/*
 * Runtime calls that frameworks link against (PyTorch's libraries import 113 cudart symbols,
 * and Python loads them with RTLD_NOW, so every one must exist). The ones a framework's
 * ordinary work depends on behave: stream capture queries, the capture mode exchange, the bus
 * id, the memory pool's figures (host functions, peer access and the driver entry-point lookup
 * are hold.c's, peer.c's and driver.c's). The rest are in unsupported.def and answer
 * cudaErrorNotSupported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static cudaError_t capture_info(cudaStream_t stream, bool per_thread,
				enum cudaStreamCaptureStatus *status, unsigned long long *id,
				cudaGraph_t *graph, const cudaGraphNode_t **deps,
				const cudaGraphEdgeData **edges, size_t *n_deps)
{
	struct gw_sim_stream *s = gw_sim_stream_get(stream, per_thread);

	if (!s)
		return cudaErrorInvalidResourceHandle;
	if (!status)
		return cudaErrorInvalidValue;
	*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	if (!s->capture)
		return cudaSuccess;
	/* A capture is a sequence of launches (launch.c): no dependency set to hand out. */
	if (id)
		*id = s->capture->id;
	if (graph)
		*graph = (cudaGraph_t)(void *)s->capture;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (n_deps)
		*n_deps = 0;
	return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
				     enum cudaStreamCaptureStatus *captureStatus_out,
				     unsigned long long *id_out, cudaGraph_t *graph_out,
				     const cudaGraphNode_t **dependencies_out,
				     const cudaGraphEdgeData **edgeData_out,
				     size_t *numDependencies_out)
{
	RT_BEGIN(cudaStreamGetCaptureInfo, v12030, stream, captureStatus_out, id_out, graph_out,
		 dependencies_out, edgeData_out, numDependencies_out);

	RT_END(capture_info(stream, false, captureStatus_out, id_out, graph_out, dependencies_out,
			    edgeData_out, numDependencies_out));
}

/* The thread's capture interaction mode: kept and exchanged, never enforced (gpusim does not
 * refuse unsafe calls during a capture by mode). */
static __thread enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	RT_BEGIN(cudaThreadExchangeStreamCaptureMode, v10010, mode);
	enum cudaStreamCaptureMode old;

	if (!mode || (unsigned int)*mode > cudaStreamCaptureModeRelaxed)
		RT_END(cudaErrorInvalidValue);
	old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	RT_END(cudaSuccess);
}

/* One simulated device, on no real bus: a well-formed address that names it. */
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
	RT_BEGIN(cudaDeviceGetPCIBusId, v4010, pciBusId, len, device);

	if (!pciBusId || len <= 0)
		RT_END(cudaErrorInvalidValue);
	if (device != 0)
		RT_END(cudaErrorInvalidDevice);
	if (snprintf(pciBusId, (size_t)len, "0000:00:00.0") >= len)
		RT_END(cudaErrorInvalidValue);
	RT_END(cudaSuccess);
}

/* The default pool holds nothing back (cudaMallocAsync memory is freed at once): its
 * reserved and used figures are zero, trimming has nothing to do. */
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	RT_BEGIN(cudaMemPoolGetAttribute, v11020, memPool, attr, value);

	if (!memPool || !value)
		RT_END(cudaErrorInvalidValue);
	switch (attr) {
	case cudaMemPoolReuseFollowEventDependencies:
	case cudaMemPoolReuseAllowOpportunistic:
	case cudaMemPoolReuseAllowInternalDependencies:
		*(int *)value = 1;
		break;
	case cudaMemPoolAttrReleaseThreshold:
	case cudaMemPoolAttrReservedMemCurrent:
	case cudaMemPoolAttrReservedMemHigh:
	case cudaMemPoolAttrUsedMemCurrent:
	case cudaMemPoolAttrUsedMemHigh:
		*(unsigned long long *)value = 0;
		break;
	default:
		RT_END(cudaErrorInvalidValue);
	}
	RT_END(cudaSuccess);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	RT_BEGIN(cudaMemPoolTrimTo, v11020, memPool, minBytesToKeep);

	RT_END(memPool ? cudaSuccess : cudaErrorInvalidValue);
}

/* For unsupported.c, which defines the calls gpusim has no model for without their
 * prototypes: sets the last error as a failed call does. */
int gw_sim_not_supported(void);
int gw_sim_not_supported(void)
{
	gw_sim_stats_unsupported();
	gw_sim_set_error(cudaErrorNotSupported);
	return cudaErrorNotSupported;
}
