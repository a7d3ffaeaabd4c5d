/* SPDX-License-Identifier: MIT */
/* Runtime calls accepted without a model of their own: limits, flags, hints, registration. */
#include <errno.h>
#include <string.h>

#include <cuda_profiler_api.h>

#include "runtime.h"

static size_t limits[cudaLimitPersistingL2CacheSize + 1] = {
	[cudaLimitStackSize] = 1024,
	[cudaLimitPrintfFifoSize] = 1 << 20,
	[cudaLimitMallocHeapSize] = 8 << 20,
	[cudaLimitDevRuntimeSyncDepth] = 2,
	[cudaLimitDevRuntimePendingLaunchCount] = 2048,
	[cudaLimitMaxL2FetchGranularity] = 64,
};

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
	RT_BEGIN(cudaDeviceSetLimit, v3020, limit, value);

	if ((unsigned int)limit >= sizeof(limits) / sizeof(limits[0]))
		RT_END(cudaErrorUnsupportedLimit);
	limits[limit] = value;
	RT_END(cudaSuccess);
}

cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
	RT_BEGIN(cudaDeviceGetLimit, v3020, pValue, limit);

	if (!pValue)
		RT_END(cudaErrorInvalidValue);
	if ((unsigned int)limit >= sizeof(limits) / sizeof(limits[0]))
		RT_END(cudaErrorUnsupportedLimit);
	*pValue = limits[limit];
	RT_END(cudaSuccess);
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig)
{
	RT_BEGIN(cudaDeviceSetCacheConfig, v3020, cacheConfig);

	RT_END(cudaSuccess);
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
	RT_BEGIN(cudaFuncSetCacheConfig, v3020, func, cacheConfig);

	RT_END(gw_sim_kernel_find(func) ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	RT_BEGIN(cudaFuncGetName, v12030, name, func);
	struct gw_sim_kernel *k = gw_sim_kernel_find(func);

	if (!name)
		RT_END(cudaErrorInvalidValue);
	if (!k)
		RT_END(cudaErrorInvalidDeviceFunction);
	*name = k->name;
	RT_END(cudaSuccess);
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
	RT_BEGIN(cudaGetDeviceFlags, v7000, flags);

	if (!flags)
		RT_END(cudaErrorInvalidValue);
	*flags = cudaDeviceScheduleAuto;
	RT_END(cudaSuccess);
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
	RT_BEGIN(cudaInitDevice, v12000, device, deviceFlags, flags);

	RT_END(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
	RT_BEGIN(cudaChooseDevice, v3020, device, prop);

	if (!device || !prop)
		RT_END(cudaErrorInvalidValue);
	*device = 0;
	RT_END(cudaSuccess);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	RT_BEGIN(cudaStreamGetPriority, v5050, hStream, priority);
	struct gw_sim_stream *s = gw_sim_stream_get(hStream, false);

	if (!s)
		RT_END(cudaErrorInvalidResourceHandle);
	if (!priority)
		RT_END(cudaErrorInvalidValue);
	*priority = s->priority;
	RT_END(cudaSuccess);
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
	RT_BEGIN(cudaStreamGetId, v12000, hStream, streamId);
	struct gw_sim_stream *s = gw_sim_stream_get(hStream, false);

	if (!s)
		RT_END(cudaErrorInvalidResourceHandle);
	if (!streamId)
		RT_END(cudaErrorInvalidValue);
	*streamId = s->id;
	RT_END(cudaSuccess);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
	RT_BEGIN(cudaStreamGetDevice, v12080, hStream, device);

	struct gw_sim_stream *s = gw_sim_stream_get(hStream, false);

	if (!s)
		RT_END(cudaErrorInvalidResourceHandle);
	if (!device)
		RT_END(cudaErrorInvalidValue);
	*device = (int)s->device;
	RT_END(cudaSuccess);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	RT_BEGIN(cudaHostRegister, v4000, ptr, size, flags);
	enum gw_sim_mem kind;
	int r;

	if (!ptr || !size)
		RT_END(cudaErrorInvalidValue);
	gw_sim_mem_find(ptr, 0, &kind, NULL);
	if (kind != GW_SIM_MEM_PAGEABLE && kind != GW_SIM_MEM_REGISTERED)
		RT_END(cudaErrorInvalidValue);
	r = gw_sim_mem_register(ptr, size);
	if (r == -EEXIST)
		RT_END(cudaErrorHostMemoryAlreadyRegistered);
	RT_END(r < 0 ? cudaErrorMemoryAllocation : cudaSuccess);
}

cudaError_t cudaHostUnregister(void *ptr)
{
	RT_BEGIN(cudaHostUnregister, v4000, ptr);

	if (!ptr)
		RT_END(cudaErrorInvalidValue);
	RT_END(gw_sim_mem_free(GW_SIM_MEM_REGISTERED, ptr, NULL) < 0
		       ? cudaErrorHostMemoryNotRegistered
		       : cudaSuccess);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
	RT_BEGIN(cudaHostGetDevicePointer, v3020, pDevice, pHost, flags);
	enum gw_sim_mem kind;

	if (!pDevice || flags)
		RT_END(cudaErrorInvalidValue);
	gw_sim_mem_find(pHost, 0, &kind, NULL);
	if (kind != GW_SIM_MEM_PINNED && kind != GW_SIM_MEM_REGISTERED)
		RT_END(cudaErrorInvalidValue);
	/* unified addressing: the device sees pinned host memory at the same address */
	*pDevice = pHost;
	RT_END(cudaSuccess);
}

/* Managed memory lives in host memory already: hints are checked, then have no effect. */
static cudaError_t check_managed(const void *ptr, size_t count)
{
	enum gw_sim_mem kind;

	if (!ptr || gw_sim_mem_find(ptr, count, &kind, NULL) < 0 || kind != GW_SIM_MEM_MANAGED)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
				 unsigned int flags, cudaStream_t stream)
{
	RT_BEGIN(cudaMemPrefetchAsync, v12020, devPtr, count, location, flags, stream);

	if (!gw_sim_stream_get(stream, false))
		RT_END(cudaErrorInvalidResourceHandle);
	RT_END(check_managed(devPtr, count));
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
			  struct cudaMemLocation location)
{
	RT_BEGIN(cudaMemAdvise, v12020, devPtr, count, advice, location);

	RT_END(check_managed(devPtr, count));
}

static int default_pool;

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	RT_BEGIN(cudaDeviceGetDefaultMemPool, v11020, memPool, device);

	if (!memPool)
		RT_END(cudaErrorInvalidValue);
	if (device != 0)
		RT_END(cudaErrorInvalidDevice);
	*memPool = (cudaMemPool_t)(void *)&default_pool;
	RT_END(cudaSuccess);
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	RT_BEGIN(cudaMemPoolSetAttribute, v11020, memPool, attr, value);

	RT_END(memPool && value ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaProfilerStart(void)
{
	RT_BEGIN0(cudaProfilerStart, v4000);

	RT_END(cudaSuccess);
}

cudaError_t cudaProfilerStop(void)
{
	RT_BEGIN0(cudaProfilerStop, v4000);

	RT_END(cudaSuccess);
}
