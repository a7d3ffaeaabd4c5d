/* SPDX-License-Identifier: MIT */
/*
 * The NVML stand-in (libnvidia-ml.so.1): the device found by the uuid the runtime reports, GPM
 * metrics over two samples that follow the kernels' knobs and where the kernels ran on the
 * timeline, utilization samples, and nvmlInit's answers. One scenario per process (argv[1]):
 * GPUSIM_NVML is read once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nvml.h>

#include "sim-test.h"

#define US	  1000ull
#define KERNEL_US 2000 /* one wave of each kernel, GPUSIM_KERNEL_US */
#define N	  20
/* the windows' ends are the test's clock reads around the sample calls: microseconds off a
 * window of tens of milliseconds */
#define TOL	  0.01

static void bw_kernel(void)
{
}
static void dense_kernel(void)
{
}

static nvmlDevice_t device_by_uuid(void)
{
	struct cudaDeviceProp prop;
	const unsigned char *u;
	nvmlDevice_t dev = NULL;
	char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE], back[NVML_DEVICE_UUID_V2_BUFFER_SIZE];

	assert_int_equal(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
	u = (const unsigned char *)prop.uuid.bytes;
	snprintf(text, sizeof(text),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	assert_int_equal(nvmlDeviceGetHandleByUUID(text, &dev), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetUUID(dev, back, sizeof(back)), NVML_SUCCESS);
	assert_string_equal(back, text);
	assert_int_equal(
		nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &dev),
		NVML_ERROR_NOT_FOUND);
	assert_int_equal(nvmlDeviceGetHandleByUUID(text, &dev), NVML_SUCCESS);
	return dev;
}

/* N kernels of each kind back to back between two GPM samples: DRAM and SM are the knobs'
 * values times each kernel's share of the window. */
static void test_gpm(void **state)
{
	nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
	nvmlGpmMetricsGet_t m;
	nvmlGpmSample_t s1, s2;
	nvmlDevice_t dev;
	uint64_t t1a, t1b, t2a, t2b;
	double win_lo, win_hi, busy = 2.0 * N * KERNEL_US * US;

	(void)state;
	assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
	dev = device_by_uuid();
	assert_int_equal(nvmlGpmQueryDeviceSupport(dev, &support), NVML_SUCCESS);
	assert_int_equal(support.isSupportedDevice, 1);
	assert_int_equal(nvmlGpmSampleAlloc(&s1), NVML_SUCCESS);
	assert_int_equal(nvmlGpmSampleAlloc(&s2), NVML_SUCCESS);
	t1a = test_now_ns();
	assert_int_equal(nvmlGpmSampleGet(dev, s1), NVML_SUCCESS);
	t1b = test_now_ns();
	for (int i = 0; i < N; i++) {
		/* one full wave: 132 SMs x 8 blocks of 256 threads */
		assert_int_equal(test_launch(bw_kernel, 132 * 8, 256, 0), cudaSuccess);
		assert_int_equal(test_launch(dense_kernel, 132 * 8, 256, 0), cudaSuccess);
	}
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	usleep(10000); /* an idle stretch in the window */
	t2a = test_now_ns();
	assert_int_equal(nvmlGpmSampleGet(dev, s2), NVML_SUCCESS);
	t2b = test_now_ns();
	memset(&m, 0, sizeof(m));
	m.version = NVML_GPM_METRICS_GET_VERSION;
	m.numMetrics = 5;
	m.sample1 = s1;
	m.sample2 = s2;
	m.metrics[0].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
	m.metrics[1].metricId = NVML_GPM_METRIC_SM_UTIL;
	m.metrics[2].metricId = NVML_GPM_METRIC_SM_OCCUPANCY;
	m.metrics[3].metricId = NVML_GPM_METRIC_ANY_TENSOR_UTIL;
	m.metrics[4].metricId = NVML_GPM_METRIC_FP64_UTIL;
	assert_int_equal(nvmlGpmMetricsGet(&m), NVML_SUCCESS);
	/* the window is between the two calls' ends, somewhere within the clock reads */
	win_lo = (double)(t2a - t1b);
	win_hi = (double)(t2b - t1a);
	for (int k = 0; k < 4; k++)
		assert_int_equal(m.metrics[k].nvmlReturn, NVML_SUCCESS);
	assert_int_equal(m.metrics[4].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	/* bw_kernel: DRAM 0.9, the SMs by default (its wave covers all 132); dense_kernel: DRAM
	 * 0.1, SM 0.7; occupancy: 8 blocks of 8 warps of 64 on every SM while either runs */
	{
		double dram = (0.9 + 0.1) * busy / 2, sm = (1.0 + 0.7) * busy / 2, occ = busy;

		assert_true(m.metrics[0].value <= 100 * dram / win_lo + TOL * 100);
		assert_true(m.metrics[0].value >= 100 * dram / win_hi - TOL * 100);
		assert_true(m.metrics[1].value <= 100 * sm / win_lo + TOL * 100);
		assert_true(m.metrics[1].value >= 100 * sm / win_hi - TOL * 100);
		assert_true(m.metrics[2].value <= 100 * occ / win_lo + TOL * 100);
		assert_true(m.metrics[2].value >= 100 * occ / win_hi - TOL * 100);
		assert_true(m.metrics[3].value < 1e-9);
	}
	/* samples out of order are refused */
	m.sample1 = s2;
	m.sample2 = s1;
	assert_int_equal(nvmlGpmMetricsGet(&m), NVML_ERROR_INVALID_ARGUMENT);
	nvmlGpmSampleFree(s1);
	nvmlGpmSampleFree(s2);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

/* No GPM: utilization samples every 10 ms, each the share of its period a kernel ran; memory
 * busy while a kernel with DRAM use ran. */
static void test_samples(void **state)
{
	nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
	nvmlSample_t buf[64];
	nvmlValueType_t type;
	unsigned int count = 64;
	unsigned long long last = 0;
	nvmlDevice_t dev;
	nvmlGpmSample_t s;
	int full = 0;

	(void)state;
	assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
	dev = device_by_uuid();
	assert_int_equal(nvmlGpmQueryDeviceSupport(dev, &support), NVML_SUCCESS);
	assert_int_equal(support.isSupportedDevice, 0);
	assert_int_equal(nvmlGpmSampleAlloc(&s), NVML_SUCCESS);
	assert_int_equal(nvmlGpmSampleGet(dev, s), NVML_ERROR_NOT_SUPPORTED);
	nvmlGpmSampleFree(s);
	/* 2 x 20 x 2 ms = 80 ms of kernels: at least six whole 10 ms periods are all kernel */
	for (int i = 0; i < N; i++) {
		assert_int_equal(test_launch(bw_kernel, 132 * 8, 256, 0), cudaSuccess);
		assert_int_equal(test_launch(dense_kernel, 132 * 8, 256, 0), cudaSuccess);
	}
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	usleep(30000);
	assert_int_equal(
		nvmlDeviceGetSamples(dev, NVML_GPU_UTILIZATION_SAMPLES, 0, &type, &count, buf),
		NVML_SUCCESS);
	assert_int_equal(type, NVML_VALUE_TYPE_UNSIGNED_INT);
	assert_true(count >= 10);
	for (unsigned i = 0; i < count; i++) {
		assert_true(buf[i].sampleValue.uiVal <= 100);
		assert_true(buf[i].timeStamp > last);
		last = buf[i].timeStamp;
		full += buf[i].sampleValue.uiVal == 100;
	}
	assert_true(full >= 6);
	/* nothing newer than the newest */
	count = 64;
	assert_int_equal(nvmlDeviceGetSamples(dev, NVML_MEMORY_UTILIZATION_SAMPLES, last, &type,
					      &count, buf),
			 NVML_ERROR_NOT_FOUND);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
}

/* Two devices: each its own uuid and handle; work on device 1 shows in its counters only. */
static void test_devices(void **state)
{
	nvmlDevice_t d0, d1, by_uuid;
	nvmlGpmSample_t s[2][2];
	nvmlGpmMetricsGet_t m;
	struct cudaDeviceProp prop;
	unsigned int count;
	char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	double dram[2];

	(void)state;
	assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	assert_int_equal(count, 2);
	assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d0), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetHandleByIndex_v2(1, &d1), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetHandleByIndex_v2(2, &by_uuid), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(cudaGetDeviceProperties(&prop, 1), cudaSuccess);
	assert_int_equal(nvmlDeviceGetUUID(d1, text, sizeof(text)), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetHandleByUUID(text, &by_uuid), NVML_SUCCESS);
	assert_ptr_equal(by_uuid, d1);
	assert_int_equal((unsigned char)prop.uuid.bytes[15], (unsigned char)'1');
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++)
			assert_int_equal(nvmlGpmSampleAlloc(&s[d][k]), NVML_SUCCESS);
	assert_int_equal(nvmlGpmSampleGet(d0, s[0][0]), NVML_SUCCESS);
	assert_int_equal(nvmlGpmSampleGet(d1, s[1][0]), NVML_SUCCESS);
	assert_int_equal(cudaSetDevice(1), cudaSuccess);
	for (int i = 0; i < N; i++)
		assert_int_equal(test_launch(bw_kernel, 132 * 8, 256, 0), cudaSuccess);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(nvmlGpmSampleGet(d0, s[0][1]), NVML_SUCCESS);
	assert_int_equal(nvmlGpmSampleGet(d1, s[1][1]), NVML_SUCCESS);
	for (int d = 0; d < 2; d++) {
		memset(&m, 0, sizeof(m));
		m.version = NVML_GPM_METRICS_GET_VERSION;
		m.numMetrics = 1;
		m.sample1 = s[d][0];
		m.sample2 = s[d][1];
		m.metrics[0].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
		assert_int_equal(nvmlGpmMetricsGet(&m), NVML_SUCCESS);
		dram[d] = m.metrics[0].value;
	}
	/* device 1 ran N kernels of DRAM 0.9 back to back for most of its window */
	assert_true(dram[0] == 0);
	assert_true(dram[1] > 45 && dram[1] <= 90);
	/* samples of two devices do not make a window */
	m.sample1 = s[0][0];
	m.sample2 = s[1][1];
	assert_int_equal(nvmlGpmMetricsGet(&m), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
}

static void test_off(void **state)
{
	(void)state;
	assert_int_equal(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	assert_string_equal(nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
}

static void test_refuse(void **state)
{
	(void)state;
	assert_int_equal(nvmlInit_v2(), NVML_ERROR_NO_PERMISSION);
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "gpm";
	const struct CMUnitTest gpm[] = {cmocka_unit_test(test_gpm)};
	const struct CMUnitTest samples[] = {cmocka_unit_test(test_samples)};
	const struct CMUnitTest off[] = {cmocka_unit_test(test_off)};
	const struct CMUnitTest refuse[] = {cmocka_unit_test(test_refuse)};
	const struct CMUnitTest two[] = {cmocka_unit_test(test_devices)};

	setenv("GPUSIM_SMS", "132", 1);
	setenv("GPUSIM_KERNEL_US", "bw_=2000,dense_=2000", 1);
	setenv("GPUSIM_KERNEL_DRAM", "bw_=0.9,dense_=0.1", 1);
	setenv("GPUSIM_KERNEL_SM", "dense_=0.7", 1);
	setenv("GPUSIM_NVML_SAMPLE_MS", "10", 1);
	test_register_kernel(bw_kernel, "_Z9bw_kernelv");
	test_register_kernel(dense_kernel, "_Z12dense_kernelv");
	if (!strcmp(scenario, "samples")) {
		setenv("GPUSIM_NVML", "samples", 1);
		return cmocka_run_group_tests(samples, NULL, NULL);
	}
	if (!strcmp(scenario, "off")) {
		unsetenv("GPUSIM_NVML");
		return cmocka_run_group_tests(off, NULL, NULL);
	}
	if (!strcmp(scenario, "devices")) {
		setenv("GPUSIM_NVML", "gpm", 1);
		setenv("GPUSIM_DEVICES", "2", 1);
		return cmocka_run_group_tests(two, NULL, NULL);
	}
	if (!strcmp(scenario, "refuse")) {
		setenv("GPUSIM_NVML", "refuse", 1);
		return cmocka_run_group_tests(refuse, NULL, NULL);
	}
	setenv("GPUSIM_NVML", "gpm", 1);
	return cmocka_run_group_tests(gpm, NULL, NULL);
}
