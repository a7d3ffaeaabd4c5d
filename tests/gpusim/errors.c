/* SPDX-License-Identifier: MIT */
/* Per-thread last error with CUDA's sticky/non-sticky rules, and error names and strings. */
#include "names.h"
#include "runtime.h"

static __thread cudaError_t last_error;
/* A sticky error corrupts the context: every later call returns it. gpusim raises none itself,
 * but keeps the rule so that the semantics stay CUDA's. */
static _Atomic cudaError_t sticky_error;

static bool is_sticky(cudaError_t err)
{
	switch (err) {
	case cudaErrorIllegalAddress:
	case cudaErrorLaunchFailure:
	case cudaErrorHardwareStackError:
	case cudaErrorIllegalInstruction:
	case cudaErrorMisalignedAddress:
	case cudaErrorInvalidAddressSpace:
	case cudaErrorInvalidPc:
		return true;
	default:
		return false;
	}
}

void gw_sim_set_error(cudaError_t err)
{
	if (err == cudaSuccess)
		return;
	last_error = err;
	if (is_sticky(err))
		atomic_store(&sticky_error, err);
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t err, sticky = atomic_load(&sticky_error);
	RT_BEGIN0(cudaGetLastError, v3020);

	err = sticky != cudaSuccess ? sticky : last_error;
	last_error = cudaSuccess;
	gw_a_.keep_error = true;
	RT_END(err);
}

cudaError_t cudaPeekAtLastError(void)
{
	cudaError_t err, sticky = atomic_load(&sticky_error);
	RT_BEGIN0(cudaPeekAtLastError, v3020);

	err = sticky != cudaSuccess ? sticky : last_error;
	gw_a_.keep_error = true;
	RT_END(err);
}

static const char *error_string(cudaError_t err)
{
	switch (err) {
	case cudaSuccess:
		return "no error";
	case cudaErrorInvalidValue:
		return "invalid argument";
	case cudaErrorMemoryAllocation:
		return "out of memory";
	case cudaErrorInitializationError:
		return "initialization error";
	case cudaErrorInvalidConfiguration:
		return "invalid configuration argument";
	case cudaErrorInvalidPitchValue:
		return "invalid pitch argument";
	case cudaErrorInvalidSymbol:
		return "invalid device symbol";
	case cudaErrorInvalidMemcpyDirection:
		return "invalid copy direction for memcpy";
	case cudaErrorInvalidDevicePointer:
		return "invalid device pointer";
	case cudaErrorInvalidDevice:
		return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle:
		return "invalid resource handle";
	case cudaErrorNotReady:
		return "device not ready";
	case cudaErrorInvalidDeviceFunction:
		return "invalid device function";
	case cudaErrorNoDevice:
		return "no CUDA-capable device is detected";
	case cudaErrorIllegalAddress:
		return "an illegal memory access was encountered";
	case cudaErrorLaunchFailure:
		return "unspecified launch failure";
	case cudaErrorNotSupported:
		return "operation not supported";
	case cudaErrorStreamCaptureUnsupported:
		return "operation not permitted when stream is capturing";
	case cudaErrorStreamCaptureInvalidated:
		return "operation failed due to a previous error during capture";
	case cudaErrorIllegalState:
		return "the operation cannot be performed in the present state";
	case cudaErrorUnknown:
		return "unknown error";
	default:
		return NULL;
	}
}

const char *cudaGetErrorName(cudaError_t error)
{
	const char *s = gw_sim_cuda_error_name((unsigned int)error);

	return s ? s : "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t error)
{
	const char *s = error_string(error);

	if (s)
		return s;
	/* Outside the common codes gpusim raises, the name is the most precise text it has. */
	s = gw_sim_cuda_error_name((unsigned int)error);
	return s ? s : "unrecognized error code";
}
