/* SPDX-License-Identifier: MIT */
/* Shared by the real-GPU check programs: the loop's wall clock and a check that exits on error. */
#pragma once

#include <cuda_runtime.h>

#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A failed call ends the program with status 1: a check that went on would count wrong. */
static inline void gpu_check(cudaError_t err, const char *what, int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s: %s failed at line %d: %s\n", program_invocation_short_name, what, line,
		cudaGetErrorString(err));
	exit(1);
}

/* Libraries' status enums (cuBLAS ...): 0 is success. */
static inline void gpu_check(int status, const char *what, int line)
{
	if (status == 0)
		return;
	fprintf(stderr, "%s: %s failed at line %d: status %d\n", program_invocation_short_name,
		what, line, status);
	exit(1);
}

#define CHECK(x) gpu_check((x), #x, __LINE__)
