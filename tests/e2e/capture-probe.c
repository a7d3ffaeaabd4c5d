/* SPDX-License-Identifier: MIT */
/* Capture scenarios on the simulated GPU that no cause workload has: every launch path, a
 * device setting made in main, fork before CUDA, a kernel still running at exit, a query loop. */

/*
 * Linked against libcudart (a DT_NEEDED, loaded before any constructor), as nvcc's shared
 * builds are. One mode per run (argv[1]); what it did goes to stdout as "probe: ..." lines:
 *   paths N      N launches of each path, each its own kernel: cudaLaunchKernel (k_runtime),
 *                <<<>>> as nvcc 13 compiles it, __cudaLaunchKernel (k_chevron) and its _ptsz
 *                form (k_chevron_ptsz), cudaLaunchCooperativeKernel (k_cooperative),
 *                cudaLaunchKernelExC (k_ex), cuLaunchKernel (k_driver), cuLaunchKernelEx
 *                (k_driver_ex), cuLaunchCooperativeKernel (k_driver_coop), a captured graph of
 *                one k_graph node replayed by cudaGraphLaunch, and of one k_driver_graph node
 *                by cuGraphLaunch; then a device sync.
 *   visible      sets GPUSIM_SMS=64 (the simulated CUDA_VISIBLE_DEVICES) in main, then prints
 *                the device's SM count: 64 unless CUDA was initialized before main.
 *   forkfirst    forks before any CUDA call; the child and then the parent each launch 3
 *                kernels and synchronize.
 *   count        cudaGetDeviceCount only: CUDA initialized, no hooked call.
 *   inflight     launches k_long and returns from main without waiting for it.
 *   poll N       launches k_long and polls cudaStreamQuery until it is done; prints the polls.
 *   reset N      launches k_long N times, then cudaDeviceReset (the context ends with work queued).
 *   queries N    N queries of finished work (a caching allocator's event checks): a one-warp
 *                k_runtime, an event recorded after it, a device sync, then N/2 cudaEventQuery
 *                and N/2 cudaStreamQuery calls, each answering cudaSuccess at once.
 *   spins N K    K times: k_long, then cudaStreamQuery until it answers cudaSuccess, the loop
 *                ended after N queries in all; prints the queries and the spins that ended.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Declared by the toolkit only in C++ (crt/host_runtime.h, crt/device_functions.h). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);

#define KERNELS(X)                                                                                 \
	X(k_runtime)                                                                               \
	X(k_chevron)                                                                               \
	X(k_chevron_ptsz)                                                                          \
	X(k_cooperative)                                                                           \
	X(k_ex)                                                                                    \
	X(k_driver)                                                                                \
	X(k_driver_ex)                                                                             \
	X(k_driver_coop)                                                                           \
	X(k_graph)                                                                                 \
	X(k_driver_graph)                                                                          \
	X(k_long)                                                                                  \
	X(k_fork)

#define STUB(k)                                                                                    \
	static void k(void)                                                                        \
	{                                                                                          \
	}
KERNELS(STUB)

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "capture-probe: %s failed\n", what);
		exit(1);
	}
}

#define CK(call) check((call) == 0, #call)

static void register_kernels(void)
{
	static int fatbin;
	void **h = __cudaRegisterFatBinary(&fatbin);

#define REG(k) __cudaRegisterFunction(h, (const char *)k, (char *)#k, #k, -1, 0, 0, 0, 0, 0);
	KERNELS(REG)
	__cudaRegisterFatBinaryEnd(h);
}

static const dim3 one = {1, 1, 1}, warp = {32, 1, 1};

static CUfunction driver_function(const void *k)
{
	cudaFunction_t f;

	CK(cudaGetFuncBySymbol(&f, k));
	return (CUfunction)f;
}

static cudaGraphExec_t graph_of(const void *k, cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t x;

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaLaunchKernel(k, one, warp, NULL, 0, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&x, g, 0));
	return x;
}

static void paths(int n)
{
	cudaLaunchConfig_t rc = {.gridDim = one, .blockDim = warp};
	CUlaunchConfig dc = {.gridDimX = 1,
			     .gridDimY = 1,
			     .gridDimZ = 1,
			     .blockDimX = 32,
			     .blockDimY = 1,
			     .blockDimZ = 1};
	cudaKernel_t chevron, chevron_ptsz;
	cudaGraphExec_t g, dg;
	cudaStream_t s;

	CK(cudaStreamCreate(&s));
	CK(__cudaGetKernel(&chevron, (const void *)k_chevron));
	CK(__cudaGetKernel(&chevron_ptsz, (const void *)k_chevron_ptsz));
	g = graph_of((const void *)k_graph, s);
	dg = graph_of((const void *)k_driver_graph, s);
	for (int i = 0; i < n; i++) {
		CK(cudaLaunchKernel((const void *)k_runtime, one, warp, NULL, 0, 0));
		CK(__cudaLaunchKernel(chevron, one, warp, NULL, 0, 0));
		CK(__cudaLaunchKernel_ptsz(chevron_ptsz, one, warp, NULL, 0, 0));
		CK(cudaLaunchCooperativeKernel((const void *)k_cooperative, one, warp, NULL, 0, 0));
		CK(cudaLaunchKernelExC(&rc, (const void *)k_ex, NULL));
		CK(cuLaunchKernel(driver_function((const void *)k_driver), 1, 1, 1, 32, 1, 1, 0, 0,
				  NULL, NULL));
		CK(cuLaunchKernelEx(&dc, driver_function((const void *)k_driver_ex), NULL, NULL));
		CK(cuLaunchCooperativeKernel(driver_function((const void *)k_driver_coop), 1, 1, 1,
					     32, 1, 1, 0, 0, NULL));
		CK(cudaGraphLaunch(g, s));
		CK(cuGraphLaunch((CUgraphExec)dg, (CUstream)s));
	}
	CK(cudaDeviceSynchronize());
	printf("probe: %d launches of each path\n", n);
}

static void launch_and_sync(const char *who)
{
	for (int i = 0; i < 3; i++)
		CK(cudaLaunchKernel((const void *)k_fork, one, warp, NULL, 0, 0));
	CK(cudaDeviceSynchronize());
	printf("probe: %s pid %d launched 3\n", who, (int)getpid());
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 10;

	register_kernels();
	if (!strcmp(mode, "paths")) {
		paths(n);
	} else if (!strcmp(mode, "visible")) {
		struct cudaDeviceProp p;

		setenv("GPUSIM_SMS", "64", 1);
		CK(cudaGetDeviceProperties(&p, 0));
		printf("probe: %d SMs\n", p.multiProcessorCount);
		return p.multiProcessorCount == 64 ? 0 : 3;
	} else if (!strcmp(mode, "forkfirst")) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		check(pid >= 0, "fork");
		if (!pid) {
			launch_and_sync("child");
			return 0;
		}
		check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "child");
		launch_and_sync("parent");
	} else if (!strcmp(mode, "count")) {
		int c = 0;

		CK(cudaGetDeviceCount(&c));
		printf("probe: %d devices\n", c);
	} else if (!strcmp(mode, "inflight")) {
		CK(cudaLaunchKernel((const void *)k_long, one, warp, NULL, 0, 0));
		printf("probe: k_long queued\n");
	} else if (!strcmp(mode, "reset")) {
		/* the program ends by destroying its context, with kernels still queued */
		for (int i = 0; i < n; i++)
			CK(cudaLaunchKernel((const void *)k_long, one, warp, NULL, 0, 0));
		CK(cudaDeviceReset());
		printf("probe: %d kernels, then cudaDeviceReset\n", n);
	} else if (!strcmp(mode, "poll")) {
		long polls = 0;

		CK(cudaLaunchKernel((const void *)k_long, one, warp, NULL, 0, 0));
		while (cudaStreamQuery(0) == cudaErrorNotReady)
			polls++;
		printf("probe: %ld polls\n", polls);
	} else if (!strcmp(mode, "queries")) {
		struct timespec t0, t1;
		cudaEvent_t ev;

		CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
		CK(cudaLaunchKernel((const void *)k_runtime, one, warp, NULL, 0, 0));
		CK(cudaEventRecord(ev, 0));
		CK(cudaDeviceSynchronize());
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++)
			CK(i % 2 ? cudaStreamQuery(0) : cudaEventQuery(ev));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CK(cudaEventDestroy(ev));
		printf("probe: %d queries, %.0f ns each\n", n,
		       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
			       (n ? n : 1));
	} else if (!strcmp(mode, "spins")) {
		int spins = argc > 3 ? atoi(argv[3]) : 1, ended = 0;
		long queries = 0;

		for (int k = 0; k < spins && queries < n; k++) {
			cudaError_t e = cudaErrorNotReady;

			CK(cudaLaunchKernel((const void *)k_long, one, warp, NULL, 0, 0));
			while (queries < n && (e = cudaStreamQuery(0)) == cudaErrorNotReady)
				queries++;
			queries += e == cudaSuccess;
			ended += e == cudaSuccess;
		}
		CK(cudaDeviceSynchronize());
		printf("probe: %ld queries, %d spins\n", queries, ended);
	} else {
		fprintf(stderr, "usage: capture-probe paths "
				"N|visible|forkfirst|count|inflight|poll|reset N|queries N|"
				"spins N K\n");
		return 2;
	}
	return 0;
}
