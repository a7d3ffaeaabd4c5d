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
 *   exec VIA N [N2 ...]  allocates, launches N k_exec kernels, synchronizes and frees, then
 *                while numbers remain execs this program again (no fork: the same process)
 *                through VIA with the rest: execv, execve, execvp (found in PATH), execl,
 *                execle, execlp, fexecve; fail-noent (a path that does not exist: the exec
 *                fails before anything) and fail-noexec (DIR/not-a-program, executable but no
 *                program: ENOEXEC) return, and the image launches N more and ends.
 *   vfork N      launches N k_exec, vforks a child that execs /bin/true (its exec must not
 *                touch the parent's trace: the memory is shared), launches N more.
 *   fds N        as exec with one N, then prints its descriptors ("probe: fd NUM TARGET").
 *   stderr-closed N FILE  (run with descriptor 2 closed) launches N k_exec, opens FILE (it
 *                takes number 2) and writes one line to it, launches N more.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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
	X(k_fork)                                                                                  \
	X(k_exec)

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

/* An allocation, n launches, a synchronization and a free: stacks, API and GPU records. */
static void exec_work(int n)
{
	void *buf;

	CK(cudaMalloc(&buf, 4096));
	for (int i = 0; i < n; i++)
		CK(cudaLaunchKernel((const void *)k_exec, one, warp, NULL, 0, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaFree(buf));
	printf("probe: pid %d launched %d\n", (int)getpid(), n);
	fflush(stdout);
}

static int exec_chain(int argc, char **argv)
{
	const char *via = argv[2];
	char *next[8] = {argv[0], "exec", argv[2]}, self[4096], *dir;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int k = 3;

	check(argc >= 4 && len > 0, "exec arguments");
	self[len] = '\0';
	exec_work(atoi(argv[3]));
	if (argc == 4)
		return 0;
	for (int i = 4; i < argc && k < 7; i++)
		next[k++] = argv[i];
	if (!strcmp(via, "execv")) {
		execv(self, next);
	} else if (!strcmp(via, "execve")) {
		execve(self, next, environ);
	} else if (!strcmp(via, "execvp") || !strcmp(via, "execlp")) {
		/* by name, from PATH: this program's directory only */
		dir = strrchr(self, '/');
		*dir = '\0';
		setenv("PATH", self, 1);
		if (via[4] == 'v')
			execvp(dir + 1, next);
		else
			execlp(dir + 1, next[0], next[1], next[2], next[3], next[4], next[5],
			       next[6], (char *)NULL);
	} else if (!strcmp(via, "execl")) {
		/* the list ends at the first NULL of next */
		execl(self, next[0], next[1], next[2], next[3], next[4], next[5], next[6],
		      (char *)NULL);
	} else if (!strcmp(via, "execle")) {
		/* the environment follows the NULL that ends the list: as many arguments as given */
		if (k == 4)
			execle(self, next[0], next[1], next[2], next[3], (char *)NULL, environ);
		else if (k == 5)
			execle(self, next[0], next[1], next[2], next[3], next[4], (char *)NULL,
			       environ);
		else
			execle(self, next[0], next[1], next[2], next[3], next[4], next[5],
			       (char *)NULL, environ);
	} else if (!strcmp(via, "fexecve")) {
		int fd = open(self, O_RDONLY | O_CLOEXEC);

		check(fd >= 0, "open self");
		fexecve(fd, next, environ);
	} else if (!strncmp(via, "fail-", 5)) {
		const char *path =
			!strcmp(via, "fail-noent") ? "/nonexistent/capture-probe" : argv[4];

		check(execv(path, next) < 0, "a failing exec");
		printf("probe: exec %s failed: %s\n", path, strerror(errno));
		exec_work(atoi(argv[3]));
		return 0;
	}
	fprintf(stderr, "capture-probe: %s: %s\n", via, strerror(errno));
	return 5;
}

static void list_descriptors(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[4096];

	check(d != NULL, "opendir /proc/self/fd");
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		printf("probe: fd %s %s\n", e->d_name, target);
	}
	closedir(d);
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
	} else if (!strcmp(mode, "exec")) {
		return exec_chain(argc, argv);
	} else if (!strcmp(mode, "vfork")) {
		pid_t pid;
		int st;

		exec_work(n);
		pid = vfork();
		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		      "vfork and exec /bin/true");
		exec_work(n);
	} else if (!strcmp(mode, "fds")) {
		exec_work(n);
		list_descriptors();
	} else if (!strcmp(mode, "stderr-closed")) {
		static const char line[] = "the program's own line\n";
		int fd;

		check(argc > 3 && fcntl(2, F_GETFD) < 0, "started with descriptor 2 closed");
		exec_work(n);
		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		check(fd == 2, "the file took descriptor 2");
		check(write(fd, line, sizeof(line) - 1) == sizeof(line) - 1, "write");
		exec_work(n);
	} else {
		fprintf(stderr,
			"usage: capture-probe paths "
			"N|visible|forkfirst|count|inflight|poll|reset N|queries N|spins N K|"
			"exec VIA N...|vfork N|fds N|stderr-closed N FILE\n");
		return 2;
	}
	return 0;
}
