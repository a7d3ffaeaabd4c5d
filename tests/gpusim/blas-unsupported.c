/* SPDX-License-Identifier: MIT */
/*
 * The refused calls of the simulated cuBLAS (BLAS_UNSUPPORTED_DEF names cublas-unsupported.def
 * or cublaslt-unsupported.def, BLAS_REFUSE the function that answers): defined without their
 * prototypes, as in unsupported.c (the cuBLAS headers must not be included here).
 */
int BLAS_REFUSE(const char *name);

#define U(name)                                                                                    \
	int name(void);                                                                            \
	int name(void)                                                                             \
	{                                                                                          \
		return BLAS_REFUSE(#name);                                                         \
	}
#include BLAS_UNSUPPORTED_DEF
