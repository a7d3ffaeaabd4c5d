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

/* "substr=v[:w],substr=v[:w]" into rules, at most max_values numbers each; malformed entries
 * (a missing or negative number, more numbers than allowed) are skipped. */
static size_t parse_kernel_rules(const char *spec, unsigned max_values,
				 struct gw_sim_kernel_rule **ret)
{
	size_t n = 1, i = 0;
	char *copy, *tok, *save = NULL;
	struct gw_sim_kernel_rule *v;

	for (const char *p = spec; *p; p++)
		n += *p == ',';
	*ret = v = calloc(n, sizeof(*v));
	copy = strdup(spec);
	if (!v || !copy)
		goto out;
	for (tok = strtok_r(copy, ",", &save); tok && i < n; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(tok, '='), *p, *end;
		unsigned k = 0;

		if (!eq || eq == tok)
			continue;
		for (p = eq + 1; k < max_values; p = end + 1) {
			v[i].value[k] = strtod(p, &end);
			if (end == p || v[i].value[k] < 0)
				break;
			k++;
			if (*end != ':')
				break;
		}
		if (!k || *end)
			continue;
		*eq = '\0';
		v[i].n_values = k;
		if (!(v[i].substr = strdup(tok)))
			break;
		i++;
	}
out:
	free(copy);
	return i;
}

static const struct gw_sim_kernel_rule *kernel_rule(const struct gw_sim_kernel_rule *v, size_t n,
						    const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (name && strstr(name, v[i].substr))
			return &v[i];
	return NULL;
}

void gw_sim_config_load(struct gw_sim_config *cfg)
{
	const char *ku = getenv("GPUSIM_KERNEL_US");
	const char *kr = getenv("GPUSIM_KERNEL_REGS");
	const char *kd = getenv("GPUSIM_KERNEL_DRAM");
	const char *ks = getenv("GPUSIM_KERNEL_SM");
	const char *kt = getenv("GPUSIM_KERNEL_TENSOR");
	const char *nested = getenv("GPUSIM_NESTED_CORRELATION");
	const char *gpu_corr = getenv("GPUSIM_GPU_CORRELATION");
	double sms = env_num("GPUSIM_SMS", 132);
	double depth = env_num("GPUSIM_QUEUE_DEPTH", 1024);
	double green = env_num("GPUSIM_GREEN_SMS", 0);
	double devices = env_num("GPUSIM_DEVICES", 1);

	memset(cfg, 0, sizeof(*cfg));
	cfg->devices = devices >= 1 && devices <= GW_SIM_MAX_DEVICES ? (uint32_t)devices : 1;
	cfg->sms = sms >= 1 ? (uint32_t)sms : 132;
	cfg->green_sms = green >= 1 && green < cfg->sms ? (uint32_t)green : 0;
	cfg->mem_bytes = (uint64_t)(env_num("GPUSIM_MEM_GB", 80) * (double)(1ull << 30));
	cfg->launch_ns = us_to_ns(env_num("GPUSIM_LAUNCH_US", 4));
	cfg->queue_ns = us_to_ns(env_num("GPUSIM_QUEUE_US", 1));
	cfg->wave_ns = us_to_ns(env_num("GPUSIM_WAVE_US", 5));
	cfg->init_ns = us_to_ns(env_num("GPUSIM_INIT_MS", 0) * 1000.0);
	cfg->module_load_ns = us_to_ns(env_num("GPUSIM_MODULE_LOAD_US", 0));
	cfg->hold_ns = us_to_ns(env_num("GPUSIM_HOLD_US", 0));
	cfg->copy_ns = us_to_ns(env_num("GPUSIM_COPY_US", 5));
	cfg->h2d_gbps = env_num("GPUSIM_H2D_GBPS", 25);
	cfg->d2h_gbps = env_num("GPUSIM_D2H_GBPS", 25);
	cfg->d2d_gbps = env_num("GPUSIM_D2D_GBPS", 1500);
	cfg->p2p_gbps = env_num("GPUSIM_P2P_GBPS", 400);
	cfg->queue_depth = depth >= 1 ? (uint32_t)depth : 1024;
	cfg->nested_shared_correlation = nested && !strcmp(nested, "shared");
	cfg->gpu_driver_correlation = gpu_corr && !strcmp(gpu_corr, "driver");
	if (ku && *ku)
		cfg->n_kernel_us = parse_kernel_rules(ku, 1, &cfg->kernel_us);
	if (kr && *kr)
		cfg->n_kernel_regs = parse_kernel_rules(kr, 2, &cfg->kernel_regs);
	if (kd && *kd)
		cfg->n_kernel_dram = parse_kernel_rules(kd, 1, &cfg->kernel_dram);
	if (ks && *ks)
		cfg->n_kernel_sm = parse_kernel_rules(ks, 1, &cfg->kernel_sm);
	if (kt && *kt)
		cfg->n_kernel_tensor = parse_kernel_rules(kt, 1, &cfg->kernel_tensor);
}

/* A share knob's value for a kernel (at most 1), or def when no rule matches. */
static double kernel_share(const struct gw_sim_kernel_rule *v, size_t n, const char *name,
			   double def)
{
	const struct gw_sim_kernel_rule *r = kernel_rule(v, n, name);

	return !r ? def : r->value[0] > 1 ? 1 : r->value[0];
}

void gw_sim_kernel_usage(const struct gw_sim_config *cfg, const char *name, double sm_default,
			 struct gw_sim_usage *ret)
{
	ret->dram = kernel_share(cfg->kernel_dram, cfg->n_kernel_dram, name, 0);
	ret->sm = kernel_share(cfg->kernel_sm, cfg->n_kernel_sm, name, sm_default);
	ret->tensor = kernel_share(cfg->kernel_tensor, cfg->n_kernel_tensor, name, 0);
}

uint64_t gw_sim_kernel_wave_ns(const struct gw_sim_config *cfg, const char *name)
{
	const struct gw_sim_kernel_rule *r = kernel_rule(cfg->kernel_us, cfg->n_kernel_us, name);

	return r ? us_to_ns(r->value[0]) : cfg->wave_ns;
}

void gw_sim_kernel_resources(const struct gw_sim_config *cfg, const char *name, uint32_t *ret_regs,
			     uint32_t *ret_static_smem)
{
	const struct gw_sim_kernel_rule *r =
		kernel_rule(cfg->kernel_regs, cfg->n_kernel_regs, name);

	*ret_regs = GW_SIM_REGS_PER_THREAD;
	*ret_static_smem = 0;
	if (!r)
		return;
	*ret_regs = r->value[0] > 255 ? 255 : (uint32_t)r->value[0];
	if (r->n_values > 1)
		*ret_static_smem = r->value[1] > GW_SIM_SMEM_PER_BLOCK ? GW_SIM_SMEM_PER_BLOCK
								       : (uint32_t)r->value[1];
}
