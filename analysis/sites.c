/* SPDX-License-Identifier: MIT */
/* Stage 8, sites: call sites symbolized (offline, libdwfl) and the ranked site lists of the
 * report model. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Whether a named frame is the framework's or the language runtime's, not the user's: the site
 * is the innermost frame that is not. */
static bool framework_frame(const char *file, const char *module, const char *function)
{
	static const char *const files[] = {"site-packages/", "dist-packages/", "/lib/python3",
					    "<frozen ", "<string>"};
	static const char *const prefixes[] = {"torch/", "torch\\", "<built-in"};
	static const char *const modules[] = {"libcudart", "libcuda.",	"libcupti",  "libnvidia",
					      "libtorch",  "libc10",	"libcublas", "libcudnn",
					      "libnccl",   "libgpuwhy", "libc.so",   "libpthread"};

	for (size_t i = 0; file && i < sizeof(files) / sizeof(files[0]); i++)
		if (strstr(file, files[i]))
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if ((file && (strncmp(file, prefixes[i], strlen(prefixes[i])) == 0 ||
			      strstr(file, "/torch/"))) ||
		    (function && strncmp(function, prefixes[i], strlen(prefixes[i])) == 0))
			return true;
	for (size_t i = 0; module && i < sizeof(modules) / sizeof(modules[0]); i++) {
		const char *b = strrchr(module, '/');

		if (strncmp(b ? b + 1 : module, modules[i], strlen(modules[i])) == 0)
			return true;
	}
	return !file && !module && !function;
}

static const char *base_of(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* A frame as text: "function (file:line)", "function (module)", or what the trace named. */
static char *named_frame_text(struct gw_analyzer *a, unsigned trace, const struct gw_frame_ent *f)
{
	const char *fn = gw_an_string(a, trace, f->function_id);
	const char *file = gw_an_string(a, trace, f->file_id);
	const char *mod = gw_an_string(a, trace, f->module_id);

	if (file && f->line)
		return gw_strdupf("%s (%s:%u)", fn ? fn : "?", base_of(file), f->line);
	if (file || mod)
		return gw_strdupf("%s (%s)", fn ? fn : "?", base_of(file ? file : mod));
	return strdup(fn ? fn : "?");
}

/* A site from a stack of named frames (FRAME ids, innermost first): the innermost frame
 * outside the framework, and up to 7 frames below it; the innermost frame when every one
 * is the framework's. */
static int named_site(struct gw_analyzer *a, unsigned trace, const struct gw_stack *s,
		      struct gw_site *site)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	const struct gw_frame_ent *ents[8];
	unsigned first = s->depth, n = 0;

	for (unsigned i = 0; i < s->depth && first == s->depth; i++) {
		uint64_t *v = gw_hmap_find(&t->frame_map, 0, s->ips[i]);
		const struct gw_frame_ent *f;

		if (!v)
			continue;
		f = &((struct gw_frame_ent *)t->frames.data)[*v - 1];
		if (!framework_frame(gw_an_string(a, trace, f->file_id),
				     gw_an_string(a, trace, f->module_id),
				     gw_an_string(a, trace, f->function_id)))
			first = i;
	}
	if (first == s->depth)
		first = 0;
	for (unsigned i = first; i < s->depth && n < 8; i++) {
		uint64_t *v = gw_hmap_find(&t->frame_map, 0, s->ips[i]);

		if (v)
			ents[n++] = &((struct gw_frame_ent *)t->frames.data)[*v - 1];
	}
	if (!n) {
		site->text = strdup("(no stack)");
		return site->text ? 0 : -ENOMEM;
	}
	site->frames = calloc(n, sizeof(*site->frames));
	if (!site->frames)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		if (!(site->frames[i] = named_frame_text(a, trace, ents[i])))
			return -ENOMEM;
		site->n_frames = i + 1;
	}
	if (!(site->text = strdup(site->frames[0])))
		return -ENOMEM;
	{
		const char *fn = gw_an_string(a, trace, ents[0]->function_id);
		const char *file = gw_an_string(a, trace, ents[0]->file_id);
		const char *mod = gw_an_string(a, trace, ents[0]->module_id);

		site->line = ents[0]->line;
		if ((fn && !(site->function = strdup(fn))) ||
		    (file && !(site->file = strdup(file))) ||
		    (mod && !(site->module = strdup(base_of(mod)))))
			return -ENOMEM;
	}
	return 0;
}

static int site_of(struct gw_analyzer *a, unsigned trace, uint64_t stack_id, struct gw_site *site)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	const struct gw_stack *s = NULL;
	int r;

	memset(site, 0, sizeof(*site));
	site->trace = trace;
	site->stack_id = stack_id;
	if (!t)
		return -EINVAL;
	if (stack_id) {
		uint64_t *v = gw_hmap_find(&t->stack_map, 0, stack_id);

		if (v)
			s = &((struct gw_stack *)t->stacks.data)[*v - 1];
	}
	if (!s || !s->ips) {
		site->text = strdup("(no stack)");
		return site->text ? 0 : -ENOMEM;
	}
	if (s->kind == GW_STACK_FRAMES)
		return named_site(a, trace, s, site);
	if (a->opt.symbolize && !t->sym_tried) {
		struct gw_module_rec *m = t->modules.data;

		t->sym_tried = true;
		r = gw_symbolizer_new(&t->sym);
		if (r < 0)
			return r;
		for (size_t i = 0; i < t->modules.len; i++) {
			r = gw_symbolizer_add_module(t->sym, m[i].path, m[i].base, m[i].start,
						     m[i].size);
			if (r < 0)
				return r;
		}
	}
	return gw_symbolize_site(t->sym, s->ips, s->depth, site);
}

static int cmp_sync_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_sync_acc *p = x, *q = y;

	(void)ctx;
	if (p->exposed_sm_ns != q->exposed_sm_ns)
		return p->exposed_sm_ns > q->exposed_sm_ns ? -1 : 1;
	return p->count > q->count ? -1 : p->count < q->count;
}

static int cmp_tiny_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_tiny_acc *p = x, *q = y;

	(void)ctx;
	return p->count > q->count ? -1 : p->count < q->count;
}

static int cmp_alloc_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_alloc_acc *p = x, *q = y;

	(void)ctx;
	return p->bytes > q->bytes ? -1 : p->bytes < q->bytes;
}

static int cmp_fusion_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_fusion_acc *p = x, *q = y;

	(void)ctx;
	return p->saved_ns > q->saved_ns ? -1 : p->saved_ns < q->saved_ns;
}

static int cmp_kernel_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_kernel_acc *p = x, *q = y;

	(void)ctx;
	return p->total_ns > q->total_ns ? -1 : p->total_ns < q->total_ns;
}

static int cmp_blocked_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_blocked_acc *p = x, *q = y;

	(void)ctx;
	return p->total_ns > q->total_ns ? -1 : p->total_ns < q->total_ns;
}

static int cmp_hostfn_acc(const void *x, const void *y, void *ctx)
{
	const struct gw_hostfn_acc *p = x, *q = y;

	(void)ctx;
	if (p->held_ns != q->held_ns)
		return p->held_ns > q->held_ns ? -1 : 1;
	return p->calls > q->calls ? -1 : p->calls < q->calls;
}

static char *kernel_name(struct gw_analyzer *a, unsigned trace, uint32_t id)
{
	const char *n = gw_an_string(a, trace, id);

	return n ? gw_demangle(n) : gw_strdupf("kernel#%u", id);
}

int gw_build_sites(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	unsigned top = a->opt.top_n, n; /* each count is set only with its array */
	int r;

	if (gw_sort_r(a->syncs.data, a->syncs.len, sizeof(struct gw_sync_acc), cmp_sync_acc, NULL) <
		    0 ||
	    gw_sort_r(a->tiny.data, a->tiny.len, sizeof(struct gw_tiny_acc), cmp_tiny_acc, NULL) <
		    0 ||
	    gw_sort_r(a->allocs.data, a->allocs.len, sizeof(struct gw_alloc_acc), cmp_alloc_acc,
		      NULL) < 0 ||
	    gw_sort_r(a->fusion.data, a->fusion.len, sizeof(struct gw_fusion_acc), cmp_fusion_acc,
		      NULL) < 0 ||
	    gw_sort_r(a->kstats.data, a->kstats.len, sizeof(struct gw_kernel_acc), cmp_kernel_acc,
		      NULL) < 0 ||
	    gw_sort_r(a->blocked.data, a->blocked.len, sizeof(struct gw_blocked_acc),
		      cmp_blocked_acc, NULL) < 0 ||
	    gw_sort_r(a->hostfns.data, a->hostfns.len, sizeof(struct gw_hostfn_acc), cmp_hostfn_acc,
		      NULL) < 0)
		return -ENOMEM;

	n = (unsigned)(a->syncs.len < top ? a->syncs.len : top);
	if (!(res->sync_sites = calloc(n + 1u, sizeof(*res->sync_sites))))
		return -ENOMEM;
	res->n_sync_sites = n;
	for (unsigned i = 0; i < res->n_sync_sites; i++) {
		const struct gw_sync_acc *s = &((struct gw_sync_acc *)a->syncs.data)[i];
		struct gw_sync_site *o = &res->sync_sites[i];
		const char *api = gw_an_string(a, s->trace, s->name_id);

		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		o->api = strdup(api ? api : "(unnamed call)");
		if (!o->api)
			return -ENOMEM;
		o->kind = s->kind;
		o->count = s->count;
		o->wait_ns = s->wait_ns;
		o->exposed_sm_ns = s->exposed_sm_ns;
		o->exposed_ns = s->exposed_ns;
		o->host_work_after_ns = s->host_work_after_ns;
	}

	n = (unsigned)(a->kstats.len < 5 * top ? a->kstats.len : 5 * top);
	if (!(res->kernels = calloc(n + 1u, sizeof(*res->kernels))))
		return -ENOMEM;
	res->n_kernels = n;
	for (unsigned i = 0; i < res->n_kernels; i++) {
		const struct gw_kernel_acc *s = &((struct gw_kernel_acc *)a->kstats.data)[i];
		struct gw_kernel_stat *o = &res->kernels[i];

		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		if (!(o->name = kernel_name(a, s->trace, s->name_id)))
			return -ENOMEM;
		o->cls = (enum gw_bucket)s->cls;
		gw_kernel_class(o->name, &o->classified);
		o->count = s->count;
		o->total_ns = s->total_ns;
		/* at most 1 also when total_ns saturated (attribute.c) */
		o->mean_fill = s->total_ns ? fmin(1, s->fill_ns / (double)s->total_ns) : 0;
		o->chain_count = s->chain_count;
		o->unfilled_sm_ns = s->unfilled_sm_ns;
	}

	n = (unsigned)(a->tiny.len < top ? a->tiny.len : top);
	if (!(res->tiny_kernels = calloc(n + 1u, sizeof(*res->tiny_kernels))))
		return -ENOMEM;
	res->n_tiny_kernels = n;
	for (unsigned i = 0; i < res->n_tiny_kernels; i++) {
		const struct gw_tiny_acc *s = &((struct gw_tiny_acc *)a->tiny.data)[i];
		struct gw_tiny_kernel *o = &res->tiny_kernels[i];

		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		if (!(o->name = kernel_name(a, s->trace, s->name_id)))
			return -ENOMEM;
		o->count = s->count;
		o->total_ns = s->total_ns;
		o->gap_before_ns = s->gap_before_ns;
	}

	n = (unsigned)(a->allocs.len < top ? a->allocs.len : top);
	if (!(res->alloc_sites = calloc(n + 1u, sizeof(*res->alloc_sites))))
		return -ENOMEM;
	res->n_alloc_sites = n;
	for (unsigned i = 0; i < res->n_alloc_sites; i++) {
		const struct gw_alloc_acc *s = &((struct gw_alloc_acc *)a->allocs.data)[i];
		struct gw_alloc_site *o = &res->alloc_sites[i];

		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		o->kind = s->kind;
		o->count = s->count;
		o->bytes = s->bytes;
		o->max_bytes = s->max_bytes;
		o->never_freed = s->never_freed;
		o->never_freed_bytes = s->never_freed_bytes;
	}

	res->fusion =
		calloc((a->fusion.len < top ? a->fusion.len : top) + 1u, sizeof(*res->fusion));
	if (!res->fusion)
		return -ENOMEM;
	for (size_t i = 0; i < a->fusion.len && res->n_fusion < top; i++) {
		const struct gw_fusion_acc *s = &((struct gw_fusion_acc *)a->fusion.data)[i];
		struct gw_fusion_candidate *o = &res->fusion[res->n_fusion];

		if (s->occurrences < 2)
			continue; /* a candidate is a *repeated* sequence */
		res->n_fusion++;
		o->names = calloc(s->n, sizeof(*o->names));
		if (!o->names)
			return -ENOMEM;
		for (unsigned k = 0; k < s->n; k++) {
			if (!(o->names[k] = kernel_name(a, s->trace, s->names[k])))
				return -ENOMEM;
			o->n_kernels = k + 1;
		}
		o->occurrences = s->occurrences;
		o->kernel_ns = s->kernel_ns;
		o->saved_ns = s->saved_ns;
		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
	}

	for (unsigned i = 0; i < res->steps.n_slow; i++) {
		const struct gw_contrib *c = &a->slow_who[i];
		struct gw_slow_step *o = &res->steps.slow[i];
		unsigned trace = c->kind ? c->trace : res->steps.steps[o->step].trace;

		if ((r = site_of(a, trace, c->kind ? c->stack_id : 0, &o->site)) < 0)
			return r;
		if (c->kind == GW_CONTRIB_SYNC) {
			const char *api = gw_an_string(a, c->trace, c->name_id);

			o->what = strdup(api ? api : "(unnamed call)");
		} else if (c->kind == GW_CONTRIB_KERNEL) {
			o->what = kernel_name(a, c->trace, c->name_id);
		} else if (c->kind) {
			o->what = strdup(c->kind == GW_CONTRIB_COPY ? "memcpy" : "memset");
		}
		if (c->kind && !o->what)
			return -ENOMEM;
	}

	n = (unsigned)(a->blocked.len < top ? a->blocked.len : top);
	if (!(res->blocked = calloc(n + 1u, sizeof(*res->blocked))))
		return -ENOMEM;
	res->n_blocked = n;
	for (unsigned i = 0; i < res->n_blocked; i++) {
		const struct gw_blocked_acc *s = &((struct gw_blocked_acc *)a->blocked.data)[i];
		const struct gw_dev_st *d = &((struct gw_dev_st *)a->devs.data)[s->dev];
		struct gw_blocked_stream *o = &res->blocked[i];

		if ((r = site_of(a, s->trace, s->longest_stack_id, &o->site)) < 0)
			return r;
		o->trace = s->trace;
		o->device = d->r.id;
		o->stream = s->stream;
		o->gaps = s->gaps;
		o->total_ns = s->total_ns;
		o->longest_ns = s->longest_ns;
		o->launched = s->longest_launched;
		o->next = s->longest_kind == GW_OP_KERNEL
				  ? kernel_name(a, s->trace, s->longest_name_id)
				  : strdup(s->longest_kind == GW_OP_MEMCPY ? "memcpy" : "memset");
		if (!o->next)
			return -ENOMEM;
		if (s->held_api != UINT32_MAX) {
			const struct gw_api *c = &((struct gw_api *)a->apis.data)[s->held_api];
			const char *api = gw_an_string(a, c->trace, c->name_id);

			if (!(o->held_by = strdup(api ? api : "(unnamed call)")) ||
			    (r = site_of(a, c->trace, c->stack_id, &o->held_site)) < 0)
				return o->held_by ? r : -ENOMEM;
		}
	}

	n = (unsigned)(a->hostfns.len < top ? a->hostfns.len : top);
	if (!(res->host_funcs = calloc(n + 1u, sizeof(*res->host_funcs))))
		return -ENOMEM;
	res->n_host_funcs = n;
	for (unsigned i = 0; i < res->n_host_funcs; i++) {
		const struct gw_hostfn_acc *s = &((struct gw_hostfn_acc *)a->hostfns.data)[i];
		struct gw_host_func_site *o = &res->host_funcs[i];
		const char *api = gw_an_string(a, s->trace, s->name_id);

		if ((r = site_of(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		if (!(o->api = strdup(api ? api : "(unnamed call)")))
			return -ENOMEM;
		o->calls = s->calls;
		o->gaps = s->gaps;
		o->held_ns = s->held_ns;
	}
	return 0;
}
