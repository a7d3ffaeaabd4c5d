/* SPDX-License-Identifier: MIT */
/* The reliability matrix's preloaded fault injector: ends, kills or loads a CUDA program. */

/*
 * Loaded with LD_PRELOAD, with or without gpuwhy, so that a run with gpuwhy and one without see
 * the same fault. It interposes the launch entry points (nvcc's <<<>>> calls __cudaLaunchKernel)
 * to count launches process-wide, and calls the rest of libcudart through dlsym, never linked.
 *
 *   GWFI_FAULT   sigkill | sigterm | abort | _exit | vanish: done once, right after launch
 *                GWFI_AT has returned (kill(getpid()) for the signals, _exit(3), vanish: empty
 *                and remove the directory GWFI_DIR);
 *                threads: GWFI_THREADS extra threads, each doing GWFI_ITERS memset + stream
 *                sync pairs on a stream of its own, from the first launch;
 *                forks: the same threads plus one that forks GWFI_FORKS children at once.
 * Extra threads are joined by an atexit handler registered after the program's first CUDA call
 * (so it runs before gpuwhy's, and their work is in the trace). At that join one summary line
 * goes to stderr, "fault-inject: ...", the same with or without gpuwhy when nothing failed.
 */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GWFI_MAX_THREADS 64
#define GWFI_MAX_FORKS	 256
#define GWFI_BUF_BYTES	 4096

enum fault { F_NONE, F_SIGKILL, F_SIGTERM, F_ABORT, F_EXIT, F_VANISH, F_THREADS, F_FORKS };

typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

static enum fault fault;
static long fire_at, n_threads, n_iters, n_forks;
static const char *vanish_dir;
static _Atomic long launches;
static atomic_flag started = ATOMIC_FLAG_INIT;
static pid_t owner; /* the process that started the threads: a fork child must not join them */
static pthread_t threads[GWFI_MAX_THREADS + 1];
static int started_threads;
static _Atomic long errors, forks_ok, forks_bad;

static long env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	long v = s ? strtol(s, NULL, 10) : def;

	return v < 0 ? 0 : v > max ? max : v;
}

__attribute__((constructor)) static void fi_init(void)
{
	static const char *const names[] = {"",	     "sigkill", "sigterm", "abort",
					    "_exit", "vanish",	"threads", "forks"};
	const char *f = getenv("GWFI_FAULT");

	for (unsigned i = 1; f && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f, names[i]))
			fault = (enum fault)i;
	fire_at = env_long("GWFI_AT", 1, 1L << 40);
	n_threads = env_long("GWFI_THREADS", 16, GWFI_MAX_THREADS);
	n_iters = env_long("GWFI_ITERS", 20, 1L << 20);
	n_forks = env_long("GWFI_FORKS", 50, GWFI_MAX_FORKS);
	vanish_dir = getenv("GWFI_DIR");
}

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p) {
		fprintf(stderr, "fault-inject: %s not found\n", name);
		_exit(97);
	}
	return p;
}

static void count_error(cudaError_t e)
{
	if (e != cudaSuccess)
		atomic_fetch_add(&errors, 1);
}

/* GPU work without a registered kernel: memsets on a stream of its own, each waited for. */
static void *launcher_main(void *arg)
{
	cudaError_t (*stream_create)(cudaStream_t *, unsigned) = sym("cudaStreamCreateWithFlags");
	cudaError_t (*stream_destroy)(cudaStream_t) = sym("cudaStreamDestroy");
	cudaError_t (*stream_sync)(cudaStream_t) = sym("cudaStreamSynchronize");
	cudaError_t (*memset_async)(void *, int, size_t, cudaStream_t) = sym("cudaMemsetAsync");
	cudaError_t (*dmalloc)(void **, size_t) = sym("cudaMalloc");
	cudaError_t (*dfree)(void *) = sym("cudaFree");
	cudaStream_t s;
	void *buf;

	(void)arg;
	count_error(stream_create(&s, cudaStreamNonBlocking));
	count_error(dmalloc(&buf, GWFI_BUF_BYTES));
	for (long i = 0; i < n_iters; i++) {
		count_error(memset_async(buf, (int)i, GWFI_BUF_BYTES, s));
		count_error(stream_sync(s));
	}
	count_error(dfree(buf));
	count_error(stream_destroy(s));
	return NULL;
}

/* Half the children call CUDA (allocate, memset, free) and leave through exit(), so the
 * atexit handlers of everything loaded run in them; the other half only _exit. */
static void *forker_main(void *arg)
{
	cudaError_t (*dmalloc)(void **, size_t) = sym("cudaMalloc");
	cudaError_t (*dmemset)(void *, int, size_t) = sym("cudaMemset");
	cudaError_t (*dfree)(void *) = sym("cudaFree");
	pid_t pids[GWFI_MAX_FORKS];

	(void)arg;
	for (long i = 0; i < n_forks; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			atomic_fetch_add(&forks_bad, 1);
		} else if (pids[i] == 0) {
			void *buf = NULL;
			int bad = 0;

			/* the parent's unwritten stdio bytes are its own, not this child's */
			__fpurge(stdout);
			__fpurge(stderr);
			if (i % 2)
				_exit(0);
			bad |= dmalloc(&buf, GWFI_BUF_BYTES) != cudaSuccess;
			bad |= dmemset(buf, 1, GWFI_BUF_BYTES) != cudaSuccess;
			bad |= dfree(buf) != cudaSuccess;
			exit(bad ? 1 : 0);
		}
	}
	for (long i = 0; i < n_forks; i++) {
		int st;

		if (pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			atomic_fetch_add(&forks_ok, 1);
		else if (pids[i] > 0)
			atomic_fetch_add(&forks_bad, 1);
	}
	return NULL;
}

static void join_all(void)
{
	if (getpid() != owner)
		return;
	for (int i = 0; i < started_threads; i++)
		pthread_join(threads[i], NULL);
	fprintf(stderr, "fault-inject: %ld threads x %ld memsets, %ld CUDA errors", n_threads,
		n_iters, atomic_load(&errors));
	if (fault == F_FORKS)
		fprintf(stderr, "; %ld forks: %ld exited 0, %ld did not", n_forks,
			atomic_load(&forks_ok), atomic_load(&forks_bad));
	fputc('\n', stderr);
}

static void start_threads(void)
{
	owner = getpid();
	for (long i = 0; i < n_threads; i++)
		if (pthread_create(&threads[started_threads], NULL, launcher_main, NULL) == 0)
			started_threads++;
	if (fault == F_FORKS &&
	    pthread_create(&threads[started_threads], NULL, forker_main, NULL) == 0)
		started_threads++;
	atexit(join_all);
}

static void vanish(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(dir);
}

static void after_launch(void)
{
	long n = atomic_fetch_add(&launches, 1) + 1;

	if ((fault == F_THREADS || fault == F_FORKS) && !atomic_flag_test_and_set(&started))
		start_threads();
	if (n != fire_at)
		return;
	switch (fault) {
	case F_SIGKILL:
		kill(getpid(), SIGKILL);
		break;
	case F_SIGTERM:
		kill(getpid(), SIGTERM);
		break;
	case F_ABORT:
		abort();
	case F_EXIT:
		_exit(3);
	case F_VANISH:
		if (vanish_dir)
			vanish(vanish_dir);
		break;
	default:
		break;
	}
}

cudaError_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args, size_t smem,
			       cudaStream_t stream);
cudaError_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args, size_t smem,
			       cudaStream_t stream)
{
	static launch_fn real;
	cudaError_t r;

	if (!real)
		real = (launch_fn)dlsym(RTLD_NEXT, "__cudaLaunchKernel");
	r = real(kernel, grid, block, args, smem, stream);
	after_launch();
	return r;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
			     cudaStream_t stream)
{
	static launch_fn real;
	cudaError_t r;

	if (!real)
		real = (launch_fn)dlsym(RTLD_NEXT, "cudaLaunchKernel");
	r = real(func, grid, block, args, smem, stream);
	after_launch();
	return r;
}
