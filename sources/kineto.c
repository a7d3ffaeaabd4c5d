/* SPDX-License-Identifier: MIT */
/* The kineto source: torch.profiler (Kineto) trace JSON, plain or gzip, walked with yajl. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "decimal.h"
#include "gunzip.h"
#include "kineto.h"
#include "sources-internal.h"
#include "trace-reader.h"

#define GW_KIN_CHUNK	  (256 * 1024)
#define GW_KIN_MAX_DEPTH  512	      /* deeper JSON is refused (yajl's own stack would grow) */
#define GW_KIN_MAX_STRING (64 * 1024) /* longer names and call stacks are cut */

/* The keys the walk reads, at each level: the top-level object, an event, its args,
 * distributedInfo, an entry of deviceProperties. Any other key's value is skipped. */
struct gw_kin_keyname {
	const char *text;
	uint8_t len;
	uint16_t key;
};

#define GW_KIN_KEY(text, key)                                                                      \
	{                                                                                          \
		text, sizeof(text) - 1, key                                                        \
	}

static const struct gw_kin_keyname top_keys[] = {
	GW_KIN_KEY("traceEvents", GW_T_EVENTS),
	GW_KIN_KEY("deviceProperties", GW_T_DEVPROPS),
	GW_KIN_KEY("distributedInfo", GW_T_DIST),
	GW_KIN_KEY("baseTimeNanoseconds", GW_T_BASE),
	{NULL, 0, 0},
};
static const struct gw_kin_keyname event_keys[] = {
	GW_KIN_KEY("ph", GW_K_PH),
	GW_KIN_KEY("cat", GW_K_CAT),
	GW_KIN_KEY("name", GW_K_NAME),
	GW_KIN_KEY("pid", GW_K_NUM + GW_F_PID),
	GW_KIN_KEY("tid", GW_K_NUM + GW_F_TID),
	GW_KIN_KEY("ts", GW_K_NUM + GW_F_TS),
	GW_KIN_KEY("dur", GW_K_NUM + GW_F_DUR),
	GW_KIN_KEY("args", GW_K_ARGS),
	{NULL, 0, 0},
};
static const struct gw_kin_keyname arg_keys[] = {
	GW_KIN_KEY("device", GW_K_NUM + GW_F_DEVICE),
	GW_KIN_KEY("stream", GW_K_NUM + GW_F_STREAM),
	GW_KIN_KEY("correlation", GW_K_NUM + GW_F_CORR),
	GW_KIN_KEY("registers per thread", GW_K_NUM + GW_F_REGS),
	GW_KIN_KEY("shared memory", GW_K_NUM + GW_F_SMEM),
	GW_KIN_KEY("grid", GW_K_GRID),
	GW_KIN_KEY("block", GW_K_BLOCK),
	GW_KIN_KEY("bytes", GW_K_NUM + GW_F_BYTES),
	GW_KIN_KEY("cbid", GW_K_NUM + GW_F_CBID),
	GW_KIN_KEY("cuda_sync_kind", GW_K_SYNC_KIND),
	GW_KIN_KEY("wait_on_cuda_event_id", GW_K_NUM + GW_F_WAIT_EVENT),
	GW_KIN_KEY("Device Type", GW_K_NUM + GW_F_DEV_TYPE),
	GW_KIN_KEY("Device Id", GW_K_NUM + GW_F_DEV_ID),
	GW_KIN_KEY("Addr", GW_K_NUM + GW_F_ADDR),
	GW_KIN_KEY("Bytes", GW_K_NUM + GW_F_MEM_BYTES),
	GW_KIN_KEY("Total Allocated", GW_K_NUM + GW_F_TOTAL_ALLOC),
	GW_KIN_KEY("Total Reserved", GW_K_NUM + GW_F_TOTAL_RESERVED),
	GW_KIN_KEY("Call stack", GW_K_CALL_STACK),
	GW_KIN_KEY("name", GW_K_ARG_NAME),
	{NULL, 0, 0},
};
static const struct gw_kin_keyname dist_keys[] = {
	GW_KIN_KEY("rank", GW_D_RANK),
	{NULL, 0, 0},
};
static const struct gw_kin_keyname devprop_keys[] = {
	GW_KIN_KEY("id", GW_P_ID),
	GW_KIN_KEY("name", GW_P_NAME),
	GW_KIN_KEY("totalGlobalMem", GW_P_MEM),
	GW_KIN_KEY("computeMajor", GW_P_MAJOR),
	GW_KIN_KEY("computeMinor", GW_P_MINOR),
	GW_KIN_KEY("maxThreadsPerBlock", GW_P_THREADS_BLOCK),
	GW_KIN_KEY("maxThreadsPerMultiprocessor", GW_P_THREADS_SM),
	GW_KIN_KEY("regsPerBlock", GW_P_REGS_BLOCK),
	GW_KIN_KEY("regsPerMultiprocessor", GW_P_REGS_SM),
	GW_KIN_KEY("warpSize", GW_P_WARP),
	GW_KIN_KEY("sharedMemPerBlock", GW_P_SMEM_BLOCK),
	GW_KIN_KEY("sharedMemPerMultiprocessor", GW_P_SMEM_SM),
	GW_KIN_KEY("numSms", GW_P_SMS),
	GW_KIN_KEY("sharedMemPerBlockOptin", GW_P_OPTIN),
	{NULL, 0, 0},
};

/* Event categories, case-insensitively: current names and the 2020 format's capitalised ones. */
static const struct {
	const char *text;
	uint8_t len, cat;
} categories[] = {
#define GW_KIN_CAT(text, cat)                                                                      \
	{                                                                                          \
		text, sizeof(text) - 1, cat                                                        \
	}
	GW_KIN_CAT("kernel", GW_C_KERNEL),
	GW_KIN_CAT("gpu_memcpy", GW_C_MEMCPY),
	GW_KIN_CAT("memcpy", GW_C_MEMCPY),
	GW_KIN_CAT("gpu_memset", GW_C_MEMSET),
	GW_KIN_CAT("memset", GW_C_MEMSET),
	GW_KIN_CAT("cuda_runtime", GW_C_RUNTIME),
	GW_KIN_CAT("runtime", GW_C_RUNTIME),
	GW_KIN_CAT("cuda_driver", GW_C_DRIVER),
	GW_KIN_CAT("driver", GW_C_DRIVER),
	GW_KIN_CAT("cuda_sync", GW_C_SYNC),
	GW_KIN_CAT("python_function", GW_C_PYTHON),
	GW_KIN_CAT("cpu_op", GW_C_CPU_OP),
	GW_KIN_CAT("operator", GW_C_CPU_OP),
	GW_KIN_CAT("user_annotation", GW_C_ANNOTATION),
	GW_KIN_CAT("gpu_user_annotation", GW_C_GPU_ANNOTATION),
#undef GW_KIN_CAT
};

/* ---- errors ---- */

int gw_kin_fail(struct gw_kin *k, int err, const char *fmt, ...)
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

const char *gw_kin_where(const struct gw_kin *k, uint64_t off, char *buf, size_t n)
{
	snprintf(buf, n, "byte %llu%s", (unsigned long long)off, k->gzip ? " (decompressed)" : "");
	return buf;
}

const char *gw_kin_field_name(enum gw_kin_num f)
{
	for (const struct gw_kin_keyname *t = event_keys; t->text; t++)
		if (t->key == GW_K_NUM + f)
			return t->text;
	for (const struct gw_kin_keyname *t = arg_keys; t->text; t++)
		if (t->key == GW_K_NUM + f)
			return t->text;
	return "?";
}

static uint64_t offset_now(const struct gw_kin *k)
{
	return k->json_off + yajl_get_bytes_consumed(k->y);
}

/* ---- the JSON callbacks ---- */

/*
 * Most keys the walk meets are keys it skips ("External id", "Input Dims"), and a scan of
 * a table cost as much as yajl's tokenizing of the key. Each table gets, per key length, the
 * set of its entries of that length (a bit each): most keys are decided by their length and
 * first byte, and the rest compared inline, short as they are.
 */
#define GW_KIN_LENS 32

struct gw_kin_index {
	uint32_t by_len[GW_KIN_LENS]; /* bit i: entry i has that length */
	uint16_t head[32];	      /* entry i's first two bytes (every name has two) */
};

static struct gw_kin_index top_index, event_index, arg_index, devprop_index, dist_index, cat_index;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static uint16_t head_of(const char *s)
{
	return (uint16_t)((unsigned char)s[0] | (unsigned char)s[1] << 8);
}

static void index_keys(struct gw_kin_index *ix, const struct gw_kin_keyname *t)
{
	for (unsigned i = 0; t[i].text; i++) {
		if (t[i].len >= 2 && t[i].len < GW_KIN_LENS)
			ix->by_len[t[i].len] |= 1u << i;
		ix->head[i] = head_of(t[i].text);
	}
}

static void build_indexes(void)
{
	index_keys(&top_index, top_keys);
	index_keys(&event_index, event_keys);
	index_keys(&arg_index, arg_keys);
	index_keys(&devprop_index, devprop_keys);
	index_keys(&dist_index, dist_keys);
	for (unsigned i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		cat_index.by_len[categories[i].len] |= 1u << i;
}

/* An entry is a bit of a uint32_t, and every name is shorter than GW_KIN_LENS. */
_Static_assert(sizeof(arg_keys) / sizeof(arg_keys[0]) <= 32, "arg_keys: too many for a bit each");
_Static_assert(sizeof(devprop_keys) / sizeof(devprop_keys[0]) <= 32,
	       "devprop_keys: too many for a bit each");
_Static_assert(sizeof(categories) / sizeof(categories[0]) <= 32,
	       "categories: too many for a bit each");

static bool same_bytes(const char *a, const char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

__attribute__((always_inline)) static inline uint16_t
key_of(const struct gw_kin_keyname *t, const struct gw_kin_index *ix, const char *s, size_t len)
{
	uint32_t m = len < GW_KIN_LENS ? ix->by_len[len] : 0;
	uint16_t head = m ? head_of(s) : 0;

	for (; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);

		if (ix->head[i] == head && same_bytes(t[i].text + 2, s + 2, len - 2))
			return t[i].key;
	}
	return GW_K_NONE;
}

static uint8_t cat_of(const char *s, size_t len)
{
	for (uint32_t m = len < GW_KIN_LENS ? cat_index.by_len[len] : 0; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);

		if ((categories[i].text[0] | 0x20) == (s[0] | 0x20) &&
		    strncasecmp(categories[i].text, s, len) == 0)
			return categories[i].cat;
	}
	return GW_C_OTHER;
}

static void ev_begin(struct gw_kin *k)
{
	struct gw_kin_ev *e = &k->ev;

	e->off = offset_now(k) - 1;
	e->ph = 0;
	e->cat = GW_C_OTHER;
	e->sync_type = 0;
	memset(e->num, 0, sizeof(e->num));
	memset(e->ndims, 0, sizeof(e->ndims));
	memset(e->dims_val, 0, sizeof(e->dims_val));
	e->name.len = 0;
	e->aux.len = 0;
	e->aux_key = GW_K_NONE;
	k->in_ev = true;
	k->dims = -1;
}

/* A value of the wrong JSON type for the key it follows. */
static void mistyped(struct gw_kin *k, uint16_t key, uint8_t state)
{
	struct gw_kin_ev *e = &k->ev;

	if (key >= GW_K_NUM && key < GW_K_NUM + GW_F_COUNT) {
		e->num[key - GW_K_NUM].state = state;
		e->num[key - GW_K_NUM].off = offset_now(k);
	} else if (key == GW_K_GRID || key == GW_K_BLOCK) {
		e->dims_val[key == GW_K_BLOCK].state = GW_V_TYPE;
		e->dims_val[key == GW_K_BLOCK].off = offset_now(k);
	}
}

static void set_num(struct gw_kin *k, struct gw_kin_val *v, const char *s, size_t len,
		    unsigned scale)
{
	int r = gw_decimal_parse(s, len, scale, scale == 0, &v->v);

	v->off = offset_now(k);
	v->state = r == 0	  ? GW_V_OK
		   : r == -ERANGE ? GW_V_RANGE
		   : r == -EDOM	  ? GW_V_FRACTION
				  : GW_V_TYPE;
}

/* A pid or tid given as text: "25738", "stream 7", or a name ("Spans"), which gets an id. */
static int set_id_text(struct gw_kin *k, struct gw_kin_val *v, const char *s, size_t len)
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
		v->state = GW_V_OK;
		return 0;
	}
	if ((r = gw_src_strtab_intern(&k->ids, s, len, &id, &fresh)) < 0)
		return r;
	v->v = -(int64_t)id;
	v->state = GW_V_OK;
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

enum gw_kin_type {
	GW_J_NULL,
	GW_J_BOOL,
	GW_J_NUMBER,
	GW_J_STRING,
};

static int ev_value(struct gw_kin *k, uint16_t key, enum gw_kin_type type, const char *s,
		    size_t len)
{
	struct gw_kin_ev *e = &k->ev;

	if (key >= GW_K_NUM && key < GW_K_NUM + GW_F_COUNT) {
		enum gw_kin_num f = key - GW_K_NUM;

		if (type == GW_J_NUMBER)
			set_num(k, &e->num[f], s, len, f == GW_F_TS || f == GW_F_DUR ? 3 : 0);
		else if (type == GW_J_STRING && (f == GW_F_PID || f == GW_F_TID))
			return set_id_text(k, &e->num[f], s, len);
		else if (type != GW_J_NULL)
			mistyped(k, key, type == GW_J_STRING ? GW_V_STRING : GW_V_TYPE);
		return 0;
	}
	if (type != GW_J_STRING) {
		mistyped(k, key, GW_V_TYPE);
		return 0;
	}
	switch (key) {
	case GW_K_PH:
		e->ph = len == 1 ? s[0] : '?';
		break;
	case GW_K_CAT:
		e->cat = cat_of(s, len);
		break;
	case GW_K_NAME:
		e->name.len = 0;
		return append_text(&e->name, s, len);
	case GW_K_SYNC_KIND:
		e->sync_type = gw_kin_sync_type(s, len);
		break;
	case GW_K_CALL_STACK:
	case GW_K_ARG_NAME:
		e->aux.len = 0;
		e->aux_key = key;
		return append_text(&e->aux, s, len);
	}
	return 0;
}

static int devprop_value(struct gw_kin *k, uint16_t key, enum gw_kin_type type, const char *s,
			 size_t len)
{
	struct gw_kin_val *v;

	if (key < GW_P_ID || key >= GW_P_END)
		return 0;
	v = &k->dev.v[key - GW_P_ID];
	if (key == GW_P_NAME) {
		if (type == GW_J_STRING) {
			v->state = GW_V_OK;
			return gw_kin_intern(&k->strings, s, len, &k->dev.name_id);
		}
		return 0;
	}
	if (type == GW_J_NUMBER)
		set_num(k, v, s, len, 0);
	else if (type != GW_J_NULL)
		v->state = type == GW_J_STRING ? GW_V_STRING : GW_V_TYPE;
	v->off = offset_now(k);
	return 0;
}

/* A deviceProperties entry is complete: check what it says. */
static int devprop_done(struct gw_kin *k)
{
	struct gw_kin_devprop *d;
	char at[64];

	for (int i = 0; i < GW_P_END - GW_P_ID; i++) {
		const struct gw_kin_val *v = &k->dev.v[i];

		if (i + GW_P_ID == GW_P_NAME || v->state == GW_V_ABSENT ||
		    (v->state == GW_V_OK && v->v >= 0))
			continue;
		return gw_kin_fail(k, -EINVAL, "%s: deviceProperties: \"%s\" is %s",
				   gw_kin_where(k, v->off, at, sizeof(at)), devprop_keys[i].text,
				   v->state == GW_V_OK ? "negative" : "not a whole number");
	}
	if (k->dev.v[0].state != GW_V_OK)
		return gw_kin_fail(k, -EINVAL, "%s: deviceProperties entry without \"id\"",
				   gw_kin_where(k, offset_now(k), at, sizeof(at)));
	if (k->devprops.len >= GW_KIN_MAX_DEVICES)
		return 0;
	if (!(d = gw_src_vec_push(&k->devprops, sizeof(*d))))
		return -ENOMEM;
	*d = k->dev;
	return 0;
}

static int scalar(struct gw_kin *k, enum gw_kin_type type, const char *s, size_t len)
{
	unsigned d = k->depth;
	char at[64];
	int r = 0;

	if (d == 0)
		return gw_kin_fail(k, -EBADMSG,
				   "not a trace: the JSON is not an object or an array");
	if (d == 1 && k->top_map) {
		if (k->key[1] != GW_T_BASE)
			return 0;
		struct gw_kin_val v = {0};

		if (type == GW_J_NUMBER)
			set_num(k, &v, s, len, 0);
		if (v.state != GW_V_OK || v.v < 0)
			return gw_kin_fail(k, -EINVAL,
					   "%s: \"baseTimeNanoseconds\" is not a whole number",
					   gw_kin_where(k, offset_now(k), at, sizeof(at)));
		/* After the events it comes too late to move them: times stay relative to it. */
		if (k->saw_events)
			k->base_late = true;
		else
			k->base_ns = v.v;
		return 0;
	}
	if (d == 1 && k->sect == GW_SECT_EVENTS && !k->events)
		return gw_kin_fail(k, -EBADMSG,
				   "not a trace: a JSON array of other things than events");
	switch (k->sect) {
	case GW_SECT_DIST:
		if (d == 2 && k->key[2] == GW_D_RANK && type == GW_J_NUMBER) {
			struct gw_kin_val v = {0};

			set_num(k, &v, s, len, 0);
			if (v.state == GW_V_OK && v.v >= 0)
				k->rank = v.v;
		}
		break;
	case GW_SECT_DEVPROPS:
		if (d == 3 && k->in_dev)
			r = devprop_value(k, k->key[3], type, s, len);
		break;
	case GW_SECT_EVENTS:
		if ((k->in_ev && d == k->ev_depth) || (k->in_args && d == k->ev_depth + 1)) {
			r = ev_value(k, k->key[d], type, s, len);
		} else if (k->dims >= 0 && d == k->ev_depth + 2) {
			struct gw_kin_ev *e = &k->ev;
			struct gw_kin_val v = {0};

			if (type == GW_J_NUMBER)
				set_num(k, &v, s, len, 0);
			if (v.state != GW_V_OK || v.v < 0 || e->ndims[k->dims] >= 3)
				e->dims_val[k->dims].state = GW_V_TYPE;
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
		return gw_kin_fail(k, -EBADMSG, "%s: JSON nested deeper than %d levels",
				   gw_kin_where(k, offset_now(k), at, sizeof(at)),
				   GW_KIN_MAX_DEPTH);
	if (k->skip_depth)
		return 0;
	if (d < GW_KIN_KEY_DEPTHS)
		k->key[d] = GW_K_NONE;
	/* An object or array under an event's key the walk does not read ("Input Dims",
	 * "Concrete Inputs"): nothing in it is looked at until it closes. */
	if ((k->in_ev && d == k->ev_depth + 1 && k->key[d - 1] == GW_K_NONE) ||
	    (k->in_args && d == k->ev_depth + 2 && k->key[d - 1] == GW_K_NONE)) {
		k->skip_depth = d;
		return 0;
	}
	if (d == 1) {
		k->top_seen = true;
		k->top_map = map;
		if (!map) { /* the 2020 format: a bare array of events */
			k->sect = GW_SECT_EVENTS;
			k->ev_depth = 2;
			k->saw_events = true;
		}
		return 0;
	}
	if (d == 2 && !k->top_map && !map && !k->events)
		return gw_kin_fail(k, -EBADMSG,
				   "not a trace: a JSON array of other things than events");
	if (d == 2 && k->top_map) {
		if (k->key[1] == GW_T_EVENTS && !map) {
			k->sect = GW_SECT_EVENTS;
			k->ev_depth = 3;
			k->saw_events = true;
		} else if (k->key[1] == GW_T_DEVPROPS && !map) {
			k->sect = GW_SECT_DEVPROPS;
		} else if (k->key[1] == GW_T_DIST && map) {
			k->sect = GW_SECT_DIST;
		}
		return 0;
	}
	switch (k->sect) {
	case GW_SECT_EVENTS:
		if (d == k->ev_depth && map)
			ev_begin(k);
		else if (k->in_ev && d == k->ev_depth + 1 && k->key[d - 1] == GW_K_ARGS && map)
			k->in_args = true;
		else if (k->in_ev && d == k->ev_depth + 1)
			mistyped(k, k->key[d - 1], GW_V_TYPE);
		else if (k->in_args && d == k->ev_depth + 2 && !map &&
			 (k->key[d - 1] == GW_K_GRID || k->key[d - 1] == GW_K_BLOCK)) {
			k->dims = k->key[d - 1] == GW_K_BLOCK;
			k->ev.dims_val[k->dims].state = GW_V_OK;
			k->ev.dims_val[k->dims].off = offset_now(k);
		} else if (k->in_args && d == k->ev_depth + 2) {
			mistyped(k, k->key[d - 1], GW_V_TYPE);
		} else if (k->dims >= 0 && d == k->ev_depth + 3) {
			k->ev.dims_val[k->dims].state = GW_V_TYPE;
		}
		break;
	case GW_SECT_DEVPROPS:
		if (d == 3 && map) {
			memset(&k->dev, 0, sizeof(k->dev));
			k->in_dev = true;
		} else if (d == 4 && k->in_dev && k->key[3] >= GW_P_ID && k->key[3] < GW_P_END) {
			k->dev.v[k->key[3] - GW_P_ID].state = GW_V_TYPE;
			k->dev.v[k->key[3] - GW_P_ID].off = offset_now(k);
		}
		break;
	}
	return 0;
}

static int close_container(struct gw_kin *k, bool map)
{
	unsigned d = k->depth;
	int r = 0;

	if (k->skip_depth) {
		if (d == k->skip_depth)
			k->skip_depth = 0;
		k->depth--;
		return 0;
	}

	if (k->sect == GW_SECT_EVENTS) {
		if (d == k->ev_depth && k->in_ev && map) {
			k->in_ev = false;
			r = gw_kin_event(k);
		} else if (d == k->ev_depth + 1 && k->in_args && map) {
			k->in_args = false;
		} else if (d == k->ev_depth + 2 && k->dims >= 0 && !map) {
			if (!k->ev.ndims[k->dims])
				k->ev.dims_val[k->dims].state = GW_V_TYPE;
			k->dims = -1;
		}
	} else if (k->sect == GW_SECT_DEVPROPS && d == 3 && k->in_dev) {
		k->in_dev = false;
		r = devprop_done(k);
	}
	/* the top-level value of a key, or the top level itself, is done */
	if (d == 1 || (d == 2 && k->top_map))
		k->sect = GW_SECT_NONE;
	k->depth--;
	return r;
}

/* yajl calls back with ctx = the state; returning 0 stops the parse (k->err says why). */
static int cb_null(void *ctx)
{
	struct gw_kin *k = ctx;

	return k->skip_depth || scalar(k, GW_J_NULL, NULL, 0) == 0;
}

static int cb_boolean(void *ctx, int value)
{
	struct gw_kin *k = ctx;

	(void)value;
	return k->skip_depth || scalar(k, GW_J_BOOL, NULL, 0) == 0;
}

/*
 * The key a value inside an event (or its args) belongs to, or GW_K_END when the value lies
 * elsewhere. Numbers and strings of events are nearly every value in a trace: they take this
 * way to ev_value, and a value under a key the walk skips ends here.
 */
#define GW_K_END UINT16_MAX

static uint16_t event_key(const struct gw_kin *k)
{
	unsigned d = k->depth;

	if ((k->in_ev && d == k->ev_depth) || (k->in_args && d == k->ev_depth + 1))
		return k->key[d];
	return GW_K_END;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct gw_kin *k = ctx;
	uint16_t key = event_key(k);

	if (key == GW_K_NONE)
		return 1;
	if (key != GW_K_END)
		return ev_value(k, key, GW_J_NUMBER, s, len) == 0;
	if (k->skip_depth)
		return 1;
	return scalar(k, GW_J_NUMBER, s, len) == 0;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct gw_kin *k = ctx;
	uint16_t key = event_key(k);

	if (key == GW_K_NONE)
		return 1;
	if (key != GW_K_END)
		return ev_value(k, key, GW_J_STRING, (const char *)s, len) == 0;
	if (k->skip_depth)
		return 1;
	return scalar(k, GW_J_STRING, (const char *)s, len) == 0;
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
	uint16_t id = GW_K_NONE;

	if (k->skip_depth)
		return 1;
	/* an event's own keys first: they are most of a trace's keys */
	if (k->in_ev && d == k->ev_depth)
		id = key_of(event_keys, &event_index, s, len);
	else if (k->in_args && d == k->ev_depth + 1)
		id = key_of(arg_keys, &arg_index, s, len);
	else if (!len) /* no key of ours */
		id = GW_K_NONE;
	else if (d == 1 && k->top_map)
		id = key_of(top_keys, &top_index, s, len);
	else if (k->sect == GW_SECT_DEVPROPS && k->in_dev && d == 3)
		id = key_of(devprop_keys, &devprop_index, s, len);
	else if (k->sect == GW_SECT_DIST && d == 2)
		id = key_of(dist_keys, &dist_index, s, len);
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
		return gw_kin_fail(k, err, "%s", what);
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
	snprintf(what, sizeof(what), "%s: %s%s", gw_kin_where(k, offset_now(k), at, sizeof(at)),
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
		return gw_kin_fail(k, -errno, "%s", strerror(errno));
	k->file_read += (uint64_t)n;
	*ret = (size_t)n;
	return 0;
}

/* Feeds one chunk of input to the parser; sets input_done at the end of the input. */
static int feed(struct gw_kin *k)
{
	struct gw_gunzip_chunk c;
	size_t n = 0;
	int r;

	if (!k->gzip) {
		if ((r = read_some(k, k->inbuf, GW_KIN_CHUNK, &n)) < 0)
			return r;
		if (!n) {
			k->input_done = true;
			return 0;
		}
		return parse(k, k->inbuf, n);
	}
	gw_gunzip_next(k->gz, &c);
	k->file_read = c.file_read;
	if (c.len && (r = parse(k, c.data, c.len)) < 0)
		return r;
	if (k->input_done)
		return 0;
	switch (c.state) {
	case GW_GUNZIP_MORE:
		break;
	case GW_GUNZIP_END:
		k->input_done = true;
		break;
	case GW_GUNZIP_CUT:
		if (!k->events)
			return gw_kin_fail(k, -EBADMSG, "%s", c.what);
		snprintf(k->cut, sizeof(k->cut), "%s; the trace is read up to there", c.what);
		k->input_done = true;
		break;
	case GW_GUNZIP_CORRUPT:
		return input_bad(k, c.err, c.what);
	case GW_GUNZIP_FAILED:
		return gw_kin_fail(k, c.err, "%s", strerror(-c.err));
	}
	return 0;
}

/* ---- the end ---- */

/* The input has ended (or broken off): finish the document and start on the host side. */
static int input_end(struct gw_kin *k)
{
	char at[64];
	int r;

	if (!k->err && !k->cut[0] && yajl_complete_parse(k->y) != yajl_status_ok) {
		if (!k->events && !k->top_seen)
			return gw_kin_fail(k, -EBADMSG, "%s",
					   k->json_off ? "not JSON: no value"
						       : "empty file, not a trace");
		snprintf(k->cut, sizeof(k->cut),
			 "%s: the JSON ends early (a cut file); the trace "
			 "is read up to there",
			 gw_kin_where(k, k->json_off, at, sizeof(at)));
		if (!k->events)
			return gw_kin_fail(k, -EBADMSG, "%s", k->cut);
	}
	if (k->err)
		return k->err;
	if (!k->saw_events)
		return gw_kin_fail(k, -EBADMSG,
				   "not a torch.profiler trace: no \"traceEvents\" array");
	if (k->events && !k->chrome_events)
		return gw_kin_fail(k, -EBADMSG,
				   "not a torch.profiler trace: no event has a \"ph\"");
	k->src->truncated = k->cut[0] != '\0';
	k->src->clean_exit = !k->src->truncated;
	if ((r = gw_kin_end(k)) < 0)
		return r;
	k->phase = GW_PH_HOST;
	return 0;
}

/* Queues at least one record, unless the trace is done. */
static int refill(struct gw_kin *k)
{
	int r;

	gw_kin_out_reset(&k->out);
	while (!k->out.queue.len && k->phase != GW_PH_DONE) {
		if (k->err)
			return k->err;
		if (k->phase == GW_PH_PARSE) {
			r = k->input_done ? input_end(k) : feed(k);
		} else if ((r = gw_kin_more(k)) == 0) {
			k->phase = GW_PH_DONE;
		}
		if (r < 0)
			return k->err ? k->err : gw_kin_fail(k, r, "%s", strerror(-r));
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

	pthread_once(&index_once, build_indexes);
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
	k->y = yajl_alloc(&callbacks, NULL, k);
	/* an event's texts always have a buffer, also when the event has no name */
	if (!k->inbuf || !k->y || gw_src_vec_append(&k->ev.name, "", 0) < 0 ||
	    gw_src_vec_append(&k->ev.aux, "", 0) < 0)
		return -ENOMEM;
	/* Names are bytes to gpuwhy: a stray byte in a kernel name is no reason to give up. */
	yajl_config(k->y, yajl_dont_validate_strings, 1);
	if (k->gzip && gw_gunzip_open(k->fd, gw_reader_thread_helps(k->file_size), &k->gz) < 0)
		return -ENOMEM;
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
	if (gw_kin_pop(&k->out, ret))
		return 1;
	if ((r = refill(k)) < 0)
		return gw_source_fail(r, "%s", k->reason);
	return gw_kin_pop(&k->out, ret) ? 1 : 0;
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
	gw_gunzip_free(k->gz);
	if (k->y)
		yajl_free(k->y);
	free(k->inbuf);
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
