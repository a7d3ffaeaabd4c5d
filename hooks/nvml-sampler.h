/* SPDX-License-Identifier: MIT */
/* The sampler of measured device counters: a thread that reads NVML (GPM metrics, else
 * utilization samples) for the devices the program uses, into SAMPLER and METRIC records. */
#pragma once

#include <stdint.h>

/* A CUDA device CUPTI described (its DEVICE record): its uuid, so the sampler need not ask the
 * driver. Any thread; no lock, no allocation. */
void gw_nvml_device_seen(uint32_t device, const uint8_t uuid[16]);

/* The program made a CUDA call on this device (ordinal): the sampler looks it up in NVML by its
 * uuid and samples it from its next tick on. Any thread; one atomic operation. */
void gw_nvml_device_used(uint32_t device);

/*
 * Starts the sampler thread, which loads NVML itself (nvml_path, else libnvidia-ml.so.1) so
 * that the program's start pays nothing for it. Every period_ms it samples each device seen.
 * NVML missing, too old or refusing costs one SAMPLER record saying why, never the program
 * anything. Returns 0 or -errno (no thread: a SAMPLER record says so).
 */
int gw_nvml_sampler_start(const char *nvml_path, unsigned period_ms);

/* Stops the sampler: a last window when at least half a period has passed since the previous
 * one, then NVML is shut down. Waits at most timeout_ns for the thread (an NVML call that
 * does not return is left behind, and emits nothing more). Before the writer stops. */
void gw_nvml_sampler_stop(uint64_t timeout_ns);

/* In a fork child: forgets the parent's sampler without touching its thread or NVML (whose
 * state the child must not use). */
void gw_nvml_sampler_forget(void);
