/* SPDX-License-Identifier: MIT */
/*
 * libcudnn.so.9: convolutions through cuDNN are not simulated (a test double). NVIDIA's cuDNN
 * needs the real driver and fails with CUDNN_STATUS_NOT_INITIALIZED, which says nothing of
 * why; this one exports the 84 symbols PyTorch imports (cudnn-unsupported.def), reports a
 * version its checks accept, and refuses cudnnCreate saying what to do instead: PyTorch's own
 * convolutions (torch.backends.cudnn.enabled = False) are im2col and GEMMs, which gpusim runs.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include <cudnn_graph.h>

/* A minor version above any PyTorch is built against (PyTorch accepts a runtime whose minor
 * is at least its build's), so a convolution reaches cudnnCreate, which says why it fails. */
size_t cudnnGetVersion(void)
{
	return CUDNN_MAJOR * 10000 + 99 * 100;
}

size_t cudnnGetCudartVersion(void)
{
	return CUDART_VERSION;
}

static const char refusal[] = "cuDNN is not simulated by gpusim (a test double): set "
			      "torch.backends.cudnn.enabled = False to run PyTorch's own "
			      "convolutions, which it does run";

const char *cudnnGetErrorString(cudnnStatus_t status)
{
	switch (status) {
	case CUDNN_STATUS_SUCCESS:
		return "CUDNN_STATUS_SUCCESS";
	case CUDNN_STATUS_NOT_SUPPORTED:
		return "CUDNN_STATUS_NOT_SUPPORTED";
	default:
		return "CUDNN_STATUS_NOT_SUPPORTED (gpusim)";
	}
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
	if (message && max_size)
		snprintf(message, max_size, "%s", refusal);
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
	static atomic_bool told;

	if (handle)
		*handle = NULL;
	if (!atomic_exchange(&told, true))
		fprintf(stderr, "gpusim: %s\n", refusal);
	return CUDNN_STATUS_NOT_SUPPORTED;
}

/* For the calls of cudnn-unsupported.def (defined without their prototypes, as in
 * unsupported.c). */
int gw_sim_cudnn_refuse(const char *name);
int gw_sim_cudnn_refuse(const char *name)
{
	(void)name;
	return CUDNN_STATUS_NOT_SUPPORTED;
}
