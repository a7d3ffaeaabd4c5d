/* SPDX-License-Identifier: MIT */
/* The kineto source's events: what each event of a torch.profiler trace becomes. */
#include <cuda_occupancy.h>
#include <cupti_activity.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-names.h"
#include "kineto.h"

/* c10::DeviceType::CUDA, the "Device Type" of a GPU allocator event. */
#define GW_KIN_DEVICE_CUDA 1

struct gw_kin_queued {
	struct gw_record rec;
	uint64_t off; /* arena offset of the record's BYTES or IPS field */
	uint32_t n;   /* its length: bytes, or IPS entries */
	bool data;
};

/* For messages: "a kernel event". */
static const char *const cat_names[] = {
	[GW_C_OTHER] = "an",
	[GW_C_KERNEL] = "a kernel",
	[GW_C_MEMCPY] = "a gpu_memcpy",
	[GW_C_MEMSET] = "a gpu_memset",
	[GW_C_RUNTIME] = "a cuda_runtime",
	[GW_C_DRIVER] = "a cuda_driver",
	[GW_C_SYNC] = "a cuda_sync",
	[GW_C_PYTHON] = "a python_function",
	[GW_C_CPU_OP] = "a cpu_op",
	[GW_C_ANNOTATION] = "a user_annotation",
	[GW_C_GPU_ANNOTATION] = "a gpu_user_annotation",
};

/* Kineto's names of CUPTI's kinds: "Memcpy HtoD (Pageable -> Device)", "Stream Sync". */
struct gw_kin_kind {
	const char *text;
	uint8_t kind;
};

static const struct gw_kin_kind copy_kinds[] = {
	{"HtoD", CUPTI_ACTIVITY_MEMCPY_KIND_HTOD}, {"DtoH", CUPTI_ACTIVITY_MEMCPY_KIND_DTOH},
	{"HtoA", CUPTI_ACTIVITY_MEMCPY_KIND_HTOA}, {"AtoH", CUPTI_ACTIVITY_MEMCPY_KIND_ATOH},
	{"AtoA", CUPTI_ACTIVITY_MEMCPY_KIND_ATOA}, {"AtoD", CUPTI_ACTIVITY_MEMCPY_KIND_ATOD},
	{"DtoA", CUPTI_ACTIVITY_MEMCPY_KIND_DTOA}, {"DtoD", CUPTI_ACTIVITY_MEMCPY_KIND_DTOD},
	{"HtoH", CUPTI_ACTIVITY_MEMCPY_KIND_HTOH}, {"PtoP", CUPTI_ACTIVITY_MEMCPY_KIND_PTOP},
};

static const struct gw_kin_kind memory_kinds[] = {
	{"Pageable", CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE},
	{"Pinned", CUPTI_ACTIVITY_MEMORY_KIND_PINNED},
	{"Device", CUPTI_ACTIVITY_MEMORY_KIND_DEVICE},
	{"Array", CUPTI_ACTIVITY_MEMORY_KIND_ARRAY},
	{"Managed", CUPTI_ACTIVITY_MEMORY_KIND_MANAGED},
	{"Device Static", CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC},
	{"Managed Static", CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC},
};

static const struct gw_kin_kind sync_kinds[] = {
	{"Event Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE},
	{"Stream Wait Event", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT},
	{"Stream Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE},
	{"Context Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE},
};

/* The kind named by text among a table's names, or def. */
#define GW_KIN_KIND_OF(table, text, len, def)                                                      \
	kind_of(table, sizeof(table) / sizeof(table[0]), text, len, def)

struct gw_record *gw_kin_push(struct gw_kin_out *o, uint8_t type)
{
	struct gw_kin_queued *q = gw_src_vec_push(&o->queue, sizeof(*q));

	if (!q)
		return NULL;
	q->rec.type = type;
	switch (type) {
#define GW_KIN_VERSION(NAME, name, id, ver)                                                        \
	case GW_REC_##NAME:                                                                        \
		q->rec.version = ver;                                                              \
		break;
		GW_RECORDS(GW_KIN_VERSION)
#undef GW_KIN_VERSION
	}
	return &q->rec;
}

struct gw_record *gw_kin_push_data(struct gw_kin_out *o, uint8_t type, const void *data, size_t n)
{
	size_t bytes = type == GW_REC_STACK ? n * sizeof(uint64_t) : n;
	struct gw_kin_queued *q;
	struct gw_record *rec;
	int64_t off;

	/* IPS entries are read in place: keep them aligned */
	while (type == GW_REC_STACK && o->arena.len % sizeof(uint64_t))
		if (gw_src_vec_append(&o->arena, "", 1) < 0)
			return NULL;
	off = gw_src_vec_append(&o->arena, data, bytes);
	if (off < 0 || n > UINT32_MAX || !(rec = gw_kin_push(o, type)))
		return NULL;
	q = (struct gw_kin_queued *)rec;
	q->off = (uint64_t)off;
	q->n = (uint32_t)n;
	q->data = true;
	return rec;
}

bool gw_kin_pop(struct gw_kin_out *o, struct gw_record *ret)
{
	struct gw_kin_queued *q;
	const uint8_t *p;

	if (o->head >= o->queue.len)
		return false;
	q = &((struct gw_kin_queued *)o->queue.data)[o->head++];
	*ret = q->rec;
	if (!q->data)
		return true;
	p = (const uint8_t *)o->arena.data + q->off;
	switch (ret->type) {
	case GW_REC_STRING:
		ret->string.text = (struct gw_bytes){p, q->n};
		break;
	case GW_REC_THREAD:
		ret->thread.name = (struct gw_bytes){p, q->n};
		break;
	case GW_REC_DEVICE:
		ret->device.name = (struct gw_bytes){p, q->n};
		break;
	case GW_REC_NOTE:
		ret->note.text = (struct gw_bytes){p, q->n};
		break;
	case GW_REC_RANGE:
		ret->range.name = (struct gw_bytes){p, q->n};
		break;
	case GW_REC_STACK:
		ret->stack.ips = (struct gw_ips){(const uint64_t *)(const void *)p, q->n};
		break;
	}
	return true;
}

void gw_kin_out_reset(struct gw_kin_out *o)
{
	o->queue.len = 0;
	o->head = 0;
	o->arena.len = 0;
}

int gw_kin_intern(struct gw_kin_strings *s, const char *text, size_t len, uint32_t *ret_id)
{
	bool fresh;

	return gw_src_strtab_intern(&s->tab, text, len, ret_id, &fresh);
}

int gw_kin_emit_string(struct gw_kin_strings *s, struct gw_kin_out *o, uint32_t id, uint8_t kind)
{
	struct gw_src_string *e = gw_src_strtab_get(&s->tab, id);
	struct gw_record *rec;

	if (!e || e->user)
		return 0;
	rec = gw_kin_push_data(o, GW_REC_STRING, gw_src_strtab_text(&s->tab, e), e->len);
	if (!rec)
		return -ENOMEM;
	rec->string.id = id;
	rec->string.kind = kind;
	/* the push did not intern: e still points into the table */
	e->user = 1;
	return 0;
}

/* Interns and queues a string at once. */
static int string_now(struct gw_kin *k, const char *text, size_t len, uint8_t kind,
		      uint32_t *ret_id)
{
	int r = gw_kin_intern(&k->strings, text, len, ret_id);

	return r < 0 ? r : gw_kin_emit_string(&k->strings, &k->out, *ret_id, kind);
}

/* A field this event needs is missing or malformed. */
static int field_fail(struct gw_kin *k, const char *field, const struct gw_kin_val *v)
{
	static const char *const why[] = {
		[GW_V_STRING] = "is a string, not a number",
		[GW_V_TYPE] = "is not a number",
		[GW_V_RANGE] = "is out of range",
		[GW_V_FRACTION] = "is not a whole number",
	};
	char at[64];

	if (v->state == GW_V_ABSENT)
		return gw_kin_fail(k, -EINVAL, "%s: %s event without \"%s\"",
				   gw_kin_where(k, k->ev.off, at, sizeof(at)), cat_names[k->ev.cat],
				   field);
	if (v->state == GW_V_OK) /* a value the event cannot have */
		return gw_kin_fail(k, -EINVAL, "%s: %s event: \"%s\" is negative",
				   gw_kin_where(k, v->off, at, sizeof(at)), cat_names[k->ev.cat],
				   field);
	return gw_kin_fail(k, -EINVAL, "%s: %s event: \"%s\" %s",
			   gw_kin_where(k, v->off, at, sizeof(at)), cat_names[k->ev.cat], field,
			   why[v->state]);
}

/* A field the event needs, >= 0. Returns 0 or the error. */
static int need(struct gw_kin *k, enum gw_kin_num f, int64_t *ret)
{
	const struct gw_kin_val *v = &k->ev.num[f];

	*ret = 0;
	if (v->state != GW_V_OK || v->v < 0)
		return field_fail(k, gw_kin_field_name(f), v);
	*ret = v->v;
	return 0;
}

/* A field the event may have (def when absent), >= 0. Returns 0 or the error. */
static int want(struct gw_kin *k, enum gw_kin_num f, int64_t def, int64_t *ret)
{
	if (k->ev.num[f].state == GW_V_ABSENT) {
		*ret = def;
		return 0;
	}
	return need(k, f, ret);
}

/* A field that may be absent or -1 (Kineto's "none"): def then. Returns 0 or the error. */
static int want_or_none(struct gw_kin *k, enum gw_kin_num f, int64_t def, int64_t *ret)
{
	const struct gw_kin_val *v = &k->ev.num[f];

	if (v->state == GW_V_OK && v->v < 0) {
		*ret = def;
		return 0;
	}
	return want(k, f, def, ret);
}

static int ensure_header(struct gw_kin *k)
{
	struct gw_record *rec;

	if (k->header_done)
		return 0;
	rec = gw_kin_push(&k->out, GW_REC_HEADER);
	if (!rec)
		return -ENOMEM;
	rec->header.format_version = GW_FORMAT_VERSION;
	rec->header.pid = k->host_pid > 0 ? (uint64_t)k->host_pid : 0;
	rec->header.rank = k->rank;
	rec->header.capture_mode = GW_CAPTURE_IMPORT_KINETO;
	/* Kineto's clock is the wall clock (CUPTI's timestamps, moved onto it) */
	rec->header.clock_id = 0;
	if (k->ev.num[GW_F_TS].state == GW_V_OK && k->ev.num[GW_F_TS].v >= 0) {
		rec->header.start_ns = (uint64_t)k->ev.num[GW_F_TS].v + (uint64_t)k->base_ns;
		rec->header.start_realtime_ns = rec->header.start_ns;
	}
	k->header_done = true;
	return 0;
}

/* The event's start and end on the trace clock (ns). */
static int ev_span(struct gw_kin *k, uint64_t *ret_start, uint64_t *ret_end)
{
	int64_t ts, dur;
	char at[64];
	int r;

	if ((r = need(k, GW_F_TS, &ts)) < 0 || (r = need(k, GW_F_DUR, &dur)) < 0)
		return r;
	if (ts > INT64_MAX - k->base_ns || ts + k->base_ns > INT64_MAX - dur)
		return gw_kin_fail(k, -EINVAL, "%s: %s event ends past the year 2262",
				   gw_kin_where(k, k->ev.num[GW_F_TS].off, at, sizeof(at)),
				   cat_names[k->ev.cat]);
	*ret_start = (uint64_t)(ts + k->base_ns);
	*ret_end = *ret_start + (uint64_t)dur;
	return 0;
}

static int ev_time(struct gw_kin *k, uint64_t *ret)
{
	int64_t ts;
	char at[64];
	int r;

	if ((r = need(k, GW_F_TS, &ts)) < 0)
		return r;
	if (ts > INT64_MAX - k->base_ns)
		return gw_kin_fail(k, -EINVAL, "%s: %s event past the year 2262",
				   gw_kin_where(k, k->ev.num[GW_F_TS].off, at, sizeof(at)),
				   cat_names[k->ev.cat]);
	*ret = (uint64_t)(ts + k->base_ns);
	return 0;
}

/* The device of GPU work: args "device", else pid. */
static int gpu_device(struct gw_kin *k, int64_t *ret)
{
	int64_t *seen;
	size_t i;
	int r;

	if (k->ev.num[GW_F_DEVICE].state != GW_V_ABSENT)
		r = need(k, GW_F_DEVICE, ret);
	else
		r = need(k, GW_F_PID, ret);
	if (r < 0)
		return r;
	seen = k->devices.data;
	for (i = 0; i < k->devices.len && seen[i] != *ret; i++)
		;
	if (i < k->devices.len)
		return 0;
	if (k->devices.len >= GW_KIN_MAX_DEVICES) {
		char at[64];

		return gw_kin_fail(k, -EINVAL, "%s: more than %d GPU devices",
				   gw_kin_where(k, k->ev.off, at, sizeof(at)), GW_KIN_MAX_DEVICES);
	}
	seen = gw_src_vec_push(&k->devices, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	*seen = *ret;
	return 0;
}

/* The stream of GPU work: args "stream", else tid ("stream 7" or 7). */
static int gpu_stream(struct gw_kin *k, int64_t *ret)
{
	if (k->ev.num[GW_F_STREAM].state != GW_V_ABSENT)
		return want_or_none(k, GW_F_STREAM, 0, ret);
	*ret = k->ev.num[GW_F_TID].state == GW_V_OK && k->ev.num[GW_F_TID].v >= 0
		       ? k->ev.num[GW_F_TID].v
		       : 0;
	return 0;
}

/* A launch dimension: up to three whole numbers, the missing ones 1. */
static int dims(struct gw_kin *k, int which, uint64_t *x, uint64_t *y, uint64_t *z)
{
	const struct gw_kin_ev *e = &k->ev;
	char at[64];

	*x = *y = *z = 0;
	if (e->dims_val[which].state == GW_V_ABSENT)
		return 0;
	if (e->dims_val[which].state != GW_V_OK)
		return gw_kin_fail(k, -EINVAL,
				   "%s: %s event: \"%s\" is not a list of 1 to 3 whole "
				   "numbers",
				   gw_kin_where(k, e->dims_val[which].off, at, sizeof(at)),
				   cat_names[e->cat], which ? "block" : "grid");
	*x = e->dims[which][0];
	*y = e->ndims[which] > 1 ? e->dims[which][1] : 1;
	*z = e->ndims[which] > 2 ? e->dims[which][2] : 1;
	return 0;
}

static uint8_t kind_of(const struct gw_kin_kind *t, size_t n, const char *text, size_t len,
		       uint8_t def)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].text) == len && memcmp(t[i].text, text, len) == 0)
			return t[i].kind;
	return def;
}

/* "Memcpy HtoD (Pageable -> Device)": the copy's kind and its source's and destination's. */
static void copy_kind(const char *name, size_t len, uint8_t *kind, uint8_t *src, uint8_t *dst)
{
	const char *p = name, *end = name + len, *q;

	*kind = *src = *dst = 0;
	if (len < 7 || memcmp(name, "Memcpy ", 7) != 0)
		return;
	p += 7;
	for (q = p; q < end && *q != ' '; q++)
		;
	*kind = GW_KIN_KIND_OF(copy_kinds, p, (size_t)(q - p), 0);
	if (end - q < 2 || q[1] != '(' || end[-1] != ')')
		return;
	p = q + 2;
	for (q = p; q + 4 <= end && memcmp(q, " -> ", 4) != 0; q++)
		;
	if (q + 4 > end)
		return;
	*src = GW_KIN_KIND_OF(memory_kinds, p, (size_t)(q - p), 0);
	*dst = GW_KIN_KIND_OF(memory_kinds, q + 4, (size_t)(end - 1 - (q + 4)), 0);
}

static int gpu_op(struct gw_kin *k)
{
	struct gw_kin_ev *e = &k->ev;
	uint64_t start, end;
	int64_t dev, stream, corr, bytes = 0;
	uint8_t kind, src, dst;
	struct gw_record *rec;
	uint32_t name_id;
	int r;

	if ((r = ev_span(k, &start, &end)) < 0 || (r = gpu_device(k, &dev)) < 0 ||
	    (r = gpu_stream(k, &stream)) < 0 || (r = want(k, GW_F_CORR, 0, &corr)) < 0 ||
	    (e->cat != GW_C_KERNEL && (r = want(k, GW_F_BYTES, 0, &bytes)) < 0) ||
	    (r = ensure_header(k)) < 0)
		return r;
	if ((r = gw_kin_gpu_device(&k->host, (uint64_t)corr, dev)) < 0)
		return r;
	k->gpu_ops++;
	if (e->cat == GW_C_KERNEL) {
		int64_t regs, smem;

		if ((r = want(k, GW_F_REGS, 0, &regs)) < 0 ||
		    (r = want(k, GW_F_SMEM, 0, &smem)) < 0 ||
		    (r = string_now(k, e->name.data, e->name.len, GW_STRING_KERNEL, &name_id)) < 0)
			return r;
		if (!(rec = gw_kin_push(&k->out, GW_REC_KERNEL)))
			return -ENOMEM;
		if ((r = dims(k, 0, &rec->kernel.grid_x, &rec->kernel.grid_y,
			      &rec->kernel.grid_z)) < 0 ||
		    (r = dims(k, 1, &rec->kernel.block_x, &rec->kernel.block_y,
			      &rec->kernel.block_z)) < 0)
			return r;
		rec->kernel.device = (uint64_t)dev;
		rec->kernel.stream = (uint64_t)stream;
		rec->kernel.correlation = (uint64_t)corr;
		rec->kernel.start_ns = start;
		rec->kernel.end_ns = end;
		rec->kernel.name_id = name_id;
		rec->kernel.registers_per_thread = (uint64_t)regs;
		/* Kineto's "shared memory" is the static and the dynamic together */
		rec->kernel.static_smem_bytes = (uint64_t)smem;
	} else if (e->cat == GW_C_MEMCPY) {
		if (!(rec = gw_kin_push(&k->out, GW_REC_MEMCPY)))
			return -ENOMEM;
		rec->memcpy.device = (uint64_t)dev;
		rec->memcpy.stream = (uint64_t)stream;
		rec->memcpy.correlation = (uint64_t)corr;
		rec->memcpy.start_ns = start;
		rec->memcpy.end_ns = end;
		rec->memcpy.bytes = (uint64_t)bytes;
		copy_kind(e->name.data, e->name.len, &kind, &src, &dst);
		rec->memcpy.copy_kind = kind;
		rec->memcpy.src_kind = src;
		rec->memcpy.dst_kind = dst;
	} else {
		const char *n = e->name.data;
		size_t len = e->name.len;

		if (!(rec = gw_kin_push(&k->out, GW_REC_MEMSET)))
			return -ENOMEM;
		rec->memset.device = (uint64_t)dev;
		rec->memset.stream = (uint64_t)stream;
		rec->memset.correlation = (uint64_t)corr;
		rec->memset.start_ns = start;
		rec->memset.end_ns = end;
		rec->memset.bytes = (uint64_t)bytes;
		/* "Memset (Device)" */
		if (len > 9 && memcmp(n, "Memset (", 8) == 0 && n[len - 1] == ')')
			rec->memset.mem_kind = GW_KIN_KIND_OF(memory_kinds, n + 8, len - 9, 0);
	}
	return 0;
}

/* The id of a pid or tid: the number, or a negative id for a name that is not one. */
static int host_thread(struct gw_kin *k, uint64_t ns, uint32_t *ret_idx)
{
	const struct gw_kin_val *tid = &k->ev.num[GW_F_TID], *pid = &k->ev.num[GW_F_PID];
	int r;

	if (tid->state != GW_V_OK)
		return field_fail(k, "tid", tid);
	if (pid->state == GW_V_OK && pid->v > 0 && k->host_pid <= 0)
		k->host_pid = pid->v;
	if ((r = gw_kin_thread(&k->host, tid->v, ns, ret_idx)) < 0)
		return r;
	return 0;
}

/* gw_api_classify, through a small cache of the names seen last. */
static bool api_lookup(struct gw_kin *k, const char *name, size_t len, struct gw_api_class *ret)
{
	struct gw_kin_api_name *c;

	for (unsigned i = 0; i < GW_KIN_API_NAMES; i++) {
		c = &k->api_names[i];
		if (c->len == len && len && memcmp(c->text, name, len) == 0) {
			*ret = c->cls;
			return c->found;
		}
	}
	if (len >= sizeof(c->text))
		return gw_api_classify(name, len, ret);
	c = &k->api_names[k->api_names_next++ % GW_KIN_API_NAMES];
	memcpy(c->text, name, len);
	c->len = (uint8_t)len;
	c->found = gw_api_classify(name, len, &c->cls);
	*ret = c->cls;
	return c->found;
}

static int api_call(struct gw_kin *k)
{
	struct gw_kin_ev *e = &k->ev;
	bool driver = e->cat == GW_C_DRIVER;
	struct gw_api_class cls;
	struct gw_kin_call *c;
	int64_t corr, cbid;
	uint64_t start, end;
	uint32_t tidx, name_id;
	int r;

	if (!api_lookup(k, e->name.data, e->name.len, &cls))
		return 0; /* a call gpuwhy's own capture does not record either */
	if ((r = ev_span(k, &start, &end)) < 0 || (r = want(k, GW_F_CORR, 0, &corr)) < 0 ||
	    (r = want(k, GW_F_CBID, 0, &cbid)) < 0 || (r = host_thread(k, start, &tidx)) < 0 ||
	    (r = ensure_header(k)) < 0 ||
	    (r = string_now(k, e->name.data, e->name.len, GW_STRING_API, &name_id)) < 0)
		return r;
	if (!(c = gw_src_vec_push(&k->host.calls, sizeof(*c))))
		return -ENOMEM;
	c->type = GW_REC_API;
	c->start_ns = start;
	c->end_ns = end;
	c->corr = (uint64_t)corr;
	c->tidx = tidx;
	c->name_id = name_id;
	c->cbid = cbid > UINT32_MAX ? 0 : (uint32_t)cbid;
	c->category = cls.category;
	c->sync_kind = cls.sync_kind;
	c->domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	c->device = -1;
	return 0;
}

static int cuda_sync(struct gw_kin *k)
{
	struct gw_record *rec;
	uint64_t start, end;
	int64_t dev, stream, corr, event;
	int r;

	if ((r = ev_span(k, &start, &end)) < 0 || (r = want(k, GW_F_CORR, 0, &corr)) < 0 ||
	    (r = gpu_device(k, &dev)) < 0 || (r = gpu_stream(k, &stream)) < 0 ||
	    (r = want_or_none(k, GW_F_WAIT_EVENT, 0, &event)) < 0 || (r = ensure_header(k)) < 0 ||
	    (r = gw_kin_sync_device(&k->host, (uint64_t)corr, dev)) < 0)
		return r;
	if (!(rec = gw_kin_push(&k->out, GW_REC_SYNC)))
		return -ENOMEM;
	rec->sync.correlation = (uint64_t)corr;
	rec->sync.start_ns = start;
	rec->sync.end_ns = end;
	rec->sync.type = k->ev.sync_type;
	rec->sync.stream = (uint64_t)stream;
	rec->sync.event = (uint64_t)event;
	return 0;
}

/*
 * A range: torch.profiler's step marker (ProfilerStep#N) or an annotation (record_function) of
 * a host thread, or the same annotation on a stream's timeline (gpu_user_annotation). Nested on
 * its thread as NVTX push/pop ranges are; its name cut at GW_RANGE_NAME_MAX bytes.
 */
static int range_event(struct gw_kin *k, bool gpu)
{
	struct gw_kin_ev *e = &k->ev;
	struct gw_record *rec;
	uint64_t start, end;
	int64_t dev = 0, stream = 0;
	uint32_t tidx, n = e->name.len, flags = 0;
	int r;

	if ((r = ev_span(k, &start, &end)) < 0)
		return r;
	if (!gpu)
		r = host_thread(k, start, &tidx);
	else if ((r = gpu_device(k, &dev)) >= 0)
		r = gpu_stream(k, &stream);
	if (r < 0 || (r = ensure_header(k)) < 0)
		return r;
	if (n > GW_RANGE_NAME_MAX) {
		n = GW_RANGE_NAME_MAX;
		while (n && (((const uint8_t *)e->name.data)[n] & 0xc0) == 0x80)
			n--; /* not inside a UTF-8 sequence */
		flags = GW_RANGE_NAME_CUT;
	}
	if (!(rec = gw_kin_push_data(&k->out, GW_REC_RANGE, e->name.data, n)))
		return -ENOMEM;
	rec->range.tid = gpu ? 0 : (uint64_t)k->ev.num[GW_F_TID].v;
	rec->range.start_ns = start;
	rec->range.end_ns = end;
	rec->range.kind = gpu ? GW_RANGE_GPU : GW_RANGE_PUSH_POP;
	rec->range.device = (uint64_t)dev;
	rec->range.stream = (uint64_t)stream;
	rec->range.flags = flags;
	return 0;
}

/* A Python function or an operator: a span of its thread, for the stacks of calls inside. */
static int host_span(struct gw_kin *k)
{
	struct gw_kin_ev *e = &k->ev;
	struct gw_kin_span *s;
	uint64_t start, end;
	uint32_t tidx, ref, flags = 0;
	int r;

	/* torch.profiler's step marker: an operator of the 2020 and 2021 formats, around all: a
	 * range, never a frame of the stacks inside it */
	if (e->cat == GW_C_CPU_OP && e->name.len > 13 &&
	    memcmp(e->name.data, "ProfilerStep#", 13) == 0)
		return range_event(k, false);
	if ((r = ev_span(k, &start, &end)) < 0 || (r = host_thread(k, start, &tidx)) < 0)
		return r;
	if (e->cat == GW_C_PYTHON) {
		r = gw_kin_frame(&k->host, &k->strings, e->name.data, e->name.len, GW_FRAME_PYTHON,
				 &ref);
	} else if (e->aux_key == GW_K_CALL_STACK && e->aux.len) {
		/* the 2021 format's with_stack: the operator carries its Python stack */
		r = gw_kin_callstack(&k->host, &k->strings, e->aux.data, e->aux.len, &ref);
		flags = GW_KIN_SPAN_CALLSTACK;
	} else {
		uint32_t frame;

		r = gw_kin_frame(&k->host, &k->strings, e->name.data, e->name.len, GW_FRAME_NATIVE,
				 &frame);
		if (r >= 0)
			r = gw_kin_node(&k->host, 0, frame, &ref);
	}
	if (r < 0)
		return r;
	if (!(s = gw_src_vec_push(e->cat == GW_C_PYTHON ? &k->host.python : &k->host.ops,
				  sizeof(*s))))
		return -ENOMEM;
	s->start_ns = start;
	s->end_ns = end;
	s->tidx = tidx;
	s->ref = ref;
	s->flags = flags;
	return 0;
}

/* A caching-allocator event ("[memory]", profile_memory=True): a block and the totals. */
static int memory_event(struct gw_kin *k)
{
	int64_t type, dev, addr, bytes, total;
	struct gw_kin_reserved *res = k->reserved.data;
	struct gw_record *rec;
	struct gw_kin_call *c;
	uint64_t t = 0;
	uint32_t tidx;
	size_t i;
	int r;

	/* CPU events: Device Type 0, Device Id -1 */
	if ((r = want(k, GW_F_DEV_TYPE, -1, &type)) < 0 || type != GW_KIN_DEVICE_CUDA)
		return r;
	if ((r = need(k, GW_F_DEV_ID, &dev)) < 0 || (r = ev_time(k, &t)) < 0 ||
	    (r = host_thread(k, t, &tidx)) < 0 || (r = ensure_header(k)) < 0)
		return r;
	if (k->ev.num[GW_F_MEM_BYTES].state != GW_V_OK)
		return field_fail(k, "Bytes", &k->ev.num[GW_F_MEM_BYTES]);
	bytes = k->ev.num[GW_F_MEM_BYTES].v;
	if (k->ev.num[GW_F_ADDR].state == GW_V_ABSENT) {
		struct gw_kin_delta *d = gw_src_vec_push(&k->deltas, sizeof(*d));

		if (!d)
			return -ENOMEM;
		d->time_ns = t;
		d->device = dev;
		d->bytes = bytes;
		d->seq = k->deltas.len;
		return 0;
	}
	if ((r = need(k, GW_F_ADDR, &addr)) < 0)
		return r;
	if (bytes != 0) {
		if (!(c = gw_src_vec_push(&k->host.calls, sizeof(*c))))
			return -ENOMEM;
		c->type = GW_REC_MEMORY;
		c->start_ns = c->end_ns = t;
		c->corr = (uint64_t)addr;
		c->bytes = bytes > 0 ? (uint64_t)bytes : 0;
		c->category = bytes > 0 ? GW_MEMORY_ALLOC : GW_MEMORY_FREE;
		c->tidx = tidx;
		c->device = dev > INT32_MAX ? INT32_MAX : (int32_t)dev;
	}
	if ((r = want(k, GW_F_TOTAL_ALLOC, -1, &total)) < 0)
		return r;
	if (total >= 0) {
		if (!(rec = gw_kin_push(&k->out, GW_REC_COUNTER)))
			return -ENOMEM;
		rec->counter.time_ns = t;
		rec->counter.device = (uint64_t)dev;
		rec->counter.counter = GW_COUNTER_ALLOCATOR_ALLOCATED;
		rec->counter.value = (uint64_t)total;
	}
	if ((r = want(k, GW_F_TOTAL_RESERVED, -1, &total)) < 0 || total < 0)
		return r;
	for (i = 0; i < k->reserved.len && res[i].device != dev; i++)
		;
	if (i < k->reserved.len && res[i].bytes == total)
		return 0;
	if (i == k->reserved.len) {
		if (!(res = gw_src_vec_push(&k->reserved, sizeof(*res))))
			return -ENOMEM;
		res->device = dev;
	} else {
		res = &res[i];
	}
	res->bytes = total;
	if (!(rec = gw_kin_push(&k->out, GW_REC_COUNTER)))
		return -ENOMEM;
	rec->counter.time_ns = t;
	rec->counter.device = (uint64_t)dev;
	rec->counter.counter = GW_COUNTER_ALLOCATOR_RESERVED;
	rec->counter.value = (uint64_t)total;
	return 0;
}

static int thread_name(struct gw_kin *k)
{
	const struct gw_kin_val *pid = &k->ev.num[GW_F_PID], *tid = &k->ev.num[GW_F_TID];
	uint32_t id;
	int r;

	/* GPU "threads" (pid a device, tid a stream) are named too: only the process's own */
	if (k->ev.aux_key != GW_K_ARG_NAME || pid->state != GW_V_OK || tid->state != GW_V_OK ||
	    k->host_pid <= 0 || pid->v != k->host_pid)
		return 0;
	if ((r = gw_kin_intern(&k->strings, k->ev.aux.data, k->ev.aux.len, &id)) < 0)
		return r;
	return gw_kin_thread_name(&k->host, tid->v, id);
}

static bool name_is(const struct gw_kin_ev *e, const char *s)
{
	return e->name.len == strlen(s) && memcmp(e->name.data, s, e->name.len) == 0;
}

int gw_kin_event(struct gw_kin *k)
{
	struct gw_kin_ev *e = &k->ev;

	k->events++;
	if (e->ph)
		k->chrome_events++;
	switch (e->ph) {
	case 'X':
		switch (e->cat) {
		case GW_C_KERNEL:
		case GW_C_MEMCPY:
		case GW_C_MEMSET:
			return gpu_op(k);
		case GW_C_RUNTIME:
		case GW_C_DRIVER:
			return api_call(k);
		case GW_C_SYNC:
			return cuda_sync(k);
		case GW_C_PYTHON:
		case GW_C_CPU_OP:
			return host_span(k);
		case GW_C_ANNOTATION:
		case GW_C_GPU_ANNOTATION:
			return range_event(k, e->cat == GW_C_GPU_ANNOTATION);
		}
		return 0;
	case 'i':
	case 'I':
		return name_is(e, "[memory]") ? memory_event(k) : 0;
	case 'M':
		return name_is(e, "thread_name") ? thread_name(k) : 0;
	}
	return 0;
}

static int note(struct gw_kin *k, uint8_t level, const char *text)
{
	struct gw_record *rec = gw_kin_push_data(&k->out, GW_REC_NOTE, text, strlen(text));

	if (!rec)
		return -ENOMEM;
	rec->note.level = level;
	return 0;
}

static int64_t devprop(const struct gw_kin_devprop *d, int key)
{
	const struct gw_kin_val *v = &d->v[key - GW_P_ID];

	return v->state == GW_V_OK && v->v > 0 ? v->v : 0;
}

/* DEVICE records for the devices that ran GPU work, from deviceProperties. */
static int emit_devices(struct gw_kin *k)
{
	const struct gw_kin_devprop *props = k->devprops.data;
	const int64_t *seen = k->devices.data;

	for (size_t i = 0; i < k->devices.len; i++) {
		const struct gw_kin_devprop *d = NULL;
		const struct gw_src_string *name;
		cudaOccDeviceProp occ = {0};
		struct gw_record *rec;
		int blocks = 0;

		for (size_t j = 0; j < k->devprops.len && !d; j++)
			if (props[j].v[0].v == seen[i])
				d = &props[j];
		if (!d)
			continue; /* the analysis assumes limits, and says so */
		name = gw_src_strtab_get(&k->strings.tab, d->name_id);
		rec = name ? gw_kin_push_data(&k->out, GW_REC_DEVICE,
					      gw_src_strtab_text(&k->strings.tab, name), name->len)
			   : gw_kin_push(&k->out, GW_REC_DEVICE);
		if (!rec)
			return -ENOMEM;
		rec->device.device = (uint64_t)seen[i];
		rec->device.sm_count = (uint64_t)devprop(d, GW_P_SMS);
		rec->device.cc_major = (uint64_t)devprop(d, GW_P_MAJOR);
		rec->device.cc_minor = (uint64_t)devprop(d, GW_P_MINOR);
		rec->device.memory_total_bytes = (uint64_t)devprop(d, GW_P_MEM);
		rec->device.max_threads_per_sm = (uint64_t)devprop(d, GW_P_THREADS_SM);
		rec->device.regs_per_sm = (uint64_t)devprop(d, GW_P_REGS_SM);
		rec->device.smem_per_sm_bytes = (uint64_t)devprop(d, GW_P_SMEM_SM);
		rec->device.max_threads_per_block = (uint64_t)devprop(d, GW_P_THREADS_BLOCK);
		rec->device.max_regs_per_block = (uint64_t)devprop(d, GW_P_REGS_BLOCK);
		/* the limit without opt-in: the analysis's occupancy derives the opt-in one */
		rec->device.max_smem_per_block_bytes = (uint64_t)devprop(d, GW_P_SMEM_BLOCK);
		rec->device.warp_size = (uint64_t)devprop(d, GW_P_WARP);
		/* Kineto does not write the block limit: NVIDIA's occupancy header has it per
		 * compute capability (an unknown one leaves 0, the analysis's assumption). */
		occ.computeMajor =
			(int)(devprop(d, GW_P_MAJOR) > 1000 ? 0 : devprop(d, GW_P_MAJOR));
		occ.computeMinor =
			(int)(devprop(d, GW_P_MINOR) > 1000 ? 0 : devprop(d, GW_P_MINOR));
		if (cudaOccMaxBlocksPerMultiprocessor(&blocks, &occ) == CUDA_OCC_SUCCESS &&
		    blocks > 0)
			rec->device.max_blocks_per_sm = (uint64_t)blocks;
	}
	return 0;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int cmp_delta(const void *x, const void *y)
{
	const struct gw_kin_delta *p = x, *q = y;

	if (p->device != q->device)
		return p->device < q->device ? -1 : 1;
	if (p->time_ns != q->time_ns)
		return p->time_ns < q->time_ns ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/*
 * The allocated curve of a 2021-format trace, from its blocks' sizes alone. The level at the
 * start is unknown: the curve starts at the lowest level the sizes allow (frees of blocks
 * allocated before the trace would take it below zero otherwise), a lower bound. Sets each
 * delta's bytes to the level after it; the samples are queued a batch at a time.
 */
static void deltas_to_levels(struct gw_kin *k)
{
	struct gw_kin_delta *d = k->deltas.data;
	size_t n = k->deltas.len;

	gw_src_vec_sort(&k->deltas, sizeof(*d), cmp_delta);
	for (size_t i = 0, j; i < n; i = j) {
		int64_t sum = 0, low = 0;

		for (j = i; j < n && d[j].device == d[i].device; j++) {
			sum = add_sat(sum, d[j].bytes);
			if (sum < low)
				low = sum;
		}
		sum = low == INT64_MIN ? INT64_MAX : -low;
		for (size_t m = i; m < j; m++) {
			sum = add_sat(sum, d[m].bytes);
			d[m].bytes = sum;
		}
	}
}

/* Queues the next allocated-bytes samples; 1 while some remain. */
static int emit_levels(struct gw_kin *k)
{
	const struct gw_kin_delta *d = k->deltas.data;

	for (unsigned n = 0; k->delta_at < k->deltas.len && n < 256; n++, k->delta_at++) {
		struct gw_record *rec = gw_kin_push(&k->out, GW_REC_COUNTER);

		if (!rec)
			return -ENOMEM;
		rec->counter.time_ns = d[k->delta_at].time_ns;
		rec->counter.device = (uint64_t)d[k->delta_at].device;
		rec->counter.counter = GW_COUNTER_ALLOCATOR_ALLOCATED;
		rec->counter.value = (uint64_t)d[k->delta_at].bytes;
	}
	return k->delta_at < k->deltas.len;
}

uint8_t gw_kin_sync_type(const char *text, size_t len)
{
	return GW_KIN_KIND_OF(sync_kinds, text, len, 0);
}

int gw_kin_end(struct gw_kin *k)
{
	int r;

	if ((r = ensure_header(k)) < 0 || (r = emit_devices(k)) < 0 ||
	    (r = gw_kin_host_finish(&k->host, &k->strings, &k->out)) < 0)
		return r;
	if (k->cut[0] && (r = note(k, GW_NOTE_WARNING, k->cut)) < 0)
		return r;
	if (k->base_late && (r = note(k, GW_NOTE_INFO,
				      "baseTimeNanoseconds comes after the events: times are "
				      "relative to it")) < 0)
		return r;
	if (!k->gpu_ops && (r = note(k, GW_NOTE_WARNING,
				     "no GPU activity (kernel, gpu_memcpy or gpu_memset events): "
				     "was the profiler run with ProfilerActivity.CUDA?")) < 0)
		return r;
	deltas_to_levels(k);
	return 0;
}

int gw_kin_more(struct gw_kin *k)
{
	int r = emit_levels(k);

	return r ? r : gw_kin_host_emit(&k->host, &k->strings, &k->out);
}
