/* SPDX-License-Identifier: MIT */
/* The driver API's launch entry points, called by the application itself (Triton, hand-written
 * driver code): the outermost call is then a driver-domain one, as in libcuda. */
#include <string.h>

#include <cuda.h>

#include "runtime.h"

/* Declared by cuda.h only when compiling for the per-thread default stream. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX,
				     unsigned int blockDimY, unsigned int blockDimZ,
				     unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
				       void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
						unsigned int gridDimY, unsigned int gridDimZ,
						unsigned int blockDimX, unsigned int blockDimY,
						unsigned int blockDimZ, unsigned int sharedMemBytes,
						CUstream hStream, void **kernelParams);
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);

static CUresult to_cu(cudaError_t err)
{
	switch (err) {
	case cudaSuccess:
		return CUDA_SUCCESS;
	case cudaErrorInvalidResourceHandle:
		return CUDA_ERROR_INVALID_HANDLE;
	case cudaErrorInvalidDeviceFunction:
		return CUDA_ERROR_INVALID_HANDLE;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A driver call bracket: the call is the application's (no runtime call around it). */
#define CU_CALL(fn, cbid, params, sym, body)                                                       \
	do {                                                                                       \
		struct gw_sim_api a_;                                                              \
		cudaError_t err_;                                                                  \
		gw_sim_api_begin(&a_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##cbid,  \
				 #fn, (params), (sym));                                            \
		err_ = (body);                                                                     \
		return to_cu(gw_sim_api_end(&a_, err_));                                           \
	} while (0)

static dim3 dims(unsigned int x, unsigned int y, unsigned int z)
{
	dim3 d = {x, y, z};

	return d;
}

static const char *name_of(CUfunction f)
{
	return f ? ((const struct gw_sim_kernel *)(void *)f)->name : NULL;
}

#define LAUNCH_PARAMS                                                                              \
	{                                                                                          \
		f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,  \
			hStream, kernelParams, extra                                               \
	}
#define LAUNCH_BODY(per_thread)                                                                    \
	gw_sim_launch_direct((struct gw_sim_kernel *)(void *)f,                                    \
			     dims(gridDimX, gridDimY, gridDimZ),                                   \
			     dims(blockDimX, blockDimY, blockDimZ), sharedMemBytes,                \
			     (cudaStream_t)hStream, per_thread)

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX,
				unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
				void **extra)
{
	cuLaunchKernel_params p = LAUNCH_PARAMS;

	CU_CALL(cuLaunchKernel, cuLaunchKernel, &p, name_of(f), LAUNCH_BODY(false));
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX,
				     unsigned int blockDimY, unsigned int blockDimZ,
				     unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra)
{
	cuLaunchKernel_ptsz_params p = LAUNCH_PARAMS;

	CU_CALL(cuLaunchKernel_ptsz, cuLaunchKernel_ptsz, &p, name_of(f), LAUNCH_BODY(true));
}

static cudaError_t launch_ex(const CUlaunchConfig *c, CUfunction f, bool per_thread)
{
	if (!c)
		return cudaErrorInvalidValue;
	return gw_sim_launch_direct((struct gw_sim_kernel *)(void *)f,
				    dims(c->gridDimX, c->gridDimY, c->gridDimZ),
				    dims(c->blockDimX, c->blockDimY, c->blockDimZ),
				    c->sharedMemBytes, (cudaStream_t)c->hStream, per_thread);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				  void **extra)
{
	cuLaunchKernelEx_params p = {config, f, kernelParams, extra};

	CU_CALL(cuLaunchKernelEx, cuLaunchKernelEx, &p, name_of(f), launch_ex(config, f, false));
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
				       void **kernelParams, void **extra)
{
	cuLaunchKernelEx_ptsz_params p = {config, f, kernelParams, extra};

	CU_CALL(cuLaunchKernelEx_ptsz, cuLaunchKernelEx_ptsz, &p, name_of(f),
		launch_ex(config, f, true));
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					   unsigned int gridDimY, unsigned int gridDimZ,
					   unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes,
					   CUstream hStream, void **kernelParams)
{
	cuLaunchCooperativeKernel_params p = {f,	 gridDimX,    gridDimY,	 gridDimZ,
					      blockDimX, blockDimY,   blockDimZ, sharedMemBytes,
					      hStream,	 kernelParams};

	CU_CALL(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, &p, name_of(f),
		LAUNCH_BODY(false));
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
						unsigned int gridDimY, unsigned int gridDimZ,
						unsigned int blockDimX, unsigned int blockDimY,
						unsigned int blockDimZ, unsigned int sharedMemBytes,
						CUstream hStream, void **kernelParams)
{
	cuLaunchCooperativeKernel_ptsz_params p = {
		f,	   gridDimX,  gridDimY,	      gridDimZ, blockDimX,
		blockDimY, blockDimZ, sharedMemBytes, hStream,	kernelParams};

	CU_CALL(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel_ptsz, &p, name_of(f),
		LAUNCH_BODY(true));
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	cuGraphLaunch_params p = {hGraphExec, hStream};

	CU_CALL(cuGraphLaunch, cuGraphLaunch, &p, NULL,
		gw_sim_graph_launch_direct((cudaGraphExec_t)hGraphExec, (cudaStream_t)hStream,
					   false));
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	cuGraphLaunch_ptsz_params p = {hGraphExec, hStream};

	CU_CALL(cuGraphLaunch_ptsz, cuGraphLaunch_ptsz, &p, NULL,
		gw_sim_graph_launch_direct((cudaGraphExec_t)hGraphExec, (cudaStream_t)hStream,
					   true));
}

/* The CUfunction of a registered kernel (the driver handle the launches above take). */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
	RT_BEGIN(cudaGetFuncBySymbol, v11000, functionPtr, symbolPtr);
	struct gw_sim_kernel *k = gw_sim_kernel_find(symbolPtr);

	if (!functionPtr)
		RT_END(cudaErrorInvalidValue);
	*functionPtr = (cudaFunction_t)(void *)k;
	RT_END(k ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

/* --- entry points by name (cudaGetDriverEntryPoint), as a program without libcuda gets them --- */

/* The driver functions gpusim has, by the name a program asks for (cuda.h's, without the
 * version suffix the header maps it to): the newest form. */
struct entry {
	const char *name;
	void *fn;
};

#define ENTRY(name, fn)                                                                            \
	{                                                                                          \
		name, (void *)(fn)                                                                 \
	}
static const struct entry entries[] = {
	ENTRY("cuLaunchKernel", cuLaunchKernel),
	ENTRY("cuLaunchKernelEx", cuLaunchKernelEx),
	ENTRY("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel),
	ENTRY("cuGraphLaunch", cuGraphLaunch),
	ENTRY("cuLaunchHostFunc", cuLaunchHostFunc),
	ENTRY("cuStreamAddCallback", cuStreamAddCallback),
	ENTRY("cuStreamWaitValue32", cuStreamWaitValue32_v2),
	ENTRY("cuStreamWaitValue64", cuStreamWaitValue64_v2),
	ENTRY("cuMemcpyPeer", cuMemcpyPeer),
	ENTRY("cuMemcpyPeerAsync", cuMemcpyPeerAsync),
	ENTRY("cuMemcpy2D", cuMemcpy2D_v2),
	ENTRY("cuMemcpy2DUnaligned", cuMemcpy2DUnaligned_v2),
	ENTRY("cuMemcpy2DAsync", cuMemcpy2DAsync_v2),
	ENTRY("cuMemcpy3D", cuMemcpy3D_v2),
	ENTRY("cuMemcpy3DAsync", cuMemcpy3DAsync_v2),
	ENTRY("cuMemcpyBatchAsync", cuMemcpyBatchAsync_v2),
	ENTRY("cuMemsetD16", cuMemsetD16_v2),
	ENTRY("cuMemsetD16Async", cuMemsetD16Async),
	ENTRY("cuMemsetD2D8", cuMemsetD2D8_v2),
	ENTRY("cuMemsetD2D8Async", cuMemsetD2D8Async),
	ENTRY("cuMemsetD2D16", cuMemsetD2D16_v2),
	ENTRY("cuMemsetD2D16Async", cuMemsetD2D16Async),
	ENTRY("cuMemsetD2D32", cuMemsetD2D32_v2),
	ENTRY("cuMemsetD2D32Async", cuMemsetD2D32Async),
};

static cudaError_t entry_point(const char *symbol, void **funcPtr,
			       enum cudaDriverEntryPointQueryResult *status)
{
	gw_sim_init();
	if (!symbol || !funcPtr)
		return cudaErrorInvalidValue;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(symbol, entries[i].name)) {
			*funcPtr = entries[i].fn;
			if (status)
				*status = cudaDriverEntryPointSuccess;
			return cudaSuccess;
		}
	*funcPtr = NULL;
	if (status)
		*status = cudaDriverEntryPointSymbolNotFound;
	return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	(void)flags;
	return entry_point(symbol, funcPtr, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	(void)flags;
	(void)cudaVersion; /* the newest form of each: what CUDA 13 gives */
	return entry_point(symbol, funcPtr, driverStatus);
}

/* Device queries a tool makes from its own thread (the NVML sampler matches devices by uuid):
 * each device's uuid the one CUPTI's DEVICE record and cudaGetDeviceProperties give. */
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!gw_sim_device_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device || ordinal < 0 || (uint32_t)ordinal >= gw_sim_config()->devices)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	if (!gw_sim_device_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!uuid || dev < 0 || (uint32_t)dev >= gw_sim_config()->devices)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, "gpusim-device-00", 16);
	uuid->bytes[15] = (char)('0' + dev); /* as its DEVICE record's */
	return CUDA_SUCCESS;
}
