/* SPDX-License-Identifier: MIT */
/* Entry points (preload constructor, InitializeInjection) and the capture's lifecycle:
 * start once, fork children, thread names, exit, SIGTERM/SIGINT. */
#include "lifecycle.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gpuwhy/trace-format.h>

#include "nvml-sampler.h"
#include "nvtx.h"
#include "subscriber.h"
#include "capture-state.h"
#include "clock.h"
#include "config.h"
#include "descriptors.h"
#include "intern.h"
#include "modules.h"
#include "output-path.h"
#include "python-frames.h"
#include "stacks.h"
#include "trace-writer.h"

/* Host records reach the file within this (CUPTI's buffers are flushed as often, but CUPTI
 * holds back a buffer while any record in it is incomplete: doc/capture.md). */
#define WRITER_FLUSH_NS 50000000ull
#define SIGNAL_FLUSH_NS 200000000ull
/* At exit, the longest gpuwhy waits for CUPTI's last flush before it gives up (a flush that
 * never returns must not keep the program from exiting). */
#define EXIT_WAIT_NS	5000000000ull
/* At exit, the longest gpuwhy waits for the sampler's last NVML calls. */
#define SAMPLER_WAIT_NS 1000000000ull

/* How a start goes: with CUPTI; in a fork child of a process that used CUPTI (the callbacks
 * still fire there, CUPTI must not be called); or without CUPTI, for a reason. */
enum start_mode { START_CUPTI, START_FORK_CHILD, START_WITHOUT_CUPTI };

static struct gw_config config;
static bool config_loaded;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool start_attempted;	   /* this process image tried (a fork child inherits it) */
static bool cupti_ready;	   /* subscribed and enabled: inherited by fork children */
static bool callbacks_only;	   /* a fork child's trace: CUPTI's callbacks, no CUPTI calls */
static const char *aside_reason;   /* why a start goes without CUPTI */
static const char *nvtx_aside;	   /* another tool's NVTX injection: no ranges recorded */
static __thread bool starting;	   /* this thread is inside a start (a nested one returns) */
static bool writer_running;	   /* this process's trace is open */
static _Atomic bool child_pending; /* fork child of a capturing parent, no trace yet */
/* The process the library was loaded into: a trace started under another pid is a fork
 * child's, whether or not the parent was capturing when it forked. */
static pid_t loaded_pid;
static bool exit_registered;
static uint64_t hdr_start_ns; /* the trace's start (its header), for times in the lines */
static bool in_constructor;
static _Atomic bool exit_pending; /* atexit to register at the first event, after main began */
static char trace_path[PATH_MAX];
static pid_t trace_pid;	   /* the process whose trace is open (a vfork child shares memory) */
static bool ended_by_exec; /* the trace was closed for an exec that then failed */
static struct sigaction previous_term, previous_int;
/* The standard error the program had when the library loaded: gpuwhy's lines go there only.
 * A program started with it closed (`prog 2>&-`) may open a file that takes number 2 later;
 * that file is the program's, and gpuwhy never writes into it. */
static struct gw_fd_id stderr_at_load;
static bool stderr_known, stderr_checked;
/* Which invalid settings were warned about, inherited by child processes and exec'd images so
 * that a wrapper script and the program it starts do not both say it. */
#define WARNED_VAR "GPUWHY_WARNED"

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void at_exit(void);
static bool wake(void);
static void thread_first_event(void);

static void remember_stderr(void)
{
	if (stderr_checked)
		return;
	stderr_checked = true;
	stderr_known = gw_fd_identify(STDERR_FILENO, &stderr_at_load) == 0;
}

/* One line on stderr; only at start, at exit and on failures, never on the event path. */
static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	remember_stderr();
	if (!stderr_known || !gw_fd_is(STDERR_FILENO, &stderr_at_load))
		return;
	n = snprintf(line, sizeof(line), "gpuwhy: ");

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

#define debug(level, ...)                                                                          \
	do {                                                                                       \
		if (config.debug >= (level))                                                       \
			say(__VA_ARGS__);                                                          \
	} while (0)

/* NAME=hash of the value, the token GPUWHY_WARNED keeps for a warning given. */
static void warned_token(char *buf, size_t size, const char *name, const char *value)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const char *p = value; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(buf, size, "%s=%08x", name + sizeof("GPUWHY_") - 1, h);
}

/* Each invalid setting once per process tree: the first process that loads the library says
 * it, and its children and exec'd images inherit that it was said. */
static void warn_invalid_settings(void)
{
	const char *invalid[32];
	unsigned n = gw_config_invalid(invalid, sizeof(invalid) / sizeof(invalid[0]));
	static char list[1024];

	for (unsigned i = 0; i < n; i++) {
		const char *value = secure_getenv(invalid[i]), *old = secure_getenv(WARNED_VAR);
		char token[64];
		size_t len;

		warned_token(token, sizeof(token), invalid[i], value ? value : "");
		len = strlen(token);
		if (old) {
			const char *p = old;

			while ((p = strstr(p, token)) &&
			       !((p == old || p[-1] == ',') && (p[len] == ',' || !p[len])))
				p += len;
			if (p)
				continue;
		}
		say("ignoring invalid %s=%s", invalid[i], value ? value : "");
		if (snprintf(list, sizeof(list), "%s%s%s", old ? old : "", old ? "," : "", token) <
		    (int)sizeof(list))
			setenv(WARNED_VAR, list, 1);
	}
}

static void load_config(void)
{
	if (config_loaded)
		return;
	config_loaded = true;
	gw_lifecycle =
		(struct gw_lifecycle_hooks){.wake = wake, .thread_first_event = thread_first_event};
	if (gw_config_from_env(&config, NULL) < 0)
		warn_invalid_settings();
	gw_stacks_on = config.stacks;
	gw_python_configure(config.python, config.python_layout);
}

/* A thread's first event: the exit handler the constructor could not register is due now
 * (main has begun). */
static void thread_first_event(void)
{
	if (atomic_exchange(&exit_pending, false))
		atexit(at_exit);
}

static void note(unsigned level, const char *text)
{
	struct gw_rec_note rec = {
		.time_ns = gw_now_ns(),
		.level = level,
		.text = {(const uint8_t *)text, (uint32_t)strlen(text)},
	};

	gw_emit(GW_REC_NOTE, &rec);
}

/* SIGXFSZ from a write past RLIMIT_FSIZE would kill the application by default: gpuwhy's own
 * writes run with it blocked, and a SIGXFSZ they raised is consumed, so the write just fails
 * with EFBIG. The application's disposition still applies to its own writes. */
static int stop_writer(bool clean, uint64_t footer_flags)
{
	struct timespec zero = {0, 0};
	sigset_t xfsz, old, pending;
	bool was_pending;
	int r;

	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	r = gw_writer_stop(clean, footer_flags);
	sigpending(&pending);
	if (!was_pending && sigismember(&pending, SIGXFSZ))
		sigtimedwait(&xfsz, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The end of this image's trace: at exit, or before an exec (footer_flags GW_FOOTER_EXEC). */
static void finish(uint64_t footer_flags)
{
	struct gw_writer_stats stats;
	uint64_t stopped_ns;
	int r;

	if (!writer_running)
		return;
	atomic_store(&gw_capture_on, false);
	/* the sampler's last window, before the writer stops */
	gw_nvml_sampler_stop(SAMPLER_WAIT_NS);
	/* GPU records still in CUPTI's buffers become trace records before the footer, unless
	 * CUPTI's flush does not come back in time: the program exits regardless. */
	if ((cupti_ready || callbacks_only) && gw_cupti_finish(EXIT_WAIT_NS) == -ETIMEDOUT) {
		static const char gave_up[] =
			"CUPTI's final flush did not return within 5 s: gpuwhy gave up waiting, "
			"and the GPU records CUPTI still held are missing";

		note(GW_NOTE_WARNING, gave_up);
		say("%s (trace %s)", gave_up, trace_path);
	}
	gw_nvtx_exit_notes();
	gw_python_exit_notes();
	if (cupti_ready || callbacks_only) {
		char joins[256];

		gw_cupti_exit_notes();
		gw_cupti_join_stats(joins, sizeof(joins));
		debug(1, "%s", joins);
	}
	gw_cupti_set_activity(false);
	r = stop_writer(true, footer_flags);
	writer_running = false;
	gw_writer_get_stats(&stats);
	if (gw_stacks_stopped(&stopped_ns))
		say("call stacks stopped %.3f s into the run: the program closed or reused the "
		    "descriptors of libunwind's memory check (a NOTE in %s says so)",
		    (double)(stopped_ns - hdr_start_ns) / 1e9, trace_path);
	if (stats.descriptor_lost)
		say("the program closed the descriptor of %s, or put a file of its own under its "
		    "number, and the file could not be reopened: nothing was written into the "
		    "program's file; the trace ends there (%llu records dropped)",
		    trace_path, (unsigned long long)stats.dropped);
	else if (r < 0)
		say("writing %s failed (%s): the trace ends early", trace_path, strerror(-r));
	/* Writes to a file unlinked under us (its directory removed) all succeed: without this
	 * check the run would end saying where a trace is that nobody can read. */
	if (stats.removed)
		say("%s was removed while the program ran: the trace is lost", trace_path);
	else if (!config.quiet)
		say("trace %s: %llu events, %llu bytes, %llu dropped", trace_path,
		    (unsigned long long)stats.records, (unsigned long long)stats.bytes_written,
		    (unsigned long long)stats.dropped);
}

static void at_exit(void)
{
	finish(0);
}

static void on_signal(int sig, siginfo_t *info, void *ucontext)
{
	const struct sigaction *prev = sig == SIGTERM ? &previous_term : &previous_int;
	int saved_errno = errno;

	if (writer_running)
		gw_writer_flush_from_signal(SIGNAL_FLUSH_NS);
	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, info, ucontext);
	} else if (prev->sa_handler == SIG_DFL) {
		/* The default action, as if gpuwhy were not there: blocked until we return. */
		sigaction(sig, prev, NULL);
		raise(sig);
	} else if (prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	}
	errno = saved_errno;
}

static void install_signal(int sig, struct sigaction *prev)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, prev) < 0 ||
	    (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_IGN))
		return; /* an ignored signal stays ignored */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void atfork_child(void)
{
	gw_modules_fork_child();
	/* Only this thread exists now; the parent's writer, flusher and ids are not ours, nor
	 * is its CUPTI, which has no fork support: a call into it may never return. */
	atomic_store(&gw_capture_on, false);
	atomic_store(&gw_cupti_usable, false);
	gw_cupti_set_activity(false);
	if (writer_running) {
		gw_writer_atfork_child();
		writer_running = false;
		atomic_store(&child_pending, cupti_ready);
	}
	gw_cupti_flusher_forget();
	gw_nvml_sampler_forget();
	gw_nvtx_fork_child();
	gw_python_fork_child();
	pthread_mutex_init(&start_lock, NULL);
	gw_thread_id_fork_child();
}

static size_t read_cmdline(char *buf, size_t size)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size);
	close(fd);
	if (n <= 0)
		return 0;
	/* The kernel ends every argument with a NUL; the format wants them between. */
	return buf[n - 1] == '\0' ? (size_t)n - 1 : (size_t)n;
}

/*
 * Creates this image's trace, moved out of the program's way (descriptors.h). An exec keeps
 * the pid, so a later image of the process finds its pid's file written by the image before:
 * it takes the same name with -exec1, -exec2, ... A file of another process is never
 * overwritten. Returns the descriptor or -errno; trace_path names the file.
 */
static int create_trace(void)
{
	char first[PATH_MAX];
	int fd = gw_output_open(trace_path);

	if (fd == -EEXIST && gw_output_is_earlier_image(trace_path, getpid())) {
		snprintf(first, sizeof(first), "%s", trace_path);
		for (unsigned n = 1; fd == -EEXIST && n < 1000; n++) {
			if (gw_output_exec_path(trace_path, sizeof(trace_path), first, n) < 0)
				return -ENAMETOOLONG;
			fd = gw_output_open(trace_path);
		}
	}
	if (fd < 0)
		return fd;
	fd = gw_fd_move_high(fd);
	if (fd < 0)
		unlink(trace_path);
	return fd;
}

static void start_locked(enum start_mode mode)
{
	bool child = mode == START_FORK_CHILD;
	static char host[256], command[4096];
	struct gw_writer_options opt = {.flush_interval_ns = WRITER_FLUSH_NS};
	struct gw_rec_header hdr;
	struct timespec real;
	char why[768] = "";
	bool have_cupti = child;
	int64_t rank = gw_rank_from_env();
	size_t command_len;
	int fd, r, failed;

	if (gw_intern_init() < 0) {
		say("out of memory for the id tables: capture disabled");
		return;
	}
	if (gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "unknown");
	r = gw_output_path_expand(trace_path, sizeof(trace_path), config.output, getpid(), host,
				  rank);
	if (r < 0) {
		say("GPUWHY_OUTPUT=%s: %s: capture disabled", config.output,
		    r == -EINVAL ? "bad % sequence (use %p %h %r %%)" : strerror(-r));
		return;
	}
	fd = create_trace();
	if (fd < 0) {
		say("cannot create trace %s: %s%s: capture disabled", trace_path, strerror(-fd),
		    fd == -EEXIST		     ? " (never overwritten)"
		    : fd == -EMFILE || fd == -ENFILE ? " (no file descriptor left)"
						     : "");
		return;
	}
	if (mode == START_WITHOUT_CUPTI) {
		snprintf(why, sizeof(why), "%s", aside_reason);
	} else if (!child) {
		r = gw_cupti_pool_init();
		if (!r)
			r = gw_cupti_load(config.cupti_path, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "no memory for CUPTI buffers");
		if (!r)
			r = gw_cupti_subscribe(why, sizeof(why));
		if (!r)
			debug(1, "CUPTI %u from %s", gw_cupti_version, gw_cupti_path);
		have_cupti = !r;
	}

	clock_gettime(CLOCK_REALTIME, &real);
	command_len = read_cmdline(command, sizeof(command));
	hdr = (struct gw_rec_header){
		.format_version = GW_FORMAT_VERSION,
		.flags = (config.stacks ? GW_HEADER_STACKS : 0) |
			 (loaded_pid && getpid() != loaded_pid ? GW_HEADER_FORKED : 0),
		.pid = (uint64_t)getpid(),
		.ppid = (uint64_t)getppid(),
		.rank = rank,
		.clock_id = CLOCK_MONOTONIC_RAW,
		.start_ns = gw_now_ns(),
		.start_realtime_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec,
		.capture_mode = have_cupti ? GW_CAPTURE_CUPTI : GW_CAPTURE_NONE,
		.cupti_version = have_cupti ? gw_cupti_version : 0,
		.host = {(const uint8_t *)host, (uint32_t)strlen(host)},
		.command = {(const uint8_t *)command, (uint32_t)command_len},
		.cupti_path = {(const uint8_t *)gw_cupti_path,
			       have_cupti ? (uint32_t)strlen(gw_cupti_path) : 0},
	};
	opt.fd = fd;
	opt.path = trace_path;
	r = gw_writer_start(&opt, &hdr);
	if (r < 0) {
		say("cannot start the trace writer for %s: %s: capture disabled", trace_path,
		    strerror(-r));
		if (have_cupti && !child)
			gw_cupti_unsubscribe();
		return;
	}
	writer_running = true;
	trace_pid = getpid();
	ended_by_exec = false;
	hdr_start_ns = hdr.start_ns;
	gw_cupti_set_epoch(hdr.start_ns);
	if (!have_cupti) {
		say("%s: the trace %s will hold no GPU events", why, trace_path);
		note(GW_NOTE_WARNING, why);
	}
	if (nvtx_aside)
		note(GW_NOTE_INFO, nvtx_aside);
	if (config.stacks && (r = gw_stacks_init()) < 0) {
		snprintf(
			why, sizeof(why),
			"no call stacks: libunwind could not open the pipe it checks memory "
			"through (%s%s), so unwinding would stop short or read the program's files",
			strerror(-r),
			r == -EMFILE || r == -ENFILE ? ": too few file descriptors" : "");
		gw_stacks_on = false;
		say("%s (trace %s)", why, trace_path);
		note(GW_NOTE_WARNING, why);
	}
	gw_modules_scan();
	gw_cupti_set_activity(have_cupti);
	atomic_store(&gw_capture_on, true);
	if (child) {
		callbacks_only = true;
		note(GW_NOTE_WARNING,
		     "a fork child of a process that used CUPTI, which does not work after fork: "
		     "its CUDA calls are recorded as CUPTI's callbacks saw them, none of its GPU "
		     "work");
	} else if (have_cupti) {
		failed = gw_cupti_enable();
		cupti_ready = true;
		if (gw_cupti_loaded_before)
			debug(1, "CUPTI was loaded already: %s", gw_cupti_path);
		if (gw_cupti_unknown_callbacks)
			debug(1, "%u of the callbacks are newer than CUPTI %u",
			      gw_cupti_unknown_callbacks, gw_cupti_version);
		if (failed) {
			snprintf(why, sizeof(why),
				 "CUPTI refused %d of the callbacks and activity kinds", failed);
			debug(1, "%s", why);
			note(GW_NOTE_INFO, why);
		}
		gw_cupti_start_notes();
		if (gw_cupti_flusher_start() < 0)
			note(GW_NOTE_WARNING,
			     "no CUPTI flusher thread: GPU records arrive at exit");
		/* Measured counters for the devices the program uses (DEVICE records): NVML is
		 * loaded by the sampler's own thread, so a slow or missing NVML costs the
		 * program nothing. A fork child of a capturing parent has none (the parent's
		 * NVML state is not the child's to use). */
		if (config.sample_ms > 0)
			gw_nvml_sampler_start(config.nvml_path, (unsigned)config.sample_ms);
	}
	if (!exit_registered) {
		exit_registered = true;
		/*
		 * A handler registered before main (from the constructor) would run after the
		 * loader's own exit handler, inside the library finalizers, when libcupti may be
		 * finalized already. So then it is registered at the first event; the destructor
		 * covers a program that makes none.
		 */
		if (in_constructor)
			atomic_store(&exit_pending, true);
		else
			atexit(at_exit);
		pthread_atfork(gw_modules_fork_prepare, gw_modules_fork_parent, atfork_child);
		install_signal(SIGTERM, &previous_term);
		install_signal(SIGINT, &previous_int);
	}
	debug(1, "tracing into %s", trace_path);
}

static void start_once(enum start_mode mode)
{
	/* A CUPTI that initializes the driver calls InitializeInjection from inside the start. */
	if (starting)
		return;
	starting = true;
	pthread_mutex_lock(&start_lock);
	if (!start_attempted) {
		start_attempted = true;
		start_locked(mode);
	}
	pthread_mutex_unlock(&start_lock);
	starting = false;
}

void gw_lifecycle_start(void)
{
	start_once(START_CUPTI);
}

/* gw_lifecycle.wake: a fork child of a capturing parent starts its trace at its first event. */
static bool wake(void)
{
	if (!atomic_load_explicit(&child_pending, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&child_pending)) {
		atomic_store(&child_pending, false);
		gw_intern_reset();
		gw_modules_reset();
		start_locked(START_FORK_CHILD);
	}
	pthread_mutex_unlock(&start_lock);
	return atomic_load(&gw_capture_on);
}

/* Whether path names this very library (the same file, however it is spelled). */
static bool is_self(const char *path)
{
	struct stat a, b;
	Dl_info di;

	if (!path || !dladdr((void *)is_self, &di) || !di.dli_fname)
		return false;
	return !stat(path, &a) && !stat(di.dli_fname, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * NVTX loads its injection library at a process's first NVTX call, from NVTX_INJECTION64_PATH:
 * naming this library there makes the program's ranges (torch.cuda.nvtx, Megatron's, NeMo's)
 * RANGE records, at no cost on the GPU. A variable set already belongs to another tool (Nsight
 * Systems): it keeps it, and the trace says the ranges are not recorded.
 */
static void claim_nvtx(void)
{
	static char self[PATH_MAX], reason[PATH_MAX + 96];
	const char *nvtx = secure_getenv("NVTX_INJECTION64_PATH");
	Dl_info di;

	if (nvtx && *nvtx) {
		if (!is_self(nvtx)) {
			snprintf(
				reason, sizeof(reason),
				"NVTX_INJECTION64_PATH=%s belongs to another tool: NVTX ranges are "
				"not recorded",
				nvtx);
			nvtx_aside = reason;
		}
		return;
	}
	if (dladdr((void *)claim_nvtx, &di) && di.dli_fname && realpath(di.dli_fname, self))
		setenv("NVTX_INJECTION64_PATH", self, 0);
}

/*
 * The preload constructor's work. It makes no CUDA call and no CUPTI call: CUPTI may initialize
 * the driver, and a program that sets CUDA_VISIBLE_DEVICES in main, or forks workers before
 * its first CUDA call, must find CUDA untouched. The driver's injection hook is the moment,
 * before the first context whatever loads CUDA and however: the library names itself in
 * CUDA_INJECTION64_PATH and waits for InitializeInjection. When another tool owns that
 * variable (Nsight, compute-sanitizer), gpuwhy steps aside: it neither loads a second CUPTI
 * beside the tool's nor subscribes before it, and its trace says so.
 */
void gw_lifecycle_preload(void)
{
	const char *injection = secure_getenv("CUDA_INJECTION64_PATH");
	static char self_path[PATH_MAX], reason[PATH_MAX + 128];
	Dl_info di;

	remember_stderr();
	loaded_pid = getpid();
	load_config();
	if (config.disable)
		return;
	claim_nvtx();
	if (injection && is_self(injection)) {
		debug(1, "waiting for InitializeInjection");
		return;
	}
	if (injection && *injection) {
		snprintf(
			reason, sizeof(reason),
			"CUDA_INJECTION64_PATH=%s belongs to another CUDA tool: gpuwhy steps aside",
			injection);
		aside_reason = reason;
		in_constructor = true;
		start_once(START_WITHOUT_CUPTI);
		in_constructor = false;
		return;
	}
	/* Absolute, so that children in other directories find it too. */
	if (dladdr((void *)gw_lifecycle_preload, &di) && di.dli_fname &&
	    realpath(di.dli_fname, self_path)) {
		setenv("CUDA_INJECTION64_PATH", self_path, 1);
		debug(1, "waiting for InitializeInjection (CUDA_INJECTION64_PATH)");
		return;
	}
	in_constructor = true;
	gw_lifecycle_start();
	in_constructor = false;
}

void gw_lifecycle_configure(void)
{
	load_config();
}

void gw_lifecycle_exit(void)
{
	at_exit();
}

/* What execve will find for file (with the PATH search of execvp when path_search): whether
 * it is a regular file this process may execute. A failing attempt (Python's os.execvp tries
 * each PATH entry in turn) must not end the trace. */
static bool exec_would_run(const char *file, bool path_search)
{
	const char *path = secure_getenv("PATH");
	char full[PATH_MAX];
	struct stat st;

	if (!file || !*file)
		return false;
	if (!path_search || strchr(file, '/'))
		return stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0;
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int n = end == p ? snprintf(full, sizeof(full), "%s", file)
				 : snprintf(full, sizeof(full), "%.*s/%s", (int)(end - p), p, file);

		if (n > 0 && n < (int)sizeof(full) && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(full, X_OK) == 0)
			return true;
		if (!*end)
			return false;
		p = end;
	}
}

void gw_lifecycle_before_exec(const char *file, bool path_search, int fd)
{
	struct stat st;

	/* only the process that owns the trace: not a fork or vfork child (a vfork child shares
	 * this memory, and its exec must touch nothing of the parent's) */
	if (!writer_running || getpid() != trace_pid)
		return;
	if (fd >= 0 ? fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)
		    : !exec_would_run(file, path_search))
		return;
	finish(GW_FOOTER_EXEC);
	ended_by_exec = true;
}

void gw_lifecycle_exec_failed(int err)
{
	if (ended_by_exec && getpid() == trace_pid) {
		ended_by_exec = false;
		say("an exec failed (%s) after gpuwhy closed this image's trace for it: the rest "
		    "of "
		    "this image is not recorded (%s)",
		    strerror(err), trace_path);
	}
}

void gw_lifecycle_injection(void)
{
	load_config();
	if (!config.disable)
		gw_lifecycle_start();
}
