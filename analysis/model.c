/* SPDX-License-Identifier: MIT */
/* The analysis's model: device and string lookups, and freeing the tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Device table index for (trace, device id), created on first sight. */
int gw_an_device(struct gw_analyzer *a, unsigned trace, uint64_t id)
{
	bool fresh;
	uint64_t *v;
	struct gw_dev_st *d;

	if (a->last_dev > 0 && a->last_dev_trace == trace && a->last_dev_id == id)
		return a->last_dev - 1;
	v = gw_hmap_get(&a->dev_map, trace, id, &fresh);
	if (!v)
		return -ENOMEM;
	if (!fresh) {
		a->last_dev_trace = trace;
		a->last_dev_id = id;
		a->last_dev = (int)*v;
		return (int)(*v - 1);
	}
	if (a->devs.len >= UINT16_MAX)
		return -E2BIG;
	d = gw_vec_push(&a->devs, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*v = a->devs.len;
	d->r.trace = trace;
	d->r.id = id;
	d->lim = gw_assumed_limits;
	d->r.sm_count = d->lim.sm_count;
	d->r.start_ns = UINT64_MAX;
	d->r.processes = 1;
	d->add_first_stream = UINT32_MAX;
	d->first_ns = UINT64_MAX;
	return (int)(a->devs.len - 1);
}

/* Until a DEVICE record says otherwise: an H100 SXM's limits (gpusim's defaults too). */
const struct gw_device_limits gw_assumed_limits = {
	.sm_count = 132,
	.max_threads_per_sm = 2048,
	.max_blocks_per_sm = 32,
	.regs_per_sm = 65536,
	.smem_per_sm_bytes = 228 * 1024,
	.warp_size = 32,
	.cc_major = 9,
	.cc_minor = 0,
	.max_threads_per_block = 1024,
	.max_regs_per_block = 65536,
	.max_smem_per_block_bytes = 48 * 1024,
};

uint64_t gw_an_startup_overlap(const struct gw_trace_st *t, uint64_t t0, uint64_t t1)
{
	const struct gw_span *v = t->startup.data;
	size_t lo = 0, hi = t->startup.len;
	uint64_t sum = 0;

	/* the first span that ends after t0 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end_ns <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->startup.len && v[i].start_ns < t1; i++) {
		uint64_t a = v[i].start_ns > t0 ? v[i].start_ns : t0;
		uint64_t b = v[i].end_ns < t1 ? v[i].end_ns : t1;

		sum += b > a ? b - a : 0;
	}
	return sum;
}

void gw_an_kernel_shape(const struct gw_trace_st *t, const struct gw_launch_shape *s,
			struct gw_kernel_shape *k)
{
	const struct gw_context_ent *c = t->contexts.data;

	*k = (struct gw_kernel_shape){
		.blocks = s->blocks,
		.threads_per_block = s->threads,
		.regs_per_thread = s->regs,
		.dynamic_smem_bytes = s->smem,
		.smem_executed_bytes = (uint64_t)s->carveout_kib * 1024,
		.cluster_blocks = s->cluster,
		.smem_optin = s->optin,
	};
	for (size_t i = 0; s->ctx && i < t->contexts.len; i++)
		if (c[i].id == s->ctx) {
			k->context_sms = c[i].sm_count;
			break;
		}
}

struct gw_string_ent *gw_an_string_ent(const struct gw_trace_st *t, uint64_t id)
{
	uint64_t *v = gw_hmap_find(&t->string_map, 0, id);

	return v ? &((struct gw_string_ent *)t->strings.data)[*v - 1] : NULL;
}

const char *gw_an_string(struct gw_analyzer *a, unsigned trace, uint64_t id)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);

	const struct gw_string_ent *e = t ? gw_an_string_ent(t, id) : NULL;

	return e ? e->text : NULL;
}

void gw_analyzer_free(struct gw_analyzer *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->traces.len; i++) {
		struct gw_trace_st *t = gw_an_trace(a, (unsigned)i);
		struct gw_string_ent *strs = t->strings.data;
		struct gw_stack *st = t->stacks.data;
		struct gw_module_rec *m = t->modules.data;

		for (size_t k = 0; k < t->strings.len; k++)
			free(strs[k].text);
		for (size_t k = 0; k < t->stacks.len; k++)
			free(st[k].ips);
		for (size_t k = 0; k < t->modules.len; k++)
			free(m[k].path);
		for (size_t k = 0; k < t->pycodes.len; k++)
			free(((struct gw_pycode_ent *)t->pycodes.data)[k].table);
		gw_vec_free(&t->pycodes);
		gw_hmap_free(&t->pycode_map);
		for (size_t k = 0; k < t->notes.len; k++)
			free(((char **)t->notes.data)[k]);
		gw_vec_free(&t->notes);
		gw_vec_free(&t->strings);
		gw_vec_free(&t->stacks);
		gw_vec_free(&t->frames);
		gw_hmap_free(&t->frame_map);
		gw_hmap_free(&t->string_map);
		gw_hmap_free(&t->stack_map);
		gw_vec_free(&t->modules);
		gw_vec_free(&t->contexts);
		gw_vec_free(&t->capturing);
		gw_vec_free(&t->startup);
		free(t->info.path);
		free(t->host);
		free(t->info.command);
		gw_symbolizer_free(t->sym);
	}
	for (size_t i = 0; i < a->devs.len; i++) {
		struct gw_dev_st *d = &((struct gw_dev_st *)a->devs.data)[i];

		free(d->r.name);
		free(d->uuid);
		gw_vec_free(&d->sharers);
	}
	gw_vec_free(&a->traces);
	gw_vec_free(&a->devs);
	gw_hmap_free(&a->dev_map);
	gw_vec_free(&a->ops);
	gw_vec_free(&a->apis);
	gw_vec_free(&a->mevs);
	gw_vec_free(&a->sync_apis);
	gw_vec_free(&a->metrics);
	for (size_t i = 0; i < a->samplers.len; i++)
		free(((struct gw_sampler_ent *)a->samplers.data)[i].reason);
	gw_vec_free(&a->samplers);
	free(a->kidx);
	gw_vec_free(&a->syncs);
	gw_hmap_free(&a->sync_map);
	gw_vec_free(&a->tiny);
	gw_hmap_free(&a->tiny_map);
	gw_vec_free(&a->fusion);
	gw_hmap_free(&a->fusion_map);
	gw_vec_free(&a->allocs);
	gw_vec_free(&a->blocked);
	gw_hmap_free(&a->blocked_map);
	gw_vec_free(&a->holds);
	gw_hmap_free(&a->held_map);
	gw_vec_free(&a->hostfns);
	gw_hmap_free(&a->hostfn_map);
	gw_vec_free(&a->kstats);
	gw_hmap_free(&a->kstat_map);
	gw_hmap_free(&a->alloc_map);
	gw_vec_free(&a->gaps);
	for (size_t i = 0; i < a->range_names.len; i++)
		free(((struct gw_range_name *)a->range_names.data)[i].text);
	gw_vec_free(&a->range_names);
	gw_hmap_free(&a->range_name_map);
	gw_vec_free(&a->ranges);
	gw_vec_free(&a->steps);
	free(a->op_step);
	free(a->step_time);
	free(a->step_trace);
	for (size_t i = 0; i < a->warnings.len; i++)
		free(((char **)a->warnings.data)[i]);
	gw_vec_free(&a->warnings);
	for (size_t i = 0; i < a->vthreads.len; i++)
		free(((struct gw_vthread *)a->vthreads.data)[i].name);
	gw_vec_free(&a->vthreads);
	gw_vec_free(&a->vcalls);
	gw_vec_free(&a->vops);
	gw_vec_free(&a->vfill);
	gw_vec_free(&a->vmem);
	for (size_t i = 0; i < a->vsites.len; i++)
		gw_site_clear(&((struct gw_site *)a->vsites.data)[i]);
	gw_vec_free(&a->vsites);
	gw_hmap_free(&a->vsite_map);
	gw_analysis_free(a->res);
	if (a->site_filter_set)
		regfree(&a->site_filter);
	free(a);
}
