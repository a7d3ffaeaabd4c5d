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
 *                forks: the same threads plus one that forks GWFI_FORKS children at once;
 *                closefrom: right after launch GWFI_AT, closes every descriptor from 3 up
 *                (close_range, as daemons and sandboxes do), then opens GWFI_FILES files in
 *                GWFI_DIR and writes one line to each after every later launch; at exit each
 *                file is read back and compared with what was written;
 *                stderr_closed, stdio_closed: from the constructor the program runs with
 *                descriptor 2 (or 0, 1 and 2) closed, as under `prog 2>&-`; after the first
 *                launch it opens its own files, which take the lowest free numbers
 *                (/dev/null, GWFI_DIR/stdout-PID.log, GWFI_DIR/stderr-PID.log), as a daemon reopens
 *                its standard streams, and writes a line to each stream after every launch;
 *                at exit the logs are copied to the real stdout and stderr, kept aside;
 *                exec: right after launch GWFI_AT, the process execs its own command line
 *                again (without fork, as a launcher script that checked CUDA execs the
 *                training), with GWFI_FAULT unset so that the new image runs to its end;
 *                fds: from the constructor, every descriptor but GWFI_FREE is in use (the
 *                program at its RLIMIT_NOFILE), through the whole run.
 *   GWFI_SECCOMP=1  from the constructor, a seccomp filter refuses (EPERM) unshare and
 *                close_range with CLOSE_RANGE_UNSHARE, as container profiles may: no thread
 *                gets a descriptor table of its own.
 * Extra threads are joined by an atexit handler registered after the program's first CUDA call
 * (so it runs before gpuwhy's, and their work is in the trace). At that join one summary line
 * goes to stderr, "fault-inject: ...", the same with or without gpuwhy when nothing failed.
 */
#include <cuda_runtime_api.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GWFI_MAX_THREADS 64
#define GWFI_MAX_FORKS	 256
#define GWFI_BUF_BYTES	 4096
#define GWFI_MAX_FILES	 64
/* Where the stdio faults keep the real stdout and stderr: above anything the program opens. */
#define GWFI_SAVED_FD	 900

enum fault {
	F_NONE,
	F_SIGKILL,
	F_SIGTERM,
	F_ABORT,
	F_EXIT,
	F_VANISH,
	F_THREADS,
	F_FORKS,
	F_CLOSEFROM,
	F_STDERR_CLOSED,
	F_STDIO_CLOSED,
	F_EXEC,
	F_FDS,
};

typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

static enum fault fault;
static long fire_at, n_threads, n_iters, n_forks;
static const char *vanish_dir;
static _Atomic long launches;
static atomic_flag started = ATOMIC_FLAG_INIT;
static pid_t owner;	 /* the process that started the threads: a fork child must not join them */
static pid_t loaded_pid; /* exec fires in this process only, not in its fork children */
static pthread_t threads[GWFI_MAX_THREADS + 1];
static int started_threads;
static _Atomic long errors, forks_ok, forks_bad;
/* closefrom: the program's own files, and how many lines each has been given */
static int files[GWFI_MAX_FILES];
static long n_files, lines_written;
static bool files_open;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
/* stdio faults: the real stdout and stderr, and whether the program reopened its own */
static int saved_out = -1, saved_err = -1;
static bool reopened;

static long env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	long v = s ? strtol(s, NULL, 10) : def;

	return v < 0 ? 0 : v > max ? max : v;
}

/* Opens /dev/null until the descriptor table is full, then closes the last `left` of them: the
 * program runs at its RLIMIT_NOFILE with `left` descriptors free. */
static void use_up_descriptors(long left)
{
	int last[16], n = 0, fd;

	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		last[n++ % 16] = fd;
	for (long i = 0; i < left && i < n && i < 16; i++)
		close(last[(n - 1 - i) % 16]);
}

/* unshare, and close_range asking for a table of its own, fail with EPERM from now on. */
static void refuse_private_tables(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 3),
		/* the low half of the flags argument (x86-64 is little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLOSE_RANGE_UNSHARE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "fault-inject: seccomp: %s\n", strerror(errno));
		_exit(95);
	}
}

__attribute__((constructor)) static void fi_init(void)
{
	static const char *const names[] = {
		"",	 "sigkill",   "sigterm",       "abort",	       "_exit", "vanish", "threads",
		"forks", "closefrom", "stderr_closed", "stdio_closed", "exec",	"fds",
	};
	const char *f = getenv("GWFI_FAULT");

	for (unsigned i = 1; f && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f, names[i]))
			fault = (enum fault)i;
	loaded_pid = getpid();
	if (env_long("GWFI_SECCOMP", 0, 1))
		refuse_private_tables();
	fire_at = env_long("GWFI_AT", 1, 1L << 40);
	n_threads = env_long("GWFI_THREADS", 16, GWFI_MAX_THREADS);
	n_iters = env_long("GWFI_ITERS", 20, 1L << 20);
	n_forks = env_long("GWFI_FORKS", 50, GWFI_MAX_FORKS);
	n_files = env_long("GWFI_FILES", 8, GWFI_MAX_FILES);
	vanish_dir = getenv("GWFI_DIR");
	if (fault == F_STDERR_CLOSED || fault == F_STDIO_CLOSED) {
		saved_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, GWFI_SAVED_FD);
		saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, GWFI_SAVED_FD);
		close(STDERR_FILENO);
		if (fault == F_STDIO_CLOSED) {
			close(STDIN_FILENO);
			close(STDOUT_FILENO);
		}
	} else if (fault == F_FDS) {
		use_up_descriptors(env_long("GWFI_FREE", 0, 16));
	}
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

static int open_in_dir(const char *name, int flags)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", vanish_dir ? vanish_dir : ".", name);
	return open(path, flags | O_CLOEXEC, 0644);
}

/* The line the program writes to each of its files after a launch. */
static int file_line(char *buf, size_t size, long file, long line)
{
	return snprintf(buf, size, "file %ld line %ld: the program's own data\n", file, line);
}

static void closefrom_and_open(void)
{
	char name[48];

	pthread_mutex_lock(&files_lock);
	syscall(SYS_close_range, 3u, ~0u, 0u);
	for (long i = 0; i < n_files; i++) {
		snprintf(name, sizeof(name), "program-file-%d-%ld", (int)getpid(), i);
		files[i] = open_in_dir(name, O_RDWR | O_CREAT | O_TRUNC);
	}
	files_open = true;
	pthread_mutex_unlock(&files_lock);
}

static void write_files(void)
{
	char line[96];

	pthread_mutex_lock(&files_lock);
	if (!files_open) {
		pthread_mutex_unlock(&files_lock);
		return;
	}
	for (long i = 0; i < n_files; i++) {
		int n = file_line(line, sizeof(line), i, lines_written);

		if (files[i] < 0 || write(files[i], line, (size_t)n) != n)
			atomic_fetch_add(&errors, 1);
	}
	lines_written++;
	pthread_mutex_unlock(&files_lock);
}

/* Each file holds exactly the lines written, and its descriptor is still the file. */
static void check_files(void)
{
	char line[96], name[48], *want, *got;
	long bad = 0, closed = 0;

	for (long i = 0; i < n_files; i++) {
		size_t len = 0, cap = (size_t)(lines_written + 1) * sizeof(line);
		ssize_t r;
		int fd;

		if (fcntl(files[i], F_GETFD) < 0)
			closed++;
		snprintf(name, sizeof(name), "program-file-%d-%ld", (int)getpid(), i);
		fd = open_in_dir(name, O_RDONLY);
		want = malloc(cap);
		got = malloc(cap + 1);
		for (long l = 0; l < lines_written; l++)
			len += (size_t)file_line(want + len, cap - len, i, l);
		r = fd < 0 ? -1 : read(fd, got, cap + 1);
		if (r != (ssize_t)len || memcmp(want, got, len))
			bad++;
		if (fd >= 0)
			close(fd);
		free(want);
		free(got);
	}
	/* how many lines there are depends on other threads' timing: not printed */
	fprintf(stderr, "fault-inject: %ld files, %ld changed, %ld closed under the program\n",
		n_files, bad, closed);
}

/* A daemon's reopening of its standard streams: the lowest free numbers, in order. */
static void reopen_stdio(void)
{
	char name[48];

	if (fault == F_STDIO_CLOSED) {
		open("/dev/null", O_RDONLY);
		snprintf(name, sizeof(name), "stdout-%d.log", (int)getpid());
		open_in_dir(name, O_WRONLY | O_CREAT | O_TRUNC);
	}
	snprintf(name, sizeof(name), "stderr-%d.log", (int)getpid());
	open_in_dir(name, O_WRONLY | O_CREAT | O_TRUNC);
	reopened = true;
}

static void copy_log(const char *name, int to)
{
	char buf[4096];
	ssize_t n;
	int fd = open_in_dir(name, O_RDONLY);

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)n) != n)
			break;
	if (fd >= 0)
		close(fd);
}

/* After the program's last output and after gpuwhy's exit handler (destructors run after
 * every atexit handler, before exit's own flush of stdio): closefrom's files are checked, and
 * what the program wrote to its streams goes to the real ones. */
__attribute__((destructor)) static void fi_fini(void)
{
	char name[48];

	if (fault == F_CLOSEFROM && lines_written && getpid() == owner)
		check_files();
	if (saved_err < 0 || !reopened)
		return;
	fflush(NULL);
	if (fault == F_STDIO_CLOSED) {
		snprintf(name, sizeof(name), "stdout-%d.log", (int)getpid());
		copy_log(name, saved_out);
	}
	snprintf(name, sizeof(name), "stderr-%d.log", (int)getpid());
	copy_log(name, saved_err);
}

/* Runs the same command line again in this process; the new image does not fire. */
static void exec_again(void)
{
	char *argv[256], buf[65536];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *p = buf; p < buf + n && argc < 255; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	unsetenv("GWFI_FAULT");
	fflush(NULL);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "fault-inject: exec failed: %s\n", strerror(errno));
	_exit(96);
}

static void after_launch(void)
{
	long n = atomic_fetch_add(&launches, 1) + 1;

	if ((fault == F_THREADS || fault == F_FORKS) && !atomic_flag_test_and_set(&started))
		start_threads();
	if (fault == F_STDERR_CLOSED || fault == F_STDIO_CLOSED) {
		if (n == 1)
			reopen_stdio();
		fprintf(stderr, "fault-inject: launch %ld\n", n);
		if (fault == F_STDIO_CLOSED)
			printf("fault-inject: launch %ld\n", n);
	}
	if (fault == F_CLOSEFROM && n > fire_at)
		write_files();
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
	case F_CLOSEFROM:
		closefrom_and_open();
		write_files();
		owner = getpid();
		break;
	case F_EXEC:
		if (getpid() == loaded_pid)
			exec_again();
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
