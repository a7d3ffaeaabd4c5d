/* SPDX-License-Identifier: MIT */
/* The kineto source: torch.profiler (Kineto) trace JSON, plain or gzip, streamed through yajl. */
#include <cuda_occupancy.h>
#include <cupti_activity.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "cuda-api.h"
#include "decimal.h"
#include "kineto.h"
#include "sources-internal.h"

#define GW_KIN_CHUNK	   (256 * 1024)
#define GW_KIN_MAX_DEPTH   512	       /* deeper JSON is refused (yajl's own stack would grow) */
#define GW_KIN_MAX_STRING  (64 * 1024) /* longer names and call stacks are cut */
#define GW_KIN_MAX_DEVICES 1024
#define GW_KIN_KEY_DEPTHS  8 /* map depths whose current key is tracked */

/* c10::DeviceType::CUDA, the "Device Type" of a GPU allocator event. */
#define GW_KIN_DEVICE_CUDA 1

struct gw_kin_queued {
	struct gw_record rec;
	uint64_t off; /* arena offset of the record's BYTES or IPS field */
	uint32_t n;   /* its length: bytes, or IPS entries */
	bool data;
};

/* Numeric fields of an event and of its args. */
enum kin_num {
	N_TS,
	N_DUR,
	N_PID,
	N_TID,
	N_DEVICE,
	N_STREAM,
	N_CORR,
	N_REGS,
	N_SMEM,
	N_BYTES,
	N_CBID,
	N_DEV_TYPE,
	N_DEV_ID,
	N_ADDR,
	N_MEM_BYTES,
	N_TOTAL_ALLOC,
	N_TOTAL_RESERVED,
	N_WAIT_EVENT,
	N_COUNT
};

/* Keys, at every level the parser reads: 1 + enum kin_num for the numeric ones. */
enum kin_key {
	K_NONE = 0,
	K_NUM = 1,
	K_PH = 100,
	K_CAT,
	K_NAME,
	K_ARGS,
	K_GRID,
	K_BLOCK,
	K_SYNC_KIND,
	K_CALL_STACK,
	K_ARG_NAME,
	T_EVENTS = 200,
	T_DEVPROPS,
	T_DIST,
	T_BASE,
	D_RANK,
	P_ID = 300, /* deviceProperties: P_ID .. P_OPTIN index struct kin_devprop's values */
	P_NAME,
	P_MEM,
	P_MAJOR,
	P_MINOR,
	P_THREADS_BLOCK,
	P_THREADS_SM,
	P_REGS_BLOCK,
	P_REGS_SM,
	P_WARP,
	P_SMEM_BLOCK,
	P_SMEM_SM,
	P_SMS,
	P_OPTIN,
	P_END
};

struct kin_keyname {
	const char *text;
	uint8_t len;
	uint16_t key;
};

#define KEY(text, key)                                                                             \
	{                                                                                          \
		text, sizeof(text) - 1, key                                                        \
	}

static const struct kin_keyname top_keys[] = {
	KEY("traceEvents", T_EVENTS),
	KEY("deviceProperties", T_DEVPROPS),
	KEY("distributedInfo", T_DIST),
	KEY("baseTimeNanoseconds", T_BASE),
	{NULL, 0, 0},
};
static const struct kin_keyname event_keys[] = {
	KEY("ph", K_PH),	   KEY("cat", K_CAT),	      KEY("name", K_NAME),
	KEY("pid", K_NUM + N_PID), KEY("tid", K_NUM + N_TID), KEY("ts", K_NUM + N_TS),
	KEY("dur", K_NUM + N_DUR), KEY("args", K_ARGS),	      {NULL, 0, 0},
};
static const struct kin_keyname arg_keys[] = {
	KEY("device", K_NUM + N_DEVICE),
	KEY("stream", K_NUM + N_STREAM),
	KEY("correlation", K_NUM + N_CORR),
	KEY("registers per thread", K_NUM + N_REGS),
	KEY("shared memory", K_NUM + N_SMEM),
	KEY("grid", K_GRID),
	KEY("block", K_BLOCK),
	KEY("bytes", K_NUM + N_BYTES),
	KEY("cbid", K_NUM + N_CBID),
	KEY("cuda_sync_kind", K_SYNC_KIND),
	KEY("wait_on_cuda_event_id", K_NUM + N_WAIT_EVENT),
	KEY("Device Type", K_NUM + N_DEV_TYPE),
	KEY("Device Id", K_NUM + N_DEV_ID),
	KEY("Addr", K_NUM + N_ADDR),
	KEY("Bytes", K_NUM + N_MEM_BYTES),
	KEY("Total Allocated", K_NUM + N_TOTAL_ALLOC),
	KEY("Total Reserved", K_NUM + N_TOTAL_RESERVED),
	KEY("Call stack", K_CALL_STACK),
	KEY("name", K_ARG_NAME),
	{NULL, 0, 0},
};
static const struct kin_keyname dist_keys[] = {
	KEY("rank", D_RANK),
	{NULL, 0, 0},
};
static const struct kin_keyname devprop_keys[] = {
	KEY("id", P_ID),
	KEY("name", P_NAME),
	KEY("totalGlobalMem", P_MEM),
	KEY("computeMajor", P_MAJOR),
	KEY("computeMinor", P_MINOR),
	KEY("maxThreadsPerBlock", P_THREADS_BLOCK),
	KEY("maxThreadsPerMultiprocessor", P_THREADS_SM),
	KEY("regsPerBlock", P_REGS_BLOCK),
	KEY("regsPerMultiprocessor", P_REGS_SM),
	KEY("warpSize", P_WARP),
	KEY("sharedMemPerBlock", P_SMEM_BLOCK),
	KEY("sharedMemPerMultiprocessor", P_SMEM_SM),
	KEY("numSms", P_SMS),
	KEY("sharedMemPerBlockOptin", P_OPTIN),
	{NULL, 0, 0},
};

/* Event categories: current names and the 2020 format's capitalised ones. */
enum kin_cat {
	C_OTHER,
	C_KERNEL,
	C_MEMCPY,
	C_MEMSET,
	C_RUNTIME,
	C_DRIVER,
	C_SYNC,
	C_PYTHON,
	C_CPU_OP,
};

static const struct {
	const char *text;
	uint8_t len, cat;
} categories[] = {
#define CAT(text, cat)                                                                             \
	{                                                                                          \
		text, sizeof(text) - 1, cat                                                        \
	}
	CAT("kernel", C_KERNEL),	  CAT("gpu_memcpy", C_MEMCPY),
	CAT("memcpy", C_MEMCPY),	  CAT("gpu_memset", C_MEMSET),
	CAT("memset", C_MEMSET),	  CAT("cuda_runtime", C_RUNTIME),
	CAT("runtime", C_RUNTIME),	  CAT("cuda_driver", C_DRIVER),
	CAT("driver", C_DRIVER),	  CAT("cuda_sync", C_SYNC),
	CAT("python_function", C_PYTHON), CAT("cpu_op", C_CPU_OP),
	CAT("operator", C_CPU_OP),
#undef CAT
};

static const char *const cat_names[] = {
	[C_OTHER] = "an",
	[C_KERNEL] = "a kernel",
	[C_MEMCPY] = "a gpu_memcpy",
	[C_MEMSET] = "a gpu_memset",
	[C_RUNTIME] = "a cuda_runtime",
	[C_DRIVER] = "a cuda_driver",
	[C_SYNC] = "a cuda_sync",
	[C_PYTHON] = "a python_function",
	[C_CPU_OP] = "a cpu_op",
};

/* Kineto's names of CUPTI's copy and memory kinds: "Memcpy HtoD (Pageable -> Device)". */
static const struct {
	const char *text;
	uint8_t kind;
} copy_kinds[] =
	{
		{"HtoD", CUPTI_ACTIVITY_MEMCPY_KIND_HTOD},
		{"DtoH", CUPTI_ACTIVITY_MEMCPY_KIND_DTOH},
		{"HtoA", CUPTI_ACTIVITY_MEMCPY_KIND_HTOA},
		{"AtoH", CUPTI_ACTIVITY_MEMCPY_KIND_ATOH},
		{"AtoA", CUPTI_ACTIVITY_MEMCPY_KIND_ATOA},
		{"AtoD", CUPTI_ACTIVITY_MEMCPY_KIND_ATOD},
		{"DtoA", CUPTI_ACTIVITY_MEMCPY_KIND_DTOA},
		{"DtoD", CUPTI_ACTIVITY_MEMCPY_KIND_DTOD},
		{"HtoH", CUPTI_ACTIVITY_MEMCPY_KIND_HTOH},
		{"PtoP", CUPTI_ACTIVITY_MEMCPY_KIND_PTOP},
},
  memory_kinds[] =
	  {
		  {"Pageable", CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE},
		  {"Pinned", CUPTI_ACTIVITY_MEMORY_KIND_PINNED},
		  {"Device", CUPTI_ACTIVITY_MEMORY_KIND_DEVICE},
		  {"Array", CUPTI_ACTIVITY_MEMORY_KIND_ARRAY},
		  {"Managed", CUPTI_ACTIVITY_MEMORY_KIND_MANAGED},
		  {"Device Static", CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC},
		  {"Managed Static", CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC},
},
  sync_kinds[] = {
	  {"Event Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE},
	  {"Stream Wait Event", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT},
	  {"Stream Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE},
	  {"Context Sync", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE},
};

/* What a field holds after parsing. */
enum kin_state {
	V_ABSENT = 0, /* also null */
	V_OK,
	V_STRING, /* a string where a number belongs */
	V_TYPE,	  /* a boolean, an array or an object where a number belongs */
	V_RANGE,  /* a number outside int64_t */
	V_FRACTION,
};

struct kin_val {
	int64_t v;
	uint64_t off; /* where it ended in the JSON text */
	uint8_t state;
};

/* The event being read. */
struct kin_ev {
	uint64_t off;
	char ph;
	uint8_t cat;
	uint8_t sync_type;
	bool name_is_string;
	struct kin_val num[N_COUNT];
	uint64_t dims[2][3]; /* grid, block */
	uint8_t ndims[2];
	struct kin_val dims_val[2]; /* the arrays: V_OK, or V_TYPE when malformed */
	struct gw_src_vec name;	    /* bytes */
	struct gw_src_vec aux;	    /* bytes: args "Call stack" or, for metadata, "name" */
	uint16_t aux_key;
};

/* One entry of deviceProperties. */
struct kin_devprop {
	struct kin_val v[P_END - P_ID];
	uint32_t name_id; /* string */
};

/* A block's size from an allocator event of the 2021 format, which has no address and no
 * totals: the allocated curve is rebuilt from these at the end. */
struct kin_delta {
	uint64_t time_ns;
	int64_t device;
	int64_t bytes; /* negative: freed */
	uint64_t seq;  /* order in the file, for equal times */
};

/* The last reserved-bytes sample of a device: the counter only changes when it does. */
struct kin_reserved {
	int64_t device;
	int64_t bytes;
};

enum kin_phase {
	PH_PARSE,
	PH_HOST,
	PH_DONE,
};

enum kin_sect {
	SECT_NONE,
	SECT_EVENTS,
	SECT_DEVPROPS,
	SECT_DIST,
};

/* A runtime or driver call's name, as classified: the same few names come again and again. */
struct kin_api_name {
	char text[48];
	uint8_t len;
	bool driver, found;
	uint8_t category, sync_kind;
};

#define GW_KIN_API_NAMES 16

struct gw_kin {
	struct gw_source *src;
	/* input */
	int fd;
	bool gzip;
	z_stream z;
	bool z_live, z_member_done, in_eof, input_done;
	uint8_t *inbuf, *zbuf; /* read from the file; inflated */
	uint64_t file_size, file_read;
	uint64_t json_off; /* JSON bytes given to the parser before the current chunk */
	yajl_handle y;
	/* where the parser is */
	unsigned depth, ev_depth;
	bool top_seen, top_map, in_ev, in_args, in_dev, doc_done;
	int dims; /* -1, or 0 (grid) / 1 (block) while reading that array */
	uint8_t sect;
	uint16_t key[GW_KIN_KEY_DEPTHS];
	struct kin_ev ev;
	struct kin_devprop dev;
	/* what the trace said */
	bool saw_events, have_base, base_late, header_done;
	int64_t base_ns, rank, host_pid;
	uint64_t events, chrome_events, gpu_ops, memory_events;
	struct gw_src_vec devprops; /* struct kin_devprop */
	struct gw_src_vec devices;  /* int64_t: devices that ran GPU work */
	struct gw_src_vec reserved; /* struct kin_reserved */
	struct gw_src_vec deltas;   /* struct kin_delta */
	size_t delta_at;	    /* the next to queue */
	/* records out */
	enum kin_phase phase;
	struct gw_kin_out out;
	struct gw_kin_strings strings;
	struct gw_src_strtab ids; /* pid and tid strings that are not numbers */
	struct gw_kin_host host;
	struct kin_api_name api_names[GW_KIN_API_NAMES];
	unsigned api_names_next; /* the slot the next new name takes */
	/* an error: the first one ends the parse */
	int err;
	char reason[256];
	char cut[320]; /* why the input ended early, for the NOTE; "" when it did not */
};

/* ---- output queue ---- */

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

/* Hands out the next queued record; false when the queue is empty. */
static bool pop(struct gw_kin_out *o, struct gw_record *ret)
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
	case GW_REC_STACK:
		ret->stack.ips = (struct gw_ips){(const uint64_t *)(const void *)p, q->n};
		break;
	}
	return true;
}

/* The caller is done with what was handed out: the queue and its arena start over. */
static void out_reset(struct gw_kin_out *o)
{
	o->queue.len = 0;
	o->head = 0;
	o->arena.len = 0;
}

/* ---- strings ---- */

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

/* ---- errors ---- */

/* The first error wins; the parser stops at it. Returns err. */
static int kin_fail(struct gw_kin *k, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int kin_fail(struct gw_kin *k, int err, const char *fmt, ...)
{
	va_list ap;

	if (k->err)
		return k->err;
	va_start(ap, fmt);
	vsnprintf(k->reason, sizeof(k->reason), fmt, ap);
	va_end(ap);
	k->err = err;
	return err;
}

/* "byte 123" of the JSON text; in a gzip file, of its decompressed text. */
static const char *where(const struct gw_kin *k, uint64_t off, char *buf, size_t n)
{
	snprintf(buf, n, "byte %llu%s", (unsigned long long)off, k->gzip ? " (decompressed)" : "");
	return buf;
}

static uint64_t offset_now(const struct gw_kin *k)
{
	return k->json_off + yajl_get_bytes_consumed(k->y);
}

/* A field this event needs is missing or malformed. */
static int field_fail(struct gw_kin *k, const char *field, const struct kin_val *v)
{
	static const char *const why[] = {
		[V_STRING] = "is a string, not a number",
		[V_TYPE] = "is not a number",
		[V_RANGE] = "is out of range",
		[V_FRACTION] = "is not a whole number",
	};
	char at[64];

	if (v->state == V_ABSENT)
		return kin_fail(k, -EINVAL, "%s: %s event without \"%s\"",
				where(k, k->ev.off, at, sizeof(at)), cat_names[k->ev.cat], field);
	if (v->state == V_OK) /* a value the event cannot have */
		return kin_fail(k, -EINVAL, "%s: %s event: \"%s\" is negative",
				where(k, v->off, at, sizeof(at)), cat_names[k->ev.cat], field);
	return kin_fail(k, -EINVAL, "%s: %s event: \"%s\" %s", where(k, v->off, at, sizeof(at)),
			cat_names[k->ev.cat], field, why[v->state]);
}

static const char *num_name(enum kin_num f)
{
	for (const struct kin_keyname *t = event_keys; t->text; t++)
		if (t->key == K_NUM + f)
			return t->text;
	for (const struct kin_keyname *t = arg_keys; t->text; t++)
		if (t->key == K_NUM + f)
			return t->text;
	return "?";
}

/* A field the event needs, >= 0. Returns 0 or the error. */
static int need(struct gw_kin *k, enum kin_num f, int64_t *ret)
{
	const struct kin_val *v = &k->ev.num[f];

	if (v->state != V_OK || v->v < 0)
		return field_fail(k, num_name(f), v);
	*ret = v->v;
	return 0;
}

/* A field the event may have (def when absent), >= 0. Returns 0 or the error. */
static int want(struct gw_kin *k, enum kin_num f, int64_t def, int64_t *ret)
{
	if (k->ev.num[f].state == V_ABSENT) {
		*ret = def;
		return 0;
	}
	return need(k, f, ret);
}

/* A field that may be absent or -1 (Kineto's "none"): def then. Returns 0 or the error. */
static int want_or_none(struct gw_kin *k, enum kin_num f, int64_t def, int64_t *ret)
{
	const struct kin_val *v = &k->ev.num[f];

	if (v->state == V_OK && v->v < 0) {
		*ret = def;
		return 0;
	}
	return want(k, f, def, ret);
}

/* ---- events ---- */

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
	if (k->ev.num[N_TS].state == V_OK && k->ev.num[N_TS].v >= 0) {
		rec->header.start_ns = (uint64_t)k->ev.num[N_TS].v + (uint64_t)k->base_ns;
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

	if ((r = need(k, N_TS, &ts)) < 0 || (r = need(k, N_DUR, &dur)) < 0)
		return r;
	if (ts > INT64_MAX - k->base_ns || ts + k->base_ns > INT64_MAX - dur)
		return kin_fail(k, -EINVAL, "%s: %s event ends past the year 2262",
				where(k, k->ev.num[N_TS].off, at, sizeof(at)),
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

	if ((r = need(k, N_TS, &ts)) < 0)
		return r;
	if (ts > INT64_MAX - k->base_ns)
		return kin_fail(k, -EINVAL, "%s: %s event past the year 2262",
				where(k, k->ev.num[N_TS].off, at, sizeof(at)),
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

	if (k->ev.num[N_DEVICE].state != V_ABSENT)
		r = need(k, N_DEVICE, ret);
	else
		r = need(k, N_PID, ret);
	if (r < 0)
		return r;
	seen = k->devices.data;
	for (i = 0; i < k->devices.len && seen[i] != *ret; i++)
		;
	if (i < k->devices.len)
		return 0;
	if (k->devices.len >= GW_KIN_MAX_DEVICES) {
		char at[64];

		return kin_fail(k, -EINVAL, "%s: more than %d GPU devices",
				where(k, k->ev.off, at, sizeof(at)), GW_KIN_MAX_DEVICES);
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
	if (k->ev.num[N_STREAM].state != V_ABSENT)
		return want_or_none(k, N_STREAM, 0, ret);
	*ret = k->ev.num[N_TID].state == V_OK && k->ev.num[N_TID].v >= 0 ? k->ev.num[N_TID].v : 0;
	return 0;
}

/* A launch dimension: up to three whole numbers, the missing ones 1. */
static int dims(struct gw_kin *k, int which, uint64_t *x, uint64_t *y, uint64_t *z)
{
	const struct kin_ev *e = &k->ev;
	char at[64];

	*x = *y = *z = 0;
	if (e->dims_val[which].state == V_ABSENT)
		return 0;
	if (e->dims_val[which].state != V_OK)
		return kin_fail(k, -EINVAL,
				"%s: %s event: \"%s\" is not a list of 1 to 3 whole "
				"numbers",
				where(k, e->dims_val[which].off, at, sizeof(at)), cat_names[e->cat],
				which ? "block" : "grid");
	*x = e->dims[which][0];
	*y = e->ndims[which] > 1 ? e->dims[which][1] : 1;
	*z = e->ndims[which] > 2 ? e->dims[which][2] : 1;
	return 0;
}

/* The kind named by text among a table's names, or def. */
#define KIND_OF(table, text, len, def)                                                             \
	kind_of(table, sizeof(table) / sizeof(table[0]), text, len, def)
static uint8_t kind_of(const void *table, size_t n, const char *text, size_t len, uint8_t def)
{
	const struct {
		const char *text;
		uint8_t kind;
	} *t = table;

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
	*kind = KIND_OF(copy_kinds, p, (size_t)(q - p), 0);
	if (end - q < 2 || q[1] != '(' || end[-1] != ')')
		return;
	p = q + 2;
	for (q = p; q + 4 <= end && memcmp(q, " -> ", 4) != 0; q++)
		;
	if (q + 4 > end)
		return;
	*src = KIND_OF(memory_kinds, p, (size_t)(q - p), 0);
	*dst = KIND_OF(memory_kinds, q + 4, (size_t)(end - 1 - (q + 4)), 0);
}

static int gpu_op(struct gw_kin *k)
{
	struct kin_ev *e = &k->ev;
	uint64_t start, end;
	int64_t dev, stream, corr, bytes = 0;
	uint8_t kind, src, dst;
	struct gw_record *rec;
	uint32_t name_id;
	int r;

	if ((r = ev_span(k, &start, &end)) < 0 || (r = gpu_device(k, &dev)) < 0 ||
	    (r = gpu_stream(k, &stream)) < 0 || (r = want(k, N_CORR, 0, &corr)) < 0 ||
	    (e->cat != C_KERNEL && (r = want(k, N_BYTES, 0, &bytes)) < 0) ||
	    (r = ensure_header(k)) < 0)
		return r;
	if ((r = gw_kin_gpu_device(&k->host, (uint64_t)corr, dev)) < 0)
		return r;
	k->gpu_ops++;
	if (e->cat == C_KERNEL) {
		int64_t regs, smem;

		if ((r = want(k, N_REGS, 0, &regs)) < 0 || (r = want(k, N_SMEM, 0, &smem)) < 0 ||
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
	} else if (e->cat == C_MEMCPY) {
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
			rec->memset.mem_kind = KIND_OF(memory_kinds, n + 8, len - 9, 0);
	}
	return 0;
}

/* The id of a pid or tid: the number, or a negative id for a name that is not one. */
static int host_thread(struct gw_kin *k, uint64_t ns, uint32_t *ret_idx)
{
	const struct kin_val *tid = &k->ev.num[N_TID], *pid = &k->ev.num[N_PID];
	int r;

	if (tid->state != V_OK)
		return field_fail(k, "tid", tid);
	if (pid->state == V_OK && pid->v > 0 && k->host_pid <= 0)
		k->host_pid = pid->v;
	if ((r = gw_kin_thread(&k->host, tid->v, ns, ret_idx)) < 0)
		return r;
	return 0;
}

/* gw_cuda_api_lookup, through a small cache of the names seen last. */
static bool api_lookup(struct gw_kin *k, const char *name, size_t len, bool driver,
		       uint8_t *ret_category, uint8_t *ret_sync_kind)
{
	struct kin_api_name *c;

	for (unsigned i = 0; i < GW_KIN_API_NAMES; i++) {
		c = &k->api_names[i];
		if (c->len == len && c->driver == driver && len &&
		    memcmp(c->text, name, len) == 0) {
			*ret_category = c->category;
			*ret_sync_kind = c->sync_kind;
			return c->found;
		}
	}
	if (len >= sizeof(c->text))
		return gw_cuda_api_lookup(name, len, driver, ret_category, ret_sync_kind);
	c = &k->api_names[k->api_names_next++ % GW_KIN_API_NAMES];
	memcpy(c->text, name, len);
	c->len = (uint8_t)len;
	c->driver = driver;
	c->found = gw_cuda_api_lookup(name, len, driver, &c->category, &c->sync_kind);
	*ret_category = c->category;
	*ret_sync_kind = c->sync_kind;
	return c->found;
}

static int api_call(struct gw_kin *k)
{
	struct kin_ev *e = &k->ev;
	bool driver = e->cat == C_DRIVER;
	uint8_t category, sync_kind;
	struct gw_kin_call *c;
	int64_t corr, cbid;
	uint64_t start, end;
	uint32_t tidx, name_id;
	int r;

	if (!api_lookup(k, e->name.data, e->name.len, driver, &category, &sync_kind))
		return 0; /* a call gpuwhy's own capture does not record either */
	if ((r = ev_span(k, &start, &end)) < 0 || (r = want(k, N_CORR, 0, &corr)) < 0 ||
	    (r = want(k, N_CBID, 0, &cbid)) < 0 || (r = host_thread(k, start, &tidx)) < 0 ||
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
	c->category = category;
	c->sync_kind = sync_kind;
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

	if ((r = ev_span(k, &start, &end)) < 0 || (r = want(k, N_CORR, 0, &corr)) < 0 ||
	    (r = gpu_device(k, &dev)) < 0 || (r = gpu_stream(k, &stream)) < 0 ||
	    (r = want_or_none(k, N_WAIT_EVENT, 0, &event)) < 0 || (r = ensure_header(k)) < 0 ||
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

/* A Python function or an operator: a span of its thread, for the stacks of calls inside. */
static int host_span(struct gw_kin *k)
{
	struct kin_ev *e = &k->ev;
	struct gw_kin_span *s;
	uint64_t start, end;
	uint32_t tidx, ref, flags = 0;
	int r;

	/* torch.profiler's step marker: an operator of the 2020 and 2021 formats, around all */
	if (e->cat == C_CPU_OP && e->name.len > 13 &&
	    memcmp(e->name.data, "ProfilerStep#", 13) == 0)
		return 0;
	if ((r = ev_span(k, &start, &end)) < 0 || (r = host_thread(k, start, &tidx)) < 0)
		return r;
	if (e->cat == C_PYTHON) {
		r = gw_kin_frame(&k->host, &k->strings, e->name.data, e->name.len, GW_FRAME_PYTHON,
				 &ref);
	} else if (e->aux_key == K_CALL_STACK && e->aux.len) {
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
	if (!(s = gw_src_vec_push(e->cat == C_PYTHON ? &k->host.python : &k->host.ops, sizeof(*s))))
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
	struct kin_reserved *res = k->reserved.data;
	struct gw_record *rec;
	struct gw_kin_call *c;
	uint64_t t = 0;
	uint32_t tidx;
	size_t i;
	int r;

	/* CPU events: Device Type 0, Device Id -1 */
	if ((r = want(k, N_DEV_TYPE, -1, &type)) < 0 || type != GW_KIN_DEVICE_CUDA)
		return r;
	if ((r = need(k, N_DEV_ID, &dev)) < 0 || (r = ev_time(k, &t)) < 0 ||
	    (r = host_thread(k, t, &tidx)) < 0 || (r = ensure_header(k)) < 0)
		return r;
	if (k->ev.num[N_MEM_BYTES].state != V_OK)
		return field_fail(k, "Bytes", &k->ev.num[N_MEM_BYTES]);
	bytes = k->ev.num[N_MEM_BYTES].v;
	k->memory_events++;
	if (k->ev.num[N_ADDR].state == V_ABSENT) {
		struct kin_delta *d = gw_src_vec_push(&k->deltas, sizeof(*d));

		if (!d)
			return -ENOMEM;
		d->time_ns = t;
		d->device = dev;
		d->bytes = bytes;
		d->seq = k->deltas.len;
		return 0;
	}
	if ((r = need(k, N_ADDR, &addr)) < 0)
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
	if ((r = want(k, N_TOTAL_ALLOC, -1, &total)) < 0)
		return r;
	if (total >= 0) {
		if (!(rec = gw_kin_push(&k->out, GW_REC_COUNTER)))
			return -ENOMEM;
		rec->counter.time_ns = t;
		rec->counter.device = (uint64_t)dev;
		rec->counter.counter = GW_COUNTER_ALLOCATOR_ALLOCATED;
		rec->counter.value = (uint64_t)total;
	}
	if ((r = want(k, N_TOTAL_RESERVED, -1, &total)) < 0 || total < 0)
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
	const struct kin_val *pid = &k->ev.num[N_PID], *tid = &k->ev.num[N_TID];
	uint32_t id;
	int r;

	/* GPU "threads" (pid a device, tid a stream) are named too: only the process's own */
	if (k->ev.aux_key != K_ARG_NAME || pid->state != V_OK || tid->state != V_OK ||
	    k->host_pid <= 0 || pid->v != k->host_pid)
		return 0;
	if ((r = gw_kin_intern(&k->strings, k->ev.aux.data, k->ev.aux.len, &id)) < 0)
		return r;
	return gw_kin_thread_name(&k->host, tid->v, id);
}

static bool name_is(const struct kin_ev *e, const char *s)
{
	return e->name.len == strlen(s) && memcmp(e->name.data, s, e->name.len) == 0;
}

static int ev_done(struct gw_kin *k)
{
	struct kin_ev *e = &k->ev;

	k->events++;
	if (e->ph)
		k->chrome_events++;
	switch (e->ph) {
	case 'X':
		switch (e->cat) {
		case C_KERNEL:
		case C_MEMCPY:
		case C_MEMSET:
			return gpu_op(k);
		case C_RUNTIME:
		case C_DRIVER:
			return api_call(k);
		case C_SYNC:
			return cuda_sync(k);
		case C_PYTHON:
		case C_CPU_OP:
			return host_span(k);
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

/* ---- the JSON callbacks ---- */

static uint16_t key_of(const struct kin_keyname *t, const char *s, size_t len)
{
	for (; t->text; t++)
		if (t->len == len && t->text[0] == s[0] && memcmp(t->text, s, len) == 0)
			return t->key;
	return K_NONE;
}

static uint8_t cat_of(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		if (strlen(categories[i].text) == len &&
		    strncasecmp(categories[i].text, s, len) == 0)
			return categories[i].cat;
	return C_OTHER;
}

static void ev_begin(struct gw_kin *k)
{
	struct kin_ev *e = &k->ev;

	e->off = offset_now(k) - 1;
	e->ph = 0;
	e->cat = C_OTHER;
	e->sync_type = 0;
	e->name_is_string = false;
	memset(e->num, 0, sizeof(e->num));
	memset(e->ndims, 0, sizeof(e->ndims));
	memset(e->dims_val, 0, sizeof(e->dims_val));
	e->name.len = 0;
	e->aux.len = 0;
	e->aux_key = K_NONE;
	k->in_ev = true;
	k->dims = -1;
}

/* A value of the wrong JSON type for the key it follows. */
static void mistyped(struct gw_kin *k, uint16_t key, uint8_t state)
{
	struct kin_ev *e = &k->ev;

	if (key >= K_NUM && key < K_NUM + N_COUNT) {
		e->num[key - K_NUM].state = state;
		e->num[key - K_NUM].off = offset_now(k);
	} else if (key == K_GRID || key == K_BLOCK) {
		e->dims_val[key == K_BLOCK].state = V_TYPE;
		e->dims_val[key == K_BLOCK].off = offset_now(k);
	}
}

static void set_num(struct gw_kin *k, struct kin_val *v, const char *s, size_t len, unsigned scale)
{
	int r = gw_decimal_parse(s, len, scale, scale == 0, &v->v);

	v->off = offset_now(k);
	v->state = r == 0 ? V_OK : r == -ERANGE ? V_RANGE : r == -EDOM ? V_FRACTION : V_TYPE;
}

/* A pid or tid given as text: "25738", "stream 7", or a name ("Spans"), which gets an id. */
static int set_id_text(struct gw_kin *k, struct kin_val *v, const char *s, size_t len)
{
	uint32_t id;
	bool fresh;
	int r;

	if (len > 7 && memcmp(s, "stream ", 7) == 0) {
		s += 7;
		len -= 7;
	}
	v->off = offset_now(k);
	if (len && gw_decimal_parse(s, len, 0, true, &v->v) == 0 && s[0] != '-') {
		v->state = V_OK;
		return 0;
	}
	if ((r = gw_src_strtab_intern(&k->ids, s, len, &id, &fresh)) < 0)
		return r;
	v->v = -(int64_t)id;
	v->state = V_OK;
	return 0;
}

static int append_text(struct gw_src_vec *v, const char *s, size_t len)
{
	if (v->len >= GW_KIN_MAX_STRING)
		return 0;
	if (len > GW_KIN_MAX_STRING - v->len)
		len = GW_KIN_MAX_STRING - v->len;
	return gw_src_vec_append(v, s, len) < 0 ? -ENOMEM : 0;
}

enum kin_type {
	J_NULL,
	J_BOOL,
	J_NUMBER,
	J_STRING,
};

static int ev_value(struct gw_kin *k, uint16_t key, enum kin_type type, const char *s, size_t len)
{
	struct kin_ev *e = &k->ev;

	if (key >= K_NUM && key < K_NUM + N_COUNT) {
		enum kin_num f = key - K_NUM;

		if (type == J_NUMBER)
			set_num(k, &e->num[f], s, len, f == N_TS || f == N_DUR ? 3 : 0);
		else if (type == J_STRING && (f == N_PID || f == N_TID))
			return set_id_text(k, &e->num[f], s, len);
		else if (type != J_NULL)
			mistyped(k, key, type == J_STRING ? V_STRING : V_TYPE);
		return 0;
	}
	if (type != J_STRING) {
		mistyped(k, key, V_TYPE);
		return 0;
	}
	switch (key) {
	case K_PH:
		e->ph = len == 1 ? s[0] : '?';
		break;
	case K_CAT:
		e->cat = cat_of(s, len);
		break;
	case K_NAME:
		e->name.len = 0;
		e->name_is_string = true;
		return append_text(&e->name, s, len);
	case K_SYNC_KIND:
		e->sync_type = KIND_OF(sync_kinds, s, len, 0);
		break;
	case K_CALL_STACK:
	case K_ARG_NAME:
		e->aux.len = 0;
		e->aux_key = key;
		return append_text(&e->aux, s, len);
	}
	return 0;
}

static int devprop_value(struct gw_kin *k, uint16_t key, enum kin_type type, const char *s,
			 size_t len)
{
	struct kin_val *v;

	if (key < P_ID || key >= P_END)
		return 0;
	v = &k->dev.v[key - P_ID];
	if (key == P_NAME) {
		if (type == J_STRING) {
			v->state = V_OK;
			return gw_kin_intern(&k->strings, s, len, &k->dev.name_id);
		}
		return 0;
	}
	if (type == J_NUMBER)
		set_num(k, v, s, len, 0);
	else if (type != J_NULL)
		v->state = type == J_STRING ? V_STRING : V_TYPE;
	v->off = offset_now(k);
	return 0;
}

/* A deviceProperties entry is complete: check what it says. */
static int devprop_done(struct gw_kin *k)
{
	struct kin_devprop *d;
	char at[64];

	for (int i = 0; i < P_END - P_ID; i++) {
		const struct kin_val *v = &k->dev.v[i];

		if (i + P_ID == P_NAME || v->state == V_ABSENT || (v->state == V_OK && v->v >= 0))
			continue;
		return kin_fail(k, -EINVAL, "%s: deviceProperties: \"%s\" is %s",
				where(k, v->off, at, sizeof(at)), devprop_keys[i].text,
				v->state == V_OK ? "negative" : "not a whole number");
	}
	if (k->dev.v[0].state != V_OK)
		return kin_fail(k, -EINVAL, "%s: deviceProperties entry without \"id\"",
				where(k, offset_now(k), at, sizeof(at)));
	if (k->devprops.len >= GW_KIN_MAX_DEVICES)
		return 0;
	if (!(d = gw_src_vec_push(&k->devprops, sizeof(*d))))
		return -ENOMEM;
	*d = k->dev;
	return 0;
}

static int scalar(struct gw_kin *k, enum kin_type type, const char *s, size_t len)
{
	unsigned d = k->depth;
	char at[64];
	int r = 0;

	if (d == 0)
		return kin_fail(k, -EBADMSG, "not a trace: the JSON is not an object or an array");
	if (d == 1 && k->top_map) {
		if (k->key[1] != T_BASE)
			return 0;
		struct kin_val v = {0};

		if (type == J_NUMBER)
			set_num(k, &v, s, len, 0);
		if (v.state != V_OK || v.v < 0)
			return kin_fail(k, -EINVAL,
					"%s: \"baseTimeNanoseconds\" is not a whole number",
					where(k, offset_now(k), at, sizeof(at)));
		/* After the events it comes too late to move them: times stay relative to it. */
		if (k->saw_events) {
			k->base_late = true;
		} else {
			k->base_ns = v.v;
			k->have_base = true;
		}
		return 0;
	}
	if (d == 1 && k->sect == SECT_EVENTS && !k->events)
		return kin_fail(k, -EBADMSG,
				"not a trace: a JSON array of other things than events");
	switch (k->sect) {
	case SECT_DIST:
		if (d == 2 && k->key[2] == D_RANK && type == J_NUMBER) {
			struct kin_val v = {0};

			set_num(k, &v, s, len, 0);
			if (v.state == V_OK && v.v >= 0)
				k->rank = v.v;
		}
		break;
	case SECT_DEVPROPS:
		if (d == 3 && k->in_dev)
			r = devprop_value(k, k->key[3], type, s, len);
		break;
	case SECT_EVENTS:
		if (k->in_ev && d == k->ev_depth) {
			r = ev_value(k, k->key[d], type, s, len);
		} else if (k->in_args && d == k->ev_depth + 1) {
			r = ev_value(k, k->key[d], type, s, len);
		} else if (k->dims >= 0 && d == k->ev_depth + 2) {
			struct kin_ev *e = &k->ev;
			struct kin_val v = {0};

			if (type == J_NUMBER)
				set_num(k, &v, s, len, 0);
			if (v.state != V_OK || v.v < 0 || e->ndims[k->dims] >= 3)
				e->dims_val[k->dims].state = V_TYPE;
			else
				e->dims[k->dims][e->ndims[k->dims]++] = (uint64_t)v.v;
		}
		break;
	}
	return r;
}

static int open_container(struct gw_kin *k, bool map)
{
	unsigned d = ++k->depth;
	char at[64];

	if (d > GW_KIN_MAX_DEPTH)
		return kin_fail(k, -EBADMSG, "%s: JSON nested deeper than %d levels",
				where(k, offset_now(k), at, sizeof(at)), GW_KIN_MAX_DEPTH);
	if (d < GW_KIN_KEY_DEPTHS)
		k->key[d] = K_NONE;
	if (d == 1) {
		k->top_seen = true;
		k->top_map = map;
		if (!map) { /* the 2020 format: a bare array of events */
			k->sect = SECT_EVENTS;
			k->ev_depth = 2;
			k->saw_events = true;
		}
		return 0;
	}
	if (d == 2 && !k->top_map && !map && !k->events)
		return kin_fail(k, -EBADMSG,
				"not a trace: a JSON array of other things than events");
	if (d == 2 && k->top_map) {
		if (k->key[1] == T_EVENTS && !map) {
			k->sect = SECT_EVENTS;
			k->ev_depth = 3;
			k->saw_events = true;
		} else if (k->key[1] == T_DEVPROPS && !map) {
			k->sect = SECT_DEVPROPS;
		} else if (k->key[1] == T_DIST && map) {
			k->sect = SECT_DIST;
		}
		return 0;
	}
	switch (k->sect) {
	case SECT_EVENTS:
		if (d == k->ev_depth && map)
			ev_begin(k);
		else if (k->in_ev && d == k->ev_depth + 1 && k->key[d - 1] == K_ARGS && map)
			k->in_args = true;
		else if (k->in_ev && d == k->ev_depth + 1)
			mistyped(k, k->key[d - 1], V_TYPE);
		else if (k->in_args && d == k->ev_depth + 2 && !map &&
			 (k->key[d - 1] == K_GRID || k->key[d - 1] == K_BLOCK)) {
			k->dims = k->key[d - 1] == K_BLOCK;
			k->ev.dims_val[k->dims].state = V_OK;
			k->ev.dims_val[k->dims].off = offset_now(k);
		} else if (k->in_args && d == k->ev_depth + 2) {
			mistyped(k, k->key[d - 1], V_TYPE);
		} else if (k->dims >= 0 && d == k->ev_depth + 3) {
			k->ev.dims_val[k->dims].state = V_TYPE;
		}
		break;
	case SECT_DEVPROPS:
		if (d == 3 && map) {
			memset(&k->dev, 0, sizeof(k->dev));
			k->in_dev = true;
		} else if (d == 4 && k->in_dev && k->key[3] >= P_ID && k->key[3] < P_END) {
			k->dev.v[k->key[3] - P_ID].state = V_TYPE;
			k->dev.v[k->key[3] - P_ID].off = offset_now(k);
		}
		break;
	}
	return 0;
}

static int close_container(struct gw_kin *k, bool map)
{
	unsigned d = k->depth;
	int r = 0;

	if (k->sect == SECT_EVENTS) {
		if (d == k->ev_depth && k->in_ev && map) {
			k->in_ev = false;
			r = ev_done(k);
		} else if (d == k->ev_depth + 1 && k->in_args && map) {
			k->in_args = false;
		} else if (d == k->ev_depth + 2 && k->dims >= 0 && !map) {
			if (!k->ev.ndims[k->dims])
				k->ev.dims_val[k->dims].state = V_TYPE;
			k->dims = -1;
		}
	} else if (k->sect == SECT_DEVPROPS && d == 3 && k->in_dev) {
		k->in_dev = false;
		r = devprop_done(k);
	}
	if (d == 2 && k->top_map)
		k->sect = SECT_NONE;
	if (d == 1) {
		k->sect = SECT_NONE;
		k->doc_done = true;
	}
	k->depth--;
	return r;
}

/* yajl calls back with ctx = the state; returning 0 stops the parse (k->err says why). */
static int cb_null(void *ctx)
{
	return scalar(ctx, J_NULL, NULL, 0) == 0;
}

static int cb_boolean(void *ctx, int value)
{
	(void)value;
	return scalar(ctx, J_BOOL, NULL, 0) == 0;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return scalar(ctx, J_NUMBER, s, len) == 0;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return scalar(ctx, J_STRING, (const char *)s, len) == 0;
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, true) == 0;
}

static int cb_end_map(void *ctx)
{
	return close_container(ctx, true) == 0;
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, false) == 0;
}

static int cb_end_array(void *ctx)
{
	return close_container(ctx, false) == 0;
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
	struct gw_kin *k = ctx;
	const char *s = (const char *)key;
	unsigned d = k->depth;
	uint16_t id = K_NONE;

	if (!len) /* no key of ours */
		id = K_NONE;
	else if (d == 1 && k->top_map)
		id = key_of(top_keys, s, len);
	else if (k->sect == SECT_EVENTS && k->in_ev && d == k->ev_depth)
		id = key_of(event_keys, s, len);
	else if (k->sect == SECT_EVENTS && k->in_args && d == k->ev_depth + 1)
		id = key_of(arg_keys, s, len);
	else if (k->sect == SECT_DEVPROPS && k->in_dev && d == 3)
		id = key_of(devprop_keys, s, len);
	else if (k->sect == SECT_DIST && d == 2)
		id = key_of(dist_keys, s, len);
	if (d < GW_KIN_KEY_DEPTHS)
		k->key[d] = id;
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

/* ---- input ---- */

/* yajl's message for the error it stopped at, on one line. */
static void json_error(struct gw_kin *k, const uint8_t *text, size_t len, char *buf, size_t n)
{
	unsigned char *msg = yajl_get_error(k->y, 0, text, len);
	size_t m;

	snprintf(buf, n, "%s", msg ? (const char *)msg : "parse error");
	yajl_free_error(k->y, msg);
	m = strlen(buf);
	while (m && (buf[m - 1] == '\n' || buf[m - 1] == ' '))
		buf[--m] = '\0';
}

/*
 * The input is bad from offset on. Before the first event that is the whole file: an error.
 * After, what came before is kept, as a cut file is, and the reason becomes a NOTE.
 */
static int input_bad(struct gw_kin *k, int err, const char *what)
{
	if (k->err)
		return k->err;
	if (!k->events)
		return kin_fail(k, err, "%s", what);
	snprintf(k->cut, sizeof(k->cut), "%.256s; the trace is read up to there", what);
	k->input_done = true;
	return 0;
}

/* Gives the parser len more bytes of JSON. */
static int parse(struct gw_kin *k, const uint8_t *text, size_t len)
{
	yajl_status st = yajl_parse(k->y, text, len);
	char msg[160], at[64], what[256];

	if (st == yajl_status_ok) {
		k->json_off += len;
		return 0;
	}
	if (st == yajl_status_client_canceled || k->err)
		return k->err ? k->err : -EINVAL;
	json_error(k, text, len, msg, sizeof(msg));
	snprintf(what, sizeof(what), "%s: %s%s", where(k, offset_now(k), at, sizeof(at)),
		 k->events ? "" : "not JSON: ", msg);
	return input_bad(k, -EBADMSG, what);
}

static int read_some(struct gw_kin *k, uint8_t *buf, size_t cap, size_t *ret)
{
	ssize_t n;

	do
		n = read(k->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return kin_fail(k, -errno, "%s", strerror(errno));
	k->file_read += (uint64_t)n;
	*ret = (size_t)n;
	return 0;
}

/* Feeds one chunk of input to the parser; sets input_done at the end of the input. */
static int feed(struct gw_kin *k)
{
	size_t n;
	int r, zr;

	if (!k->gzip) {
		if ((r = read_some(k, k->inbuf, GW_KIN_CHUNK, &n)) < 0)
			return r;
		if (!n) {
			k->input_done = true;
			return 0;
		}
		return parse(k, k->inbuf, n);
	}
	if (!k->z.avail_in && !k->in_eof) {
		if ((r = read_some(k, k->inbuf, GW_KIN_CHUNK, &n)) < 0)
			return r;
		k->z.next_in = k->inbuf;
		k->z.avail_in = (uInt)n;
		k->in_eof = n == 0;
	}
	if (k->z_member_done) {
		/* gzip allows members back to back; anything else after the end is ignored */
		if (!k->z.avail_in || k->z.next_in[0] != 0x1f) {
			k->input_done = k->in_eof || k->z.avail_in;
			return 0;
		}
		if (inflateReset(&k->z) != Z_OK)
			return kin_fail(k, -ENOMEM, "zlib: %s", k->z.msg ? k->z.msg : "reset");
		k->z_member_done = false;
	}
	k->z.next_out = k->zbuf;
	k->z.avail_out = GW_KIN_CHUNK;
	zr = inflate(&k->z, Z_NO_FLUSH);
	n = GW_KIN_CHUNK - k->z.avail_out;
	if (n && (r = parse(k, k->zbuf, n)) < 0)
		return r;
	if (k->input_done)
		return 0;
	if (zr == Z_STREAM_END) {
		k->z_member_done = true;
	} else if (zr == Z_BUF_ERROR && k->in_eof && !n) {
		char what[128];

		snprintf(what, sizeof(what), "byte %llu: the gzip data ends early (a cut file)",
			 (unsigned long long)k->file_read);
		if (!k->events)
			return kin_fail(k, -EBADMSG, "%s", what);
		snprintf(k->cut, sizeof(k->cut), "%s; the trace is read up to there", what);
		k->input_done = true;
	} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
		char what[160];

		snprintf(what, sizeof(what), "byte %llu: corrupt gzip data (%s)",
			 (unsigned long long)(k->file_read - k->z.avail_in),
			 k->z.msg ? k->z.msg : "zlib error");
		return input_bad(k, zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG, what);
	}
	return 0;
}

/* ---- the end ---- */

static int note(struct gw_kin *k, uint8_t level, const char *text)
{
	struct gw_record *rec = gw_kin_push_data(&k->out, GW_REC_NOTE, text, strlen(text));

	if (!rec)
		return -ENOMEM;
	rec->note.level = level;
	return 0;
}

static int64_t devprop(const struct kin_devprop *d, int key)
{
	const struct kin_val *v = &d->v[key - P_ID];

	return v->state == V_OK && v->v > 0 ? v->v : 0;
}

/* DEVICE records for the devices that ran GPU work, from deviceProperties. */
static int emit_devices(struct gw_kin *k)
{
	const struct kin_devprop *props = k->devprops.data;
	const int64_t *seen = k->devices.data;

	for (size_t i = 0; i < k->devices.len; i++) {
		const struct kin_devprop *d = NULL;
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
		rec->device.sm_count = (uint64_t)devprop(d, P_SMS);
		rec->device.cc_major = (uint64_t)devprop(d, P_MAJOR);
		rec->device.cc_minor = (uint64_t)devprop(d, P_MINOR);
		rec->device.memory_total_bytes = (uint64_t)devprop(d, P_MEM);
		rec->device.max_threads_per_sm = (uint64_t)devprop(d, P_THREADS_SM);
		rec->device.regs_per_sm = (uint64_t)devprop(d, P_REGS_SM);
		rec->device.smem_per_sm_bytes = (uint64_t)devprop(d, P_SMEM_SM);
		rec->device.max_threads_per_block = (uint64_t)devprop(d, P_THREADS_BLOCK);
		rec->device.max_regs_per_block = (uint64_t)devprop(d, P_REGS_BLOCK);
		rec->device.max_smem_per_block_bytes =
			(uint64_t)(devprop(d, P_OPTIN) ? devprop(d, P_OPTIN)
						       : devprop(d, P_SMEM_BLOCK));
		rec->device.warp_size = (uint64_t)devprop(d, P_WARP);
		/* Kineto does not write the block limit: NVIDIA's occupancy header has it per
		 * compute capability (an unknown one leaves 0, the analysis's assumption). */
		occ.computeMajor = (int)(devprop(d, P_MAJOR) > 1000 ? 0 : devprop(d, P_MAJOR));
		occ.computeMinor = (int)(devprop(d, P_MINOR) > 1000 ? 0 : devprop(d, P_MINOR));
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
	const struct kin_delta *p = x, *q = y;

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
	struct kin_delta *d = k->deltas.data;
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
	const struct kin_delta *d = k->deltas.data;

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

/* The input has ended (or broken off): finish the document and start on the host side. */
static int input_end(struct gw_kin *k)
{
	char at[64];
	int r;

	if (!k->err && !k->cut[0] && yajl_complete_parse(k->y) != yajl_status_ok) {
		if (!k->events && !k->top_seen)
			return kin_fail(k, -EBADMSG, "%s",
					k->json_off ? "not JSON: no value"
						    : "empty file, not a trace");
		snprintf(k->cut, sizeof(k->cut),
			 "%s: the JSON ends early (a cut file); the trace "
			 "is read up to there",
			 where(k, k->json_off, at, sizeof(at)));
		if (!k->events)
			return kin_fail(k, -EBADMSG, "%s", k->cut);
	}
	if (k->err)
		return k->err;
	if (!k->saw_events)
		return kin_fail(k, -EBADMSG,
				"not a torch.profiler trace: no \"traceEvents\" array");
	if (k->events && !k->chrome_events)
		return kin_fail(k, -EBADMSG, "not a torch.profiler trace: no event has a \"ph\"");
	k->src->truncated = k->cut[0] != '\0';
	k->src->clean_exit = !k->src->truncated;
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
				     "no GPU activity (kernel, gpu_memcpy or gpu_memset "
				     "events): was the profiler run with "
				     "ProfilerActivity.CUDA?")) < 0)
		return r;
	deltas_to_levels(k);
	k->phase = PH_HOST;
	return 0;
}

/* Queues at least one record, unless the trace is done. */
static int refill(struct gw_kin *k)
{
	int r;

	out_reset(&k->out);
	while (!k->out.queue.len && k->phase != PH_DONE) {
		if (k->err)
			return k->err;
		if (k->phase == PH_PARSE) {
			r = k->input_done ? input_end(k) : feed(k);
		} else if ((r = emit_levels(k)) == 0) {
			r = gw_kin_host_emit(&k->host, &k->strings, &k->out);
			if (r == 0)
				k->phase = PH_DONE;
		}
		if (r < 0)
			return k->err ? k->err : kin_fail(k, r, "%s", strerror(-r));
	}
	return 0;
}

/* ---- the source ---- */

/* The sniffer's parse: the first thing in the top-level value decides. */
struct sniff {
	int depth, verdict; /* verdict: 0 undecided, 1 yes, -1 no */
};

/* Returns 0: yajl stops at the verdict. */
static int sn_decide(struct sniff *s, int verdict)
{
	s->verdict = verdict;
	return 0;
}

static int sn_scalar(void *ctx)
{
	struct sniff *s = ctx;

	return sn_decide(s, -1);
}

static int sn_null(void *ctx)
{
	return sn_scalar(ctx);
}

static int sn_bool(void *ctx, int b)
{
	(void)b;
	return sn_scalar(ctx);
}

static int sn_number(void *ctx, const char *s, size_t len)
{
	(void)s;
	(void)len;
	return sn_scalar(ctx);
}

static int sn_string(void *ctx, const unsigned char *s, size_t len)
{
	(void)s;
	(void)len;
	return sn_scalar(ctx);
}

static int sn_start_map(void *ctx)
{
	struct sniff *s = ctx;

	/* an object in the top-level array: an event */
	return ++s->depth == 2 ? sn_decide(s, 1) : 1;
}

static int sn_start_array(void *ctx)
{
	struct sniff *s = ctx;

	return ++s->depth == 2 ? sn_decide(s, -1) : 1;
}

static int sn_end(void *ctx)
{
	struct sniff *s = ctx;

	return sn_decide(s, -1);
}

static int sn_key(void *ctx, const unsigned char *s, size_t len)
{
	(void)s;
	(void)len;
	/* a key of the top-level object */
	return sn_decide(ctx, 1);
}

static bool kineto_sniff(const uint8_t *head, size_t len, bool gzip)
{
	static const yajl_callbacks cbs = {
		.yajl_null = sn_null,
		.yajl_boolean = sn_bool,
		.yajl_number = sn_number,
		.yajl_string = sn_string,
		.yajl_start_map = sn_start_map,
		.yajl_map_key = sn_key,
		.yajl_end_map = sn_end,
		.yajl_start_array = sn_start_array,
		.yajl_end_array = sn_end,
	};
	struct sniff s = {0};
	size_t i = 0;
	yajl_handle y;

	(void)gzip;
	while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i >= len || (head[i] != '{' && head[i] != '['))
		return false;
	y = yajl_alloc(&cbs, NULL, &s);
	if (!y)
		return false;
	yajl_config(y, yajl_dont_validate_strings, 1);
	yajl_parse(y, head + i, len - i);
	yajl_free(y);
	return s.verdict > 0;
}

static int kineto_open(struct gw_source *s)
{
	struct gw_kin *k = calloc(1, sizeof(*k));
	struct stat st;
	int r;

	if (!k)
		return -ENOMEM;
	s->state = k;
	k->src = s;
	k->fd = -1;
	k->rank = -1;
	k->dims = -1;
	k->gzip = s->gzip;
	k->fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (k->fd < 0)
		return -errno;
	if (fstat(k->fd, &st) == 0)
		k->file_size = (uint64_t)st.st_size;
	k->inbuf = malloc(GW_KIN_CHUNK);
	k->zbuf = malloc(GW_KIN_CHUNK);
	k->y = yajl_alloc(&callbacks, NULL, k);
	if (!k->inbuf || !k->zbuf || !k->y)
		return -ENOMEM;
	/* Names are bytes to gpuwhy: a stray byte in a kernel name is no reason to give up. */
	yajl_config(k->y, yajl_dont_validate_strings, 1);
	if (k->gzip) {
		if (inflateInit2(&k->z, 16 + MAX_WBITS) != Z_OK)
			return -ENOMEM;
		k->z_live = true;
	}
	/* Read up to the first record: a file that is no trace fails here, in one line. */
	if ((r = refill(k)) < 0)
		return gw_source_fail(r, "%s", k->reason);
	return 0;
}

static int kineto_next(struct gw_source *s, struct gw_record *ret)
{
	struct gw_kin *k = s->state;
	int r;

	if (k->err)
		return gw_source_fail(k->err, "%s", k->reason);
	if (pop(&k->out, ret))
		return 1;
	if ((r = refill(k)) < 0)
		return gw_source_fail(r, "%s", k->reason);
	return pop(&k->out, ret) ? 1 : 0;
}

static void kineto_progress(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size)
{
	const struct gw_kin *k = s->state;

	*ret_done = k->file_read;
	*ret_size = k->file_size;
}

static void kineto_close(struct gw_source *s)
{
	struct gw_kin *k = s->state;

	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	if (k->z_live)
		inflateEnd(&k->z);
	if (k->y)
		yajl_free(k->y);
	free(k->inbuf);
	free(k->zbuf);
	gw_src_vec_free(&k->ev.name);
	gw_src_vec_free(&k->ev.aux);
	gw_src_vec_free(&k->devprops);
	gw_src_vec_free(&k->devices);
	gw_src_vec_free(&k->reserved);
	gw_src_vec_free(&k->deltas);
	gw_src_vec_free(&k->out.queue);
	gw_src_vec_free(&k->out.arena);
	gw_src_strtab_free(&k->strings.tab);
	gw_src_strtab_free(&k->ids);
	gw_kin_host_free(&k->host);
	free(k);
}

const struct gw_source_type gw_source_kineto = {
	.name = "kineto",
	.what = "torch.profiler (Kineto) trace",
	.sniff = kineto_sniff,
	.open = kineto_open,
	.next = kineto_next,
	.progress = kineto_progress,
	.close = kineto_close,
};
