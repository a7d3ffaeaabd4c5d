/* SPDX-License-Identifier: MIT */
/* libgpuwhy.so's entry points: the preload constructor and destructor, InitializeInjection, NVTX's
 * InitializeInjectionNvtx2, and the CUPTI calls of another client in the process, which it
 * interposes to say what they take. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lifecycle.h"
#include "nvtx.h"
#include "subscriber.h"

#define EXPORT __attribute__((visibility("default")))

/* The C library's exec family, found once in the constructor: an exec may come from a fork
 * child of a threaded program, where dlsym could wait on a lock no thread will release. */
#define EXEC_FUNCTIONS(X)                                                                          \
	X(execve, int, (const char *, char *const[], char *const[]))                               \
	X(execv, int, (const char *, char *const[]))                                               \
	X(execvp, int, (const char *, char *const[]))                                              \
	X(execvpe, int, (const char *, char *const[], char *const[]))                              \
	X(fexecve, int, (int, char *const[], char *const[]))                                       \
	X(execveat, int, (int, const char *, char *const[], char *const[], int))
#define EXEC_POINTER(name, ret, args) static ret(*real_##name) args;
EXEC_FUNCTIONS(EXEC_POINTER)
#undef EXEC_POINTER

__attribute__((constructor)) static void preload_init(void)
{
#define EXEC_RESOLVE(name, ret, args) real_##name = (ret(*) args)dlsym(RTLD_NEXT, #name);
	EXEC_FUNCTIONS(EXEC_RESOLVE)
#undef EXEC_RESOLVE
	gw_lifecycle_preload();
}

__attribute__((destructor)) static void preload_fini(void)
{
	gw_lifecycle_exit();
}

/* The CUDA driver's injection entry point (CUDA_INJECTION64_PATH): called once, at CUDA
 * initialization, before the first context. Returns 1 always: 0 would make some drivers
 * abort CUDA initialization, and gpuwhy must never break the application. */
__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	gw_lifecycle_injection();
	return 1;
}

/* NVTX's injection entry point (NVTX_INJECTION64_PATH, which the constructor and `gpuwhy run`
 * set): called once by each NVTX instance of the process at its first NVTX call. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t));
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t))
{
	return gw_nvtx_attach(get);
}

/*
 * Another CUPTI client in the process (torch.profiler's Kineto, JAX's profiler) links libcupti
 * and calls these through the dynamic linker; preloaded, libgpuwhy.so comes first. Only
 * cuptiSubscribe is exclusive: re-registering the buffer callbacks takes every later GPU
 * record from gpuwhy, so the trace says so, then the call goes on to the process's libcupti
 * (gpuwhy's own calls go through its dlopen handle, never through these). Loaded through
 * CUDA_INJECTION64_PATH alone, the library is not in the global scope and these see nothing:
 * the flusher then infers a takeover from CUPTI's silence (hooks/cupti-activity.c).
 */
static const char *caller_of(const void *return_address)
{
	Dl_info di;
	const char *slash;

	if (!dladdr(return_address, &di) || !di.dli_fname)
		return NULL;
	slash = strrchr(di.dli_fname, '/');
	return slash ? slash + 1 : di.dli_fname;
}

/* The process's libcupti's function (the next definition after this library), else the one
 * of the libcupti gpuwhy loaded, else NULL. */
#define NEXT(fn) ((__typeof__(fn) *)next_of(#fn))
static void *next_of(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	return f ? f : gw_cupti_symbol(name);
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
			       CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	__typeof__(cuptiActivityRegisterCallbacks) *next = NEXT(cuptiActivityRegisterCallbacks);

	gw_cupti_foreign_call(GW_FOREIGN_BUFFERS, caller_of(__builtin_return_address(0)));
	return next ? next(funcBufferRequested, funcBufferCompleted) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	__typeof__(cuptiActivityRegisterTimestampCallback) *next =
		NEXT(cuptiActivityRegisterTimestampCallback);

	gw_cupti_foreign_call(GW_FOREIGN_TIMESTAMP, caller_of(__builtin_return_address(0)));
	return next ? next(funcTimestamp) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	static const CUpti_ActivityKind ours[] = {GW_CUPTI_ACTIVITY_KINDS};
	__typeof__(cuptiActivityDisable) *next = NEXT(cuptiActivityDisable);

	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (kind == ours[i])
			gw_cupti_foreign_call(GW_FOREIGN_DISABLE,
					      caller_of(__builtin_return_address(0)));
	return next ? next(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	__typeof__(cuptiFinalize) *next = NEXT(cuptiFinalize);

	gw_cupti_foreign_call(GW_FOREIGN_FINALIZE, caller_of(__builtin_return_address(0)));
	return next ? next() : CUPTI_ERROR_NOT_INITIALIZED;
}

/*
 * exec without fork (a launcher script that checks CUDA, then execs the training): the image's
 * trace is closed first, as at exit, so its records are not lost with its threads, and the
 * next image writes a trace of its own (lifecycle.h). Preloaded, these come before the C
 * library's; they pass every call on unchanged.
 */
#define EXEC_CALL(name, ...)                                                                       \
	do {                                                                                       \
		int r_, e_;                                                                        \
		if (!real_##name) {                                                                \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		r_ = real_##name(__VA_ARGS__);                                                     \
		e_ = errno;                                                                        \
		gw_lifecycle_exec_failed(e_);                                                      \
		errno = e_;                                                                        \
		return r_;                                                                         \
	} while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	gw_lifecycle_before_exec(path, false, -1);
	EXEC_CALL(execve, path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	gw_lifecycle_before_exec(path, false, -1);
	EXEC_CALL(execv, path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	gw_lifecycle_before_exec(file, true, -1);
	EXEC_CALL(execvp, file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	gw_lifecycle_before_exec(file, true, -1);
	EXEC_CALL(execvpe, file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	gw_lifecycle_before_exec(NULL, false, fd);
	EXEC_CALL(fexecve, fd, argv, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	int fd;

	if (!*path) { /* AT_EMPTY_PATH: the descriptor itself */
		gw_lifecycle_before_exec(NULL, false, dirfd);
	} else if ((fd = openat(dirfd, path, O_PATH | O_CLOEXEC)) >= 0) {
		gw_lifecycle_before_exec(path[0] == '/' || dirfd == AT_FDCWD ? path : NULL, false,
					 path[0] == '/' || dirfd == AT_FDCWD ? -1 : fd);
		close(fd);
	}
	EXEC_CALL(execveat, dirfd, path, argv, envp, flags);
}

/* The list forms, as the C library builds them: the arguments up to the NULL, into an array
 * on the stack (an exec may follow a fork in a threaded program: no malloc), or mapped when
 * there are very many. */
#define EXEC_LIST_MAX 4096

static char **list_argv(const char *arg0, va_list *ap, char **stack, size_t *ret_mapped)
{
	va_list count;
	size_t n = 1;
	char **argv = stack;

	va_copy(count, *ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	*ret_mapped = 0;
	if (n + 1 > EXEC_LIST_MAX) {
		size_t bytes = (n + 1) * sizeof(char *);
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);

		if (m == MAP_FAILED)
			return NULL;
		argv = m;
		*ret_mapped = bytes;
	}
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(*ap, char *);
	return argv;
}

enum exec_form { EXEC_V, EXEC_VP, EXEC_VE };

/* Runs a list form's exec with the vector list_argv built (envp for EXEC_VE only); the vector
 * is given back when the exec failed. */
static int exec_built(enum exec_form form, const char *target, char **argv, size_t mapped,
		      char *const *envp)
{
	int r, e;

	if (!argv)
		return -1;
	r = form == EXEC_VE   ? execve(target, argv, envp)
	    : form == EXEC_VP ? execvp(target, argv)
			      : execv(target, argv);
	e = errno;
	if (mapped)
		munmap(argv, mapped);
	errno = e;
	return r;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	char *stack[EXEC_LIST_MAX], **argv;
	size_t mapped;
	va_list ap;

	va_start(ap, arg);
	argv = list_argv(arg, &ap, stack, &mapped);
	va_end(ap);
	return exec_built(EXEC_V, path, argv, mapped, NULL);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *stack[EXEC_LIST_MAX], **argv;
	size_t mapped;
	va_list ap;

	va_start(ap, arg);
	argv = list_argv(arg, &ap, stack, &mapped);
	va_end(ap);
	return exec_built(EXEC_VP, file, argv, mapped, NULL);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *stack[EXEC_LIST_MAX], **argv, *const *envp;
	size_t mapped;
	va_list ap;

	va_start(ap, arg);
	argv = list_argv(arg, &ap, stack, &mapped);
	envp = va_arg(ap, char *const *); /* after the NULL that ends the arguments */
	va_end(ap);
	return exec_built(EXEC_VE, path, argv, mapped, envp);
}
