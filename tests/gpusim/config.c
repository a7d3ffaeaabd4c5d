/* SPDX-License-Identifier: MIT */
/* The GPUSIM_* knobs: one table of names and defaults, read once from the environment. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static double env_num(const char *name, double def)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return def;
	return v;
}

static uint64_t us_to_ns(double us)
{
	return (uint64_t)(us * 1000.0 + 0.5);
}

/* "substr=us,substr=us"; malformed entries are skipped. */
static void parse_kernel_us(struct gw_sim_config *cfg, const char *spec)
{
	size_t n = 1, i = 0;
	char *copy, *tok, *save = NULL;

	for (const char *p = spec; *p; p++)
		n += *p == ',';
	cfg->kernel_us = calloc(n, sizeof(*cfg->kernel_us));
	copy = strdup(spec);
	if (!cfg->kernel_us || !copy)
		goto out;
	for (tok = strtok_r(copy, ",", &save); tok && i < n; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(tok, '='), *end;
		double us;

		if (!eq || eq == tok)
			continue;
		us = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || us < 0)
			continue;
		*eq = '\0';
		cfg->kernel_us[i].substr = strdup(tok);
		if (!cfg->kernel_us[i].substr)
			break;
		cfg->kernel_us[i].wave_ns = us_to_ns(us);
		i++;
	}
out:
	cfg->n_kernel_us = i;
	free(copy);
}

void gw_sim_config_load(struct gw_sim_config *cfg)
{
	const char *ku = getenv("GPUSIM_KERNEL_US");
	const char *nested = getenv("GPUSIM_NESTED_CORRELATION");
	const char *gpu_corr = getenv("GPUSIM_GPU_CORRELATION");
	double sms = env_num("GPUSIM_SMS", 132);
	double depth = env_num("GPUSIM_QUEUE_DEPTH", 1024);

	memset(cfg, 0, sizeof(*cfg));
	cfg->sms = sms >= 1 ? (uint32_t)sms : 132;
	cfg->mem_bytes = (uint64_t)(env_num("GPUSIM_MEM_GB", 80) * (double)(1ull << 30));
	cfg->launch_ns = us_to_ns(env_num("GPUSIM_LAUNCH_US", 4));
	cfg->queue_ns = us_to_ns(env_num("GPUSIM_QUEUE_US", 1));
	cfg->wave_ns = us_to_ns(env_num("GPUSIM_WAVE_US", 5));
	cfg->init_ns = us_to_ns(env_num("GPUSIM_INIT_MS", 0) * 1000.0);
	cfg->module_load_ns = us_to_ns(env_num("GPUSIM_MODULE_LOAD_US", 0));
	cfg->copy_ns = us_to_ns(env_num("GPUSIM_COPY_US", 5));
	cfg->h2d_gbps = env_num("GPUSIM_H2D_GBPS", 25);
	cfg->d2h_gbps = env_num("GPUSIM_D2H_GBPS", 25);
	cfg->d2d_gbps = env_num("GPUSIM_D2D_GBPS", 1500);
	cfg->queue_depth = depth >= 1 ? (uint32_t)depth : 1024;
	cfg->nested_shared_correlation = nested && !strcmp(nested, "shared");
	cfg->gpu_driver_correlation = gpu_corr && !strcmp(gpu_corr, "driver");
	if (ku && *ku)
		parse_kernel_us(cfg, ku);
}

uint64_t gw_sim_kernel_wave_ns(const struct gw_sim_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_kernel_us; i++)
		if (name && strstr(name, cfg->kernel_us[i].substr))
			return cfg->kernel_us[i].wave_ns;
	return cfg->wave_ns;
}
