/* SPDX-License-Identifier: MIT */
/* Stage 1, collect: decoded records into the model's compact tables, in any order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int gw_analyzer_begin_trace(struct gw_analyzer *a, const char *path)
{
	struct gw_trace_st *t;

	if (a->traces.len >= UINT16_MAX)
		return -E2BIG;
	t = gw_vec_push(&a->traces, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->info.rank = -1;
	t->memory_recorded = true;
	t->info.path = strdup(path ? path : "-");
	return t->info.path ? 0 : -ENOMEM;
}

int gw_analyzer_warn(struct gw_analyzer *a, const char *text)
{
	char **w = gw_vec_push(&a->warnings, sizeof(*w));

	if (!w)
		return -ENOMEM;
	if (!(*w = strdup(text))) {
		a->warnings.len--;
		return -ENOMEM;
	}
	return 0;
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

static int add_device(struct gw_analyzer *a, unsigned trace, const struct gw_rec_device *r)
{
	int di = gw_an_device(a, trace, r->device);
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
	/* What the trace does not say is unknown, not the assumed GPU's. */
	d->lim.cc_major = r->cc_major;
	d->lim.cc_minor = r->cc_minor;
	d->lim.max_threads_per_block = r->max_threads_per_block;
	d->lim.max_regs_per_block = r->max_regs_per_block;
	d->lim.max_smem_per_block_bytes = r->max_smem_per_block_bytes;
	d->r.sm_count = d->lim.sm_count;
	d->r.memory_total_bytes = r->memory_total_bytes;
	free(d->uuid);
	d->uuid = NULL;
	d->uuid_len = 0;
	for (uint32_t i = 0; i < r->uuid.len; i++) {
		if (!r->uuid.data[i])
			continue;
		/* all zeros is no uuid */
		d->uuid = malloc(r->uuid.len);
		if (!d->uuid)
			return -ENOMEM;
		memcpy(d->uuid, r->uuid.data, r->uuid.len);
		d->uuid_len = r->uuid.len;
		break;
	}
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

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint8_t clamp8(uint64_t v)
{
	return v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

/* Blocks per cluster from its dimensions (0 unknown: 1). */
static uint8_t cluster_blocks(uint64_t x, uint64_t y, uint64_t z)
{
	return clamp8((uint64_t)clamp8(x ? x : 1) * clamp8(y ? y : 1) * clamp8(z ? z : 1));
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
	s->kind = r->ips_kind == GW_STACK_FRAMES || r->ips_kind == GW_STACK_MIXED
			  ? (uint8_t)r->ips_kind
			  : GW_STACK_ADDRESSES;
	return 0;
}

static int add_frame(struct gw_trace_st *t, const struct gw_rec_frame *r)
{
	struct gw_frame_ent *f;

	if (!r->id)
		return 0;
	f = id_slot(&t->frame_map, &t->frames, sizeof(*f), r->id);
	if (!f)
		return -ENOMEM;
	f->function_id = clamp32(r->function_id);
	f->file_id = clamp32(r->file_id);
	f->module_id = clamp32(r->module_id);
	f->line = clamp32(r->line);
	f->lang = r->lang > 255 ? 0 : (uint8_t)r->lang;
	return 0;
}

static int add_pycode(struct gw_trace_st *t, const struct gw_rec_pycode *r)
{
	struct gw_pycode_ent *c;

	if (!r->id)
		return 0;
	c = id_slot(&t->pycode_map, &t->pycodes, sizeof(*c), r->id);
	if (!c)
		return -ENOMEM;
	free(c->table);
	*c = (struct gw_pycode_ent){
		.file_id = clamp32(r->file_id),
		.function_id = clamp32(r->function_id),
		.first_line = clamp32(r->first_line),
		.version = r->version > UINT16_MAX ? 0 : (uint16_t)r->version,
	};
	if (r->line_table.len && !(r->flags & GW_PYCODE_TABLE_CUT)) {
		if (!(c->table = malloc(r->line_table.len)))
			return -ENOMEM;
		memcpy(c->table, r->line_table.data, r->line_table.len);
		c->table_len = r->line_table.len;
	}
	return 0;
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
	int di = gw_an_device(a, trace, device);
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
	op->trace = (uint16_t)trace;
	op->kind = (uint8_t)kind;
	{
		struct gw_dev_st *d = &((struct gw_dev_st *)a->devs.data)[di];

		if (op->start_ns < d->first_ns)
			d->first_ns = op->start_ns;
		if (op->end_ns > d->last_ns)
			d->last_ns = op->end_ns;
	}
	/* Noted while the previous op is still in cache: finish then skips a pass over all. */
	if (a->ops.len > 1 &&
	    (op[-1].dev > op->dev || (op[-1].dev == op->dev && op[-1].start_ns > op->start_ns)))
		a->ops_unsorted = true;
	return 0;
}

/* A stream recording a graph, and the thread that started it. */
struct capture_ent {
	uint64_t stream, tid;
};

/* Whether a call of thread tid on stream s issues into a graph being recorded: s is recording,
 * or s is unknown (0: nvcc 13's <<<>>> launch publishes no parameters) and tid started a
 * recording. Returns its slot or -1. */
static ssize_t capture_slot(const struct gw_trace_st *t, uint64_t s, uint64_t tid)
{
	const struct capture_ent *v = t->capturing.data;

	for (size_t i = 0; i < t->capturing.len; i++)
		if (s ? v[i].stream == s : v[i].tid == tid)
			return (ssize_t)i;
	return -1;
}

/* A stream starts or stops recording a graph (records come in call order per thread). */
static int capture_mark(struct gw_trace_st *t, uint64_t s, uint64_t tid, bool begin)
{
	ssize_t i = capture_slot(t, s, tid);
	struct capture_ent *v;

	if (begin && i < 0) {
		if (t->capturing.len >= 1024)
			return 0; /* a bound for hostile input: captures are few at once */
		if (!(v = gw_vec_push(&t->capturing, sizeof(*v))))
			return -ENOMEM;
		*v = (struct capture_ent){s, tid};
	} else if (!begin && i >= 0) {
		v = t->capturing.data;
		v[i] = v[--t->capturing.len];
	}
	return 0;
}

static int add_api(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		   const struct gw_rec_api *r)
{
	struct gw_api *p;

	/* Work issued to a stream that records a graph is a node of the graph: it runs when the
	 * graph is launched, whose launch the kernels then join. */
	if (t->capturing.len && r->sync_kind == GW_SYNC_NONE &&
	    (r->category == GW_API_LAUNCH || r->category == GW_API_GRAPH_LAUNCH ||
	     r->category == GW_API_MEMCPY || r->category == GW_API_MEMSET) &&
	    capture_slot(t, r->stream, r->tid) >= 0) {
		if (r->category == GW_API_LAUNCH || r->category == GW_API_GRAPH_LAUNCH)
			t->info.counts.captured_launches++;
		return 0;
	}
	switch (r->category) {
	case GW_API_CAPTURE_BEGIN:
	case GW_API_CAPTURE_END:
		/* a failed call starts or stops nothing; stream 0 (the legacy stream, which cannot
		 * record, or a trace that does not say) is never taken as recording */
		if (r->status || !r->stream)
			return 0;
		return capture_mark(t, r->stream, r->tid, r->category == GW_API_CAPTURE_BEGIN);
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
	case GW_API_HOST_FUNC:
	case GW_API_STREAM_WAIT:
		break; /* a STREAM_OP record may name this call as what held a stream */
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

/* A polling wait (a SYNC record of folded queries): a synchronizing call of kind POLL, from
 * its first unfinished query to the one that found the work done. CUPTI's records of single
 * synchronizing calls (imported traces) repeat their API records and are not read. */
static int add_poll(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		    const struct gw_rec_sync *r)
{
	struct gw_api *p;
	uint32_t *ix;

	if (!r->queries)
		return 0;
	t->info.counts.poll_queries += r->queries;
	if (!(ix = gw_vec_push(&a->sync_apis, sizeof(*ix))))
		return -ENOMEM;
	*ix = (uint32_t)a->apis.len;
	if (!(p = gw_vec_push(&a->apis, sizeof(*p)))) {
		a->sync_apis.len--;
		return -ENOMEM;
	}
	*p = (struct gw_api){
		.corr = r->correlation,
		.start_ns = r->start_ns,
		.end_ns = r->end_ns < r->start_ns ? r->start_ns : r->end_ns,
		.tid = (uint32_t)r->tid,
		.stack_id = clamp32(r->stack_id),
		.name_id = clamp32(r->name_id),
		.trace = (uint16_t)trace,
		.device = r->device > UINT16_MAX ? UINT16_MAX : (uint16_t)r->device,
		.category = GW_API_SYNC,
		.sync_kind = GW_SYNC_POLL,
	};
	if (a->apis.len > 1 &&
	    (p[-1].trace > p->trace || (p[-1].trace == p->trace && p[-1].corr > p->corr)))
		a->apis_unsorted = true;
	return 0;
}

/* A host function or a wait for a value issued to a stream (a STREAM_OP record). */
static int add_stream_op(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
			 const struct gw_rec_stream_op *r)
{
	struct gw_hold *h;

	if (r->kind == GW_STREAM_OP_HOST_FUNC)
		t->info.counts.host_functions++;
	else if (r->kind == GW_STREAM_OP_WAIT_VALUE)
		t->info.counts.value_waits++;
	else
		return 0; /* a kind this reader does not know */
	if (!r->stream)
		return 0; /* CUPTI did not say which stream: nothing to hold */
	if (!(h = gw_vec_push(&a->holds, sizeof(*h))))
		return -ENOMEM;
	*h = (struct gw_hold){
		.corr = r->correlation,
		.device = r->device,
		.stream = r->stream,
		.api = UINT32_MAX,
		.trace = (uint16_t)trace,
		.kind = (uint8_t)r->kind,
	};
	return 0;
}

static int add_memory(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		      const struct gw_rec_memory *r)
{
	struct gw_mev *m;

	t->memory_recorded = true;
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

/* A caching allocator's reserved or allocated bytes: a memory event the memory stage reads in
 * time order with the allocations. */
/* A measured counter's window. Kinds this reader does not know, windows of no length or
 * backwards, and devices beyond 32 bits are passed over (a corrupt or newer trace). */
static int add_metric(struct gw_analyzer *a, unsigned trace, const struct gw_rec_metric *m)
{
	struct gw_metric_ent *e;

	if (m->counter < GW_COUNTER_DRAM_BW_UTIL || m->counter > GW_COUNTER_MEMORY_BUSY ||
	    m->end_ns <= m->start_ns || m->device > UINT32_MAX)
		return 0;
	if (!(e = gw_vec_push(&a->metrics, sizeof(*e))))
		return -ENOMEM;
	*e = (struct gw_metric_ent){
		.start_ns = m->start_ns,
		.end_ns = m->end_ns,
		.value = m->value >= GW_METRIC_SCALE ? 1.0f
						     : (float)((double)m->value / GW_METRIC_SCALE),
		.device = (uint32_t)m->device,
		.trace = (uint16_t)trace,
		.counter = (uint8_t)(m->counter - GW_COUNTER_DRAM_BW_UTIL),
	};
	return 0;
}

static int add_sampler(struct gw_analyzer *a, unsigned trace, const struct gw_rec_sampler *s)
{
	struct gw_sampler_ent *e;

	if (a->samplers.len >= 4096)
		return 0; /* a device a record: more is a corrupt trace's */
	if (!(e = gw_vec_push(&a->samplers, sizeof(*e))))
		return -ENOMEM;
	*e = (struct gw_sampler_ent){
		.device = s->device,
		.period_ns = s->period_ns,
		.trace = (uint16_t)trace,
		.source = s->source > GW_SAMPLER_SAMPLES ? GW_SAMPLER_NONE : (uint8_t)s->source,
	};
	if (s->reason.len && !(e->reason = bytes_dup(s->reason))) {
		a->samplers.len--;
		return -ENOMEM;
	}
	return 0;
}

static int add_counter(struct gw_analyzer *a, struct gw_trace_st *t, unsigned trace,
		       const struct gw_rec_counter *r)
{
	struct gw_mev *m;

	/* CUPTI's buffers, per context: a device's (the largest a context of this trace said) */
	if (r->counter == GW_COUNTER_CUPTI_BUFFER_BYTES ||
	    r->counter == GW_COUNTER_CUPTI_BUFFER_LIMIT_BYTES) {
		int di = gw_an_device(a, trace, r->device);
		struct gw_dev_st *d;
		uint64_t *v;

		if (di < 0)
			return di;
		d = &((struct gw_dev_st *)a->devs.data)[di];
		v = r->counter == GW_COUNTER_CUPTI_BUFFER_BYTES ? &d->cupti_bytes
								: &d->cupti_limit_bytes;
		if (r->value > *v)
			*v = r->value;
		return 0;
	}
	if (r->counter != GW_COUNTER_ALLOCATOR_RESERVED &&
	    r->counter != GW_COUNTER_ALLOCATOR_ALLOCATED)
		return 0;
	t->memory_recorded = true;
	m = gw_vec_push(&a->mevs, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = (struct gw_mev){
		.time_ns = r->time_ns,
		.bytes = r->value,
		.trace = (uint16_t)trace,
		.device = r->device > UINT16_MAX ? UINT16_MAX : (uint16_t)r->device,
		.op = r->counter == GW_COUNTER_ALLOCATOR_RESERVED ? GW_MEV_RESERVED
								  : GW_MEV_ALLOCATED,
	};
	return 0;
}

/* 64-bit FNV-1a of a range name (names are deduplicated by it, then compared). */
static uint64_t name_hash(struct gw_bytes b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < b.len; i++) {
		h ^= b.data[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The index of a range's name in range_names, added on first sight: by text for a name the
 * record holds, by STRING id for a registered one (its text may come later). */
static int range_name(struct gw_analyzer *a, unsigned trace, const struct gw_rec_range *r,
		      uint32_t *ret)
{
	uint64_t k1 = (uint64_t)trace << 1 | (r->name_id != 0);
	uint64_t k2 = r->name_id ? r->name_id : name_hash(r->name);

	for (;; k2++) {
		bool fresh;
		uint64_t *v = gw_hmap_get(&a->range_name_map, k1, k2, &fresh);
		struct gw_range_name *n;

		if (!v)
			return -ENOMEM;
		if (!fresh) {
			n = &((struct gw_range_name *)a->range_names.data)[*v - 1];
			/* a different text of the same hash takes the next key */
			if (r->name_id || (strlen(n->text) == r->name.len &&
					   !memcmp(n->text, r->name.data, r->name.len))) {
				n->count++;
				*ret = (uint32_t)(*v - 1);
				return 0;
			}
			continue;
		}
		if (a->range_names.len >= UINT32_MAX ||
		    !(n = gw_vec_push(&a->range_names, sizeof(*n)))) {
			gw_hmap_del(&a->range_name_map, k1, k2);
			return -ENOMEM;
		}
		n->trace = (uint16_t)trace;
		n->name_id = r->name_id;
		n->count = 1;
		if (!r->name_id && !(n->text = bytes_dup(r->name))) {
			a->range_names.len--;
			gw_hmap_del(&a->range_name_map, k1, k2);
			return -ENOMEM;
		}
		*v = a->range_names.len;
		*ret = (uint32_t)(a->range_names.len - 1);
		return 0;
	}
}

/* A host range, kept for the steps; marks and GPU ranges are only counted. */
static int add_range(struct gw_analyzer *a, unsigned trace, const struct gw_rec_range *r)
{
	struct gw_range *g;
	uint32_t name;
	int e;

	if (r->kind != GW_RANGE_PUSH_POP && r->kind != GW_RANGE_START_END) {
		a->other_ranges++;
		return 0;
	}
	if ((e = range_name(a, trace, r, &name)) < 0)
		return e;
	if (!(g = gw_vec_push(&a->ranges, sizeof(*g))))
		return -ENOMEM;
	g->start_ns = r->start_ns;
	g->end_ns = r->end_ns < r->start_ns ? r->start_ns : r->end_ns;
	g->tid = (uint32_t)r->tid; /* as an API call's: the same thread */
	g->name = name;
	g->trace = (uint16_t)trace;
	g->kind = (uint8_t)r->kind;
	return 0;
}

/* The event view's material (keep_events): every call, thread and timed GPU operation. */
static int view_collect(struct gw_analyzer *a, unsigned trace, const struct gw_record *rec)
{
	const struct gw_rec_kernel *k = &rec->kernel;
	struct gw_vop *o;
	uint64_t start, end, device;
	int di;

	switch (rec->type) {
	case GW_REC_API: {
		const struct gw_rec_api *c = &rec->api;
		struct gw_vcall *v = gw_vec_push(&a->vcalls, sizeof(*v));

		if (!v)
			return -ENOMEM;
		*v = (struct gw_vcall){
			.tid = c->tid,
			.start_ns = c->start_ns,
			.end_ns = c->end_ns < c->start_ns ? c->start_ns : c->end_ns,
			.corr = c->correlation,
			.stream = c->stream,
			.bytes = c->bytes,
			.name_id = clamp32(c->name_id),
			.kernel_id = clamp32(c->kernel_name_id),
			.domain = clamp32(c->domain),
			.cbid = clamp32(c->cbid),
			.stack_id = clamp32(c->stack_id),
			.trace = (uint16_t)trace,
			.category = c->category > 255 ? 0 : (uint8_t)c->category,
			.sync_kind = c->sync_kind > 255 ? 0 : (uint8_t)c->sync_kind,
		};
		return 0;
	}
	case GW_REC_THREAD: {
		struct gw_vthread *v = gw_vec_push(&a->vthreads, sizeof(*v));

		if (!v)
			return -ENOMEM;
		v->tid = rec->thread.tid;
		v->trace = (uint16_t)trace;
		v->name = rec->thread.name.len ? bytes_dup(rec->thread.name) : NULL;
		return rec->thread.name.len && !v->name ? -ENOMEM : 0;
	}
	case GW_REC_KERNEL:
		start = k->start_ns, end = k->end_ns, device = k->device;
		break;
	case GW_REC_MEMCPY:
		start = rec->memcpy.start_ns, end = rec->memcpy.end_ns, device = rec->memcpy.device;
		break;
	case GW_REC_MEMSET:
		start = rec->memset.start_ns, end = rec->memset.end_ns, device = rec->memset.device;
		break;
	default:
		return 0;
	}
	if (!start && !end)
		return 0; /* untimed: not on the timeline */
	if ((di = gw_an_device(a, trace, device)) < 0)
		return di;
	o = gw_vec_push(&a->vops, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->start_ns = start;
	o->end_ns = end < start ? start : end;
	o->dev = (uint16_t)di;
	o->trace = (uint16_t)trace;
	if (rec->type == GW_REC_KERNEL) {
		const struct gw_op *op = &((const struct gw_op *)a->ops.data)[a->ops.len - 1];

		o->kind = GW_VIEW_KERNEL;
		o->stream = k->stream;
		o->corr = k->correlation;
		o->name_id = clamp32(k->name_id);
		o->grid[0] = k->grid_x, o->grid[1] = k->grid_y, o->grid[2] = k->grid_z;
		o->block[0] = k->block_x, o->block[1] = k->block_y, o->block[2] = k->block_z;
		o->registers = k->registers_per_thread;
		o->smem_bytes = k->static_smem_bytes + k->dynamic_smem_bytes;
		o->shape = op->shape;
	} else if (rec->type == GW_REC_MEMCPY) {
		o->kind = GW_VIEW_MEMCPY;
		o->stream = rec->memcpy.stream;
		o->corr = rec->memcpy.correlation;
		o->bytes = rec->memcpy.bytes;
		o->copy_kind = rec->memcpy.copy_kind > 255 ? 0 : (uint8_t)rec->memcpy.copy_kind;
	} else {
		o->kind = GW_VIEW_MEMSET;
		o->stream = rec->memset.stream;
		o->corr = rec->memset.correlation;
		o->bytes = rec->memset.bytes;
	}
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
		free(t->host);
		if (!(t->host = bytes_dup(h->host)))
			return -ENOMEM;
		t->info.capture_mode = h->capture_mode;
		/* gpuwhy's capture records every allocation: none means none. An imported
		 * profile may not have recorded memory at all, until a memory record says so. */
		if (h->capture_mode == GW_CAPTURE_IMPORT_KINETO ||
		    h->capture_mode == GW_CAPTURE_IMPORT_NSYS)
			t->memory_recorded = false;
		t->info.rank = h->rank;
		t->info.capture_start_ns = h->start_ns;
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
	case GW_REC_FRAME:
		r = add_frame(t, &rec->frame);
		break;
	case GW_REC_PYCODE:
		r = add_pycode(t, &rec->pycode);
		break;
	case GW_REC_OVERHEAD: {
		const struct gw_rec_overhead *o = &rec->overhead;
		uint64_t len = o->end_ns > o->start_ns ? o->end_ns - o->start_ns : 0;
		struct gw_span *sp;

		switch (o->kind) {
		case GW_OVERHEAD_CONTEXT_CREATION:
			t->startup_totals.context_ns += len;
			t->startup_totals.contexts++;
			break;
		case GW_OVERHEAD_MODULE_LOADING:
		case GW_OVERHEAD_FUNCTION_LOADING:
			t->startup_totals.loading_ns += len;
			t->startup_totals.loadings++;
			break;
		case GW_OVERHEAD_COMPILER:
			t->startup_totals.compile_ns += len;
			t->startup_totals.compiles++;
			break;
		default:
			return 0; /* a kind this reader does not know */
		}
		if (!len)
			break;
		if (!(sp = gw_vec_push(&t->startup, sizeof(*sp))))
			return -ENOMEM;
		sp->start_ns = o->start_ns;
		sp->end_ns = o->end_ns;
		break;
	}
	case GW_REC_CONTEXT: {
		struct gw_context_ent *c;

		/* only a context with fewer SMs than its device changes a fill */
		if (!rec->context.green || !rec->context.sm_count)
			break;
		if (t->contexts.len >= 4096)
			break; /* a bound for hostile input: contexts are few */
		c = gw_vec_push(&t->contexts, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->id = rec->context.context_id;
		c->sm_count = rec->context.sm_count;
		break;
	}
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
		op->shape = (struct gw_launch_shape){
			.blocks = clamp32(k->grid_x * (k->grid_y ? k->grid_y : 1) *
					  (k->grid_z ? k->grid_z : 1)),
			.smem = clamp32(k->static_smem_bytes + k->dynamic_smem_bytes),
			.threads = threads > UINT16_MAX ? UINT16_MAX : (uint16_t)threads,
			.ctx = k->context_id > UINT16_MAX ? 0 : (uint16_t)k->context_id,
			.regs = clamp8(k->registers_per_thread),
			.carveout_kib = clamp8(k->smem_executed_bytes / 1024),
			.cluster = cluster_blocks(k->cluster_x, k->cluster_y, k->cluster_z),
			.optin = k->smem_optin ? 1 : 0,
		};
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
		if (r >= 0) {
			struct gw_op *op = &((struct gw_op *)a->ops.data)[a->ops.len - 1];

			/* CUpti_ActivityMemoryKind PAGEABLE = 1: the copy had to be staged by
			 * the host. */
			if (c->src_kind == 1 || c->dst_kind == 1)
				op->flags |= GW_OPF_PAGEABLE;
			op->cls = clamp8(c->copy_kind);
		}
		/* A peer copy moves data on both devices: the other one is busy copying too. */
		if (r >= 0 && c->src_device && c->dst_device && c->src_device != c->dst_device) {
			uint64_t other = c->src_device - 1 == c->device ? c->dst_device - 1
									: c->src_device - 1;

			t->info.counts.peer_copies++;
			if (other != c->device)
				r = add_op(a, ti, GW_OP_MEMCPY, other, c->stream, c->correlation,
					   c->start_ns, c->end_ns);
			if (r >= 0 && other != c->device)
				((struct gw_op *)a->ops.data)[a->ops.len - 1].cls =
					clamp8(c->copy_kind);
		}
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
	case GW_REC_SYNC:
		r = add_poll(a, t, ti, &rec->sync);
		break;
	case GW_REC_STREAM_OP:
		r = add_stream_op(a, t, ti, &rec->stream_op);
		break;
	case GW_REC_COUNTER:
		r = add_counter(a, t, ti, &rec->counter);
		break;
	case GW_REC_RANGE:
		r = add_range(a, ti, &rec->range);
		break;
	case GW_REC_METRIC:
		r = add_metric(a, ti, &rec->metric);
		break;
	case GW_REC_SAMPLER:
		r = add_sampler(a, ti, &rec->sampler);
		break;
	case GW_REC_DROPS:
		t->drops_sum += rec->drops.count;
		break;
	case GW_REC_NOTE:
		if (rec->note.level == GW_NOTE_WARNING) {
			char **n = gw_vec_push(&t->notes, sizeof(*n));

			if (!n || !(*n = bytes_dup(rec->note.text)))
				return -ENOMEM;
		}
		break;
	case GW_REC_FOOTER:
		t->footer_seen = true;
		t->footer_dropped = rec->footer.dropped;
		t->exec_ended = (rec->footer.flags & GW_FOOTER_EXEC) != 0;
		t->info.records--;
		break;
	default:
		break;
	}
	if (r >= 0 && a->opt.keep_events)
		r = view_collect(a, ti, rec);
	return r;
}
