/* SPDX-License-Identifier: MIT */
/* Shared by the cause workloads: command-line options, CUDA error checks, real host work. */
#pragma once

#include <cuda_runtime.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Every CUDA call of a workload goes through WL_CHECK, every launch is followed by
 * WL_CHECK_LAUNCH(): any error prints "WORKLOAD: what failed: why" on stderr and exits with
 * status 1. A workload that fails silently would make every count derived from it a lie.
 * Neither macro makes a CUDA API call that gpuwhy counts (cudaGetLastError is not hooked).
 */
#define WL_CHECK(call)	      wl_check((call), #call, __FILE__, __LINE__)
#define WL_CHECK_LAUNCH()     wl_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define WL_ARRAY_SIZE(a)      (sizeof(a) / sizeof((a)[0]))
#define WL_DIV_ROUND_UP(a, b) (((a) + (b)-1) / (b))

static const char *wl_program = "workload";

static inline void wl_check(cudaError_t err, const char *what, const char *file, int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s: %s:%d: %s failed: %s (%s)\n", wl_program, file, line, what,
		cudaGetErrorString(err), cudaGetErrorName(err));
	exit(EXIT_FAILURE);
}

static inline void wl_die(const char *msg)
{
	fprintf(stderr, "%s: %s\n", wl_program, msg);
	exit(EXIT_FAILURE);
}

/*
 * One command-line option "--name VALUE". Exactly one of num / text is set. Numbers are
 * decimal integers checked against [min, max]; text is one of the words in choices
 * ("a|b|c"), or anything when choices is NULL. The default is whatever the variable holds
 * before parsing. A '-' in the name stands for '_' in workloads.json's formulas.
 */
struct wl_opt {
	const char *name;
	long *num;
	const char **text;
	long min, max;
	const char *choices;
	const char *help;
};

static inline void wl_usage(FILE *f, const char *what, const struct wl_opt *opts, size_t n)
{
	fprintf(f, "usage: %s [--OPTION VALUE]...\n%s\n\noptions:\n", wl_program, what);
	for (size_t i = 0; i < n; i++) {
		if (opts[i].num)
			fprintf(f, "  --%-14s %s (default %ld, %ld..%ld)\n", opts[i].name,
				opts[i].help, *opts[i].num, opts[i].min, opts[i].max);
		else
			fprintf(f, "  --%-14s %s (default %s%s%s)\n", opts[i].name, opts[i].help,
				*opts[i].text, opts[i].choices ? ", one of " : "",
				opts[i].choices ? opts[i].choices : "");
	}
}

static inline int wl_is_choice(const char *choices, const char *word)
{
	size_t len = strlen(word);

	if (!choices)
		return 1;
	for (const char *p = choices; *p;) {
		const char *end = strchr(p, '|');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !strncmp(p, word, n))
			return 1;
		p += n + (end ? 1 : 0);
	}
	return 0;
}

/* Parses argv into opts; prints usage and exits 0 on --help, exits 2 on any bad option. */
static inline void wl_parse(int argc, char **argv, const char *what, const struct wl_opt *opts,
			    size_t n)
{
	const char *slash = strrchr(argv[0], '/');

	wl_program = slash ? slash + 1 : argv[0];
	for (int i = 1; i < argc; i++) {
		const struct wl_opt *o = NULL;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			wl_usage(stdout, what, opts, n);
			exit(EXIT_SUCCESS);
		}
		for (size_t j = 0; argv[i][0] == '-' && argv[i][1] == '-' && j < n; j++)
			if (!strcmp(argv[i] + 2, opts[j].name))
				o = &opts[j];
		if (!o || i + 1 >= argc) {
			fprintf(stderr, "%s: %s '%s'\n", wl_program,
				o ? "missing value for" : "unknown option", argv[i]);
			wl_usage(stderr, what, opts, n);
			exit(2);
		}
		const char *val = argv[++i];
		if (o->num) {
			char *end;
			errno = 0;
			long v = strtol(val, &end, 10);
			if (errno || end == val || *end || v < o->min || v > o->max) {
				fprintf(stderr, "%s: --%s wants an integer in %ld..%ld, not '%s'\n",
					wl_program, o->name, o->min, o->max, val);
				exit(2);
			}
			*o->num = v;
		} else {
			if (!wl_is_choice(o->choices, val)) {
				fprintf(stderr, "%s: --%s wants one of %s, not '%s'\n", wl_program,
					o->name, o->choices, val);
				exit(2);
			}
			*o->text = val;
		}
	}
}

static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Real CPU work standing in for a data loader's decode and augmentation: decodes a
 * run-length "image" of `bytes` bytes into `out`, then flips and normalizes it, over and
 * over until `us` microseconds have passed (at least once). Returns a checksum so the
 * compiler cannot drop the work. `out` holds `bytes` floats; `scratch` holds `bytes` bytes.
 */
static inline uint32_t wl_host_work_us(long us, float *out, uint8_t *scratch, size_t bytes,
				       uint32_t seed)
{
	uint64_t end = wl_now_ns() + (uint64_t)us * 1000u;
	uint32_t sum = seed;

	do {
		/* "decode": an xorshift stream expanded as (run, value) pairs */
		uint32_t x = sum | 1u;
		for (size_t i = 0; i < bytes;) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			size_t run = 1 + (x & 7u);
			for (size_t r = 0; r < run && i < bytes; r++)
				scratch[i++] = (uint8_t)(x >> 8);
		}
		/* "augment": horizontal flip in rows of 64, then normalize to [-1, 1] */
		for (size_t row = 0; row + 64 <= bytes; row += 64)
			for (size_t c = 0; c < 64; c++)
				out[row + c] = scratch[row + 63 - c] * (2.0f / 255.0f) - 1.0f;
		for (size_t i = 0; i < bytes; i += 61)
			sum = sum * 31u + (uint32_t)(out[i] * 1000.0f);
	} while (wl_now_ns() < end);
	return sum;
}

/* Small deterministic hash for initializing device data from an element index. */
__device__ __forceinline__ float wl_hash_unit(uint64_t i, uint32_t seed)
{
	uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (float)(z >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

/* Fills x[0..n) with values in [-0.5, 0.5) * amplitude. Class bandwidth_bound ("fill"). */
__global__ void fill_uniform_kernel(float *x, long n, uint32_t seed, float amplitude)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = wl_hash_unit((uint64_t)i, seed) * amplitude;
}

/* One launch of fill_uniform_kernel over n floats (256 threads per block). */
static inline void wl_fill(float *x, long n, uint32_t seed, float amplitude, cudaStream_t stream)
{
	fill_uniform_kernel<<<(unsigned)WL_DIV_ROUND_UP(n, 256), 256, 0, stream>>>(x, n, seed,
										   amplitude);
	WL_CHECK_LAUNCH();
}

/*
 * C[m][n] = alpha * sum_k A[m][k] * B[k][n] + beta * C[m][n], row-major, 16x16 tiles: one
 * block of 256 threads per tile, grid (n/16, m/16); m, n, k multiples of 16. Class compute
 * ("gemm"). At 32 registers 8 blocks fit an SM, so m*n/256 = 1056*w blocks are w full waves
 * on 132 SMs.
 */
__global__ void sgemm_tile16_nn_kernel(const float *a, const float *b, float *c, int m, int n,
				       int k, float alpha, float beta)
{
	__shared__ float as[16][17], bs[16][17];
	int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
	float acc = 0.0f;

	for (int k0 = 0; k0 < k; k0 += 16) {
		as[threadIdx.y][threadIdx.x] = a[(long)row * k + k0 + threadIdx.x];
		bs[threadIdx.y][threadIdx.x] = b[(long)(k0 + threadIdx.y) * n + col];
		__syncthreads();
		for (int kk = 0; kk < 16; kk++)
			acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n)
		c[(long)row * n + col] = alpha * acc + beta * c[(long)row * n + col];
}

/* One launch of sgemm_tile16_nn_kernel. */
static inline void wl_sgemm(const float *a, const float *b, float *c, long m, long n, long k,
			    float alpha, float beta, cudaStream_t stream)
{
	dim3 grid((unsigned)(n / 16), (unsigned)(m / 16)), block(16, 16);

	sgemm_tile16_nn_kernel<<<grid, block, 0, stream>>>(a, b, c, (int)m, (int)n, (int)k, alpha,
							   beta);
	WL_CHECK_LAUNCH();
}
