/* SPDX-License-Identifier: MIT */
/* The analysis driver: options, and the stages in order — collect (as records arrive), then
 * join, runs, steps, attribute, memory, results, sites, advice. Each stage is one file
 * (model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

void gw_analysis_options_init(struct gw_analysis_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->tiny_ns = 10000;
	opt->starve_ns = 100000;
	opt->queue_ns = 20000;
	/* CUPTI puts GPU ticks on the host clock by interpolation: offsets of 8-9 us and
	 * kernels that seem to start before their launch were reported on H100 and H200 */
	opt->skew_ns = 10000;
	opt->timeline_bins = 0; /* only the drawings need them: --html and --perfetto raise it */
	opt->symbolize = true;
	opt->top_n = 10;
}

int gw_analyzer_new(const struct gw_analysis_options *opt, struct gw_analyzer **ret)
{
	struct gw_analyzer *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	if (opt)
		a->opt = *opt;
	else
		gw_analysis_options_init(&a->opt);
	if (!a->opt.top_n)
		a->opt.top_n = 10;
	*ret = a;
	return 0;
}

int gw_analyzer_finish(struct gw_analyzer *a, struct gw_analysis **ret)
{
	struct gw_analysis *res;
	struct gw_dev_st *devs;
	int r;

	if (a->finished)
		return -EINVAL;
	a->finished = true;
	if (!a->traces.len && gw_analyzer_begin_trace(a, NULL) < 0)
		return -ENOMEM;
	res = a->res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	if ((r = gw_join(a)) < 0)
		goto fail;
	devs = a->devs.data;
	res->start_ns = UINT64_MAX;
	for (size_t d = 0; d < a->devs.len; d++) {
		if (devs[d].r.start_ns == UINT64_MAX)
			continue;
		if (devs[d].r.start_ns < res->start_ns)
			res->start_ns = devs[d].r.start_ns;
		if (devs[d].r.end_ns > res->end_ns)
			res->end_ns = devs[d].r.end_ns;
	}
	if (res->start_ns == UINT64_MAX)
		res->start_ns = res->end_ns = 0;
	if (a->opt.timeline_bins && res->end_ns > res->start_ns) {
		uint64_t dur = res->end_ns - res->start_ns;

		res->n_bins = a->opt.timeline_bins;
		res->bin_ns = dur / res->n_bins + (dur % res->n_bins != 0); /* no overflow */
		res->bins = calloc(res->n_bins, sizeof(*res->bins));
		if (!res->bins) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if ((r = gw_measure_counters(a)) < 0 || (r = gw_find_runs(a)) < 0 ||
	    (r = gw_find_steps(a)) < 0 || (r = gw_attribute(a)) < 0 ||
	    (r = gw_account_memory(a)) < 0 || (r = gw_build_results(a)) < 0 ||
	    (r = gw_build_sites(a)) < 0)
		goto fail;
	res->memory_high = res->memory.recorded && res->memory.peak_fraction >= 0.8;
	res->compute_high = res->breakdown[GW_BUCKET_COMPUTE] >= 0.6;
	if ((r = gw_advise(a)) < 0 || (r = gw_build_view(a)) < 0)
		goto fail;
	if (a->opt.keep_gaps) {
		res->n_gaps = a->gaps.len;
		res->gaps = gw_vec_detach(&a->gaps);
		if (!res->gaps && res->n_gaps) {
			r = -ENOMEM;
			goto fail;
		}
	}
	res->events_held = a->ops.len + a->apis.len + a->mevs.len;
	res->bytes_held = a->ops.len * sizeof(struct gw_op) + a->apis.len * sizeof(struct gw_api) +
			  a->mevs.len * sizeof(struct gw_mev);
	*ret = res;
	a->res = NULL;
	return 0;
fail:
	gw_analysis_free(res);
	a->res = NULL;
	return r;
}

void gw_analysis_free(struct gw_analysis *res)
{
	if (!res)
		return;
	for (unsigned i = 0; i < res->n_traces; i++) {
		free(res->traces[i].path);
		free(res->traces[i].command);
	}
	free(res->traces);
	for (unsigned i = 0; i < res->n_devices; i++)
		free(res->devices[i].name);
	free(res->devices);
	for (unsigned i = 0; i < res->n_sync_sites; i++) {
		gw_site_clear(&res->sync_sites[i].site);
		free(res->sync_sites[i].api);
	}
	free(res->sync_sites);
	for (unsigned i = 0; i < res->n_tiny_kernels; i++) {
		gw_site_clear(&res->tiny_kernels[i].site);
		free(res->tiny_kernels[i].name);
	}
	free(res->tiny_kernels);
	for (unsigned i = 0; i < res->n_kernels; i++) {
		gw_site_clear(&res->kernels[i].site);
		free(res->kernels[i].name);
	}
	free(res->kernels);
	for (unsigned i = 0; i < res->n_alloc_sites; i++)
		gw_site_clear(&res->alloc_sites[i].site);
	free(res->alloc_sites);
	for (unsigned i = 0; i < res->n_fusion; i++) {
		for (unsigned k = 0; k < res->fusion[i].n_kernels; k++)
			free(res->fusion[i].names[k]);
		free(res->fusion[i].names);
		gw_site_clear(&res->fusion[i].site);
	}
	free(res->fusion);
	for (unsigned i = 0; i < res->n_blocked; i++) {
		gw_site_clear(&res->blocked[i].site);
		gw_site_clear(&res->blocked[i].held_site);
		free(res->blocked[i].next);
		free(res->blocked[i].held_by);
	}
	free(res->blocked);
	for (unsigned i = 0; i < res->n_host_funcs; i++) {
		gw_site_clear(&res->host_funcs[i].site);
		free(res->host_funcs[i].api);
	}
	free(res->host_funcs);
	for (unsigned i = 0; i < res->n_recs; i++)
		free(res->recs[i].text);
	free(res->recs);
	for (unsigned i = 0; i < res->steps.n; i++)
		free(res->steps.steps[i].name);
	free(res->steps.steps);
	for (unsigned i = 0; i < res->steps.n_slow; i++) {
		gw_site_clear(&res->steps.slow[i].site);
		free(res->steps.slow[i].what);
	}
	free(res->steps.slow);
	for (unsigned i = 0; i < res->steps.n_names; i++)
		free(res->steps.names[i]);
	free(res->steps.names);
	free(res->steps.name_counts);
	free(res->steps.pattern);
	for (unsigned i = 0; i < res->counters.n_series; i++)
		free(res->counters.series[i].points);
	free(res->counters.series);
	for (unsigned i = 0; i < res->counters.n_estimates; i++)
		free(res->counters.estimates[i].name);
	free(res->counters.estimates);
	free(res->counters.reason);
	free(res->bins);
	free(res->gaps);
	gw_event_view_free(res->view);
	for (unsigned i = 0; i < res->n_warnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	free(res);
}
