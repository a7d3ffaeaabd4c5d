/* SPDX-License-Identifier: MIT */
/* Stage 8, sites: call sites symbolized (offline, libdwfl) and the ranked site lists of the
 * report model. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pylines.h"

/* Whether a native or named frame is the framework's or the language runtime's, not the
 * user's: the site is the innermost frame that is not. */
static bool framework_frame(const char *file, const char *module, const char *function)
{
	static const char *const prefixes[] = {"<built-in"};
	static const char *const modules[] = {
		"libcudart", "libcuda.", "libcupti", "libnvidia", "libtorch",  "libc10",
		"libcublas", "libcudnn", "libnccl",  "libgpuwhy", "libc.so",   "libpthread",
		"libpython", "libffi",	 "_ctypes",  "python3",	  "ld-linux",  "libstdc++",
		"libgcc_s",  "libm.so",	 "libdl.so", "libutil",	  "libunwind", "libdw."};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (function && strncmp(function, prefixes[i], strlen(prefixes[i])) == 0)
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
static char *named_text(const char *fn, const char *file, const char *mod, unsigned line)
{
	if (file && line)
		return gw_strdupf("%s (%s:%u)", fn ? fn : "?", base_of(file), line);
	if (file || mod)
		return gw_strdupf("%s (%s)", fn ? fn : "?", base_of(file ? file : mod));
	return strdup(fn ? fn : "?");
}

int gw_site_filter_check(const char *pattern, char *why, size_t why_size)
{
	regex_t re;
	int e;

	if (!pattern || !*pattern)
		return 0;
	e = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (e) {
		if (why && why_size)
			regerror(e, &re, why, why_size);
		return -EINVAL;
	}
	regfree(&re);
	return 0;
}

/* The most stacks of the event view's calls given a site. */
#define VIEW_SITES_MAX 20000

/* A frame of a named or mixed stack, resolved. */
struct rframe {
	char *text;
	struct gw_frame_detail d;
	bool user;	    /* not the framework's, the standard library's or the runtime's */
	bool cuda;	    /* native: in the CUDA libraries, gpuwhy or gpusim */
	uint64_t ip;	    /* native: its return address */
	int native_index;   /* native: its index among the stack's native words */
	bool python_filter; /* python: the site filter matched its file */
};

/* Whether a Python frame is the user's: it names a file the site filter does not match, and
 * is not a built-in (an imported profile's C function). */
static bool python_user(struct gw_analyzer *a, const char *file, const char *function)
{
	if (!file || (function && strncmp(function, "<built-in", 9) == 0))
		return false;
	return !a->site_filter_set || regexec(&a->site_filter, file, 0, NULL, 0) != 0;
}

static void rframes_free(struct rframe *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(f[i].text);
		gw_frame_detail_clear(&f[i].d);
	}
	free(f);
}

static int dup_detail(struct gw_frame_detail *d, uint8_t lang, const char *fn, const char *file,
		      const char *mod, unsigned line)
{
	*d = (struct gw_frame_detail){.lang = lang, .line = line};
	if ((fn && !(d->function = strdup(fn))) || (file && !(d->file = strdup(file))) ||
	    (mod && !(d->module = strdup(base_of(mod)))))
		return -ENOMEM;
	return 0;
}

/* Resolves one word of a named (FRAME ids) or mixed (addresses and Python frames) stack. */
static int resolve(struct gw_analyzer *a, unsigned trace, const struct gw_stack *s, uint64_t w,
		   struct rframe *f)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	const char *fn = NULL, *file = NULL, *mod = NULL;
	unsigned line = 0;
	uint8_t lang = GW_FRAME_NATIVE;

	if (s->kind == GW_STACK_MIXED && !GW_PYFRAME_IS(w)) {
		bool skipped = false;
		int r = gw_symbolize_frame(t->sym, w, &f->text, &f->d, &skipped);

		if (r < 0)
			return r;
		f->ip = w;
		f->cuda = skipped;
		f->user = !skipped && !framework_frame(f->d.file, f->d.module, f->d.function);
		return 0;
	}
	if (s->kind == GW_STACK_MIXED) {
		uint64_t *v = gw_hmap_find(&t->pycode_map, 0, GW_PYFRAME_CODE_ID(w));
		const struct gw_pycode_ent *c =
			v ? &((struct gw_pycode_ent *)t->pycodes.data)[*v - 1] : NULL;

		lang = GW_FRAME_PYTHON;
		if (c) {
			fn = gw_an_string(a, trace, c->function_id);
			file = gw_an_string(a, trace, c->file_id);
			line = gw_py_line(c->version, c->table, c->table_len, c->first_line,
					  GW_PYFRAME_OFFSET(w));
		}
		if (!fn)
			fn = "(unknown Python code)";
	} else {
		uint64_t *v = gw_hmap_find(&t->frame_map, 0, w);
		const struct gw_frame_ent *e =
			v ? &((struct gw_frame_ent *)t->frames.data)[*v - 1] : NULL;

		if (!e)
			return 1; /* a frame the trace does not name: left out */
		fn = gw_an_string(a, trace, e->function_id);
		file = gw_an_string(a, trace, e->file_id);
		mod = gw_an_string(a, trace, e->module_id);
		line = e->line;
		lang = e->lang == GW_FRAME_PYTHON ? GW_FRAME_PYTHON : GW_FRAME_NATIVE;
	}
	if (!(f->text = named_text(fn, file, mod, line)) ||
	    dup_detail(&f->d, lang, fn, file, mod, line) < 0)
		return -ENOMEM;
	f->user = lang == GW_FRAME_PYTHON ? python_user(a, file, fn)
					  : !framework_frame(file, mod, fn);
	return 0;
}

/* The site frame rf[first] (moved into the site) and the user's frames below it, up to 8 (or
 * every frame below it when the site itself is not the user's: all were the framework's). */
static int take_frames(struct gw_site *site, struct rframe *rf, unsigned n, unsigned first)
{
	bool all = !rf[first].user;
	unsigned k = 0;

	site->frames = calloc(8, sizeof(*site->frames));
	site->details = calloc(8, sizeof(*site->details));
	if (!site->frames || !site->details)
		return -ENOMEM;
	for (unsigned i = first; i < n && k < 8; i++) {
		if (i != first && !rf[i].user && !all)
			continue;
		site->frames[k] = rf[i].text;
		site->details[k] = rf[i].d;
		rf[i].text = NULL;
		memset(&rf[i].d, 0, sizeof(rf[i].d));
		site->n_frames = ++k;
	}
	site->lang = site->details[0].lang;
	site->line = site->details[0].line;
	if (!(site->text = strdup(site->frames[0])) ||
	    (site->details[0].function && !(site->function = strdup(site->details[0].function))) ||
	    (site->details[0].file && !(site->file = strdup(site->details[0].file))) ||
	    (site->details[0].module && !(site->module = strdup(site->details[0].module))))
		return -ENOMEM;
	return 0;
}

/*
 * A site from a named stack (FRAME ids: imported profiles) or a mixed one (return addresses
 * and Python frames: a captured Python program), innermost first: the innermost Python frame
 * that is the user's, with the user's frames below it and, beside it, the native frame that
 * issued the call; without one, the innermost native frame that is the user's; without that,
 * the innermost Python frame, else the innermost frame (named) or the native rules (mixed).
 */
static int python_site(struct gw_analyzer *a, unsigned trace, const struct gw_stack *s,
		       struct gw_site *site)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	uint64_t native[GW_MAX_STACK_DEPTH];
	struct rframe *rf = calloc(s->depth + 1u, sizeof(*rf));
	unsigned n = 0, nn = 0, first = UINT_MAX, first_python = UINT_MAX, first_native = UINT_MAX;
	int r = 0;

	if (!rf)
		return -ENOMEM;
	for (unsigned i = 0; i < s->depth; i++) {
		struct rframe *f = &rf[n];

		if (s->kind == GW_STACK_MIXED && !GW_PYFRAME_IS(s->ips[i]) &&
		    nn < GW_MAX_STACK_DEPTH) {
			f->native_index = (int)nn;
			native[nn++] = s->ips[i];
		}
		if ((r = resolve(a, trace, s, s->ips[i], f)) < 0)
			goto out;
		if (r > 0)
			continue;
		if (f->d.lang == GW_FRAME_PYTHON && first_python == UINT_MAX)
			first_python = n;
		if (f->user && f->d.lang == GW_FRAME_PYTHON && first == UINT_MAX)
			first = n;
		if (f->user && f->d.lang == GW_FRAME_NATIVE && first_native == UINT_MAX)
			first_native = n;
		n++;
	}
	r = 0;
	if (first == UINT_MAX && first_native != UINT_MAX && s->kind == GW_STACK_MIXED) {
		/* no Python frame of the user's: the native rules, as without Python frames */
		r = gw_symbolize_site(t->sym, native, nn, site);
		goto out;
	}
	if (first == UINT_MAX)
		first = first_native != UINT_MAX ? first_native : first_python;
	if (first == UINT_MAX && s->kind == GW_STACK_MIXED) {
		r = gw_symbolize_site(t->sym, native, nn, site);
		goto out;
	}
	if (first == UINT_MAX)
		first = 0;
	if (!n) {
		site->text = strdup("(no stack)");
		r = site->text ? 0 : -ENOMEM;
		goto out;
	}
	if (rf[first].d.lang == GW_FRAME_PYTHON) {
		/* the native frame that issued the call: by the native rules over the native
		 * frames inside the site's (a kernel's launch stub gives way to its caller) */
		if (s->kind == GW_STACK_MIXED) {
			struct gw_site ns = {0};
			unsigned inside = 0;

			for (unsigned i = 0; i < first; i++)
				if (rf[i].d.lang == GW_FRAME_NATIVE)
					inside = (unsigned)rf[i].native_index + 1;
			if (inside && (r = gw_symbolize_site(t->sym, native, inside, &ns)) < 0) {
				gw_site_clear(&ns);
				goto out;
			}
			if (inside && ns.n_frames &&
			    !framework_frame(ns.file, ns.module, ns.function))
				site->native = ns.text, ns.text = NULL;
			gw_site_clear(&ns);
		} else {
			for (unsigned i = 0; i < first && !site->native; i++)
				if (rf[i].user && rf[i].d.lang == GW_FRAME_NATIVE &&
				    !(site->native = strdup(rf[i].text))) {
					r = -ENOMEM;
					goto out;
				}
		}
	}
	r = take_frames(site, rf, n, first);
out:
	rframes_free(rf, s->depth + 1u);
	return r < 0 ? r : 0;
}

static int symbolizer_of(struct gw_analyzer *a, struct gw_trace_st *t)
{
	struct gw_module_rec *m = t->modules.data;
	int r;

	if (!a->opt.symbolize || t->sym_tried)
		return 0;
	t->sym_tried = true;
	r = gw_symbolizer_new(&t->sym);
	for (size_t i = 0; r >= 0 && i < t->modules.len; i++)
		r = gw_symbolizer_add_module(t->sym, m[i].path, m[i].base, m[i].start, m[i].size);
	return r;
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
	if ((r = symbolizer_of(a, t)) < 0)
		return r;
	if (s->kind == GW_STACK_FRAMES || s->kind == GW_STACK_MIXED)
		r = python_site(a, trace, s, site);
	else
		r = gw_symbolize_site(t->sym, s->ips, s->depth, site);
	if (r >= 0 && !site->text)
		r = -ENOMEM;
	return r;
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
	const char *filter = a->opt.site_filter ? a->opt.site_filter : GW_SITE_FILTER_DEFAULT;
	int r;

	/* checked by the caller; a pattern that does not compile filters nothing */
	if (*filter && !a->site_filter_set)
		a->site_filter_set =
			regcomp(&a->site_filter, filter, REG_EXTENDED | REG_NOSUB) == 0;

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

	/* The event view's calls (keep_events): each stack's site, once; a run of many stacks
	 * resolves its first VIEW_SITES_MAX (symbolizing is the cost). */
	if (a->opt.keep_events) {
		const struct gw_vcall *c = a->vcalls.data;

		for (size_t i = 0; i < a->vcalls.len && a->vsites.len < VIEW_SITES_MAX; i++) {
			/* set when fresh: gcc -O2 with ASan cannot tell, and warns */
			struct gw_site *site = NULL;
			uint64_t *slot;
			bool fresh;

			if (!c[i].stack_id)
				continue;
			slot = gw_hmap_get(&a->vsite_map, c[i].trace, c[i].stack_id, &fresh);
			if (!slot || (fresh && !(site = gw_vec_push(&a->vsites, sizeof(*site)))))
				return -ENOMEM;
			if (!fresh)
				continue;
			*slot = a->vsites.len;
			if ((r = site_of(a, c[i].trace, c[i].stack_id, site)) < 0)
				return r;
		}
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
