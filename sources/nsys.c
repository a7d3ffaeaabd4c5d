/* SPDX-License-Identifier: MIT */
/* The Nsight Systems source: an `nsys export --type sqlite` database as trace-format records. */
#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api-names.h"
#include "sources-internal.h"
#include "utf8.h"

/*
 * The export's tables are read row by row (sqlite3_step), never loaded: GPU operations first
 * (kernels, copies and memsets merged by start time, so that a one-device export arrives in
 * the order the analysis is fastest with), then synchronizations, API calls (runtime and
 * driver merged by start), memory events, and last the devices that were used. What is kept
 * here grows with what the export names (strings, frames, stacks, threads, devices), not with
 * its rows, except two maps that only some exports need: correlation -> device for processes
 * that used several GPUs, and correlation -> call site for allocations when memory usage was
 * recorded. doc/nsys-import.md is the long form of this comment.
 */

#define T_KERNEL   "CUPTI_ACTIVITY_KIND_KERNEL"
#define T_MEMCPY   "CUPTI_ACTIVITY_KIND_MEMCPY"
#define T_MEMSET   "CUPTI_ACTIVITY_KIND_MEMSET"
#define T_SYNC	   "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
#define T_RUNTIME  "CUPTI_ACTIVITY_KIND_RUNTIME"
#define T_DRIVER   "CUPTI_ACTIVITY_KIND_DRIVER"
#define T_STRINGS  "StringIds"
#define T_GPU	   "TARGET_INFO_GPU"
#define T_CUDAMEM  "CUDA_GPU_MEMORY_USAGE_EVENTS"
#define T_WDDMMEM  "GPU_MEMORY_USAGE_EVENTS"
#define T_CHAINS   "CUDA_CALLCHAINS"
#define T_THREADS  "ThreadNames"
#define T_PROCS	   "PROCESSES"
#define T_SESSION  "TARGET_INFO_SESSION_START_TIME"
#define T_CONTEXTS "TARGET_INFO_CUDA_CONTEXT_INFO"
#define T_NULLSTR  "TARGET_INFO_CUDA_NULL_STREAM"
#define T_ENV	   "TARGET_INFO_SYSTEM_ENV"
#define T_NVTX	   "NVTX_EVENTS"

/* String ids: the export's StringIds id + 1 (its ids may start at 0, ours mean "none" there);
 * API names, which are stripped of their version suffix, from API_NAME_BASE on. */
#define STRING_ID_MAX 0x7fffffffu
#define API_NAME_BASE 0x80000000u

/* Calls held back to meet their twin: exports that write two rows per call (2022 versions
 * with backtraces: one "CUDA backtrace" row, one runtime row) write them next to each other. */
#define API_WINDOW   8
#define API_RECENT   4096
#define NAME_CACHE   64
#define COUNT(a)     ((int)(sizeof(a) / sizeof((a)[0])))
#define NO_DEVICE    UINT64_MAX
#define MULTI_DEVICE (UINT64_MAX - 1)

/* ---- an open-addressing u64 -> u64 map ---- */

struct map {
	uint64_t *key, *val;
	uint8_t *used;
	size_t cap, len;
};

static size_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (size_t)x;
}

static uint64_t *map_find(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->key[i] == key)
			return &m->val[i];
	}
}

static int map_grow(struct map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct map n = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint64_t)),
			calloc(cap, 1), cap, m->len};

	if (!n.key || !n.val || !n.used) {
		free(n.key);
		free(n.val);
		free(n.used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		for (j = hash64(m->key[i]) & (cap - 1); n.used[j]; j = (j + 1) & (cap - 1))
			;
		n.used[j] = 1;
		n.key[j] = m->key[i];
		n.val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	free(m->used);
	*m = n;
	return 0;
}

/* The value slot of key, created (0) when absent; *fresh says which. NULL: out of memory. */
static uint64_t *map_put(struct map *m, uint64_t key, bool *fresh)
{
	size_t i;

	*fresh = false;
	if ((m->len + 1) * 2 > m->cap && map_grow(m) < 0)
		return NULL;
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key)
			return &m->val[i];
	m->used[i] = 1;
	m->key[i] = key;
	m->val[i] = 0;
	m->len++;
	*fresh = true;
	return &m->val[i];
}

static void map_free(struct map *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* ---- records waiting to be returned, with the bytes they point to ---- */

struct slot {
	struct gw_record rec;
	uint8_t *buf[2];
	size_t cap[2];
	uint64_t *ips;
	size_t ips_cap;
};

/* ---- table cursors ---- */

/* A column the reader asks for: required ones must exist, the others read as NULL. wrap, when
 * set, is an SQL expression of the column ("%s"): SQLite evaluates it in the same step, which
 * costs less than asking it whether a value is NULL. */
struct col {
	const char *name;
	bool required;
	const char *wrap;
};

/* NULL as 0 and a value v as v + 1: nullable ids and kinds in one call */
#define OR_NULL "ifnull(%s + 1, 0)"

struct cursor {
	const char *table;
	sqlite3_stmt *st;
	bool row;	/* a row is loaded */
	uint64_t start; /* its first column, the time the tables are merged by */
};

/* One API call as the export wrote it. */
struct api_row {
	uint64_t start, end, gtid, corr, name, status, chain;
	bool has_chain;
};

struct nsys {
	sqlite3 *db;
	int fd; /* the file SQLite reads (through /proc/self/fd) */
	int phase;
	uint64_t file_size, rows_total, rows_done;

	struct slot *q;
	size_t q_len, q_head, q_cap;

	sqlite3_stmt *str_stmt, *chain_stmt, *probe_stmt, *gpu_stmt;
	char *text;
	size_t text_cap;

	/* operations, syncs, calls, memory */
	struct cursor kern, copy, set, sync, rt, drv, mem, wddm, nvtx;
	bool have_runtime, have_chains, have_memory;
	struct map strings_seen; /* export string id -> 1 */
	uint64_t last_kname;	 /* kernel name id emitted last (a loop repeats names) */

	/* devices */
	struct map devices;	/* device id -> 1, for the DEVICE records at the end */
	struct map pid_device;	/* pid -> its one device, or MULTI_DEVICE */
	struct map corr_device; /* correlation -> device (processes with several GPUs) */
	struct map tid_device;	/* thread -> the device its last call used */
	struct map pids_seen;	/* pids with CUDA contexts or GPU copies */
	uint64_t last_pid, last_pid_device, last_gpid, last_device;

	/* API names */
	struct map name_class; /* export name id -> packed class (see api_class()) */
	struct {
		uint64_t key, val;
	} name_cache[NAME_CACHE];
	char **api_names; /* stripped names, id API_NAME_BASE + index */
	size_t n_api_names;

	/* API rows held to meet their twin, and the correlations given out lately */
	struct api_row win[API_WINDOW];
	unsigned win_head, win_len;
	uint64_t recent[API_RECENT];
	struct map rt_end;	/* thread -> end of its last runtime call (nested driver calls) */
	struct map threads;	/* threads given a THREAD record */
	struct map thread_name; /* globalTid -> the export id of its name */
	uint64_t last_tid;

	/* call stacks */
	struct map frames; /* symbol << 32 | module -> FRAME id */
	struct map stacks; /* hash of frame ids -> stack index + 1 */
	uint64_t *stack_frames;
	size_t stack_frames_len, stack_frames_cap;
	struct {
		size_t off;
		uint32_t depth;
	} * stack_v;
	size_t n_stacks, stacks_cap;
	int chain_offset;      /* CUDA_CALLCHAINS id - callchainId: 0, 1, or -1 not known yet */
	struct map alloc_site; /* correlation -> stack << 32 | tid << 8 | mem kind */

	/* Nsight's memory kinds and copy kinds (ids) as CUPTI's */
	uint8_t mem_kind[16], copy_kind[16];

	/* HEADER */
	uint64_t pid, start_realtime_ns;
	int64_t rank;
	char *command;
	size_t devices_done;
	uint64_t *device_list;
};

enum {
	PH_HEADER,
	PH_OPS,
	PH_SYNC,
	PH_API,
	PH_MEMORY,
	PH_COUNTER,
	PH_RANGES,
	PH_DEVICES,
	PH_NOTES,
	PH_END,
};

static bool nsys_sniff(const uint8_t *head, size_t len, bool gzip)
{
	(void)gzip; /* a gzip-compressed export is recognised, and refused with a reason */
	return len >= 16 && memcmp(head, "SQLite format 3", 16) == 0;
}

/* ---- values ---- */

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	sqlite3_int64 v = sqlite3_column_int64(st, i);

	return v < 0 ? 0 : (uint64_t)v;
}

/* ---- errors ---- */

/* SQLite's message for the last error, with what it quotes from the file (a damaged schema)
 * made printable: bytes that are not UTF-8 or are control characters become '?'. */
static const char *db_message(struct nsys *n, char *buf, size_t cap)
{
	const uint8_t *m = (const uint8_t *)sqlite3_errmsg(n->db);
	size_t len = strlen((const char *)m), o = 0;

	for (size_t p = 0; p < len && o + 5 < cap;) {
		size_t k = (m[p] ? gw_utf8_len(m + p, len - p) : 0);

		if (k && m[p] >= 0x20 && m[p] != 0x7f) {
			memcpy(buf + o, m + p, k);
			o += k, p += k;
		} else {
			buf[o++] = '?';
			p += k ? k : 1;
		}
	}
	buf[o] = '\0';
	return buf;
}

static int db_fail(struct nsys *n, const char *table)
{
	int code = sqlite3_errcode(n->db);
	int err = code == SQLITE_NOMEM ? -ENOMEM : -EIO;
	char msg[200];

	if (table)
		return gw_source_fail(err, "table %s: %s", table, db_message(n, msg, sizeof(msg)));
	return gw_source_fail(err, "%s", db_message(n, msg, sizeof(msg)));
}

/*
 * Column i as text in n->text: bytes that are not valid UTF-8 (or NUL) become U+FFFD, so a
 * name written in another encoding still reads, and every output stays valid. Its length.
 */
static int col_text(struct nsys *n, sqlite3_stmt *st, int i, size_t *ret_len)
{
	const uint8_t *s = sqlite3_column_text(st, i);
	size_t len = (size_t)sqlite3_column_bytes(st, i), o = 0;

	if (!s)
		len = 0;
	if (len * 3 + 1 > n->text_cap) {
		char *t = realloc(n->text, len * 3 + 1);

		if (!t)
			return -ENOMEM;
		n->text = t;
		n->text_cap = len * 3 + 1;
	}
	for (size_t p = 0; p < len;) {
		size_t k = (s[p] ? gw_utf8_len(s + p, len - p) : 0);

		if (k) {
			memcpy(n->text + o, s + p, k);
			o += k;
			p += k;
		} else {
			memcpy(n->text + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	n->text[o] = '\0';
	*ret_len = o;
	return 0;
}

/* ---- the queue ---- */

static struct slot *q_push(struct nsys *n, uint8_t type)
{
	struct slot *s;

	if (n->q_len == n->q_cap) {
		size_t cap = n->q_cap ? n->q_cap * 2 : 16;
		struct slot *v = realloc(n->q, cap * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + n->q_cap, 0, (cap - n->q_cap) * sizeof(*v));
		n->q = v;
		n->q_cap = cap;
	}
	s = &n->q[n->q_len++];
	memset(&s->rec, 0, sizeof(s->rec));
	s->rec.type = type;
	return s;
}

/* Copies data[0, len) into the slot's buffer k and points *out at it. */
static int q_bytes(struct slot *s, int k, const void *data, size_t len, struct gw_bytes *out)
{
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	if (len > s->cap[k]) {
		uint8_t *b = realloc(s->buf[k], len);

		if (!b)
			return -ENOMEM;
		s->buf[k] = b;
		s->cap[k] = len;
	}
	if (len)
		memcpy(s->buf[k], data, len);
	out->data = s->buf[k];
	out->len = (uint32_t)len;
	return 0;
}

/* ---- schema ---- */

static int table_exists(struct nsys *n, const char *table, bool *ret)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(n->db,
				"SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
				"AND name = ?1",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(n, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*ret = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(n, NULL);
}

/* Whether the table has at least one row (without counting them). */
static int table_has_rows(struct nsys *n, const char *table, bool *ret)
{
	char sql[128];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT 1 FROM \"%s\" LIMIT 1", table);
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(n, table);
	rc = sqlite3_step(st);
	*ret = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(n, table);
}

/* The table's largest rowid, an upper bound on its rows found without reading them. */
static uint64_t table_rows(struct nsys *n, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	uint64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM \"%s\"", table);
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = col_u64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Appends printf-style text to a growing buffer. */
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (*buf && *len + (size_t)n < *cap) {
			*len += (size_t)n;
			return 0;
		}
		char *b = realloc(*buf, (*cap = (*len + (size_t)n + 1) * 2));

		if (!b)
			return -ENOMEM;
		*buf = b;
	}
}

/*
 * Prepares "SELECT <cols> FROM table <tail>" where a column the table lacks reads as NULL; a
 * missing required one fails with the table and column named. A column may be a list of
 * alternatives "a|b|c": those present are read as COALESCE of them, row by row.
 */
static int prepare_select(struct nsys *n, const char *table, const struct col *cols, int ncols,
			  const char *tail, sqlite3_stmt **ret)
{
	char *sql = NULL, *expr = NULL;
	size_t len = 0, cap = 0, elen, ecap = 0;
	sqlite3_stmt *st = NULL;
	int r = 0, have;

	*ret = NULL;
	if ((r = append(&sql, &len, &cap, "SELECT * FROM \"%s\" LIMIT 0", table)) < 0)
		goto out;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) {
		r = db_fail(n, table);
		goto out;
	}
	have = sqlite3_column_count(st);
	len = 0;
	if ((r = append(&sql, &len, &cap, "SELECT ")) < 0)
		goto out;
	for (int c = 0; c < ncols; c++) {
		const char *alt = cols[c].name;
		int found = 0;

		elen = 0;
		while (*alt) {
			size_t al = strcspn(alt, "|");

			for (int h = 0; h < have; h++) {
				const char *name = sqlite3_column_name(st, h);

				if (name && strlen(name) == al && strncmp(name, alt, al) == 0) {
					if ((r = append(&expr, &elen, &ecap, "%s\"%.*s\"",
							found++ ? ", " : "", (int)al, alt)) < 0)
						goto out;
					break;
				}
			}
			alt += al + (alt[al] == '|');
		}
		if (!found && cols[c].required) {
			r = gw_source_fail(-EBADMSG, "table %s has no column %s%s", table,
					   strchr(cols[c].name, '|') ? "of " : "", cols[c].name);
			goto out;
		}
		if (found > 1) {
			char *e = NULL;
			size_t l = 0, cp = 0;

			if ((r = append(&e, &l, &cp, "COALESCE(%s)", expr)) < 0)
				goto out;
			free(expr);
			expr = e, elen = l, ecap = cp;
		} else if (!found && (r = append(&expr, &elen, &ecap, "NULL")) < 0) {
			goto out;
		}
		if ((r = append(&sql, &len, &cap, "%s", c ? ", " : "")) < 0)
			goto out;
		/* the wrap is one of this file's constants, with one %s */
		if (cols[c].wrap) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			r = append(&sql, &len, &cap, cols[c].wrap, expr);
#pragma GCC diagnostic pop
		} else {
			r = append(&sql, &len, &cap, "%s", expr);
		}
		if (r < 0)
			goto out;
	}
	if ((r = append(&sql, &len, &cap, " FROM \"%s\" %s", table, tail)) < 0)
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v3(n->db, sql, -1, SQLITE_PREPARE_PERSISTENT, ret, NULL) != SQLITE_OK)
		r = db_fail(n, table);
out:
	sqlite3_finalize(st);
	free(sql);
	free(expr);
	return r;
}

/* Opens a cursor over table when it exists (an absent table is an empty one). */
static int cursor_open(struct nsys *n, struct cursor *c, const char *table, const struct col *cols,
		       int ncols, bool *ret_exists)
{
	bool exists;
	int r;

	c->table = table;
	if ((r = table_exists(n, table, &exists)) < 0)
		return r;
	if (ret_exists)
		*ret_exists = exists;
	if (!exists)
		return 0;
	if ((r = prepare_select(n, table, cols, ncols, "", &c->st)) < 0)
		return r;
	n->rows_total += table_rows(n, table);
	return 0;
}

static int cursor_step(struct nsys *n, struct cursor *c)
{
	int rc;

	c->row = false;
	if (!c->st)
		return 0;
	rc = sqlite3_step(c->st);
	if (rc == SQLITE_ROW) {
		c->row = true;
		c->start = col_u64(c->st, 0);
		n->rows_done++;
		return 0;
	}
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(c->st);
		c->st = NULL;
		return 0;
	}
	return db_fail(n, c->table);
}

/* ---- strings ---- */

static uint64_t string_id(uint64_t export_id)
{
	return export_id < STRING_ID_MAX ? export_id + 1 : 0;
}

/* Queues the STRING record of the export's string id on its first use. */
static int use_string(struct nsys *n, uint64_t export_id, uint64_t kind)
{
	struct slot *s;
	uint64_t *seen;
	bool fresh;
	size_t len = 0;
	int rc, r;

	if (!string_id(export_id))
		return 0;
	seen = map_put(&n->strings_seen, export_id, &fresh);
	if (!seen)
		return -ENOMEM;
	if (!fresh)
		return 0;
	sqlite3_reset(n->str_stmt);
	sqlite3_bind_int64(n->str_stmt, 1, (sqlite3_int64)export_id);
	rc = sqlite3_step(n->str_stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(n, T_STRINGS);
	if (rc == SQLITE_ROW && (r = col_text(n, n->str_stmt, 0, &len)) < 0)
		return r;
	if (!(s = q_push(n, GW_REC_STRING)))
		return -ENOMEM;
	s->rec.version = GW_REC_STRING_VERSION;
	s->rec.string.id = string_id(export_id);
	s->rec.string.kind = kind;
	return q_bytes(s, 0, rc == SQLITE_ROW ? n->text : "", len, &s->rec.string.text);
}

/* ---- devices ---- */

static int note_device(struct nsys *n, uint64_t device)
{
	bool fresh;

	if (device == n->last_device)
		return 0;
	n->last_device = device;
	return map_put(&n->devices, device, &fresh) ? 0 : -ENOMEM;
}

/* A process's device when it used one; NO_DEVICE unknown, MULTI_DEVICE several. */
static uint64_t pid_device(struct nsys *n, uint64_t pid)
{
	uint64_t *v;

	if (pid == n->last_pid)
		return n->last_pid_device;
	v = map_find(&n->pid_device, pid);
	n->last_pid = pid;
	n->last_pid_device = v ? *v : NO_DEVICE;
	return n->last_pid_device;
}

/* Which device each process's CUDA contexts are on, from the export's context table. */
static int load_contexts(struct nsys *n)
{
	const char *tables[] = {T_CONTEXTS, T_NULLSTR};
	const struct col cols[] = {{"processId", true}, {"deviceId", true}};

	for (int t = 0; t < 2; t++) {
		sqlite3_stmt *st;
		bool exists;
		int r, rc;

		if ((r = table_exists(n, tables[t], &exists)) < 0)
			return r;
		if (!exists)
			continue;
		if ((r = prepare_select(n, tables[t], cols, 2, "", &st)) < 0)
			return r;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			bool fresh;
			uint64_t dev = col_u64(st, 1);
			uint64_t *v = map_put(&n->pid_device, col_u64(st, 0), &fresh);

			if (!v) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
			if (fresh)
				*v = dev;
			else if (*v != dev)
				*v = MULTI_DEVICE;
			if (!map_put(&n->pids_seen, col_u64(st, 0), &fresh)) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_fail(n, tables[t]);
		return 0;
	}
	return 0;
}

/* For processes whose device is not known from their contexts: a GPU record's device, kept
 * for the call that caused it. */
static int note_corr_device(struct nsys *n, uint64_t pid, uint64_t corr, uint64_t device)
{
	uint64_t d = pid_device(n, pid), *v;
	bool fresh;

	if (d != NO_DEVICE && d != MULTI_DEVICE)
		return 0;
	v = map_put(&n->corr_device, corr, &fresh);
	if (!v)
		return -ENOMEM;
	*v = device;
	return 0;
}

/* The device a call worked on: its process's only device, else the device of the GPU record
 * it caused, else the one its thread used last. */
static uint64_t api_device(struct nsys *n, uint64_t pid, uint64_t tid, uint64_t corr)
{
	uint64_t d = pid_device(n, pid), *v;
	bool fresh;

	if (d != NO_DEVICE && d != MULTI_DEVICE)
		return d;
	v = map_find(&n->corr_device, corr);
	if (v) {
		uint64_t *t = map_put(&n->tid_device, tid, &fresh);

		if (t)
			*t = *v;
		return *v;
	}
	v = map_find(&n->tid_device, tid);
	return v ? *v : 0;
}

/* ---- GPU operations ---- */

static const struct col kernel_cols[] = {
	{"start", true},
	{"end", true},
	{"deviceId", true},
	{"streamId", false},
	{"correlationId", true},
	{"mangledName|demangledName|shortName", true, OR_NULL},
	{"gridX", true},
	{"gridY", true},
	{"gridZ", true},
	{"blockX", true},
	{"blockY", true},
	{"blockZ", true},
	{"registersPerThread", false},
	{"staticSharedMemory", false},
	{"dynamicSharedMemory", false},
	{"graphNodeId", false, OR_NULL},
	{"sharedMemoryExecuted", false},
	{"sharedMemoryLimitConfig", false, OR_NULL},
	{"contextId", false},
	{"clusterX", false, OR_NULL},
	{"clusterY", false, OR_NULL},
	{"clusterZ", false, OR_NULL},
};

static const struct col copy_cols[] = {
	{"start", true},
	{"end", true},
	{"deviceId", true},
	{"streamId", false},
	{"correlationId", true},
	{"globalPid", false},
	{"bytes", true},
	{"copyKind", false},
	{"srcKind", false, OR_NULL},
	{"dstKind", false, OR_NULL},
	{"graphNodeId", false, OR_NULL},
};

static const struct col set_cols[] = {
	{"start", true},
	{"end", true},
	{"deviceId", true},
	{"streamId", false},
	{"correlationId", true},
	{"globalPid", false},
	{"bytes", true},
	{"value", false},
	{"memKind", false, OR_NULL},
	{"graphNodeId", false, OR_NULL},
};

/* An Nsight kind (id < 16) as CUPTI's, from a table that maps every id (see load_enums()). */
static uint64_t enum_map(const uint8_t *map, uint64_t id)
{
	return id < 16 ? map[id] : 0;
}

/* The (last) process a GPU record belongs to, noted once per change. */
static int note_pid(struct nsys *n, uint64_t global_pid)
{
	bool fresh;

	if (global_pid == n->last_gpid)
		return 0;
	n->last_gpid = global_pid;
	return map_put(&n->pids_seen, global_pid >> 24 & 0xffffff, &fresh) ? 0 : -ENOMEM;
}

static int op_kernel(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->kern.st;
	struct gw_rec_kernel *k = &ret->kernel;
	uint64_t name = col_u64(st, 5); /* export id + 1, 0 none */
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_KERNEL;
	ret->version = GW_REC_KERNEL_VERSION;
	k->start_ns = n->kern.start;
	k->end_ns = col_u64(st, 1);
	k->device = col_u64(st, 2);
	k->stream = col_u64(st, 3);
	k->correlation = col_u64(st, 4);
	k->name_id = name ? string_id(name - 1) : 0;
	k->grid_x = col_u64(st, 6);
	k->grid_y = col_u64(st, 7);
	k->grid_z = col_u64(st, 8);
	k->block_x = col_u64(st, 9);
	k->block_y = col_u64(st, 10);
	k->block_z = col_u64(st, 11);
	k->registers_per_thread = col_u64(st, 12);
	k->static_smem_bytes = col_u64(st, 13);
	k->dynamic_smem_bytes = col_u64(st, 14);
	k->graph_id = col_u64(st, 15); /* Nsight keeps a node id: nonzero in a graph */
	k->smem_executed_bytes = col_u64(st, 16);
	k->smem_optin = col_u64(st, 17) == 1; /* CUDA_SHARED_MEM_LIMIT_OPTIN */
	k->context_id = col_u64(st, 18);
	k->cluster_x = col_u64(st, 19);
	k->cluster_y = col_u64(st, 20);
	k->cluster_z = col_u64(st, 21);
	if ((r = note_device(n, k->device)) < 0)
		return r;
	if (!k->name_id || name == n->last_kname)
		return 1;
	n->last_kname = name;
	if (map_find(&n->strings_seen, name - 1))
		return 1;
	/* the name's STRING first, then the kernel */
	if ((r = use_string(n, name - 1, GW_STRING_KERNEL)) < 0)
		return r;
	struct slot *s = q_push(n, GW_REC_KERNEL);

	if (!s)
		return -ENOMEM;
	s->rec = *ret;
	return 0;
}

static int op_copy(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->copy.st;
	struct gw_rec_memcpy *c = &ret->memcpy;
	uint64_t kind = col_u64(st, 7);
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_MEMCPY;
	ret->version = GW_REC_MEMCPY_VERSION;
	c->start_ns = n->copy.start;
	c->end_ns = col_u64(st, 1);
	c->device = col_u64(st, 2);
	c->stream = col_u64(st, 3);
	c->correlation = col_u64(st, 4);
	c->bytes = col_u64(st, 6);
	c->copy_kind = enum_map(n->copy_kind, kind);
	c->src_kind = col_u64(st, 8) ? enum_map(n->mem_kind, col_u64(st, 8) - 1) : 0;
	c->dst_kind = col_u64(st, 9) ? enum_map(n->mem_kind, col_u64(st, 9) - 1) : 0;
	c->graph_id = col_u64(st, 10);
	if ((r = note_device(n, c->device)) < 0 || (r = note_pid(n, col_u64(st, 5))) < 0 ||
	    (r = note_corr_device(n, col_u64(st, 5) >> 24 & 0xffffff, c->correlation, c->device)) <
		    0)
		return r;
	return 1;
}

static int op_set(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->set.st;
	struct gw_rec_memset *s = &ret->memset;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_MEMSET;
	ret->version = GW_REC_MEMSET_VERSION;
	s->start_ns = n->set.start;
	s->end_ns = col_u64(st, 1);
	s->device = col_u64(st, 2);
	s->stream = col_u64(st, 3);
	s->correlation = col_u64(st, 4);
	s->bytes = col_u64(st, 6);
	s->value = col_u64(st, 7);
	s->mem_kind = col_u64(st, 8) ? enum_map(n->mem_kind, col_u64(st, 8) - 1) : 0;
	s->graph_id = col_u64(st, 9);
	if ((r = note_device(n, s->device)) < 0 || (r = note_pid(n, col_u64(st, 5))) < 0 ||
	    (r = note_corr_device(n, col_u64(st, 5) >> 24 & 0xffffff, s->correlation, s->device)) <
		    0)
		return r;
	return 1;
}

/* The next GPU operation of the three tables, earliest start first. */
static int next_op(struct nsys *n, struct gw_record *ret)
{
	struct cursor *c[3] = {&n->kern, &n->copy, &n->set}, *best = NULL;
	int r;

	for (int i = 0; i < 3; i++)
		if (c[i]->row && (!best || sqlite3_column_int64(c[i]->st, 0) <
						   sqlite3_column_int64(best->st, 0)))
			best = c[i];
	if (!best)
		return 2;
	r = best == &n->kern   ? op_kernel(n, ret)
	    : best == &n->copy ? op_copy(n, ret)
			       : op_set(n, ret);
	if (r < 0)
		return r;
	/* the row is read: the cursor moves on */
	int s = cursor_step(n, best);

	return s < 0 ? s : r;
}

static const struct col sync_cols[] = {
	{"start", true},     {"end", true},	      {"deviceId", false, OR_NULL},
	{"streamId", false}, {"correlationId", true}, {"globalPid", false},
	{"syncType", false}, {"eventId", false},
};

static int next_sync(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->sync.st;
	struct gw_rec_sync *s = &ret->sync;
	int r;

	if (!n->sync.row)
		return 2;
	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_SYNC;
	ret->version = GW_REC_SYNC_VERSION;
	s->start_ns = n->sync.start;
	s->end_ns = col_u64(st, 1);
	s->stream = col_u64(st, 3);
	s->correlation = col_u64(st, 4);
	/* as written: Nsight labels cudaDeviceSynchronize "Event sync"; the API record's class,
	 * from the call's name, is what the analysis uses */
	s->type = col_u64(st, 6);
	s->event = col_u64(st, 7);
	if (col_u64(st, 2) && (r = note_corr_device(n, col_u64(st, 5) >> 24 & 0xffffff,
						    s->correlation, col_u64(st, 2) - 1)) < 0)
		return r;
	r = cursor_step(n, &n->sync);
	return r < 0 ? r : 1;
}

/* ---- API calls ---- */

static const struct col api_cols[] = {
	{"start", true},
	{"end", true},
	{"globalTid", false},
	{"correlationId", true},
	{"nameId", true},
	{"returnValue", false},
	{"callchainId", false, OR_NULL},
};

/*
 * The class of an export name id, packed: bit 63 known, bits 32-62 the index of its stripped
 * name (string id API_NAME_BASE + index), 0-7 category,
 * 8-15 sync kind, 16-23 memory kind, 24-31 domain. 0: a call the capture would not record.
 */
static int api_class(struct nsys *n, uint64_t name, uint64_t *ret)
{
	unsigned c = (unsigned)(name * 0x9E3779B1u) % NAME_CACHE;
	struct gw_api_class cls;
	uint64_t *v;
	bool fresh;
	size_t len, base;
	int rc, r;

	if (n->name_cache[c].key == name + 1) {
		*ret = n->name_cache[c].val;
		return 0;
	}
	v = map_put(&n->name_class, name, &fresh);
	if (!v)
		return -ENOMEM;
	if (fresh) {
		sqlite3_reset(n->str_stmt);
		sqlite3_bind_int64(n->str_stmt, 1, (sqlite3_int64)name);
		rc = sqlite3_step(n->str_stmt);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return db_fail(n, T_STRINGS);
		if (rc == SQLITE_ROW && (r = col_text(n, n->str_stmt, 0, &len)) < 0)
			return r;
		if (rc == SQLITE_ROW && gw_api_classify(n->text, len, &cls)) {
			size_t id;

			base = gw_api_base_len(n->text, len);
			n->text[base] = '\0';
			for (id = 0; id < n->n_api_names; id++)
				if (strcmp(n->api_names[id], n->text) == 0)
					break;
			if (id == n->n_api_names) {
				char **a = realloc(n->api_names, (id + 1) * sizeof(*a));
				struct slot *s;

				if (!a)
					return -ENOMEM;
				n->api_names = a;
				if (!(a[id] = strdup(n->text)))
					return -ENOMEM;
				n->n_api_names++;
				if (!(s = q_push(n, GW_REC_STRING)))
					return -ENOMEM;
				s->rec.version = GW_REC_STRING_VERSION;
				s->rec.string.id = API_NAME_BASE + id;
				s->rec.string.kind = GW_STRING_API;
				if ((r = q_bytes(s, 0, n->text, base, &s->rec.string.text)) < 0)
					return r;
			}
			*v = 1ull << 63 | (uint64_t)id << 32 | (uint64_t)cls.domain << 24 |
			     (uint64_t)cls.mem_kind << 16 | (uint64_t)cls.sync_kind << 8 |
			     cls.category;
		}
	}
	n->name_cache[c].key = name + 1;
	n->name_cache[c].val = *v;
	*ret = *v;
	return 0;
}

/* The frames of a CUDA_CALLCHAINS id into n->stack_frames (from offset base); their count. */
static int read_chain(struct nsys *n, uint64_t id, size_t base, uint32_t *ret_depth)
{
	sqlite3_stmt *st = n->chain_stmt;
	uint32_t depth = 0;
	int rc, r;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && depth < GW_MAX_STACK_DEPTH) {
		uint64_t sym = col_u64(st, 0), mod = col_u64(st, 1), key, *f;
		struct slot *s;
		bool fresh;

		if (!string_id(sym))
			continue;
		key = string_id(sym) << 32 | string_id(mod);
		if (!(f = map_put(&n->frames, key, &fresh)))
			return -ENOMEM;
		if (fresh) {
			*f = n->frames.len;
			if ((r = use_string(n, sym, GW_STRING_OTHER)) < 0 ||
			    (r = use_string(n, mod, GW_STRING_OTHER)) < 0)
				return r;
			if (!(s = q_push(n, GW_REC_FRAME)))
				return -ENOMEM;
			s->rec.version = GW_REC_FRAME_VERSION;
			s->rec.frame.id = *f;
			s->rec.frame.lang = GW_FRAME_NATIVE;
			s->rec.frame.function_id = string_id(sym);
			s->rec.frame.module_id = string_id(mod);
		}
		if (base + depth + 1 > n->stack_frames_cap) {
			size_t cap = (base + depth + 1) * 2;
			uint64_t *v = realloc(n->stack_frames, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			n->stack_frames = v;
			n->stack_frames_cap = cap;
		}
		n->stack_frames[base + depth++] = *f;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(n, T_CHAINS);
	*ret_depth = depth;
	return 0;
}

/* Whether a frame of CUDA_CALLCHAINS id names the function (with or without its version). */
static int chain_names(struct nsys *n, uint64_t id, const char *name, bool *ret)
{
	sqlite3_stmt *st = n->probe_stmt;
	size_t len;
	int rc, r;

	*ret = false;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	while (!*ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((r = col_text(n, st, 0, &len)) < 0)
			return r;
		*ret = gw_api_base_len(n->text, len) == strlen(name) &&
		       memcmp(n->text, name, strlen(name)) == 0;
	}
	return *ret || rc == SQLITE_DONE ? 0 : db_fail(n, T_CHAINS);
}

/*
 * The stack id of a call's backtrace, 0 without one. Identical stacks share an id, as the
 * capture's do, so that a site is one row of the report. Exports of 2022 number callchainId
 * from 0 and CUDA_CALLCHAINS from 1: the offset is learned from the first backtrace whose
 * frames name the call under one offset and not the other.
 */
static int api_stack(struct nsys *n, const struct api_row *a, const char *api_name, uint64_t *ret)
{
	size_t base = n->stack_frames_len;
	uint32_t depth = 0;
	uint64_t h = 0x9E3779B97F4A7C15ull, *v, off;
	struct slot *s;
	bool fresh;
	int r;

	*ret = 0;
	if (!a->has_chain || !n->have_chains)
		return 0;
	off = n->chain_offset > 0;
	if (n->chain_offset < 0) {
		bool m0, m1;

		if ((r = chain_names(n, a->chain, api_name, &m0)) < 0 ||
		    (r = chain_names(n, a->chain + 1, api_name, &m1)) < 0)
			return r;
		if (m0 != m1)
			n->chain_offset = m1;
		off = m1 && !m0;
	}
	if ((r = read_chain(n, a->chain + off, base, &depth)) < 0)
		return r;
	if (!depth)
		return 0;
	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ n->stack_frames[base + i]) * 0x100000001B3ull;
	/* probe from the hash until the same frames or a free key */
	for (;; h++) {
		if (!(v = map_put(&n->stacks, h, &fresh)))
			return -ENOMEM;
		if (fresh)
			break;
		size_t k = (size_t)*v - 1;

		if (n->stack_v[k].depth == depth &&
		    memcmp(n->stack_frames + n->stack_v[k].off, n->stack_frames + base,
			   depth * sizeof(uint64_t)) == 0) {
			*ret = *v;
			return 0;
		}
	}
	if (n->n_stacks == n->stacks_cap) {
		size_t cap = n->stacks_cap ? n->stacks_cap * 2 : 64;
		void *p = realloc(n->stack_v, cap * sizeof(*n->stack_v));

		if (!p)
			return -ENOMEM;
		n->stack_v = p;
		n->stacks_cap = cap;
	}
	n->stack_v[n->n_stacks].off = base;
	n->stack_v[n->n_stacks].depth = depth;
	n->stack_frames_len = base + depth;
	*v = ++n->n_stacks;
	*ret = *v;
	if (!(s = q_push(n, GW_REC_STACK)))
		return -ENOMEM;
	if (depth > s->ips_cap) {
		uint64_t *ips = realloc(s->ips, depth * sizeof(*ips));

		if (!ips)
			return -ENOMEM;
		s->ips = ips;
		s->ips_cap = depth;
	}
	memcpy(s->ips, n->stack_frames + base, depth * sizeof(uint64_t));
	s->rec.version = GW_REC_STACK_VERSION;
	s->rec.stack.id = *ret;
	s->rec.stack.ips.ips = s->ips;
	s->rec.stack.ips.depth = depth;
	s->rec.stack.ips_kind = GW_STACK_FRAMES;
	return 0;
}

/* The records of one call: its thread on first sight, its stack, then the API record, which
 * goes straight to *ret (1) when nothing else is queued (0 otherwise). */
static int emit_api(struct nsys *n, const struct api_row *a, struct gw_record *ret)
{
	uint64_t cls, tid = a->gtid & 0xffffff, pid = a->gtid >> 24 & 0xffffff, stack, *v;
	struct slot *s;
	bool fresh;
	int r;

	n->recent[a->corr % API_RECENT] = a->corr;
	if ((r = api_class(n, a->name, &cls)) < 0)
		return r;
	if (tid != n->last_tid) {
		if (!(v = map_put(&n->threads, a->gtid, &fresh)))
			return -ENOMEM;
		if (fresh) {
			uint64_t *name = map_find(&n->thread_name, a->gtid);

			if (name && (r = use_string(n, *name, GW_STRING_OTHER)) < 0)
				return r;
			if (!(s = q_push(n, GW_REC_THREAD)))
				return -ENOMEM;
			s->rec.version = GW_REC_THREAD_VERSION;
			s->rec.thread.time_ns = a->start;
			s->rec.thread.tid = tid;
			if (name) {
				sqlite3_reset(n->str_stmt);
				sqlite3_bind_int64(n->str_stmt, 1, (sqlite3_int64)*name);
				size_t len = 0;

				if (sqlite3_step(n->str_stmt) == SQLITE_ROW &&
				    (r = col_text(n, n->str_stmt, 0, &len)) < 0)
					return r;
				if ((r = q_bytes(s, 0, n->text, len, &s->rec.thread.name)) < 0)
					return r;
			}
		}
		n->last_tid = tid;
	}
	if ((r = api_stack(n, a, n->api_names[cls >> 32 & 0x7fffffff], &stack)) < 0)
		return r;
	if (n->q_len) {
		if (!(s = q_push(n, GW_REC_API)))
			return -ENOMEM;
		ret = &s->rec;
	} else {
		memset(ret, 0, sizeof(*ret));
		ret->type = GW_REC_API;
	}
	struct gw_rec_api *p = &ret->api;

	ret->version = GW_REC_API_VERSION;
	p->tid = tid;
	p->start_ns = a->start;
	p->end_ns = a->end;
	p->correlation = a->corr;
	p->category = cls & 0xff;
	p->sync_kind = cls >> 8 & 0xff;
	p->domain = cls >> 24 & 0xff;
	p->name_id = API_NAME_BASE + (cls >> 32 & 0x7fffffff);
	p->stack_id = stack;
	p->status = a->status;
	p->device = api_device(n, pid, a->gtid, a->corr);
	if (n->have_memory && (p->category == GW_API_ALLOC || p->category == GW_API_FREE)) {
		if (!(v = map_put(&n->alloc_site, a->corr, &fresh)))
			return -ENOMEM;
		*v = stack << 32 | tid << 8 | (cls >> 16 & 0xff);
	}
	return n->q_len ? 0 : 1;
}

static void read_api_row(sqlite3_stmt *st, struct api_row *a)
{
	a->start = col_u64(st, 0);
	a->end = col_u64(st, 1);
	a->gtid = col_u64(st, 2);
	a->corr = col_u64(st, 3);
	a->name = col_u64(st, 4);
	a->status = col_u64(st, 5);
	a->chain = col_u64(st, 6);
	a->has_chain = a->chain != 0;
	a->chain -= a->has_chain;
	if (a->end < a->start)
		a->end = a->start;
}

/* Takes one call row; the oldest held row is given out when the window is full. */
static int next_api(struct nsys *n, struct gw_record *ret)
{
	struct cursor *c = &n->rt;
	struct api_row a;
	uint64_t cls, *v;
	bool fresh, driver;
	int r;

	if (n->drv.row &&
	    (!n->rt.row || sqlite3_column_int64(n->drv.st, 0) < sqlite3_column_int64(n->rt.st, 0)))
		c = &n->drv;
	if (!c->row) {
		/* the held rows, then the end */
		if (!n->win_len)
			return 2;
		r = emit_api(n, &n->win[n->win_head], ret);
		n->win_head = (n->win_head + 1) % API_WINDOW;
		n->win_len--;
		return r;
	}
	driver = c == &n->drv;
	read_api_row(c->st, &a);
	if ((r = cursor_step(n, c)) < 0)
		return r;
	/* A driver call made inside a runtime call on the same thread is part of that call, as
	 * the capture records it: once. */
	if (n->drv.st || n->drv.row) {
		if (!driver) {
			if (!(v = map_put(&n->rt_end, a.gtid, &fresh)))
				return -ENOMEM;
			*v = a.end;
		} else if ((v = map_find(&n->rt_end, a.gtid)) && a.start <= *v) {
			return 0;
		}
	}
	if ((r = api_class(n, a.name, &cls)) < 0)
		return r;
	if (!cls || n->recent[a.corr % API_RECENT] == a.corr)
		return 0;
	/* a twin row of a held call: one call, the span of both, the backtrace of either */
	for (unsigned i = 0; i < n->win_len; i++) {
		struct api_row *w = &n->win[(n->win_head + i) % API_WINDOW];

		if (w->corr != a.corr)
			continue;
		if (a.start < w->start)
			w->start = a.start;
		if (a.end > w->end)
			w->end = a.end;
		if (!w->has_chain && a.has_chain) {
			w->has_chain = true;
			w->chain = a.chain;
		}
		return 0;
	}
	if (n->win_len == API_WINDOW) {
		r = emit_api(n, &n->win[n->win_head], ret);
		n->win[n->win_head] = a;
		n->win_head = (n->win_head + 1) % API_WINDOW;
		return r;
	}
	n->win[(n->win_head + n->win_len++) % API_WINDOW] = a;
	return 0;
}

/* ---- memory ---- */

static const struct col mem_cols[] = {
	{"start", true},
	{"globalPid", false},
	{"deviceId", true},
	{"address", true},
	{"bytes", true},
	{"memKind", false, "ifnull(%s, 2)"},
	{"memoryOperationType", true},
	{"correlationId", false, OR_NULL},
};

static int next_memory(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->mem.st;
	struct gw_rec_memory *m = &ret->memory;
	uint64_t kind, op, *site;
	int r;

	if (!n->mem.row)
		return 2;
	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_MEMORY;
	ret->version = GW_REC_MEMORY_VERSION;
	m->time_ns = n->mem.start;
	m->device = col_u64(st, 2);
	m->address = col_u64(st, 3);
	op = col_u64(st, 6);
	m->op = op == 0 ? GW_MEMORY_ALLOC : GW_MEMORY_FREE;
	m->bytes = m->op == GW_MEMORY_ALLOC ? col_u64(st, 4) : 0;
	m->correlation = col_u64(st, 7) ? col_u64(st, 7) - 1 : 0;
	/* as CUPTI's memory kinds (device when not said); pageable is not GPU memory */
	kind = enum_map(n->mem_kind, col_u64(st, 5));
	m->mem_kind = kind == 2		       ? GW_MEM_HOST_PINNED
		      : kind == 5 || kind == 7 ? GW_MEM_MANAGED
					       : GW_MEM_DEVICE;
	site = col_u64(st, 7) ? map_find(&n->alloc_site, m->correlation) : NULL;
	if (site) {
		m->stack_id = *site >> 32;
		m->tid = *site >> 8 & 0xffffff;
		if ((*site & 0xff) == GW_MEM_ASYNC || (*site & 0xff) == GW_MEM_VMM)
			m->mem_kind = *site & 0xff;
	}
	if ((r = note_device(n, m->device)) < 0 || (r = cursor_step(n, &n->mem)) < 0)
		return r;
	if (op > 1 || kind == 1)
		return 0;
	return 1;
}

static const struct col wddm_cols[] = {
	{"timestamp", true},
	{"gpu", true},
	{"newUsage", true},
	{"segmentGroup", false, "ifnull(%s, 0)"},
};

/* Windows exports: the process's device-local usage, as the allocator-reserved counter. */
static int next_counter(struct nsys *n, struct gw_record *ret)
{
	sqlite3_stmt *st = n->wddm.st;
	bool local;
	int r;

	if (!n->wddm.row)
		return 2;
	memset(ret, 0, sizeof(*ret));
	ret->type = GW_REC_COUNTER;
	ret->version = GW_REC_COUNTER_VERSION;
	ret->counter.time_ns = col_u64(st, 0);
	ret->counter.device = col_u64(st, 1);
	ret->counter.counter = GW_COUNTER_ALLOCATOR_RESERVED;
	ret->counter.value = col_u64(st, 2);
	local = col_u64(st, 3) == 0;
	if ((r = cursor_step(n, &n->wddm)) < 0)
		return r;
	return local ? 1 : 0;
}

/* ---- NVTX ranges ---- */

/* Nsight's event types of NVTX_EVENTS (ENUM_NSYS_EVENT_TYPE) that gpuwhy reads. */
enum {
	NSYS_NVTX_MARK = 34,
	NSYS_NVTX_PUSH_POP = 59,
	NSYS_NVTX_START_END = 60,
	NSYS_NVTX_DOMAIN_CREATE = 75,
};

/* A domain's STRING id: past the export's string ids and the API names (32 bits). */
#define DOMAIN_STRING_BASE (1ull << 32)

static const struct col nvtx_cols[] = {
	{"start", true},      {"end", false, OR_NULL},	  {"eventType", true},
	{"text", false},      {"textId", false, OR_NULL}, {"domainId", false},
	{"globalTid", false}, {"endGlobalTid", false},	  {"category", false},
};

/* A range, mark or domain of NVTX_EVENTS as a RANGE (or a domain's STRING) record. Ranges
 * that never ended (no end) are left out, as a capture leaves out ranges still open. */
static int next_range(struct nsys *n)
{
	sqlite3_stmt *st = n->nvtx.st;
	uint64_t type, end, text_id, domain, gtid, end_gtid;
	struct slot *s;
	size_t len = 0;
	int r;

	if (!n->nvtx.row)
		return 2;
	type = col_u64(st, 2);
	end = col_u64(st, 1);
	text_id = col_u64(st, 4);
	domain = col_u64(st, 5);
	gtid = col_u64(st, 6);
	end_gtid = col_u64(st, 7);
	if (type == NSYS_NVTX_DOMAIN_CREATE && domain) {
		if ((r = col_text(n, st, 3, &len)) < 0 || !(s = q_push(n, GW_REC_STRING)))
			return r < 0 ? r : -ENOMEM;
		s->rec.version = GW_REC_STRING_VERSION;
		s->rec.string.id = DOMAIN_STRING_BASE + domain;
		s->rec.string.kind = GW_STRING_DOMAIN;
		if ((r = q_bytes(s, 0, n->text, len, &s->rec.string.text)) < 0)
			return r;
	} else if (type == NSYS_NVTX_PUSH_POP || type == NSYS_NVTX_START_END ||
		   type == NSYS_NVTX_MARK) {
		if (type != NSYS_NVTX_MARK && !end)
			goto next; /* still open when the export was made */
		if (text_id && (r = use_string(n, text_id - 1, GW_STRING_RANGE)) < 0)
			return r;
		if (!text_id && (r = col_text(n, st, 3, &len)) < 0)
			return r;
		if (!(s = q_push(n, GW_REC_RANGE)))
			return -ENOMEM;
		s->rec.version = GW_REC_RANGE_VERSION;
		s->rec.range = (struct gw_rec_range){
			.tid = gtid & 0xffffff, /* as the API records' threads */
			.start_ns = n->nvtx.start,
			.end_ns = type == NSYS_NVTX_MARK ? n->nvtx.start : end - 1,
			.kind = type == NSYS_NVTX_PUSH_POP    ? GW_RANGE_PUSH_POP
				: type == NSYS_NVTX_START_END ? GW_RANGE_START_END
							      : GW_RANGE_MARK,
			.name_id = text_id ? string_id(text_id - 1) : 0,
			.domain_id = domain ? DOMAIN_STRING_BASE + domain : 0,
			.category = col_u64(st, 8),
			.end_tid = end_gtid && (end_gtid & 0xffffff) != (gtid & 0xffffff)
					   ? end_gtid & 0xffffff
					   : 0,
		};
		if (len > GW_RANGE_NAME_MAX) {
			len = GW_RANGE_NAME_MAX;
			while (len && ((uint8_t)n->text[len] & 0xc0) == 0x80)
				len--;
			s->rec.range.flags = GW_RANGE_NAME_CUT;
		}
		if (!text_id && (r = q_bytes(s, 0, n->text, len, &s->rec.range.name)) < 0)
			return r;
	}
next:
	r = cursor_step(n, &n->nvtx);
	return r < 0 ? r : 0;
}

/* ---- devices and notes at the end ---- */

static const struct col gpu_cols[] = {
	{"name", false},
	{"smCount", false},
	{"computeMajor", false},
	{"computeMinor", false},
	{"totalMemory", false},
	{"memoryBandwidth", false},
	{"maxWarpsPerSm", false},
	{"threadsPerWarp", false},
	{"maxBlocksPerSm", false},
	{"maxRegistersPerSm", false},
	{"maxShmemPerSm", false},
	{"maxThreadsPerBlock", false},
	{"maxRegistersPerBlock", false},
	{"maxShmemPerBlock|maxShmemPerBlockOptin", false},
	{"uuid", false},
};

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* The DEVICE record of a device the export used, from TARGET_INFO_GPU. */
static int queue_device(struct nsys *n, uint64_t id)
{
	sqlite3_stmt *st = n->gpu_stmt;
	struct gw_rec_device *d;
	struct slot *s;
	uint8_t uuid[16];
	size_t len = 0, nu = 0;
	int rc, r;

	if (!st)
		return 0;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_fail(n, T_GPU);
	if (!(s = q_push(n, GW_REC_DEVICE)))
		return -ENOMEM;
	d = &s->rec.device;
	s->rec.version = GW_REC_DEVICE_VERSION;
	d->device = id;
	d->sm_count = col_u64(st, 1);
	d->cc_major = col_u64(st, 2);
	d->cc_minor = col_u64(st, 3);
	d->memory_total_bytes = col_u64(st, 4);
	d->memory_bandwidth_kbps = col_u64(st, 5) / 1024; /* B/s */
	d->max_threads_per_sm = col_u64(st, 6) * col_u64(st, 7);
	d->max_blocks_per_sm = col_u64(st, 8);
	d->regs_per_sm = col_u64(st, 9);
	d->smem_per_sm_bytes = col_u64(st, 10);
	d->max_threads_per_block = col_u64(st, 11);
	d->max_regs_per_block = col_u64(st, 12);
	d->max_smem_per_block_bytes = col_u64(st, 13);
	d->warp_size = col_u64(st, 7);
	if ((r = col_text(n, st, 14, &len)) < 0)
		return r;
	/* "cf6b97c0-bf53-..." as CUPTI's 16 bytes */
	for (size_t i = 0; i + 1 < len && nu < 16; i++) {
		if (n->text[i] == '-')
			continue;
		if (hexval(n->text[i]) < 0 || hexval(n->text[i + 1]) < 0)
			break;
		uuid[nu++] = (uint8_t)(hexval(n->text[i]) << 4 | hexval(n->text[i + 1]));
		i++;
	}
	if ((r = q_bytes(s, 1, uuid, nu == 16 ? 16 : 0, &d->uuid)) < 0 ||
	    (r = col_text(n, st, 0, &len)) < 0)
		return r;
	return q_bytes(s, 0, n->text, len, &d->name);
}

static int queue_note(struct nsys *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int queue_note(struct nsys *n, const char *fmt, ...)
{
	char text[256];
	struct slot *s;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (len < 0)
		return -EINVAL;
	if (!(s = q_push(n, GW_REC_NOTE)))
		return -ENOMEM;
	s->rec.version = GW_REC_NOTE_VERSION;
	s->rec.note.level = GW_NOTE_WARNING;
	return q_bytes(s, 0, text, strlen(text), &s->rec.note.text);
}

/* ---- open ---- */

/* "file:" and the path percent-encoded, so that '?', '#' and '%' in it stay part of it. */
static char *file_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path);
	char *u = malloc(len * 3 + 32), *o;

	if (!u)
		return NULL;
	o = u + sprintf(u, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	strcpy(o, "?immutable=1");
	return u;
}

bool gw_nsys_report_name(const char *path)
{
	size_t len = strlen(path);

	return (len >= 9 && strcmp(path + len - 9, ".nsys-rep") == 0) ||
	       (len >= 6 && strcmp(path + len - 6, ".qdrep") == 0);
}

/* The HEADER's facts: the process with GPU work, its name, the capture's wall-clock start. */
static int read_header(struct nsys *n)
{
	const char *optables[] = {T_KERNEL, T_MEMCPY, T_MEMSET};
	uint64_t gpid = 0;
	bool exists;
	sqlite3_stmt *st;
	int r;

	for (int t = 0; t < 3 && !gpid; t++) {
		const struct col c[] = {{"globalPid", false}};

		if ((r = table_exists(n, optables[t], &exists)) < 0)
			return r;
		if (!exists)
			continue;
		if ((r = prepare_select(n, optables[t], c, 1, "LIMIT 1", &st)) < 0)
			return r;
		if (sqlite3_step(st) == SQLITE_ROW)
			gpid = col_u64(st, 0);
		sqlite3_finalize(st);
	}
	n->pid = gpid >> 24 & 0xffffff;
	if ((r = table_exists(n, T_PROCS, &exists)) < 0)
		return r;
	if (exists && gpid) {
		const struct col c[] = {{"name", false}};

		if ((r = prepare_select(n, T_PROCS, c, 1, "WHERE globalPid = ?1 LIMIT 1", &st)) < 0)
			return r;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)gpid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			size_t len;

			if ((r = col_text(n, st, 0, &len)) < 0 || !(n->command = strdup(n->text))) {
				sqlite3_finalize(st);
				return r < 0 ? r : -ENOMEM;
			}
		}
		sqlite3_finalize(st);
	}
	if ((r = table_exists(n, T_SESSION, &exists)) < 0)
		return r;
	if (exists) {
		const struct col c[] = {{"utcEpochNs", false}};

		if ((r = prepare_select(n, T_SESSION, c, 1, "LIMIT 1", &st)) < 0)
			return r;
		if (sqlite3_step(st) == SQLITE_ROW)
			n->start_realtime_ns = col_u64(st, 0);
		sqlite3_finalize(st);
	}
	/* the rank, as the capture finds it: from the launcher's environment */
	n->rank = -1;
	if ((r = table_exists(n, T_ENV, &exists)) < 0)
		return r;
	if (exists) {
		const struct col c[] = {{"name", true}, {"value", true}};

		if ((r = prepare_select(n, T_ENV, c, 2, "", &st)) < 0)
			return r;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			const char *env = (const char *)sqlite3_column_text(st, 1);
			const char *keys[] = {"RANK=", "SLURM_PROCID=", "OMPI_COMM_WORLD_RANK="};

			if (!name || !env || strcmp(name, "DeviceEnvironment") != 0)
				continue;
			for (int k = 0; k < 3 && n->rank < 0; k++) {
				for (const char *p = env; (p = strstr(p, keys[k])); p++) {
					char *end;
					long v;

					if (p != env && p[-1] != ';')
						continue;
					v = strtol(p + strlen(keys[k]), &end, 10);
					if (end != p + strlen(keys[k]) && (*end == ';' || !*end) &&
					    v >= 0) {
						n->rank = v;
						break;
					}
				}
			}
		}
		sqlite3_finalize(st);
	}
	return 0;
}

/*
 * Nsight's kinds as CUPTI's: memory kinds (Nsight: pageable 0, pinned 1, device 2, array 3,
 * managed 4, device static 5, managed static 6, unknown 7; CUPTI: unknown 0, pageable 1, pinned
 * 2, device 3, ...) and copy kinds (the same as CUPTI's up to peer-to-peer, 10; Nsight's
 * unified-memory kinds have no CUPTI copy kind). By those numbers, or by the names in the
 * export's own ENUM tables when it has them.
 */
static int load_enums(struct nsys *n)
{
	static const char *const mem[] = {"UNKNOWN", "PAGEABLE", "PINNED",	  "DEVICE",
					  "ARRAY",   "MANAGED",	 "DEVICE_STATIC", "MANAGED_STATIC"};
	static const char *const copy[] = {"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA",
					   "ATOD",    "DTOA", "DTOD", "HTOH", "PTOP"};
	const struct {
		const char *table, *prefix;
		const char *const *names;
		int count;
		uint8_t *map;
	} e[] = {
		{"ENUM_CUDA_MEM_KIND", "CUDA_MEMOPR_MEMORY_KIND_", mem, 8, n->mem_kind},
		{"ENUM_CUDA_MEMCPY_OPER", "CUDA_MEMCPY_KIND_", copy, 11, n->copy_kind},
	};
	const struct col cols[] = {{"id", true}, {"name", true}};

	for (int i = 0; i < 16; i++) {
		n->mem_kind[i] = i < 8 ? (uint8_t)((i + 1) % 8) : 0;
		n->copy_kind[i] = i <= 10 ? (uint8_t)i : 0;
	}
	for (int t = 0; t < 2; t++) {
		sqlite3_stmt *st;
		bool exists;
		int r, rc;

		if ((r = table_exists(n, e[t].table, &exists)) < 0)
			return r;
		if (!exists)
			continue;
		if ((r = prepare_select(n, e[t].table, cols, 2, "", &st)) < 0)
			return r;
		uint8_t map[16] = {0};
		bool any = false;

		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 1);
			uint64_t id = col_u64(st, 0);
			size_t pl = strlen(e[t].prefix);

			if (id >= 16 || !name || strncmp(name, e[t].prefix, pl) != 0)
				continue;
			for (int k = 0; k < e[t].count; k++)
				if (strcmp(name + pl, e[t].names[k]) == 0)
					map[id] = (uint8_t)k, any = true;
		}
		sqlite3_finalize(st);
		/* an empty or unrecognisable table leaves the known numbering */
		if (any)
			memcpy(e[t].map, map, sizeof(map));
		if (rc != SQLITE_DONE)
			return db_fail(n, e[t].table);
	}
	return 0;
}

static int load_thread_names(struct nsys *n)
{
	const struct col c[] = {{"globalTid", true}, {"nameId", true}};
	sqlite3_stmt *st;
	bool exists;
	int r, rc;

	if ((r = table_exists(n, T_THREADS, &exists)) < 0 || !exists)
		return r;
	if ((r = prepare_select(n, T_THREADS, c, 2, "", &st)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		bool fresh;
		uint64_t *v = map_put(&n->thread_name, col_u64(st, 0), &fresh);

		if (!v) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		*v = col_u64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(n, T_THREADS);
}

static int nsys_open(struct gw_source *s)
{
	struct nsys *n = calloc(1, sizeof(*n));
	const struct col str_cols[] = {{"value", true}};
	const struct col chain_cols[] = {{"symbol", true}, {"module", true}};
	bool exists, ops = false, strings;
	char msg[200], fdpath[32];
	struct stat sb;
	char *uri = NULL;
	int r, rc;

	if (!n)
		return -ENOMEM;
	s->state = n;
	n->fd = -1;
	n->chain_offset = -1;
	n->last_pid = UINT64_MAX;
	n->last_tid = UINT64_MAX;
	n->last_kname = UINT64_MAX;
	n->last_device = UINT64_MAX;
	n->last_gpid = UINT64_MAX;
	memset(n->recent, 0xff, sizeof(n->recent));
	if (s->gzip)
		return gw_source_fail(-EBADMSG, "gzip-compressed: gunzip the Nsight Systems export "
						"first");
	/* the file the registry opened, kept open while SQLite reads it by its /proc name */
	n->fd = s->fd;
	s->fd = -1;
	{
		char head[16] = {0};
		ssize_t got = pread(n->fd, head, sizeof(head), 0);

		if (got < 0)
			return -errno;
		if (got < 16 || memcmp(head, "SQLite format 3", 16) != 0) {
			if (gw_nsys_report_name(s->path))
				return gw_source_fail(-EBADMSG, GW_NSYS_EXPORT_HINT, s->path);
			return gw_source_fail(-EBADMSG, "not an SQLite database, so not an Nsight "
							"Systems export");
		}
	}
	if (fstat(n->fd, &sb) == 0)
		n->file_size = (uint64_t)sb.st_size;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", n->fd);
	if (!(uri = file_uri(access(fdpath, R_OK) == 0 ? fdpath : s->path)))
		return -ENOMEM;
	/* read-only and immutable: no lock, no journal, nothing written beside the file */
	rc = sqlite3_open_v2(uri, &n->db,
			     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return n->db ? db_fail(n, NULL) : -ENOMEM;
	if ((r = table_exists(n, T_STRINGS, &strings)) < 0) {
		if (sqlite3_errcode(n->db) == SQLITE_NOTADB ||
		    sqlite3_errcode(n->db) == SQLITE_CORRUPT)
			return gw_source_fail(-EBADMSG, "not a readable SQLite database: %s",
					      db_message(n, msg, sizeof(msg)));
		return r;
	}
	for (int t = 0; t < 3; t++) {
		const char *tables[] = {T_KERNEL, T_MEMCPY, T_MEMSET};

		if ((r = table_exists(n, tables[t], &exists)) < 0)
			return r;
		ops = ops || exists;
	}
	if (!ops && !strings)
		return gw_source_fail(-EBADMSG,
				      "an SQLite database, but not an Nsight Systems export "
				      "(no StringIds or CUPTI_ACTIVITY_KIND_* table)");
	if (!ops)
		return gw_source_fail(-EBADMSG, "no CUDA activity in the export (no table " T_KERNEL
						", " T_MEMCPY " or " T_MEMSET "): profile with "
						"`nsys profile --trace=cuda`");
	if (!strings)
		return gw_source_fail(-EBADMSG, "no table " T_STRINGS " (the names of kernels and "
						"calls)");
	if ((r = prepare_select(n, T_STRINGS, str_cols, 1, "WHERE id = ?1", &n->str_stmt)) < 0)
		return r;
	if ((r = cursor_open(n, &n->kern, T_KERNEL, kernel_cols, COUNT(kernel_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->copy, T_MEMCPY, copy_cols, COUNT(copy_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->set, T_MEMSET, set_cols, COUNT(set_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->sync, T_SYNC, sync_cols, COUNT(sync_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->rt, T_RUNTIME, api_cols, COUNT(api_cols), &n->have_runtime)) <
		    0 ||
	    (r = cursor_open(n, &n->drv, T_DRIVER, api_cols, COUNT(api_cols), &exists)) < 0 ||
	    (r = cursor_open(n, &n->mem, T_CUDAMEM, mem_cols, COUNT(mem_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->wddm, T_WDDMMEM, wddm_cols, COUNT(wddm_cols), NULL)) < 0 ||
	    (r = cursor_open(n, &n->nvtx, T_NVTX, nvtx_cols, COUNT(nvtx_cols), NULL)) < 0)
		return r;
	n->have_runtime = n->have_runtime || exists;
	if ((r = table_exists(n, T_CHAINS, &exists)) < 0)
		return r;
	if (exists) {
		if ((r = prepare_select(n, T_CHAINS, chain_cols, 2,
					"WHERE id = ?1 ORDER BY stackDepth", &n->chain_stmt)) < 0 ||
		    sqlite3_prepare_v2(n->db,
				       "SELECT s.value FROM \"" T_CHAINS "\" c JOIN \"" T_STRINGS
				       "\" s ON s.id = c.symbol WHERE c.id = ?1",
				       -1, &n->probe_stmt, NULL) != SQLITE_OK ||
		    (r = table_has_rows(n, T_CHAINS, &n->have_chains)) < 0)
			return r;
		/* the ordering column must exist too */
		const struct col depth[] = {{"stackDepth", true}};
		sqlite3_stmt *st;

		if ((r = prepare_select(n, T_CHAINS, depth, 1, "LIMIT 0", &st)) < 0)
			return r;
		sqlite3_finalize(st);
	}
	if (n->mem.st && (r = table_has_rows(n, T_CUDAMEM, &n->have_memory)) < 0)
		return r;
	if ((r = table_exists(n, T_GPU, &exists)) < 0)
		return r;
	if (exists) {
		const struct col idc[] = {{"id", true}};
		sqlite3_stmt *st;

		if ((r = prepare_select(n, T_GPU, idc, 1, "LIMIT 0", &st)) < 0)
			return r;
		sqlite3_finalize(st);
		if ((r = prepare_select(n, T_GPU, gpu_cols, COUNT(gpu_cols),
					"WHERE id = ?1 LIMIT 1", &n->gpu_stmt)) < 0)
			return r;
	}
	if ((r = load_contexts(n)) < 0 || (r = load_thread_names(n)) < 0 ||
	    (r = load_enums(n)) < 0 || (r = read_header(n)) < 0)
		return r;
	/* every cursor on its first row */
	struct cursor *all[] = {&n->kern, &n->copy, &n->set,  &n->sync, &n->rt,
				&n->drv,  &n->mem,  &n->wddm, &n->nvtx};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if ((r = cursor_step(n, all[i])) < 0)
			return r;
	return 0;
}

/* ---- next ---- */

static int produce(struct gw_source *s, struct gw_record *ret)
{
	struct nsys *n = s->state;
	int r;

	switch (n->phase) {
	case PH_HEADER: {
		struct gw_rec_header *h = &ret->header;

		memset(ret, 0, sizeof(*ret));
		ret->type = GW_REC_HEADER;
		ret->version = GW_REC_HEADER_VERSION;
		h->format_version = GW_FORMAT_VERSION;
		h->flags = n->have_chains ? GW_HEADER_STACKS : 0;
		h->pid = n->pid;
		h->rank = n->rank;
		h->start_realtime_ns = n->start_realtime_ns;
		h->capture_mode = GW_CAPTURE_IMPORT_NSYS;
		if (n->command) {
			h->command.data = (const uint8_t *)n->command;
			h->command.len = (uint32_t)strlen(n->command);
		}
		n->phase++;
		return 1;
	}
	case PH_OPS:
		r = next_op(n, ret);
		break;
	case PH_SYNC:
		r = next_sync(n, ret);
		break;
	case PH_API:
		r = next_api(n, ret);
		break;
	case PH_MEMORY:
		r = next_memory(n, ret);
		break;
	case PH_COUNTER:
		r = next_counter(n, ret);
		break;
	case PH_RANGES:
		r = next_range(n);
		break;
	case PH_DEVICES:
		if (!n->device_list) {
			size_t k = 0;

			n->device_list = calloc(n->devices.len + 1, sizeof(uint64_t));
			if (!n->device_list)
				return -ENOMEM;
			for (size_t i = 0; i < n->devices.cap; i++)
				if (n->devices.used[i])
					n->device_list[k++] = n->devices.key[i];
		}
		if (n->devices_done == n->devices.len)
			r = 2;
		else
			r = queue_device(n, n->device_list[n->devices_done++]);
		break;
	case PH_NOTES:
		if (!n->have_runtime &&
		    (r = queue_note(n, "the export has no CUDA API calls (" T_RUNTIME "): "
				       "syncs and launch calls are unknown, so idle time is not "
				       "told apart by what the host was doing")) < 0)
			return r;
		if (n->pids_seen.len > 1 &&
		    (r = queue_note(n,
				    "the export holds %zu processes that used CUDA; their GPU "
				    "work is analysed as one trace, by device",
				    n->pids_seen.len)) < 0)
			return r;
		r = 2;
		break;
	default:
		return 3;
	}
	if (r == 2) {
		n->phase++;
		return 0;
	}
	return r;
}

static int nsys_next(struct gw_source *s, struct gw_record *ret)
{
	struct nsys *n = s->state;
	int r;

	for (;;) {
		if (n->q_head < n->q_len) {
			*ret = n->q[n->q_head++].rec;
			return 1;
		}
		n->q_head = n->q_len = 0;
		r = produce(s, ret);
		if (r == 3) {
			s->truncated = false;
			s->clean_exit = true;
			return 0;
		}
		if (r < 0) {
			n->phase = PH_END;
			return r;
		}
		if (r == 1)
			return 1;
	}
}

static void nsys_progress(const struct gw_source *s, uint64_t *ret_done, uint64_t *ret_size)
{
	const struct nsys *n = s->state;

	*ret_size = n->file_size;
	*ret_done = n->rows_total
			    ? (uint64_t)((double)n->file_size *
					 (double)(n->rows_done < n->rows_total ? n->rows_done
									       : n->rows_total) /
					 (double)n->rows_total)
			    : 0;
}

static void nsys_close(struct gw_source *s)
{
	struct nsys *n = s->state;
	struct cursor *all[9];

	if (!n)
		return;
	all[0] = &n->kern, all[1] = &n->copy, all[2] = &n->set, all[3] = &n->sync;
	all[4] = &n->rt, all[5] = &n->drv, all[6] = &n->mem, all[7] = &n->wddm;
	all[8] = &n->nvtx;
	for (int i = 0; i < 9; i++)
		sqlite3_finalize(all[i]->st);
	sqlite3_finalize(n->str_stmt);
	sqlite3_finalize(n->chain_stmt);
	sqlite3_finalize(n->gpu_stmt);
	sqlite3_finalize(n->probe_stmt);
	sqlite3_close(n->db);
	if (n->fd >= 0)
		close(n->fd);
	for (size_t i = 0; i < n->q_cap; i++) {
		free(n->q[i].buf[0]);
		free(n->q[i].buf[1]);
		free(n->q[i].ips);
	}
	free(n->q);
	free(n->text);
	for (size_t i = 0; i < n->n_api_names; i++)
		free(n->api_names[i]);
	free(n->api_names);
	map_free(&n->strings_seen);
	map_free(&n->devices);
	map_free(&n->pid_device);
	map_free(&n->corr_device);
	map_free(&n->tid_device);
	map_free(&n->pids_seen);
	map_free(&n->name_class);
	map_free(&n->rt_end);
	map_free(&n->threads);
	map_free(&n->thread_name);
	map_free(&n->frames);
	map_free(&n->stacks);
	map_free(&n->alloc_site);
	free(n->stack_frames);
	free(n->stack_v);
	free(n->command);
	free(n->device_list);
	free(n);
}

const struct gw_source_type gw_source_nsys = {
	.name = "nsys",
	.what = "Nsight Systems SQLite export",
	.sniff = nsys_sniff,
	.open = nsys_open,
	.next = nsys_next,
	.progress = nsys_progress,
	.close = nsys_close,
};
