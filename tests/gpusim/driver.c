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

/* Device queries a tool makes from its own thread (the NVML sampler matches devices by uuid):
 * one device, its uuid the one CUPTI's DEVICE record and cudaGetDeviceProperties give. */
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!gw_sim_device_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device || ordinal)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	if (!gw_sim_device_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!uuid || dev)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, "gpusim-device-00", 16);
	return CUDA_SUCCESS;
}
