/* SPDX-License-Identifier: MIT */
/*
 * The sampler of measured device counters (doc/capture.md, Measured counters). One thread,
 * started with the capture, that sleeps between samples: it loads libnvidia-ml with dlopen
 * (never linked), and for each CUDA device the program uses (matched by uuid to NVML's)
 * records GPM metrics (Hopper and later: DRAM bandwidth, SM activity, occupancy, tensor
 * pipes, each the mean over the window between two samples) or, where GPM is not supported,
 * NVML's utilization samples (share of time a kernel ran, share of time memory was busy).
 * Nothing here runs on the program's threads but gw_nvml_device_seen.
 */
#include "nvml-sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <nvml.h>

#include <gpuwhy/trace-format.h>

#include "clock.h"
#include "modules.h"
#include "trace-writer.h"

#define MAX_DEVICES   64
#define SAMPLES_BATCH 128 /* utilization samples read per call */

/* The NVML functions used, resolved by name: an older NVML lacks the GPM ones (R520 and
 * later) and still gives utilization samples. */
static struct {
	__typeof__(nvmlInit_v2) *init;
	__typeof__(nvmlShutdown) *shutdown;
	__typeof__(nvmlErrorString) *error_string;
	__typeof__(nvmlDeviceGetHandleByUUID) *handle_by_uuid;
	__typeof__(nvmlDeviceGetSamples) *get_samples;
	__typeof__(nvmlGpmQueryDeviceSupport) *gpm_support;
	__typeof__(nvmlGpmSampleAlloc) *gpm_alloc;
	__typeof__(nvmlGpmSampleFree) *gpm_free;
	__typeof__(nvmlGpmSampleGet) *gpm_sample;
	__typeof__(nvmlGpmMetricsGet) *gpm_metrics;
} nv;

/* CUDA devices (ordinals below 64) the program made calls on: gw_nvml_device_used. */
static _Atomic uint64_t used_mask;

/* The driver's device queries, for a device used before CUPTI's DEVICE record came (CUPTI
 * may hold it back in a buffer with records of unfinished work). */
static CUresult (*cu_device_get)(CUdevice *, int);
static CUresult (*cu_device_uuid)(CUuuid *, CUdevice);

/* Devices CUPTI described: filled by gw_nvml_device_seen. */
static struct seen_device {
	_Atomic uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t device;
	uint8_t uuid[16];
} seen[MAX_DEVICES];

/* The devices being sampled: the sampler thread's alone. */
struct sampled_device {
	uint32_t device;
	nvmlDevice_t handle;
	enum gw_sampler_source source;
	nvmlGpmSample_t gpm[2];	       /* the previous sample and the next one */
	unsigned gpm_prev;	       /* index of the previous one */
	uint64_t prev_ns;	       /* when the previous sample was taken */
	unsigned long long last_us[2]; /* samples: the newest timestamp read, per type */
};

static struct sampled_device sampled[MAX_DEVICES];
static uint64_t adopted; /* ordinals the sampler has looked up */
static unsigned n_sampled;

static pthread_t thread;
static bool running;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static bool stop_asked, finished;
static _Atomic bool abandoned; /* the exit gave up on the thread: it emits nothing more */
static char library[4096];
static uint64_t period_ns;
static nvmlGpmMetricsGet_t metrics; /* large (a slot per GPM metric): the thread's own */

void gw_nvml_device_seen(uint32_t device, const uint8_t uuid[16])
{
	for (unsigned i = 0; i < MAX_DEVICES; i++) {
		uint32_t s = atomic_load(&seen[i].state);

		if (s == 2 && seen[i].device == device)
			return;
		if (s == 0) {
			uint32_t expected = 0;

			if (!atomic_compare_exchange_strong(&seen[i].state, &expected, 1))
				continue;
			seen[i].device = device;
			memcpy(seen[i].uuid, uuid, 16);
			atomic_store(&seen[i].state, 2);
			return;
		}
	}
}

void gw_nvml_device_used(uint32_t device)
{
	uint64_t bit = device < 64 ? 1ull << device : 0;

	if (bit && !(atomic_load_explicit(&used_mask, memory_order_relaxed) & bit))
		atomic_fetch_or(&used_mask, bit);
}

static void emit_sampler(uint64_t device, enum gw_sampler_source source, uint64_t status,
			 const char *reason, const char *uuid)
{
	struct gw_rec_sampler r = {
		.time_ns = gw_now_ns(),
		.device = device,
		.source = source,
		.period_ns = period_ns,
		.status = status,
		.reason = {(const uint8_t *)reason, reason ? (uint32_t)strlen(reason) : 0},
		.uuid = {(const uint8_t *)uuid, uuid ? (uint32_t)strlen(uuid) : 0},
	};

	if (!atomic_load(&abandoned))
		gw_emit(GW_REC_SAMPLER, &r);
}

static void emit_metric(uint32_t device, enum gw_counter counter, uint64_t t0, uint64_t t1,
			double percent)
{
	struct gw_rec_metric r = {
		.device = device,
		.counter = counter,
		.start_ns = t0,
		.end_ns = t1,
	};

	/* NVML's percentages are 0-100; a value outside (or NaN) is clamped, not trusted */
	if (!(percent > 0))
		percent = 0;
	if (percent > 100)
		percent = 100;
	r.value = (uint64_t)(percent * (GW_METRIC_SCALE / 100) + 0.5);
	if (!atomic_load(&abandoned))
		gw_emit(GW_REC_METRIC, &r);
}

static const char *nvml_error(nvmlReturn_t r)
{
	const char *s = nv.error_string ? nv.error_string(r) : NULL;

	return s ? s : "unknown error";
}

/* Loads NVML and initializes it; on failure, the reason (and NVML's return code). */
static int load_nvml(char *why, size_t size, nvmlReturn_t *ret_status)
{
	const char *path = library[0] ? library : "libnvidia-ml.so.1";
	nvmlReturn_t r;
	void *h;

	/* A fork while this thread holds the loader's lock would leave it held in the child,
	 * whose own first dlopen (CUDA's) would wait for ever: fork waits for the load. */
	gw_modules_walk_begin(true);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	gw_modules_walk_end();

	*ret_status = NVML_SUCCESS;
	if (!h) {
		const char *e = dlerror();

		snprintf(why, size, "NVML could not be loaded (%.400s)", e ? e : path);
		return -ENOENT;
	}
#define SYM(field, name) *(void **)&nv.field = dlsym(h, name)
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(error_string, "nvmlErrorString");
	SYM(handle_by_uuid, "nvmlDeviceGetHandleByUUID");
	SYM(get_samples, "nvmlDeviceGetSamples");
	SYM(gpm_support, "nvmlGpmQueryDeviceSupport");
	SYM(gpm_alloc, "nvmlGpmSampleAlloc");
	SYM(gpm_free, "nvmlGpmSampleFree");
	SYM(gpm_sample, "nvmlGpmSampleGet");
	SYM(gpm_metrics, "nvmlGpmMetricsGet");
#undef SYM
	if (!nv.init || !nv.shutdown || !nv.handle_by_uuid) {
		snprintf(why, size,
			 "%.400s lacks nvmlInit_v2 or nvmlDeviceGetHandleByUUID (too old)", path);
		return -ENOSYS;
	}
	if (!nv.gpm_support || !nv.gpm_alloc || !nv.gpm_free || !nv.gpm_sample || !nv.gpm_metrics)
		nv.gpm_support = NULL; /* an NVML before GPM: utilization samples only */
	r = nv.init();
	if (r != NVML_SUCCESS) {
		*ret_status = r;
		snprintf(why, size, "NVML refused to start: nvmlInit: %s (%d)", nvml_error(r),
			 (int)r);
		nv.init = NULL;
		return -EPERM;
	}
	return 0;
}

static unsigned long long realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* Starts sampling a device the program uses: GPM when the device supports it, else
 * utilization samples, else a SAMPLER record saying why neither. */
static void adopt(uint32_t device, const uint8_t u[16])
{
	struct sampled_device *s = &sampled[n_sampled];
	char uuid[48], why[256];
	nvmlReturn_t r;

	snprintf(uuid, sizeof(uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	memset(s, 0, sizeof(*s));
	s->device = device;
	r = nv.handle_by_uuid(uuid, &s->handle);
	if (r != NVML_SUCCESS) {
		snprintf(why, sizeof(why), "NVML does not know CUDA device %u (%s): %s (%d)",
			 device, uuid, nvml_error(r), (int)r);
		emit_sampler(device, GW_SAMPLER_NONE, r, why, uuid);
		return;
	}
	if (nv.gpm_support) {
		nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};

		if (nv.gpm_support(s->handle, &support) == NVML_SUCCESS &&
		    support.isSupportedDevice && nv.gpm_alloc(&s->gpm[0]) == NVML_SUCCESS) {
			if (nv.gpm_alloc(&s->gpm[1]) == NVML_SUCCESS &&
			    nv.gpm_sample(s->handle, s->gpm[0]) == NVML_SUCCESS) {
				s->prev_ns = gw_now_ns();
				s->source = GW_SAMPLER_GPM;
			} else {
				nv.gpm_free(s->gpm[0]);
				if (s->gpm[1])
					nv.gpm_free(s->gpm[1]);
				s->gpm[0] = s->gpm[1] = NULL;
			}
		}
	}
	if (!s->source && nv.get_samples) {
		nvmlValueType_t type;
		unsigned int count = 0;

		/* A count query: the device keeps utilization samples, or says why not. */
		r = nv.get_samples(s->handle, NVML_GPU_UTILIZATION_SAMPLES, 0, &type, &count, NULL);
		if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_FOUND) {
			s->source = GW_SAMPLER_SAMPLES;
			s->last_us[0] = s->last_us[1] = realtime_us();
		}
	}
	if (!s->source) {
		snprintf(why, sizeof(why),
			 "CUDA device %u supports neither GPM metrics nor utilization samples: %s",
			 device, nv.get_samples ? nvml_error(r) : "no nvmlDeviceGetSamples");
		emit_sampler(device, GW_SAMPLER_NONE, r, why, uuid);
		return;
	}
	emit_sampler(device, s->source, 0, NULL, uuid);
	n_sampled++;
}

static void stop_device(struct sampled_device *s, nvmlReturn_t r, const char *what)
{
	char why[256];

	snprintf(why, sizeof(why), "CUDA device %u: %s failed: %s (%d); sampling stopped",
		 s->device, what, nvml_error(r), (int)r);
	emit_sampler(s->device, GW_SAMPLER_NONE, r, why, NULL);
	if (s->gpm[0])
		nv.gpm_free(s->gpm[0]);
	if (s->gpm[1])
		nv.gpm_free(s->gpm[1]);
	s->gpm[0] = s->gpm[1] = NULL;
	s->source = GW_SAMPLER_NONE;
}

static void sample_gpm(struct sampled_device *s)
{
	static const struct {
		unsigned id;
		enum gw_counter counter;
	} wanted[] = {
		{NVML_GPM_METRIC_DRAM_BW_UTIL, GW_COUNTER_DRAM_BW_UTIL},
		{NVML_GPM_METRIC_SM_UTIL, GW_COUNTER_SM_UTIL},
		{NVML_GPM_METRIC_SM_OCCUPANCY, GW_COUNTER_SM_OCCUPANCY},
		{NVML_GPM_METRIC_ANY_TENSOR_UTIL, GW_COUNTER_TENSOR_UTIL},
	};
	unsigned next = 1 - s->gpm_prev;
	uint64_t t0 = gw_now_ns(), t1;
	nvmlReturn_t r = nv.gpm_sample(s->handle, s->gpm[next]);

	/* the sample's time: the middle of the call that took it */
	t1 = t0 + (gw_now_ns() - t0) / 2;
	if (r != NVML_SUCCESS) {
		stop_device(s, r, "nvmlGpmSampleGet");
		return;
	}
	memset(&metrics, 0, sizeof(metrics));
	metrics.version = NVML_GPM_METRICS_GET_VERSION;
	metrics.numMetrics = sizeof(wanted) / sizeof(wanted[0]);
	metrics.sample1 = s->gpm[s->gpm_prev];
	metrics.sample2 = s->gpm[next];
	for (unsigned i = 0; i < metrics.numMetrics; i++)
		metrics.metrics[i].metricId = wanted[i].id;
	r = nv.gpm_metrics(&metrics);
	if (r != NVML_SUCCESS) {
		stop_device(s, r, "nvmlGpmMetricsGet");
		return;
	}
	for (unsigned i = 0; i < metrics.numMetrics; i++)
		if (metrics.metrics[i].nvmlReturn == NVML_SUCCESS)
			emit_metric(s->device, wanted[i].counter, s->prev_ns, t1,
				    metrics.metrics[i].value);
	s->gpm_prev = next;
	s->prev_ns = t1;
}

static double sample_value(nvmlValueType_t type, const nvmlValue_t *v)
{
	switch (type) {
	case NVML_VALUE_TYPE_DOUBLE:
		return v->dVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		return (double)v->ulVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		return (double)v->ullVal;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		return (double)v->sllVal;
	case NVML_VALUE_TYPE_SIGNED_INT:
		return (double)v->siVal;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT:
		return (double)v->usVal;
	default:
		return (double)v->uiVal;
	}
}

/*
 * Utilization samples: the driver keeps its own (every 1/6 s to 1 s, by GPU), stamped in
 * microseconds of the wall clock; each covers the time since the one before. They are put on
 * the trace clock through the offset between the two clocks now.
 */
static void sample_utilization(struct sampled_device *s)
{
	static const struct {
		nvmlSamplingType_t type;
		enum gw_counter counter;
	} kinds[2] = {
		{NVML_GPU_UTILIZATION_SAMPLES, GW_COUNTER_GPU_BUSY},
		{NVML_MEMORY_UTILIZATION_SAMPLES, GW_COUNTER_MEMORY_BUSY},
	};
	static nvmlSample_t buf[SAMPLES_BATCH];

	for (unsigned k = 0; k < 2; k++) {
		int64_t offset = (int64_t)(realtime_us() * 1000ull) - (int64_t)gw_now_ns();
		unsigned int count = SAMPLES_BATCH;
		nvmlValueType_t type;
		nvmlReturn_t r =
			nv.get_samples(s->handle, kinds[k].type, s->last_us[k], &type, &count, buf);

		if (r == NVML_ERROR_NOT_FOUND)
			continue; /* nothing new */
		if (r != NVML_SUCCESS) {
			stop_device(s, r, "nvmlDeviceGetSamples");
			return;
		}
		for (unsigned i = 0; i < count && i < SAMPLES_BATCH; i++) {
			unsigned long long ts = buf[i].timeStamp;

			if (ts <= s->last_us[k])
				continue;
			emit_metric(s->device, kinds[k].counter,
				    (uint64_t)((int64_t)(s->last_us[k] * 1000ull) - offset),
				    (uint64_t)((int64_t)(ts * 1000ull) - offset),
				    sample_value(type, &buf[i].sampleValue));
			s->last_us[k] = ts;
		}
	}
}

static void sample_all(void)
{
	for (unsigned i = 0; i < n_sampled; i++) {
		if (sampled[i].source == GW_SAMPLER_GPM)
			sample_gpm(&sampled[i]);
		else if (sampled[i].source == GW_SAMPLER_SAMPLES)
			sample_utilization(&sampled[i]);
	}
}

/* A used device's uuid: CUPTI's, else the driver's (the same bytes). */
static bool device_uuid(uint32_t device, uint8_t uuid[16])
{
	CUdevice dev;
	CUuuid u;

	for (unsigned i = 0; i < MAX_DEVICES; i++)
		if (atomic_load(&seen[i].state) == 2 && seen[i].device == device) {
			memcpy(uuid, seen[i].uuid, 16);
			return true;
		}
	if (!cu_device_get) {
		/* libcuda is loaded (CUPTI runs on it): take its functions, never load it */
		void *h;

		gw_modules_walk_begin(true);
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		gw_modules_walk_end();

		*(void **)&cu_device_get = dlsym(h ? h : RTLD_DEFAULT, "cuDeviceGet");
		*(void **)&cu_device_uuid = dlsym(h ? h : RTLD_DEFAULT, "cuDeviceGetUuid_v2");
		/* the reference NOLOAD took is kept: libcuda stays loaded for the process anyway */
	}
	if (!cu_device_get || !cu_device_uuid || cu_device_get(&dev, (int)device) != CUDA_SUCCESS ||
	    cu_device_uuid(&u, dev) != CUDA_SUCCESS)
		return false;
	memcpy(uuid, u.bytes, 16);
	return true;
}

static void adopt_new_devices(void)
{
	uint64_t fresh = atomic_load(&used_mask) & ~adopted;

	for (uint32_t d = 0; fresh && n_sampled < MAX_DEVICES; d++, fresh >>= 1) {
		uint8_t uuid[16];

		/* without a uuid yet (no DEVICE record, no driver answer), next tick */
		if ((fresh & 1) && device_uuid(d, uuid)) {
			adopted |= 1ull << d;
			adopt(d, uuid);
		}
	}
}

/* What the sampler cost, for the benchmarks (an INFO note: the report does not show it). */
static double thread_cpu_us(void)
{
	struct timespec cpu;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) < 0)
		return 0;
	return (double)cpu.tv_sec * 1e6 + (double)cpu.tv_nsec / 1e3;
}

static void cost_note(uint64_t ticks, double load_us)
{
	struct gw_rec_note r = {.time_ns = gw_now_ns(), .level = GW_NOTE_INFO};
	double us = thread_cpu_us() - load_us;
	char text[200];

	snprintf(text, sizeof(text),
		 "NVML sampler: %.0f us of CPU to load and start NVML, then %llu ticks of %u "
		 "devices in %.0f us (%.1f us a tick)",
		 load_us, (unsigned long long)ticks, n_sampled, us, ticks ? us / (double)ticks : 0);
	r.text = (struct gw_bytes){(const uint8_t *)text, (uint32_t)strlen(text)};
	if (!atomic_load(&abandoned))
		gw_emit(GW_REC_NOTE, &r);
}

/* Sleeps until the trace clock reaches until_ns, or the stop; returns whether stopped. */
static bool wait_tick(uint64_t until_ns)
{
	uint64_t now = gw_now_ns(), wait = until_ns > now ? until_ns - now : 0;
	struct timespec deadline;
	bool stop;

	/* The condition variable runs on CLOCK_MONOTONIC, the trace on its raw twin: waits of a
	 * period are what matter, not their exact ends. */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(wait / 1000000000u);
	deadline.tv_nsec += (long)(wait % 1000000000u);
	deadline.tv_sec += deadline.tv_nsec / 1000000000;
	deadline.tv_nsec %= 1000000000;
	pthread_mutex_lock(&lock);
	while (!stop_asked && pthread_cond_timedwait(&wake, &lock, &deadline) != ETIMEDOUT)
		;
	stop = stop_asked;
	pthread_mutex_unlock(&lock);
	return stop;
}

static void *sampler_main(void *arg)
{
	uint64_t next_ns, last_ns, ticks = 0;
	double load_us;
	nvmlReturn_t status;
	char why[512];
	bool stop;

	(void)arg;
	/* NVML is loaded a period after the start, not during the program's own start-up (on a
	 * busy machine its loading would take the CPU from the program then): a program that
	 * ends sooner never loads it, and has no window to measure anyway. */
	if (wait_tick(gw_now_ns() + period_ns)) {
		snprintf(why, sizeof(why),
			 "the program ended within the sampler's first period (%llu ms): no "
			 "counters",
			 (unsigned long long)(period_ns / 1000000u));
		emit_sampler(UINT64_MAX, GW_SAMPLER_NONE, 0, why, NULL);
		goto out;
	}
	if (load_nvml(why, sizeof(why), &status) < 0) {
		emit_sampler(UINT64_MAX, GW_SAMPLER_NONE, status, why, NULL);
		goto out;
	}
	load_us = thread_cpu_us();
	last_ns = gw_now_ns();
	next_ns = last_ns + period_ns;
	for (;;) {
		uint64_t now;

		stop = wait_tick(next_ns);
		now = gw_now_ns();
		/* At the stop, a last window only when it is at least half a period long: a
		 * shorter one is mostly noise (GPM refreshes its counters about every 100 ms). */
		if (!stop || now - last_ns >= period_ns / 2) {
			ticks++;
			/* a device adopted now has its first sample: its first window ends at
			 * the next tick */
			sample_all();
			adopt_new_devices();
			last_ns = now;
		}
		if (stop || atomic_load(&abandoned))
			break;
		/* A tick missed (a stopped process, a loaded machine) is skipped, not caught up. */
		while (next_ns <= now)
			next_ns += period_ns;
	}
	for (unsigned i = 0; i < n_sampled; i++)
		for (unsigned k = 0; k < 2; k++)
			if (sampled[i].gpm[k])
				nv.gpm_free(sampled[i].gpm[k]);
	nv.shutdown();
	cost_note(ticks, load_us);
out:
	pthread_mutex_lock(&lock);
	finished = true;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&lock);
	/* its records go to the writer now, not at the stop's drain */
	gw_writer_thread_exit();
	return NULL;
}

int gw_nvml_sampler_start(const char *nvml_path, unsigned period_ms)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (running || !period_ms)
		return running ? -EBUSY : -EINVAL;
	snprintf(library, sizeof(library), "%s", nvml_path ? nvml_path : "");
	period_ns = (uint64_t)period_ms * 1000000u;
	n_sampled = 0;
	adopted = 0;
	stop_asked = finished = false;
	atomic_store(&abandoned, false);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &ca);
	pthread_condattr_destroy(&ca);
	/* The application's signals go to the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&thread, NULL, sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	running = !r;
	if (r < 0) {
		char why[128];

		snprintf(why, sizeof(why), "no sampler thread: %s", strerror(-r));
		emit_sampler(UINT64_MAX, GW_SAMPLER_NONE, 0, why, NULL);
	}
	return r;
}

void gw_nvml_sampler_stop(uint64_t timeout_ns)
{
	struct timespec deadline;
	bool done;

	if (!running)
		return;
	running = false;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(timeout_ns / 1000000000u);
	deadline.tv_nsec += (long)(timeout_ns % 1000000000u);
	deadline.tv_sec += deadline.tv_nsec / 1000000000;
	deadline.tv_nsec %= 1000000000;
	pthread_mutex_lock(&lock);
	stop_asked = true;
	pthread_cond_broadcast(&wake);
	while (!finished && pthread_cond_timedwait(&wake, &lock, &deadline) != ETIMEDOUT)
		;
	done = finished;
	pthread_mutex_unlock(&lock);
	if (!done) {
		/* Inside an NVML call that does not return: the program exits all the same. */
		atomic_store(&abandoned, true);
		pthread_detach(thread);
		return;
	}
	pthread_join(thread, NULL);
}

void gw_nvml_sampler_forget(void)
{
	running = false;
	pthread_mutex_init(&lock, NULL);
	for (unsigned i = 0; i < MAX_DEVICES; i++)
		atomic_store(&seen[i].state, 0);
	atomic_store(&used_mask, 0);
}
