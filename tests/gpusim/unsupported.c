/* SPDX-License-Identifier: MIT */
/*
 * The runtime calls of unsupported.def. Defined without the CUDA headers' prototypes: each
 * ignores its arguments and returns an int-sized error code, which is how the System V ABI
 * passes a cudaError_t whatever the parameters were, so one definition serves every
 * signature. Nothing here may include cuda_runtime_api.h (its prototypes would clash).
 */
int gw_sim_not_supported(void);

#define U(name)                                                                                    \
	int name(void);                                                                            \
	int name(void)                                                                             \
	{                                                                                          \
		return gw_sim_not_supported();                                                     \
	}
#include "unsupported.def"
