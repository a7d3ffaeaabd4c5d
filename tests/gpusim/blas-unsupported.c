/* SPDX-License-Identifier: MIT */
/*
 * The refused calls of the simulated cuBLAS and cuDNN (BLAS_UNSUPPORTED_DEF names a .def file:
 * cublas-, cublaslt- or cudnn-unsupported.def; BLAS_REFUSE the function that answers): defined
 * without their prototypes, as in unsupported.c (the libraries' headers must not be included
 * here).
 */
int BLAS_REFUSE(const char *name);

#define U(name)                                                                                    \
	int name(void);                                                                            \
	int name(void)                                                                             \
	{                                                                                          \
		return BLAS_REFUSE(#name);                                                         \
	}
#include BLAS_UNSUPPORTED_DEF
