/* SPDX-License-Identifier: MIT */
/* The driver calls of libcuda-unsupported.def (one definition for every signature, as in
 * unsupported.c; cuda.h must not be included here). */
int gw_sim_cu_not_supported(void);

#define U(name)                                                                                    \
	int name(void);                                                                            \
	int name(void)                                                                             \
	{                                                                                          \
		return gw_sim_cu_not_supported();                                                  \
	}
#include "libcuda-unsupported.def"
