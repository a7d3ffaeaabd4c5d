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

#include "subscriber.h"
#include "capture-state.h"
#include "clock.h"
#include "config.h"
#include "intern.h"
#include "modules.h"
#include "output-path.h"
#include "trace-writer.h"

/* Host records reach the file within this; CUPTI's buffers are flushed as often, so anything
 * older than about twice this survives a SIGKILL. */
#define WRITER_FLUSH_NS 50000000ull
#define SIGNAL_FLUSH_NS 200000000ull

static struct gw_config config;
static bool config_loaded;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool start_attempted;	   /* this process image tried (a fork child inherits it) */
static bool cupti_ready;	   /* subscribed and enabled: inherited by fork children */
static bool writer_running;	   /* this process's trace is open */
static _Atomic bool child_pending; /* fork child of a capturing parent, no trace yet */
/* The process the library was loaded into: a trace started under another pid is a fork
 * child's, whether or not the parent was capturing when it forked. */
static pid_t loaded_pid;
static bool exit_registered;
static bool in_constructor;
static _Atomic bool exit_pending; /* atexit to register at the first event, after main began */
static char trace_path[PATH_MAX];
static int trace_fd = -1; /* owned by the writer; only fstat'ed here */
static struct sigaction previous_term, previous_int;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void at_exit(void);
static bool wake(void);
static void thread_first_event(void);

/* One line on stderr; only at start, at exit and on failures, never on the event path. */
static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n = snprintf(line, sizeof(line), "gpuwhy: ");

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

static void load_config(void)
{
	const char *invalid = NULL;
	int r;

	if (config_loaded)
		return;
	config_loaded = true;
	gw_lifecycle =
		(struct gw_lifecycle_hooks){.wake = wake, .thread_first_event = thread_first_event};
	r = gw_config_from_env(&config, &invalid);
	gw_stacks_on = config.stacks;
	if (r < 0)
		say("ignoring invalid %s=%s", invalid, secure_getenv(invalid));
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
static int stop_writer(bool clean)
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
	r = gw_writer_stop(clean, 0);
	sigpending(&pending);
	if (!was_pending && sigismember(&pending, SIGXFSZ))
		sigtimedwait(&xfsz, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static void at_exit(void)
{
	struct gw_writer_stats stats;
	struct stat st;
	bool removed;
	int r;

	if (!writer_running)
		return;
	atomic_store(&gw_capture_on, false);
	gw_cupti_flusher_stop();
	/* GPU records still in CUPTI's buffers become trace records before the footer. */
	if (cupti_ready)
		gw_cupti_flush(true);
	gw_cupti_set_activity(false);
	/* Writes to a file unlinked under us (its directory removed) all succeed: without this
	 * check the run would end saying where a trace is that nobody can read. */
	removed = fstat(trace_fd, &st) == 0 && st.st_nlink == 0;
	r = stop_writer(true);
	writer_running = false;
	gw_writer_get_stats(&stats);
	if (r < 0)
		say("writing %s failed (%s): the trace ends early", trace_path, strerror(-r));
	if (removed)
		say("%s was removed while the program ran: the trace is lost", trace_path);
	else if (!config.quiet)
		say("trace %s: %llu events, %llu bytes, %llu dropped", trace_path,
		    (unsigned long long)stats.records, (unsigned long long)stats.bytes_written,
		    (unsigned long long)stats.dropped);
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
	/* Only this thread exists now; the parent's writer, flusher and ids are not ours. */
	atomic_store(&gw_capture_on, false);
	gw_cupti_set_activity(false);
	if (writer_running) {
		gw_writer_atfork_child();
		writer_running = false;
		atomic_store(&child_pending, cupti_ready);
	}
	gw_cupti_flusher_forget();
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

static void start_locked(bool child)
{
	static char host[256], command[4096];
	struct gw_writer_options opt = {.flush_interval_ns = WRITER_FLUSH_NS};
	struct gw_rec_header hdr;
	struct timespec real;
	char why[768] = "";
	bool have_cupti = child && cupti_ready;
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
	fd = gw_output_open(trace_path);
	if (fd < 0) {
		say("cannot create trace %s: %s%s: capture disabled", trace_path, strerror(-fd),
		    fd == -EEXIST ? " (never overwritten)" : "");
		return;
	}
	if (!child) {
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
	r = gw_writer_start(&opt, &hdr);
	if (r < 0) {
		say("cannot start the trace writer for %s: %s: capture disabled", trace_path,
		    strerror(-r));
		if (have_cupti && !child)
			gw_cupti_unsubscribe();
		return;
	}
	writer_running = true;
	trace_fd = fd;
	if (!have_cupti) {
		say("%s: the trace %s will hold no GPU events", why, trace_path);
		note(GW_NOTE_WARNING, why);
	}
	gw_modules_scan();
	gw_cupti_set_activity(have_cupti);
	atomic_store(&gw_capture_on, true);
	if (have_cupti) {
		if (!child) {
			failed = gw_cupti_enable();
			cupti_ready = true;
			if (failed) {
				snprintf(why, sizeof(why),
					 "CUPTI refused %d of the callbacks and activity kinds",
					 failed);
				debug(1, "%s", why);
				note(GW_NOTE_INFO, why);
			}
		}
		if (gw_cupti_flusher_start() < 0)
			note(GW_NOTE_WARNING, "no CUPTI flusher thread: GPU records arrive late");
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

void gw_lifecycle_start(void)
{
	pthread_mutex_lock(&start_lock);
	if (!start_attempted) {
		start_attempted = true;
		start_locked(false);
	}
	pthread_mutex_unlock(&start_lock);
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
		start_locked(true);
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
 * The preload constructor's work. It makes no CUDA call. CUPTI must be subscribed before the first
 * CUDA context: when libcudart is already loaded (a DT_NEEDED of the program) that is now;
 * otherwise (static cudart, Python loading CUDA later) the driver's injection hook is the
 * right moment, so the library names itself in CUDA_INJECTION64_PATH and waits for
 * InitializeInjection. If another tool already owns that variable, start now.
 */
void gw_lifecycle_preload(void)
{
	const char *injection = secure_getenv("CUDA_INJECTION64_PATH");
	static char self_path[PATH_MAX];
	Dl_info di;

	loaded_pid = getpid();
	load_config();
	if (config.disable)
		return;
	if (injection && is_self(injection)) {
		debug(1, "waiting for InitializeInjection");
		return;
	}
	if (injection || gw_cudart_loaded()) {
		in_constructor = true;
		gw_lifecycle_start();
		in_constructor = false;
		return;
	}
	/* Absolute, so that children in other directories find it too. */
	if (dladdr((void *)gw_lifecycle_preload, &di) && di.dli_fname &&
	    realpath(di.dli_fname, self_path)) {
		setenv("CUDA_INJECTION64_PATH", self_path, 0);
		debug(1, "no libcudart yet: deferring to InitializeInjection");
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

void gw_lifecycle_injection(void)
{
	load_config();
	if (!config.disable)
		gw_lifecycle_start();
}
