/* SPDX-License-Identifier: MIT */
/* The trace clock: CLOCK_MONOTONIC_RAW nanoseconds, for host events and (through CUPTI) GPU ones. */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t gw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
