/* SPDX-License-Identifier: MIT */
/*
 * libcuda.so.1: a stub of the CUDA driver API, for libraries that link against the driver
 * as well as the runtime (PyTorch's NVRTC wrapper, libcaffe2_nvrtc.so, is loaded with RTLD_NOW
 * and needs 23 driver symbols), and for the libraries that look up the driver at run time
 * (cuBLAS's and cuDNN's static runtimes). The calls a framework makes to learn about the
 * device and its context answer from the simulated runtime, which this library links to;
 * loading modules and the entry-point lookup are refused cleanly (the driver launch entry
 * points live in libcudart.so.13, driver.c). A test double: there is no driver behind it.
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "gpusim.h"

#undef cuGetProcAddress

static bool valid_device(CUdevice dev)
{
	return dev >= 0 && (uint32_t)dev < gw_sim_config()->devices;
}
/* The first cuGetProcAddress, without the status argument: still exported by libcuda. */
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags);

CUresult CUDAAPI cuInit(unsigned int Flags)
{
	return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (int)gw_sim_config()->devices;
	return CUDA_SUCCESS;
}

/* The runtime's attribute numbers are the driver's (cudaDevAttr* = CU_DEVICE_ATTRIBUTE_*). */
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	return cudaDeviceGetAttribute(pi, (enum cudaDeviceAttr)attrib, dev) == cudaSuccess
		       ? CUDA_SUCCESS
		       : CUDA_ERROR_INVALID_VALUE;
}

/* The runtime's contexts are the devices' primary contexts; they exist once the runtime has
 * initialized the devices. */
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	*active = gw_sim_device_ready();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	gw_sim_driver_init();
	*pctx = gw_sim_device_context((unsigned int)dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = gw_sim_device_ready() ? gw_sim_context() : NULL;
	return CUDA_SUCCESS;
}

/* A device's context made current is the runtime's current device. */
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	int dev = ctx ? gw_sim_context_device(ctx) : -1;

	if (!ctx)
		return CUDA_SUCCESS;
	if (dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return cudaSetDevice(dev) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	int dev;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gw_sim_device_ready() || cudaGetDevice(&dev) != cudaSuccess)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = dev;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
	case CUDA_SUCCESS:
		*pStr = "CUDA_SUCCESS";
		return CUDA_SUCCESS;
	case CUDA_ERROR_NOT_SUPPORTED:
		*pStr = "CUDA_ERROR_NOT_SUPPORTED";
		return CUDA_SUCCESS;
	case CUDA_ERROR_NOT_FOUND:
		*pStr = "CUDA_ERROR_NOT_FOUND";
		return CUDA_SUCCESS;
	case CUDA_ERROR_INVALID_VALUE:
		*pStr = "CUDA_ERROR_INVALID_VALUE";
		return CUDA_SUCCESS;
	default:
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	if (error == CUDA_ERROR_NOT_SUPPORTED) {
		*pStr = "operation not supported (gpusim's driver stub has no model for it: a "
			"test double)";
		return CUDA_SUCCESS;
	}
	return cuGetErrorName(error, pStr);
}

/*
 * No driver entry points: a static runtime (cuBLAS's, cuDNN's) that looks them up finds none
 * and fails its initialization with an error, instead of calling into nothing.
 */
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	(void)cudaVersion, (void)flags;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

/* NVIDIA's private, UUID-keyed tables: there are none. */
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	(void)pExportTableId;
	if (ppExportTable)
		*ppExportTable = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* The driver calls of libcuda-unsupported.def, without their prototypes (see unsupported.c):
 * each returns CUDA_ERROR_NOT_SUPPORTED. */
int gw_sim_cu_not_supported(void);
int gw_sim_cu_not_supported(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}
