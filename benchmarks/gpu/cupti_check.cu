// SPDX-License-Identifier: MIT
// What the real CUPTI does that gpuwhy's capture depends on, one mode per run (validate.py's
// "cupti" section runs each under gpuwhy, and some without, and reads the traces):
//   paths N      N launches through each path, each its own kernel: <<<>>> (p_chevron),
//                cudaLaunchKernel (p_runtime), cudaLaunchCooperativeKernel (p_coop),
//                cudaLaunchKernelExC (p_ex), cuLaunchKernel (p_driver), a CUDA Graph of one
//                p_graph node; then copies: pageable and pinned cudaMemcpyAsync, cudaMemset,
//                cuMemcpyHtoD directly (the driver functions come from libcuda by dlsym, so
//                the same source runs on the simulated GPU, whose runtime exports them)
//   visible      sets CUDA_VISIBLE_DEVICES to a device that does not exist (and gpusim's SM
//                knob) in main, then prints what CUDA sees: unchanged if CUDA was initialized
//                before main
//   forkfirst    forks before any CUDA call; child and parent each launch and synchronize
//   forkafter    uses CUDA, then forks a child that calls cudaMalloc (refused by a real driver)
//   count        cudaGetDeviceCount only
//   inflight MS  launches a kernel spinning MS ms and returns from main without waiting
//   reset N      N launches, a sync, then cudaDeviceReset
//   meminfo      prints cudaMemGetInfo's free bytes
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu-check.h"

__global__ void p_chevron(int *x) { x[threadIdx.x] += 1; }
__global__ void p_runtime(int *x) { x[threadIdx.x] += 2; }
__global__ void p_coop(int *x) { x[threadIdx.x] += 3; }
__global__ void p_ex(int *x) { x[threadIdx.x] += 4; }
__global__ void p_driver(int *x) { x[threadIdx.x] += 5; }
__global__ void p_graph(int *x) { x[threadIdx.x] += 6; }
__global__ void p_fork(int *x) { x[threadIdx.x] += 7; }

__global__ void p_spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

typedef CUresult (*cu_launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*cu_htod_fn)(CUdeviceptr, const void *, size_t);

static void *driver_sym(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, name) : NULL;

	return f ? f : dlsym(RTLD_DEFAULT, name);
}

static void paths(int n)
{
	int *x;
	void *args[] = {&x};
	cudaLaunchConfig_t cfg = {};
	cudaFunction_t f;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaStream_t s;
	cu_launch_fn cu_launch = (cu_launch_fn)driver_sym("cuLaunchKernel");
	cu_htod_fn cu_htod = (cu_htod_fn)driver_sym("cuMemcpyHtoD_v2");
	size_t bytes = 1 << 20;
	char *pageable = (char *)calloc(1, bytes), *pinned;

	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMallocHost(&pinned, bytes));
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaGetFuncBySymbol(&f, (const void *)p_driver));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	p_graph<<<1, 32, 0, s>>>(x);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	cfg.gridDim = dim3(1);
	cfg.blockDim = dim3(32);
	for (int i = 0; i < n; i++) {
		p_chevron<<<1, 32>>>(x);
		CHECK(cudaLaunchKernel((const void *)p_runtime, dim3(1), dim3(32), args, 0, 0));
		CHECK(cudaLaunchCooperativeKernel((const void *)p_coop, dim3(1), dim3(32), args,
						      0, 0));
		CHECK(cudaLaunchKernelExC(&cfg, (const void *)p_ex, args));
		if (cu_launch)
			CHECK((cudaError_t)cu_launch((CUfunction)f, 1, 1, 1, 32, 1, 1, 0, 0, args,
							 NULL));
		CHECK(cudaGraphLaunch(ge, s));
	}
	CHECK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++) {
		CHECK(cudaMemcpyAsync(x, pageable, bytes, cudaMemcpyHostToDevice, 0));
		CHECK(cudaMemcpyAsync(x, pinned, bytes, cudaMemcpyHostToDevice, 0));
		CHECK(cudaMemset(x, 0, bytes));
		if (cu_htod)
			CHECK((cudaError_t)cu_htod((CUdeviceptr)x, pinned, bytes));
	}
	CHECK(cudaDeviceSynchronize());
	printf("cupti_check: paths %d driver_launch=%d driver_copy=%d\n", n, cu_launch != NULL,
	       cu_htod != NULL);
}

static void launch_and_sync(const char *who)
{
	int *x;

	CHECK(cudaMalloc(&x, 128));
	for (int i = 0; i < 3; i++)
		p_fork<<<1, 32>>>(x);
	CHECK(cudaDeviceSynchronize());
	printf("cupti_check: %s pid %d launched 3\n", who, (int)getpid());
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 100;

	if (!strcmp(mode, "paths")) {
		paths(n);
	} else if (!strcmp(mode, "visible")) {
		int count = -1;
		cudaDeviceProp p = {};

		setenv("CUDA_VISIBLE_DEVICES", "99", 1);
		setenv("GPUSIM_SMS", "7", 1);
		cudaError_t e = cudaGetDeviceCount(&count);
		if (e == cudaSuccess && count > 0)
			cudaGetDeviceProperties(&p, 0);
		printf("cupti_check: visible count=%d sms=%d\n", e == cudaSuccess ? count : 0,
		       p.multiProcessorCount);
	} else if (!strcmp(mode, "forkfirst")) {
		fflush(stdout);
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			launch_and_sync("child");
			return 0;
		}
		waitpid(pid, &st, 0);
		launch_and_sync("parent");
		return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
	} else if (!strcmp(mode, "forkafter")) {
		launch_and_sync("parent");
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			void *p = NULL;
			cudaError_t e = cudaMalloc(&p, 4096);

			printf("cupti_check: forked child cudaMalloc -> %d\n", (int)e);
			return 0;
		}
		waitpid(pid, &st, 0);
		return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
	} else if (!strcmp(mode, "count")) {
		int c = 0;

		CHECK(cudaGetDeviceCount(&c));
		printf("cupti_check: %d devices\n", c);
	} else if (!strcmp(mode, "inflight")) {
		int khz = 1000000;

		cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
		p_spin<<<1, 1>>>((long long)n * khz);
		printf("cupti_check: a %d ms kernel queued\n", n);
	} else if (!strcmp(mode, "reset")) {
		int *x;

		CHECK(cudaMalloc(&x, 128));
		for (int i = 0; i < n; i++)
			p_runtime<<<1, 32>>>(x);
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaDeviceReset());
		printf("cupti_check: %d launches, reset\n", n);
	} else if (!strcmp(mode, "meminfo")) {
		size_t free_b = 0, total_b = 0;

		CHECK(cudaFree(0));
		CHECK(cudaMemGetInfo(&free_b, &total_b));
		printf("cupti_check: free=%zu total=%zu\n", free_b, total_b);
	} else {
		fprintf(stderr, "usage: cupti_check paths N|visible|forkfirst|forkafter|count|"
				"inflight MS|reset N|meminfo\n");
		return 2;
	}
	return 0;
}
