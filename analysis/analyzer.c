/* SPDX-License-Identifier: MIT */
/* Collects decoded records into compact tables and turns the attribution into the report model. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-internal.h"

void gw_analysis_options_init(struct gw_analysis_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->tiny_ns = 10000;
	opt->starve_ns = 100000;
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

int gw_analyzer_begin_trace(struct gw_analyzer *a, const char *path)
{
	struct gw_trace_st *t;

	if (a->traces.len >= UINT16_MAX)
		return -E2BIG;
	t = gw_vec_push(&a->traces, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->info.rank = -1;
	t->info.path = strdup(path ? path : "-");
	return t->info.path ? 0 : -ENOMEM;
}

void gw_analyzer_end_trace(struct gw_analyzer *a, bool truncated, bool clean_exit)
{
	struct gw_trace_st *t = gw_an_trace(a, (unsigned)a->traces.len - 1);

	if (!t)
		return;
	t->info.truncated = truncated;
	t->reader_said_clean = clean_exit;
	t->have_end_status = true;
}

static struct gw_trace_st *cur_trace(struct gw_analyzer *a)
{
	if (!a->traces.len && gw_analyzer_begin_trace(a, NULL) < 0)
		return NULL;
	return gw_an_trace(a, (unsigned)a->traces.len - 1);
}

static char *bytes_dup(struct gw_bytes b)
{
	char *s = malloc(b.len + 1u);

	if (!s)
		return NULL;
	if (b.len)
		memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	return s;
}

/* Device table index for (trace, device id), created on first sight. */
static int dev_index(struct gw_analyzer *a, unsigned trace, uint64_t id)
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
	/* Until a DEVICE record says otherwise: an H100 SXM's limits (gpusim's defaults too). */
	d->lim = (struct gw_device_limits){.sm_count = 132,
					   .max_threads_per_sm = 2048,
					   .max_blocks_per_sm = 32,
					   .regs_per_sm = 65536,
					   .smem_per_sm_bytes = 228 * 1024,
					   .warp_size = 32};
	d->r.sm_count = d->lim.sm_count;
	d->r.start_ns = UINT64_MAX;
	d->add_first_stream = UINT32_MAX;
	return (int)(a->devs.len - 1);
}

static int add_device(struct gw_analyzer *a, unsigned trace, const struct gw_rec_device *r)
{
	int di = dev_index(a, trace, r->device);
	struct gw_dev_st *d;

	if (di < 0)
		return di;
	d = &((struct gw_dev_st *)a->devs.data)[di];
	free(d->r.name);
	d->r.name = bytes_dup(r->name);
	if (!d->r.name)
		return -ENOMEM;
	d->r.described = true;
	if (r->sm_count)
		d->lim.sm_count = r->sm_count;
	if (r->max_threads_per_sm)
		d->lim.max_threads_per_sm = r->max_threads_per_sm;
	if (r->max_blocks_per_sm)
		d->lim.max_blocks_per_sm = r->max_blocks_per_sm;
	if (r->regs_per_sm)
		d->lim.regs_per_sm = r->regs_per_sm;
	if (r->smem_per_sm_bytes)
		d->lim.smem_per_sm_bytes = r->smem_per_sm_bytes;
	if (r->warp_size)
		d->lim.warp_size = r->warp_size;
	d->r.sm_count = d->lim.sm_count;
	d->r.memory_total_bytes = r->memory_total_bytes;
	return 0;
}

/* The table slot for an id, created on first sight (ids are arbitrary u64, not dense). */
static void *id_slot(struct gw_hmap *map, struct gw_vec *vec, size_t elem, uint64_t id)
{
	bool fresh;
	uint64_t *v = gw_hmap_get(map, 0, id, &fresh);

	if (!v)
		return NULL;
	if (fresh) {
		if (!gw_vec_push(vec, elem)) {
			gw_hmap_del(map, 0, id);
			return NULL;
		}
		*v = vec->len;
	}
	return (char *)vec->data + (*v - 1) * elem;
}

static int add_string(struct gw_trace_st *t, const struct gw_rec_string *r)
{
	struct gw_string_ent *e;

	if (!r->id)
		return 0;
	e = id_slot(&t->string_map, &t->strings, sizeof(*e), r->id);
	if (!e)
		return -ENOMEM;
	free(e->text);
	e->cls = 0;
	e->text = bytes_dup(r->text);
	return e->text ? 0 : -ENOMEM;
}

static int add_stack(struct gw_trace_st *t, const struct gw_rec_stack *r)
{
	struct gw_stack *s;

	if (!r->id)
		return 0;
	s = id_slot(&t->stack_map, &t->stacks, sizeof(*s), r->id);
	if (!s)
		return -ENOMEM;
	free(s->ips);
	s->depth = 0;
	s->ips = malloc((r->ips.depth ? r->ips.depth : 1) * sizeof(uint64_t));
	if (!s->ips)
		return -ENOMEM;
	if (r->ips.depth)
		memcpy(s->ips, r->ips.ips, r->ips.depth * sizeof(uint64_t));
	s->depth = r->ips.depth;
	return 0;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A GPU record CUPTI could not time has 0 for both start and end: it ran, so it is counted,
 * but placing it at time 0 would stretch the device's window back to the clock's origin. */
static bool untimed(struct gw_trace_st *t, uint64_t start_ns, uint64_t end_ns)
{
	if (start_ns || end_ns)
		return false;
	t->info.untimed_gpu_ops++;
	return true;
}

static int add_op(struct gw_analyzer *a, unsigned trace, int kind, uint64_t device, uint64_t stream,
		  uint64_t corr, uint64_t start, uint64_t end)
{
	int di = dev_index(a, trace, device);
	struct gw_op *op;

	if (di < 0)
		return di;
	op = gw_vec_push(&a->ops, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->start_ns = start;
	op->end_ns = end < start ? start : end;
	op->corr = corr;
	op->stream = clamp32(stream);
	op->dev = (uint16_t)di;
	op->kind = (uint8_t)kind;
	/* Noted while the previous op is still in cache: finish then skips a pass over all. */
	if (a->ops.len > 1 &&
	    (op[-1].dev > op->dev || (op[-1].dev == op->dev && op[-1].start_ns > op->start_ns)))
		a->ops_unsorted = true;
	return 0;
}

static int add_api(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		   const struct gw_rec_api *r)
{
	struct gw_api *p;

	switch (r->category) {
	case GW_API_LAUNCH:
	case GW_API_GRAPH_LAUNCH:
		t->info.counts.launches++;
		if (r->end_ns > r->start_ns && r->end_ns - r->start_ns > t->max_launch_ns)
			t->max_launch_ns = r->end_ns - r->start_ns;
		break;
	case GW_API_MEMCPY:
	case GW_API_MEMSET:
		if (r->end_ns > r->start_ns && r->end_ns - r->start_ns > t->max_launch_ns)
			t->max_launch_ns = r->end_ns - r->start_ns;
		break;
	default:
		if (r->sync_kind == GW_SYNC_NONE)
			return 0; /* never waits, issues no GPU work: not needed */
	}
	if (r->sync_kind != GW_SYNC_NONE || r->category == GW_API_MEMCPY) {
		uint32_t *ix = gw_vec_push(&a->sync_apis, sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		*ix = (uint32_t)a->apis.len;
	}
	p = gw_vec_push(&a->apis, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->corr = r->correlation;
	p->start_ns = r->start_ns;
	p->end_ns = r->end_ns < r->start_ns ? r->start_ns : r->end_ns;
	p->tid = (uint32_t)r->tid;
	p->stack_id = clamp32(r->stack_id);
	p->name_id = clamp32(r->name_id);
	p->trace = (uint16_t)trace;
	p->device = r->device > UINT16_MAX ? UINT16_MAX : (uint16_t)r->device;
	p->category = (uint8_t)r->category;
	p->sync_kind = r->sync_kind > GW_SYNC_IMPLICIT ? GW_SYNC_EXPLICIT : (uint8_t)r->sync_kind;
	if (a->apis.len > 1 &&
	    (p[-1].trace > p->trace || (p[-1].trace == p->trace && p[-1].corr > p->corr)))
		a->apis_unsorted = true;
	return 0;
}

static int add_memory(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		      const struct gw_rec_memory *r)
{
	struct gw_mev *m;

	if (r->op == GW_MEMORY_ALLOC)
		t->info.counts.allocations++;
	else if (r->op == GW_MEMORY_FREE)
		t->info.counts.frees++;
	else
		return 0;
	m = gw_vec_push(&a->mevs, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->time_ns = r->time_ns;
	m->addr = r->address;
	m->bytes = r->bytes;
	m->stack_id = clamp32(r->stack_id);
	m->trace = (uint16_t)trace;
	m->device = r->device > UINT16_MAX ? UINT16_MAX : (uint16_t)r->device;
	m->op = (uint8_t)r->op;
	m->kind = r->mem_kind > 255 ? 0 : (uint8_t)r->mem_kind;
	return 0;
}

static int add_warning(struct gw_analysis *res, char *text)
{
	char **w;

	if (!text)
		return -ENOMEM;
	w = realloc(res->warnings, (res->n_warnings + 1) * sizeof(*w));
	if (!w) {
		free(text);
		return -ENOMEM;
	}
	res->warnings = w;
	res->warnings[res->n_warnings++] = text;
	return 0;
}

int gw_analyzer_add(struct gw_analyzer *a, const struct gw_record *rec)
{
	struct gw_trace_st *t = cur_trace(a);
	unsigned ti;
	int r = 0;

	if (!t)
		return -ENOMEM;
	if (a->finished)
		return -EINVAL;
	ti = (unsigned)a->traces.len - 1;
	t->info.records++;
	switch (rec->type) {
	case GW_REC_HEADER: {
		const struct gw_rec_header *h = &rec->header;

		t->info.pid = h->pid;
		t->info.rank = h->rank;
		free(t->info.command);
		t->info.command = bytes_dup(h->command);
		if (!t->info.command)
			return -ENOMEM;
		for (uint32_t i = 0; i + 1 < h->command.len; i++)
			if (t->info.command[i] == '\0')
				t->info.command[i] = ' ';
		t->info.records--; /* the header is not counted as a record (footer.records) */
		break;
	}
	case GW_REC_DEVICE:
		r = add_device(a, ti, &rec->device);
		break;
	case GW_REC_STRING:
		r = add_string(t, &rec->string);
		break;
	case GW_REC_STACK:
		r = add_stack(t, &rec->stack);
		break;
	case GW_REC_MODULE: {
		struct gw_module_rec *m;

		if (rec->module.event != GW_MODULE_LOADED)
			break;
		m = gw_vec_push(&t->modules, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->path = bytes_dup(rec->module.path);
		if (!m->path)
			return -ENOMEM;
		m->base = rec->module.base;
		m->start = rec->module.start;
		m->size = rec->module.size;
		break;
	}
	case GW_REC_API:
		r = add_api(a, t, ti, &rec->api);
		break;
	case GW_REC_KERNEL: {
		const struct gw_rec_kernel *k = &rec->kernel;
		struct gw_op *op;
		uint64_t threads =
			k->block_x * (k->block_y ? k->block_y : 1) * (k->block_z ? k->block_z : 1);

		t->info.counts.kernels++;
		if (untimed(t, k->start_ns, k->end_ns))
			break;
		r = add_op(a, ti, GW_OP_KERNEL, k->device, k->stream, k->correlation, k->start_ns,
			   k->end_ns);
		if (r < 0)
			return r;
		op = &((struct gw_op *)a->ops.data)[a->ops.len - 1];
		op->name_id = clamp32(k->name_id);
		op->blocks = clamp32(k->grid_x * (k->grid_y ? k->grid_y : 1) *
				     (k->grid_z ? k->grid_z : 1));
		op->threads = threads > UINT16_MAX ? UINT16_MAX : (uint16_t)threads;
		op->regs = k->registers_per_thread > 255 ? 255 : (uint8_t)k->registers_per_thread;
		op->smem = clamp32(k->static_smem_bytes + k->dynamic_smem_bytes);
		/* The join's stream test, made here: with the ops in order it lets the join find
		 * a one-stream device's chains and fusion runs in its own walk. */
		struct gw_dev_st *d = &((struct gw_dev_st *)a->devs.data)[op->dev];

		if (d->add_first_stream == UINT32_MAX)
			d->add_first_stream = op->stream;
		else if (op->stream != d->add_first_stream)
			d->add_streams = true;
		break;
	}
	case GW_REC_MEMCPY: {
		const struct gw_rec_memcpy *c = &rec->memcpy;

		t->info.counts.memcpy++;
		if (untimed(t, c->start_ns, c->end_ns))
			break;
		r = add_op(a, ti, GW_OP_MEMCPY, c->device, c->stream, c->correlation, c->start_ns,
			   c->end_ns);
		/* CUpti_ActivityMemoryKind PAGEABLE = 1: the copy had to be staged by the host. */
		if (r >= 0 && (c->src_kind == 1 || c->dst_kind == 1))
			((struct gw_op *)a->ops.data)[a->ops.len - 1].flags |= GW_OPF_PAGEABLE;
		break;
	}
	case GW_REC_MEMSET: {
		const struct gw_rec_memset *s = &rec->memset;

		t->info.counts.memset++;
		if (untimed(t, s->start_ns, s->end_ns))
			break;
		r = add_op(a, ti, GW_OP_MEMSET, s->device, s->stream, s->correlation, s->start_ns,
			   s->end_ns);
		break;
	}
	case GW_REC_MEMORY:
		r = add_memory(a, t, ti, &rec->memory);
		break;
	case GW_REC_DROPS:
		t->drops_sum += rec->drops.count;
		break;
	case GW_REC_NOTE:
		if (rec->note.level == GW_NOTE_WARNING && a->res == NULL) {
			/* Notes are kept as module-less strings until finish builds warnings. */
			struct gw_module_rec *m = gw_vec_push(&t->modules, sizeof(*m));

			if (!m)
				return -ENOMEM;
			m->path = bytes_dup(rec->note.text);
			if (!m->path)
				return -ENOMEM;
			m->base = UINT64_MAX; /* marks a note, not a module */
		}
		break;
	case GW_REC_FOOTER:
		t->footer_seen = true;
		t->footer_dropped = rec->footer.dropped;
		t->info.records--;
		break;
	default:
		break;
	}
	return r;
}

static struct gw_string_ent *string_ent(const struct gw_trace_st *t, uint64_t id)
{
	uint64_t *v = gw_hmap_find(&t->string_map, 0, id);

	return v ? &((struct gw_string_ent *)t->strings.data)[*v - 1] : NULL;
}

const char *gw_an_string(struct gw_analyzer *a, unsigned trace, uint64_t id)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);

	const struct gw_string_ent *e = t ? string_ent(t, id) : NULL;

	return e ? e->text : NULL;
}

int gw_an_site(struct gw_analyzer *a, unsigned trace, uint64_t stack_id, struct gw_site *site)
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
	if (a->opt.symbolize && !t->sym_tried) {
		struct gw_module_rec *m = t->modules.data;

		t->sym_tried = true;
		r = gw_symbolizer_new(&t->sym);
		if (r < 0)
			return r;
		for (size_t i = 0; i < t->modules.len; i++) {
			if (m[i].base == UINT64_MAX)
				continue;
			r = gw_symbolizer_add_module(t->sym, m[i].path, m[i].base, m[i].start,
						     m[i].size);
			if (r < 0)
				return r;
		}
	}
	return gw_symbolize_site(t->sym, s->ips, s->depth, site);
}

/* ---- finish ---- */

static int cmp_api(const void *x, const void *y, void *ctx)
{
	const struct gw_api *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->corr < q->corr ? -1 : p->corr > q->corr;
}

static int cmp_op(const void *x, const void *y, void *ctx)
{
	const struct gw_op *p = x, *q = y;

	(void)ctx;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

static int cmp_mev(const void *x, const void *y, void *ctx)
{
	const struct gw_mev *p = x, *q = y;

	(void)ctx;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->time_ns < q->time_ns ? -1 : p->time_ns > q->time_ns;
}

static uint32_t find_api(const struct gw_analyzer *a, uint16_t trace, uint64_t corr, size_t *hint)
{
	const struct gw_api *v = a->apis.data;
	size_t n = a->apis.len, lo = 0, hi = n;

	/* Ops come in launch order per stream: the next few API entries usually hold the match. */
	for (size_t i = *hint; i < n && i < *hint + 4; i++)
		if (v[i].trace == trace && v[i].corr == corr)
			return (uint32_t)(*hint = i);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].trace < trace || (v[mid].trace == trace && v[mid].corr < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].trace == trace && v[lo].corr == corr) {
		*hint = lo;
		return (uint32_t)lo;
	}
	return UINT32_MAX;
}

/* Class of a kernel name, cached per string id. */
static uint8_t name_class(struct gw_analyzer *a, unsigned trace, uint32_t id, bool *classified)
{
	struct gw_trace_st *t = gw_an_trace(a, trace);
	struct gw_string_ent *e = string_ent(t, id);
	char *d;
	uint8_t c;
	bool ok;

	if (e && e->cls) {
		*classified = e->cls & 0x80;
		return (uint8_t)((e->cls & 0x7f) - 1);
	}
	d = gw_demangle(e && e->text ? e->text : "");
	c = (uint8_t)gw_kernel_class(d ? d : (e ? e->text : ""), &ok);
	free(d);
	*classified = ok;
	if (e)
		e->cls = (uint8_t)((c + 1) | (ok ? 0x80 : 0));
	return c;
}

/* Loops cycle through a few names: the classes of the last 64 are remembered. */
struct gw_class_cache {
	uint64_t key; /* (trace << 32 | name) + 1; 0 empty */
	uint8_t cls;
	bool ok;
};

static struct gw_class_cache *class_of(struct gw_analyzer *a, struct gw_class_cache *cache,
				       unsigned trace, uint32_t name)
{
	uint64_t key = ((uint64_t)trace << 32 | name) + 1;
	struct gw_class_cache *c = &cache[(name * 0x9E3779B1u) >> 26];

	if (c->key != key) {
		c->key = key;
		c->cls = name_class(a, trace, name, &c->ok);
	}
	return c;
}

/* Loops repeat a few launch shapes: the fills of the last 64 are remembered. */
struct gw_fill_cache {
	const struct gw_dev_st *d;
	uint32_t blocks, smem;
	uint16_t threads;
	uint8_t regs;
	float fill;
};

static float op_fill(struct gw_fill_cache *cache, const struct gw_dev_st *d, const struct gw_op *op)
{
	unsigned i = ((op->blocks * 0x9E3779B1u) ^ (op->threads * 0x85EBCA6Bu) ^
		      (op->smem * 0xC2B2AE35u) ^ op->regs) >>
		     26;

	if (cache[i].d != d || cache[i].blocks != op->blocks || cache[i].smem != op->smem ||
	    cache[i].threads != op->threads || cache[i].regs != op->regs) {
		cache[i].d = d;
		cache[i].blocks = op->blocks;
		cache[i].smem = op->smem;
		cache[i].threads = op->threads;
		cache[i].regs = op->regs;
		cache[i].fill =
			(float)gw_kernel_fill(&d->lim, op->blocks, op->threads, op->regs, op->smem);
	}
	return cache[i].fill;
}

static int join_and_sort(struct gw_analyzer *a)
{
	struct gw_op *ops;
	struct gw_api *apis;
	struct gw_dev_st *devs = a->devs.data;
	size_t hint = 0;
	struct gw_fill_cache fill_cache[64] = {0};
	struct gw_class_cache class_cache[64] = {0};
	struct gw_dev_st *rd = NULL; /* the device whose runs are being walked */
	struct gw_runs runs;
	size_t m = 0;
	bool inline_runs = !a->ops_unsorted;
	int r;

	a->apis_resorted = a->apis_unsorted;
	if ((a->apis_resorted &&
	     gw_sort_r(a->apis.data, a->apis.len, sizeof(struct gw_api), cmp_api, NULL) < 0) ||
	    (a->ops_unsorted &&
	     gw_sort_r(a->ops.data, a->ops.len, sizeof(struct gw_op), cmp_op, NULL) < 0) ||
	    gw_sort_r(a->mevs.data, a->mevs.len, sizeof(struct gw_mev), cmp_mev, NULL) < 0)
		return -ENOMEM;
	ops = a->ops.data;
	apis = a->apis.data;
	a->kidx = malloc((a->ops.len + 1) * sizeof(*a->kidx));
	if (!a->kidx)
		return -ENOMEM;
	for (size_t i = 0; i < a->devs.len; i++) {
		devs[i].op_begin = devs[i].op_end = 0;
		devs[i].r.start_ns = UINT64_MAX;
		/* Only when no device waits for its own pass: fusion candidates are then added
		 * in the same device order as the passes would add them. */
		if (devs[i].add_streams)
			inline_runs = false;
	}
	for (size_t i = 0; i < a->ops.len; i++) {
		struct gw_op *op = &ops[i];
		struct gw_dev_st *d = &devs[op->dev];
		uint32_t ai = find_api(a, (uint16_t)d->r.trace, op->corr, &hint);

		if (d->r.start_ns == UINT64_MAX) {
			d->op_begin = i;
			d->r.start_ns = op->start_ns;
			d->streams = false;
			d->first_stream = UINT32_MAX;
			/* Ops in add order, each device's kernels on one stream: they are in
			 * (stream, start) order already, and chains and fusion runs are found
			 * right here instead of in a pass of their own. */
			if (rd && (r = gw_runs_step(a, rd, a->kidx, m, m, &runs)) < 0)
				return r;
			rd = NULL;
			if (inline_runs) {
				rd = d;
				m = 0;
				runs = (struct gw_runs){.chain = SIZE_MAX, .tiny = SIZE_MAX};
			}
		}
		d->op_end = i + 1;
		if (op->end_ns > d->r.end_ns)
			d->r.end_ns = op->end_ns;
		/* The correlation id is not needed any more: its place holds the API and fill. */
		op->api = ai;
		op->fill = 0;
		if (op->kind == GW_OP_KERNEL) {
			struct gw_class_cache *cc =
				class_of(a, class_cache, d->r.trace, op->name_id);

			op->fill = op_fill(fill_cache, d, op);
			op->cls = cc->cls;
			if (op->end_ns - op->start_ns < a->opt.tiny_ns)
				op->flags |= GW_OPF_TINY;
			if (d->first_stream == UINT32_MAX)
				d->first_stream = op->stream;
			else if (op->stream != d->first_stream)
				d->streams = true;
			/* Saturating: a corrupt trace's absurd durations must not wrap the sums
			 * (an unclassified share above 1). */
			uint64_t dur = op->end_ns - op->start_ns;

			a->kernel_ns =
				a->kernel_ns > UINT64_MAX - dur ? UINT64_MAX : a->kernel_ns + dur;
			if (!cc->ok)
				a->unclassified_ns = a->unclassified_ns > UINT64_MAX - dur
							     ? UINT64_MAX
							     : a->unclassified_ns + dur;
			if (rd) {
				a->kidx[m] = (uint32_t)(i - d->op_begin);
				if ((r = gw_runs_step(a, d, a->kidx, m, SIZE_MAX, &runs)) < 0)
					return r;
				m++;
			}
		} else if (op->kind == GW_OP_MEMCPY && (op->flags & GW_OPF_PAGEABLE) &&
			   ai != UINT32_MAX && apis[ai].sync_kind == GW_SYNC_NONE) {
			/* An async copy from or to pageable memory waits for the host staging. */
			apis[ai].sync_kind = GW_SYNC_COPY;
			if (apis[ai].category != GW_API_MEMCPY)
				a->sync_outside = true; /* not among the candidates */
		}
	}
	if (rd && (r = gw_runs_step(a, rd, a->kidx, m, m, &runs)) < 0)
		return r;
	for (size_t i = 0; i < a->devs.len; i++)
		devs[i].runs_done = inline_runs;
	return 0;
}

/* The top idle bucket is GW_BUCKET_COUNT (none) when no SM-time was idle: naming the first
 * of the buckets that all tie at 0 would mislead. */
static void pick_dominant(const double *bd, enum gw_bucket *dom, enum gw_bucket *idle)
{
	int best = 0, best_idle = GW_BUCKET_COUNT;

	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (bd[b] > bd[best])
			best = b;
		if (b != GW_BUCKET_COMPUTE && bd[b] > 0 &&
		    (best_idle == GW_BUCKET_COUNT || bd[b] > bd[best_idle]))
			best_idle = b;
	}
	*dom = (enum gw_bucket)best;
	*idle = (enum gw_bucket)best_idle;
}

/*
 * Growth is the least-squares slope of live device bytes over time (the step curve, weighted
 * by how long each level lasted) in the second half of the trace's working span, so that
 * allocations made to set up and frees at teardown are not growth, while what keeps growing
 * as the program works is. The working span is the host's: from its first launch call to
 * its last, where allocations interleave with the work they serve even when the host runs far
 * ahead of the GPU. Without two launch calls it is the GPU's (first to last operation), and
 * without those the memory events' own.
 */
struct growth_fit {
	uint64_t w0, w1;   /* the window */
	uint64_t prev_ns;  /* since when the curve has had prev_bytes */
	double prev_bytes; /* live device bytes since prev_ns */
	double sy, sty;	   /* integrals over the window of y dt and t y dt, t in s from w0 */
};

/* Per trace, [2t] and [2t + 1]: the first and last start of a launch call (UINT64_MAX, 0
 * when it has none). */
static uint64_t *launch_spans(const struct gw_analyzer *a, unsigned n_traces)
{
	const struct gw_api *apis = a->apis.data;
	uint64_t *span = malloc(2 * (n_traces ? n_traces : 1) * sizeof(*span));

	if (!span)
		return NULL;
	for (unsigned t = 0; t < n_traces; t++) {
		span[2 * t] = UINT64_MAX;
		span[2 * t + 1] = 0;
	}
	for (size_t i = 0; i < a->apis.len; i++) {
		const struct gw_api *p = &apis[i];

		if ((p->category != GW_API_LAUNCH && p->category != GW_API_GRAPH_LAUNCH) ||
		    p->trace >= n_traces)
			continue;
		if (p->start_ns < span[2 * p->trace])
			span[2 * p->trace] = p->start_ns;
		if (p->start_ns > span[2 * p->trace + 1])
			span[2 * p->trace + 1] = p->start_ns;
	}
	return span;
}

static void growth_begin(struct growth_fit *g, const struct gw_analyzer *a, unsigned trace,
			 const uint64_t *launches, const struct gw_mev *m, size_t i, size_t n)
{
	const struct gw_dev_st *devs = a->devs.data;
	uint64_t s = launches[2 * trace], e = launches[2 * trace + 1];

	if (s >= e) {
		s = UINT64_MAX;
		e = 0;
		for (size_t d = 0; d < a->devs.len; d++) {
			if (devs[d].r.trace != trace || devs[d].r.start_ns == UINT64_MAX)
				continue;
			if (devs[d].r.start_ns < s)
				s = devs[d].r.start_ns;
			if (devs[d].r.end_ns > e)
				e = devs[d].r.end_ns;
		}
	}
	if (s >= e) {
		s = m[i].time_ns;
		for (e = s; i < n && m[i].trace == trace; i++)
			e = m[i].time_ns;
	}
	*g = (struct growth_fit){.w0 = s + (e - s) / 2, .w1 = e, .prev_ns = s};
}

/* The curve held prev_bytes from prev_ns to t: add the part inside the window. */
static void growth_step(struct growth_fit *g, uint64_t t, double bytes)
{
	uint64_t a = g->prev_ns > g->w0 ? g->prev_ns : g->w0, b = t < g->w1 ? t : g->w1;

	if (b > a) {
		double x0 = (double)(a - g->w0) * 1e-9, x1 = (double)(b - g->w0) * 1e-9;

		g->sy += g->prev_bytes * (x1 - x0);
		g->sty += g->prev_bytes * (x1 * x1 - x0 * x0) / 2;
	}
	if (t > g->prev_ns)
		g->prev_ns = t;
	g->prev_bytes = bytes;
}

/* Slope = integral of (t - T/2)(y - mean) dt over integral of (t - T/2)^2 dt, = (sty -
 * T/2 sy) / (T^3 / 12); 0 for an empty window. Under a byte a second it is the rounding of
 * a flat curve's two large integrals, and reads 0. */
static double growth_end(struct growth_fit *g)
{
	double span = (double)(g->w1 - g->w0) * 1e-9, slope;

	growth_step(g, g->w1, g->prev_bytes);
	if (!(span > 0))
		return 0;
	slope = (g->sty - span / 2 * g->sy) / (span * span * span / 12);
	return fabs(slope) < 1 ? 0 : slope;
}

/* Live device bytes over time, peaks, growth, allocation sites and never-freed allocations. */
static int account_memory(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	struct gw_mev *m = a->mevs.data;
	struct gw_dev_st *devs;
	struct gw_hmap live = {0};
	uint64_t *launches = launch_spans(a, (unsigned)a->traces.len);
	size_t i = 0;
	int r = 0;

	if (!launches)
		return -ENOMEM;
	while (i < a->mevs.len) {
		unsigned trace = m[i].trace;
		uint64_t cur = 0, managed = 0, pinned = 0, peak = 0;
		struct growth_fit growth;

		growth_begin(&growth, a, trace, launches, m, i, a->mevs.len);

		for (; i < a->mevs.len && m[i].trace == trace; i++) {
			const struct gw_mev *e = &m[i];
			bool device_mem =
				e->kind != GW_MEM_MANAGED && e->kind != GW_MEM_HOST_PINNED;
			int di = dev_index(a, trace, e->device);
			uint64_t *v;
			struct gw_alloc_acc *acc;
			bool fresh;

			if (di < 0) {
				r = di;
				goto out;
			}
			devs = a->devs.data;
			if (e->op == GW_MEMORY_ALLOC) {
				v = gw_hmap_get(&a->alloc_map, ((uint64_t)trace << 8) | e->kind,
						e->stack_id, &fresh);
				if (!v) {
					r = -ENOMEM;
					goto out;
				}
				if (fresh) {
					acc = gw_vec_push(&a->allocs, sizeof(*acc));
					if (!acc) {
						r = -ENOMEM;
						goto out;
					}
					acc->trace = (uint16_t)trace;
					acc->kind = e->kind;
					acc->stack_id = e->stack_id;
					*v = a->allocs.len;
				}
				acc = &((struct gw_alloc_acc *)a->allocs.data)[*v - 1];
				acc->count++;
				acc->bytes += e->bytes;
				if (e->bytes > acc->max_bytes)
					acc->max_bytes = e->bytes;
				/* Live entry: (bytes, site index, dev, kind) packed into two words. */
				v = gw_hmap_get(&live, trace, e->addr, &fresh);
				if (!v) {
					r = -ENOMEM;
					goto out;
				}
				if (!fresh)
					continue; /* address reused without a free we saw: keep the first */
				*v = ((uint64_t)(acc - (struct gw_alloc_acc *)a->allocs.data)
				      << 40) |
				     ((uint64_t)(unsigned)di << 24) | ((uint64_t)e->kind << 16);
				/* bytes do not fit beside the rest: store them in a second entry */
				v = gw_hmap_get(&live, trace | (1ull << 32), e->addr, NULL);
				if (!v) {
					r = -ENOMEM;
					goto out;
				}
				*v = e->bytes;
				if (device_mem) {
					devs[di].live_bytes += e->bytes;
					if (devs[di].live_bytes > devs[di].peak_bytes)
						devs[di].peak_bytes = devs[di].live_bytes;
					cur += e->bytes;
				} else if (e->kind == GW_MEM_MANAGED) {
					managed += e->bytes;
				} else {
					pinned += e->bytes;
				}
			} else {
				uint64_t *info = gw_hmap_find(&live, trace, e->addr);
				uint64_t *bytes =
					gw_hmap_find(&live, trace | (1ull << 32), e->addr);
				uint64_t b, packed;
				unsigned k, odi;

				if (!info || !bytes)
					continue; /* freeing what we never saw allocated */
				b = *bytes;
				packed = *info;
				k = (unsigned)(packed >> 16) & 0xff;
				odi = (unsigned)(packed >> 24) & 0xffff;
				gw_hmap_del(&live, trace, e->addr);
				gw_hmap_del(&live, trace | (1ull << 32), e->addr);
				if (k != GW_MEM_MANAGED && k != GW_MEM_HOST_PINNED) {
					devs[odi].live_bytes -= b;
					cur -= b;
				} else if (k == GW_MEM_MANAGED) {
					managed -= b;
				} else {
					pinned -= b;
				}
				device_mem = k != GW_MEM_MANAGED && k != GW_MEM_HOST_PINNED;
			}
			if (cur > peak)
				peak = cur;
			if (managed > res->memory.managed_peak_bytes)
				res->memory.managed_peak_bytes = managed;
			if (pinned > res->memory.pinned_peak_bytes)
				res->memory.pinned_peak_bytes = pinned;
			if (!device_mem)
				continue;
			growth_step(&growth, e->time_ns, (double)cur);
			if (res->n_bins) {
				uint64_t b = e->time_ns > res->start_ns
						     ? (e->time_ns - res->start_ns) / res->bin_ns
						     : 0;

				if (b < res->n_bins && cur > res->bins[b].live_bytes_max)
					res->bins[b].live_bytes_max = cur;
			}
		}
		gw_an_trace(a, trace)->info.peak_bytes = peak;
		res->memory.final_bytes += cur;
		res->memory.growth_bytes_per_s += growth_end(&growth);
	}
	/* What is still live was never freed. */
	for (size_t s = 0; s < live.cap; s++) {
		struct gw_hmap_slot *sl = &live.slots[s];
		struct gw_alloc_acc *acc;
		uint64_t *bytes;

		if (!sl->used || (sl->k1 >> 32))
			continue;
		bytes = gw_hmap_find(&live, sl->k1 | (1ull << 32), sl->k2);
		acc = &((struct gw_alloc_acc *)a->allocs.data)[sl->value >> 40];
		acc->never_freed++;
		acc->never_freed_bytes += bytes ? *bytes : 0;
		res->memory.never_freed++;
		res->memory.never_freed_bytes += bytes ? *bytes : 0;
	}
	devs = a->devs.data;
	for (size_t d = 0; d < a->devs.len; d++) {
		double frac;

		devs[d].r.peak_bytes = devs[d].peak_bytes;
		if (devs[d].peak_bytes > res->memory.peak_bytes) {
			res->memory.peak_bytes = devs[d].peak_bytes;
			if (!res->memory.total_bytes)
				res->memory.total_bytes = devs[d].r.memory_total_bytes;
		}
		if (!devs[d].r.memory_total_bytes)
			continue;
		frac = (double)devs[d].peak_bytes / (double)devs[d].r.memory_total_bytes;
		if (frac >= res->memory.peak_fraction) {
			res->memory.peak_fraction = frac;
			res->memory.total_bytes = devs[d].r.memory_total_bytes;
		}
	}
	if (!res->memory.total_bytes)
		for (size_t d = 0; d < a->devs.len; d++)
			if (devs[d].r.memory_total_bytes) {
				res->memory.total_bytes = devs[d].r.memory_total_bytes;
				break;
			}
	/* Bins without an event keep the level of the bin before. */
	for (unsigned b = 1; b < res->n_bins; b++)
		if (!res->bins[b].live_bytes_max)
			res->bins[b].live_bytes_max = res->bins[b - 1].live_bytes_max;
out:
	gw_hmap_free(&live);
	free(launches);
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

static char *kernel_name(struct gw_analyzer *a, unsigned trace, uint32_t id)
{
	const char *n = gw_an_string(a, trace, id);

	return n ? gw_demangle(n) : gw_strdupf("kernel#%u", id);
}

static int build_sites(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	unsigned top = a->opt.top_n;
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
		      NULL) < 0)
		return -ENOMEM;

	res->n_sync_sites = (unsigned)(a->syncs.len < top ? a->syncs.len : top);
	res->sync_sites = calloc(res->n_sync_sites + 1u, sizeof(*res->sync_sites));
	if (!res->sync_sites)
		return -ENOMEM;
	for (unsigned i = 0; i < res->n_sync_sites; i++) {
		const struct gw_sync_acc *s = &((struct gw_sync_acc *)a->syncs.data)[i];
		struct gw_sync_site *o = &res->sync_sites[i];
		const char *api = gw_an_string(a, s->trace, s->name_id);

		if ((r = gw_an_site(a, s->trace, s->stack_id, &o->site)) < 0)
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

	res->n_kernels = (unsigned)(a->kstats.len < 5 * top ? a->kstats.len : 5 * top);
	res->kernels = calloc(res->n_kernels + 1u, sizeof(*res->kernels));
	if (!res->kernels)
		return -ENOMEM;
	for (unsigned i = 0; i < res->n_kernels; i++) {
		const struct gw_kernel_acc *s = &((struct gw_kernel_acc *)a->kstats.data)[i];
		struct gw_kernel_stat *o = &res->kernels[i];

		if ((r = gw_an_site(a, s->trace, s->stack_id, &o->site)) < 0)
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

	res->n_tiny_kernels = (unsigned)(a->tiny.len < top ? a->tiny.len : top);
	res->tiny_kernels = calloc(res->n_tiny_kernels + 1u, sizeof(*res->tiny_kernels));
	if (!res->tiny_kernels)
		return -ENOMEM;
	for (unsigned i = 0; i < res->n_tiny_kernels; i++) {
		const struct gw_tiny_acc *s = &((struct gw_tiny_acc *)a->tiny.data)[i];
		struct gw_tiny_kernel *o = &res->tiny_kernels[i];

		if ((r = gw_an_site(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
		if (!(o->name = kernel_name(a, s->trace, s->name_id)))
			return -ENOMEM;
		o->count = s->count;
		o->total_ns = s->total_ns;
		o->gap_before_ns = s->gap_before_ns;
	}

	res->n_alloc_sites = (unsigned)(a->allocs.len < top ? a->allocs.len : top);
	res->alloc_sites = calloc(res->n_alloc_sites + 1u, sizeof(*res->alloc_sites));
	if (!res->alloc_sites)
		return -ENOMEM;
	for (unsigned i = 0; i < res->n_alloc_sites; i++) {
		const struct gw_alloc_acc *s = &((struct gw_alloc_acc *)a->allocs.data)[i];
		struct gw_alloc_site *o = &res->alloc_sites[i];

		if ((r = gw_an_site(a, s->trace, s->stack_id, &o->site)) < 0)
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
		if ((r = gw_an_site(a, s->trace, s->stack_id, &o->site)) < 0)
			return r;
	}
	return 0;
}

static int build_results(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	struct gw_dev_st *devs = a->devs.data;
	const struct gw_api *apis = a->apis.data;
	double filled = 0, active = 0;
	int r;

	/* Every api that may wait is a candidate, unless sorting moved them or the join made a
	 * non-copy call wait. */
	bool all = a->apis_resorted || a->sync_outside;
	const uint32_t *cand = a->sync_apis.data;
	size_t n = all ? a->apis.len : a->sync_apis.len;

	for (size_t c = 0; c < n; c++) {
		size_t i = all ? c : cand[c];

		if (apis[i].sync_kind != GW_SYNC_NONE) {
			gw_an_trace(a, apis[i].trace)->info.counts.host_syncs++;
			gw_an_trace(a, apis[i].trace)
				->info.counts.syncs_by_kind[apis[i].sync_kind & 3]++;
		}
	}

	res->n_devices = (unsigned)a->devs.len;
	res->devices = calloc(res->n_devices + 1u, sizeof(*res->devices));
	res->n_traces = (unsigned)a->traces.len;
	res->traces = calloc(res->n_traces + 1u, sizeof(*res->traces));
	if (!res->devices || !res->traces)
		return -ENOMEM;
	for (unsigned t = 0; t < res->n_traces; t++) {
		struct gw_trace_st *ts = gw_an_trace(a, t);
		struct gw_trace_info *ti = &res->traces[t];
		double sm[GW_BUCKET_COUNT] = {0}, budget = 0;

		*ti = ts->info;
		memset(&ts->info, 0, sizeof(ts->info)); /* strings now owned by res */
		ti->dropped_records =
			ts->drops_sum > ts->footer_dropped ? ts->drops_sum : ts->footer_dropped;
		ti->clean_exit = ts->footer_seen || (ts->have_end_status && ts->reader_said_clean);
		ti->start_ns = UINT64_MAX;
		for (size_t d = 0; d < a->devs.len; d++) {
			if (devs[d].r.trace != t || devs[d].r.start_ns == UINT64_MAX)
				continue;
			for (int b = 0; b < GW_BUCKET_COUNT; b++)
				sm[b] += devs[d].r.sm_ns[b];
			budget += devs[d].r.budget_sm_ns;
			if (devs[d].r.start_ns < ti->start_ns)
				ti->start_ns = devs[d].r.start_ns;
			if (devs[d].r.end_ns > ti->end_ns)
				ti->end_ns = devs[d].r.end_ns;
		}
		if (ti->start_ns == UINT64_MAX)
			ti->start_ns = 0;
		for (int b = 0; b < GW_BUCKET_COUNT && budget > 0; b++)
			ti->breakdown[b] = sm[b] / budget;
		pick_dominant(ti->breakdown, &ti->dominant, &ti->top_idle);

		res->counts.kernels += ti->counts.kernels;
		res->counts.tiny_kernels += ti->counts.tiny_kernels;
		res->counts.launches += ti->counts.launches;
		res->counts.host_syncs += ti->counts.host_syncs;
		res->counts.memcpy += ti->counts.memcpy;
		res->counts.memset += ti->counts.memset;
		res->counts.allocations += ti->counts.allocations;
		res->counts.frees += ti->counts.frees;
		for (int k = 0; k < 4; k++)
			res->counts.syncs_by_kind[k] += ti->counts.syncs_by_kind[k];

		if (ti->truncated &&
		    (r = add_warning(res,
				     gw_strdupf("%s: the trace is truncated (the process died, "
						"is still running, or its writes failed: a "
						"full disk, a file-size limit); analysed up "
						"to its last complete frame",
						ti->path))) < 0)
			return r;
		if (ti->untimed_gpu_ops &&
		    (r = add_warning(res, gw_strdupf("%s: %llu GPU operations came without "
						     "timestamps (CUPTI could not time them): "
						     "counted, not placed on the timeline",
						     ti->path,
						     (unsigned long long)ti->untimed_gpu_ops))) < 0)
			return r;
		if (ti->dropped_records &&
		    (r = add_warning(
			     res, gw_strdupf("%s: %llu records were dropped during capture; "
					     "the figures undercount",
					     ti->path, (unsigned long long)ti->dropped_records))) <
			    0)
			return r;
		for (size_t m = 0; m < ts->modules.len; m++) {
			struct gw_module_rec *mr = &((struct gw_module_rec *)ts->modules.data)[m];

			if (mr->base == UINT64_MAX &&
			    (r = add_warning(
				     res, gw_strdupf("%s: capture: %s", ti->path, mr->path))) < 0)
				return r;
		}
	}
	for (size_t d = 0; d < a->devs.len; d++) {
		struct gw_device_result *o = &res->devices[d];

		*o = devs[d].r;
		devs[d].r.name = NULL;
		if (o->start_ns == UINT64_MAX)
			o->start_ns = o->end_ns = 0;
		for (int b = 0; b < GW_BUCKET_COUNT; b++) {
			res->sm_ns[b] += o->sm_ns[b];
			if (o->budget_sm_ns > 0)
				o->breakdown[b] = o->sm_ns[b] / o->budget_sm_ns;
		}
		res->budget_sm_ns += o->budget_sm_ns;
		active += (double)o->kernel_active_ns * (double)o->sm_count;
		filled += devs[d].fill_sm_ns;
		if (!o->described && o->budget_sm_ns > 0 &&
		    (r = add_warning(res, gw_strdupf("device %llu of %s has no device record: its "
						     "limits are assumed (132 SMs, 2048 threads, "
						     "64 Ki registers, 228 KiB shared per SM)",
						     (unsigned long long)o->id,
						     res->traces[o->trace].path))) < 0)
			return r;
	}
	if (res->budget_sm_ns > 0) {
		for (int b = 0; b < GW_BUCKET_COUNT; b++)
			res->breakdown[b] = res->sm_ns[b] / res->budget_sm_ns;
		res->util.kernel_active = active / res->budget_sm_ns;
		res->util.sm_busy = filled / res->budget_sm_ns;
	} else if ((r = add_warning(res, strdup("no GPU operation in the trace: nothing to "
						"attribute"))) < 0) {
		return r;
	}
	pick_dominant(res->breakdown, &res->dominant, &res->top_idle);
	res->util.compute = res->breakdown[GW_BUCKET_COMPUTE];
	res->util.memory_bandwidth = -1;
	res->unclassified_kernel_share =
		a->kernel_ns ? (double)a->unclassified_ns / (double)a->kernel_ns : 0;
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
	if (!cur_trace(a))
		return -ENOMEM;
	res = a->res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	if ((r = join_and_sort(a)) < 0)
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
	if ((r = gw_attribute(a)) < 0 || (r = account_memory(a)) < 0 ||
	    (r = build_results(a)) < 0 || (r = build_sites(a)) < 0)
		goto fail;
	res->memory_high = res->memory.peak_fraction >= 0.8;
	res->compute_high = res->breakdown[GW_BUCKET_COMPUTE] >= 0.6;
	if ((r = gw_advise(a)) < 0)
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
		gw_vec_free(&t->strings);
		gw_vec_free(&t->stacks);
		gw_hmap_free(&t->string_map);
		gw_hmap_free(&t->stack_map);
		gw_vec_free(&t->modules);
		free(t->info.path);
		free(t->info.command);
		gw_symbolizer_free(t->sym);
	}
	for (size_t i = 0; i < a->devs.len; i++)
		free(((struct gw_dev_st *)a->devs.data)[i].r.name);
	gw_vec_free(&a->traces);
	gw_vec_free(&a->devs);
	gw_hmap_free(&a->dev_map);
	gw_vec_free(&a->ops);
	gw_vec_free(&a->apis);
	gw_vec_free(&a->mevs);
	gw_vec_free(&a->sync_apis);
	free(a->kidx);
	gw_vec_free(&a->syncs);
	gw_hmap_free(&a->sync_map);
	gw_vec_free(&a->tiny);
	gw_hmap_free(&a->tiny_map);
	gw_vec_free(&a->fusion);
	gw_hmap_free(&a->fusion_map);
	gw_vec_free(&a->allocs);
	gw_vec_free(&a->kstats);
	gw_hmap_free(&a->kstat_map);
	gw_hmap_free(&a->alloc_map);
	gw_vec_free(&a->gaps);
	gw_analysis_free(a->res);
	free(a);
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
	for (unsigned i = 0; i < res->n_recs; i++)
		free(res->recs[i].text);
	free(res->recs);
	free(res->bins);
	free(res->gaps);
	for (unsigned i = 0; i < res->n_warnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	free(res);
}
