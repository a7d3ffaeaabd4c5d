/* SPDX-License-Identifier: MIT */
/* Stage 10, view (keep_events only): the event view of the report model, names resolved. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The view's strings: one copy per (trace, string id, demangled or not). */
struct view_names {
	struct gw_event_view *v;
	struct gw_hmap map; /* (trace << 1 | demangled, id) -> index + 1 into v->strings */
	size_t cap;
};

static int name_of(struct gw_analyzer *a, struct view_names *vn, unsigned trace, uint32_t id,
		   bool demangle, const char **ret)
{
	const char *text;
	bool fresh;
	uint64_t *slot;
	char *copy;

	*ret = NULL;
	if (!id || !(text = gw_an_string(a, trace, id)))
		return 0;
	slot = gw_hmap_get(&vn->map, (uint64_t)trace << 1 | demangle, id, &fresh);
	if (!slot)
		return -ENOMEM;
	if (!fresh) {
		*ret = vn->v->strings[*slot - 1];
		return 0;
	}
	if (vn->v->n_strings == vn->cap) {
		size_t cap = vn->cap ? 2 * vn->cap : 256;
		char **grown = realloc(vn->v->strings, cap * sizeof(*grown));

		if (!grown) {
			gw_hmap_del(&vn->map, (uint64_t)trace << 1 | demangle, id);
			return -ENOMEM;
		}
		vn->v->strings = grown;
		vn->cap = cap;
	}
	copy = demangle ? gw_demangle(text) : strdup(text);
	if (!copy) {
		gw_hmap_del(&vn->map, (uint64_t)trace << 1 | demangle, id);
		return -ENOMEM;
	}
	vn->v->strings[vn->v->n_strings++] = copy;
	*slot = vn->v->n_strings;
	*ret = copy;
	return 0;
}

/* The class the join gave a kernel name (cached in its string entry). */
static uint8_t class_of(struct gw_analyzer *a, unsigned trace, uint32_t id, const char *demangled)
{
	struct gw_string_ent *e = gw_an_string_ent(gw_an_trace(a, trace), id);

	if (e && e->cls)
		return (uint8_t)((e->cls & 0x7f) - 1);
	return (uint8_t)gw_kernel_class(demangled ? demangled : "", NULL);
}

static int build_calls(struct gw_analyzer *a, struct view_names *vn)
{
	struct gw_event_view *v = vn->v;
	const struct gw_vcall *c = a->vcalls.data;
	int r;

	v->calls = calloc(a->vcalls.len + 1, sizeof(*v->calls));
	if (!v->calls)
		return -ENOMEM;
	/* the sites stage resolved the calls' stacks: the view takes them over */
	v->sites = a->vsites.data;
	v->n_sites = a->vsites.len;
	a->vsites = (struct gw_vec){0};
	for (size_t i = 0; i < a->vcalls.len; i++, v->n_calls++) {
		struct gw_view_call *o = &v->calls[i];

		*o = (struct gw_view_call){
			.trace = c[i].trace,
			.tid = c[i].tid,
			.start_ns = c[i].start_ns,
			.end_ns = c[i].end_ns,
			.correlation = c[i].corr,
			.stream = c[i].stream,
			.bytes = c[i].bytes,
			.domain = c[i].domain,
			.cbid = c[i].cbid,
			.category = c[i].category,
			.sync_kind = c[i].sync_kind,
		};
		if (c[i].stack_id) {
			uint64_t *at = gw_hmap_find(&a->vsite_map, c[i].trace, c[i].stack_id);

			o->site = at ? &v->sites[*at - 1] : NULL;
		}
		if ((r = name_of(a, vn, c[i].trace, c[i].name_id, false, &o->name)) < 0 ||
		    (r = name_of(a, vn, c[i].trace, c[i].kernel_id, true, &o->kernel)) < 0)
			return r;
	}
	return 0;
}

static int build_ops(struct gw_analyzer *a, struct view_names *vn)
{
	struct gw_event_view *v = vn->v;
	const struct gw_dev_st *devs = a->devs.data;
	const struct gw_vop *p = a->vops.data;
	int r;

	v->ops = calloc(a->vops.len + 1, sizeof(*v->ops));
	if (!v->ops)
		return -ENOMEM;
	for (size_t i = 0; i < a->vops.len; i++, v->n_ops++) {
		struct gw_view_op *o = &v->ops[i];
		const struct gw_dev_st *d = &devs[p[i].dev];
		struct gw_kernel_shape k;

		*o = (struct gw_view_op){
			.trace = p[i].trace,
			.device = p[i].dev,
			.kind = p[i].kind,
			.copy_kind = p[i].copy_kind,
			.stream = p[i].stream,
			.correlation = p[i].corr,
			.start_ns = p[i].start_ns,
			.end_ns = p[i].end_ns,
			.bytes = p[i].bytes,
			.registers = p[i].registers,
			.smem_bytes = p[i].smem_bytes,
		};
		if (p[i].kind != GW_VIEW_KERNEL)
			continue;
		memcpy(o->grid, p[i].grid, sizeof(o->grid));
		memcpy(o->block, p[i].block, sizeof(o->block));
		if ((r = name_of(a, vn, p[i].trace, p[i].name_id, true, &o->name)) < 0)
			return r;
		o->cls = class_of(a, p[i].trace, p[i].name_id, o->name);
		/* the same inputs as the join's fill of this kernel */
		gw_an_kernel_shape(gw_an_trace(a, p[i].trace), &p[i].shape, &k);
		o->fill = (float)gw_kernel_fill(&d->lim, &k);
	}
	return 0;
}

static int build_threads(struct gw_analyzer *a, struct gw_event_view *v)
{
	struct gw_vthread *t = a->vthreads.data;

	v->threads = calloc(a->vthreads.len + 1, sizeof(*v->threads));
	if (!v->threads)
		return -ENOMEM;
	for (size_t i = 0; i < a->vthreads.len; i++) {
		char **s;

		v->threads[v->n_threads++] =
			(struct gw_view_thread){.trace = t[i].trace, .tid = t[i].tid};
		if (!t[i].name)
			continue;
		/* the name moves into the view's strings */
		s = realloc(v->strings, (v->n_strings + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		v->strings = s;
		v->strings[v->n_strings++] = t[i].name;
		v->threads[i].name = t[i].name;
		t[i].name = NULL;
	}
	return 0;
}

int gw_build_view(struct gw_analyzer *a)
{
	struct gw_event_view *v;
	struct view_names vn = {0};
	int r;

	if (!a->opt.keep_events)
		return 0;
	v = a->res->view = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	vn.v = v;
	if ((r = build_calls(a, &vn)) < 0 || (r = build_ops(a, &vn)) < 0)
		goto out;
	/* build_threads grows the string array itself: name_of is done with it */
	if ((r = build_threads(a, v)) < 0)
		goto out;
	v->n_fill = a->vfill.len;
	v->fill = gw_vec_detach(&a->vfill);
	v->fill_complete = !a->vfill_capped;
	v->n_memory = a->vmem.len;
	v->memory = gw_vec_detach(&a->vmem);
	if ((v->n_fill && !v->fill) || (v->n_memory && !v->memory))
		r = -ENOMEM;
out:
	gw_hmap_free(&vn.map);
	return r;
}

void gw_event_view_free(struct gw_event_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_strings; i++)
		free(v->strings[i]);
	free(v->strings);
	for (size_t i = 0; i < v->n_sites; i++)
		gw_site_clear(&v->sites[i]);
	free(v->sites);
	free(v->threads);
	free(v->calls);
	free(v->ops);
	free(v->fill);
	free(v->memory);
	free(v);
}
