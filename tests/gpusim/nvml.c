/* SPDX-License-Identifier: MIT */
/*
 * libnvidia-ml.so.1 of the simulated GPU (a TEST DOUBLE): NVML's device lookup, GPM metrics and
 * utilization samples, computed from gpusim's own timeline (libcudart.so.13, whose state it
 * shares: gw_sim_activity). Each kernel uses the device as the GPUSIM_KERNEL_DRAM, _SM and
 * _TENSOR knobs say; nothing here is a measurement. GPUSIM_NVML picks what NVML does:
 *   off (default)  nvmlInit answers NVML_ERROR_DRIVER_NOT_LOADED, as without NVIDIA's driver
 *   gpm            the device supports GPM (Hopper and later), and has utilization samples
 *   samples        no GPM (before Hopper): utilization samples only
 *   refuse         nvmlInit answers NVML_ERROR_NO_PERMISSION
 *   hang           as gpm, but every GPM sample after the first blocks for ever
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <nvml.h>

#include "gpusim.h"

enum mode { MODE_OFF, MODE_GPM, MODE_SAMPLES, MODE_REFUSE, MODE_HANG };

struct nvmlDevice_st {
	uint32_t index; /* the CUDA ordinal: gpusim's devices are all visible, in order */
};

struct nvmlGpmSample_st {
	uint64_t t_ns;
	uint32_t device;
};

#define MAX_DEVICES 8 /* GPUSIM_DEVICES' limit */

static struct nvmlDevice_st devices[MAX_DEVICES] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static pthread_once_t once = PTHREAD_ONCE_INIT;
static enum mode mode;
static int inits;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* utilization samples: the driver's own period, and where its grid of samples starts */
static uint64_t sample_period_ns, samples_origin_ns;
static int64_t wall_minus_timeline_ns;

static void read_mode(void)
{
	const char *m = getenv("GPUSIM_NVML");
	const char *p = getenv("GPUSIM_NVML_SAMPLE_MS");
	double ms = p && *p ? strtod(p, NULL) : 0;

	mode = !m		       ? MODE_OFF
	       : !strcmp(m, "gpm")     ? MODE_GPM
	       : !strcmp(m, "samples") ? MODE_SAMPLES
	       : !strcmp(m, "refuse")  ? MODE_REFUSE
	       : !strcmp(m, "hang")    ? MODE_HANG
				       : MODE_OFF;
	/* NVIDIA's drivers keep a utilization sample every 1/6 s to 1 s, by GPU */
	sample_period_ns = ms > 0 ? (uint64_t)(ms * 1e6) : 166666667u;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

nvmlReturn_t nvmlInit_v2(void)
{
	pthread_once(&once, read_mode);
	if (mode == MODE_OFF)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (mode == MODE_REFUSE)
		return NVML_ERROR_NO_PERMISSION;
	pthread_mutex_lock(&lock);
	if (!inits++) {
		samples_origin_ns = gw_sim_now_ns();
		wall_minus_timeline_ns = (int64_t)wall_ns() - (int64_t)samples_origin_ns;
	}
	pthread_mutex_unlock(&lock);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (inits > 0)
		inits--;
	else
		r = NVML_ERROR_UNINITIALIZED;
	pthread_mutex_unlock(&lock);
	return r;
}

static bool initialized(void)
{
	bool r;

	pthread_mutex_lock(&lock);
	r = inits > 0;
	pthread_mutex_unlock(&lock);
	return r;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND:
		return "Not Found";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

static uint32_t device_count(void)
{
	uint32_t n = gw_sim_config()->devices;

	return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

/* The handle, or NULL for one that is not a device of this NVML. */
static struct nvmlDevice_st *device_of(nvmlDevice_t d)
{
	return d >= devices && d < devices + device_count() ? d : NULL;
}

/* NVML's text of device d's uuid (the bytes CUPTI and cudaGetDeviceProperties give). */
static void uuid_text(uint32_t d, char *buf, size_t size)
{
	unsigned char u[16];

	memcpy(u, "gpusim-device-00", 16);
	u[15] = (unsigned char)('0' + d);

	snprintf(buf, size,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = device_count();
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= device_count())
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devices[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	char mine[NVML_DEVICE_UUID_V2_BUFFER_SIZE];

	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (uint32_t d = 0; d < device_count(); d++) {
		uuid_text(d, mine, sizeof(mine));
		if (!strcasecmp(uuid, mine)) {
			*device = &devices[d];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device_of(device) || !uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (length < NVML_DEVICE_UUID_V2_BUFFER_SIZE)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	uuid_text(device->index, uuid, length);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device_of(device) || !name || !length)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(name, length, "%s", GW_SIM_DEVICE_NAME);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device_of(device) || !gpmSupport || gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_INVALID_ARGUMENT;
	gpmSupport->isSupportedDevice = mode == MODE_GPM || mode == MODE_HANG;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
	if (!gpmSample)
		return NVML_ERROR_INVALID_ARGUMENT;
	*gpmSample = calloc(1, sizeof(**gpmSample));
	return *gpmSample ? NVML_SUCCESS : NVML_ERROR_MEMORY;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
	free(gpmSample);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
	static int taken;

	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device_of(device) || !gpmSample)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (mode != MODE_GPM && mode != MODE_HANG)
		return NVML_ERROR_NOT_SUPPORTED;
	if (mode == MODE_HANG && __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED))
		for (;;)
			pause();
	gpmSample->t_ns = gw_sim_now_ns();
	gpmSample->device = device->index;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
	struct gw_sim_activity act;

	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!m || m->version != NVML_GPM_METRICS_GET_VERSION || !m->sample1 || !m->sample2 ||
	    m->numMetrics > NVML_GPM_METRIC_MAX || m->sample2->t_ns <= m->sample1->t_ns ||
	    m->sample1->device != m->sample2->device)
		return NVML_ERROR_INVALID_ARGUMENT;
	gw_sim_activity(m->sample1->device, m->sample1->t_ns, m->sample2->t_ns, &act);
	for (unsigned i = 0; i < m->numMetrics; i++) {
		nvmlGpmMetric_t *x = &m->metrics[i];

		x->nvmlReturn = NVML_SUCCESS;
		switch (x->metricId) {
		case NVML_GPM_METRIC_DRAM_BW_UTIL:
			x->value = 100 * act.mean.dram;
			break;
		case NVML_GPM_METRIC_SM_UTIL:
			x->value = 100 * act.mean.sm;
			break;
		case NVML_GPM_METRIC_SM_OCCUPANCY:
			x->value = 100 * act.mean.occupancy;
			break;
		case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
			x->value = 100 * act.mean.tensor;
			break;
		default:
			x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			x->value = 0;
		}
	}
	return NVML_SUCCESS;
}

/*
 * The driver's utilization samples: one every sample period from nvmlInit on, each the share
 * of the period before it with a kernel running (GPU) or with device memory in use (memory),
 * stamped in microseconds of the wall clock. The newest 120 are kept, as the driver keeps a
 * bounded buffer.
 */
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
				  unsigned long long lastSeenTimeStamp,
				  nvmlValueType_t *sampleValType, unsigned int *sampleCount,
				  nvmlSample_t *samples)
{
	uint64_t now = gw_sim_now_ns(), first, k_first, k_last;
	unsigned int n = 0;

	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device_of(device) || !sampleCount || !sampleValType || (samples && !*sampleCount))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type != NVML_GPU_UTILIZATION_SAMPLES && type != NVML_MEMORY_UTILIZATION_SAMPLES)
		return NVML_ERROR_NOT_SUPPORTED;
	*sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
	k_last = (now - samples_origin_ns) / sample_period_ns;
	k_first = k_last > 119 ? k_last - 119 : 1;
	if (!samples) {
		*sampleCount = k_last >= 1 ? (unsigned int)(k_last - k_first + 1) : 0;
		return NVML_SUCCESS;
	}
	/* the first sample newer than lastSeenTimeStamp */
	first = k_first;
	if (lastSeenTimeStamp) {
		int64_t seen = (int64_t)lastSeenTimeStamp * 1000 - wall_minus_timeline_ns;
		/* about there: the stamps' rounding to microseconds is settled below */
		uint64_t k = seen <= (int64_t)samples_origin_ns
				     ? 0
				     : ((uint64_t)seen - samples_origin_ns) / sample_period_ns;

		if (k > first)
			first = k;
	}
	for (uint64_t k = first; k <= k_last && n < *sampleCount; k++) {
		uint64_t t1 = samples_origin_ns + k * sample_period_ns;
		uint64_t stamp_us = (uint64_t)((int64_t)t1 + wall_minus_timeline_ns) / 1000;
		struct gw_sim_activity act;
		double share;

		if (stamp_us <= lastSeenTimeStamp)
			continue;
		gw_sim_activity(device->index, t1 - sample_period_ns, t1, &act);
		share = type == NVML_GPU_UTILIZATION_SAMPLES ? act.kernel_busy : act.memory_busy;
		samples[n].timeStamp = stamp_us;
		samples[n].sampleValue.uiVal = (unsigned int)(100 * share + 0.5);
		n++;
	}
	*sampleCount = n;
	return n ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}
