/* SPDX-License-Identifier: MIT */
/* The kineto source's host side: threads, Python and operator spans, stacks, and the calls kept
 * until their stacks are known. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kineto.h"

/* Calls queued per refill of the output queue. */
#define GW_KIN_EMIT_BATCH	256
/* Frames read from an operator's "Call stack"; deeper ones are dropped at the outermost end. */
#define GW_KIN_CALLSTACK_FRAMES 256

int gw_kin_thread(struct gw_kin_host *h, int64_t tid, uint64_t ns, uint32_t *ret_idx)
{
	bool fresh;
	uint32_t *v = gw_src_map_get(&h->thread_map, (uint64_t)tid, 0, &fresh);
	struct gw_kin_thread *t;

	if (!v)
		return -ENOMEM;
	if (!fresh) {
		t = &((struct gw_kin_thread *)h->threads.data)[*v - 1];
		if (ns < t->first_ns)
			t->first_ns = ns;
		*ret_idx = *v - 1;
		return 0;
	}
	t = gw_src_vec_push(&h->threads, sizeof(*t));
	if (!t)
		return -ENOMEM; /* the source is done for: the stale map entry is never read */
	t->tid = tid;
	t->first_ns = ns;
	*v = (uint32_t)h->threads.len;
	*ret_idx = *v - 1;
	return 0;
}

int gw_kin_thread_name(struct gw_kin_host *h, int64_t tid, uint32_t name_id)
{
	uint32_t *v = gw_src_map_get(&h->thread_names, (uint64_t)tid, 0, NULL);

	if (!v)
		return -ENOMEM;
	*v = name_id;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A built-in's frame names the object it was called on ("<built-in method copy_ of Tensor
 * object at 0x7fdc681f0eb0>"): without the address, every call of it is one frame. Returns the
 * length of name without " at 0x...", the part before it, or len when there is none. */
static size_t address_at(const char *name, size_t len)
{
	size_t i = len;

	if (len < 8 || name[len - 1] != '>')
		return len;
	for (i = len - 1; i > 0 && is_hex(name[i - 1]); i--)
		;
	if (i == len - 1 || i < 6 || memcmp(name + i - 6, " at 0x", 6) != 0)
		return len;
	return i - 6;
}

int gw_kin_frame(struct gw_kin_host *h, struct gw_kin_strings *s, const char *name, size_t len,
		 uint8_t lang, uint32_t *ret_frame)
{
	const char *fn = name, *file = NULL;
	size_t fn_len = len, file_len = 0, cut;
	uint32_t line = 0, fn_id, file_id = 0, *v;
	struct gw_kin_frame *f;
	char buf[512];
	bool fresh;
	int r;

	/* "path/file.py(123): function" */
	for (size_t i = 0; i + 2 < len; i++) {
		size_t k = i;

		if (name[i] != ')' || name[i + 1] != ':' || name[i + 2] != ' ')
			continue;
		while (k > 0 && is_digit(name[k - 1]))
			k--;
		if (k == i || k < 2 || name[k - 1] != '(')
			continue;
		for (size_t d = k; d < i && line < 100000000; d++)
			line = line * 10 + (uint32_t)(name[d] - '0');
		file = name;
		file_len = k - 1;
		fn = name + i + 3;
		fn_len = len - i - 3;
		break;
	}
	cut = address_at(fn, fn_len);
	if (cut < fn_len && cut + 1 < sizeof(buf)) {
		memcpy(buf, fn, cut);
		buf[cut] = '>';
		fn = buf;
		fn_len = cut + 1;
	}
	if ((r = gw_kin_intern(s, fn, fn_len, &fn_id)) < 0 ||
	    (file && (r = gw_kin_intern(s, file, file_len, &file_id)) < 0))
		return r;
	v = gw_src_map_get(&h->frame_map, (uint64_t)fn_id << 32 | file_id,
			   (uint64_t)line << 8 | lang, &fresh);
	if (!v)
		return -ENOMEM;
	if (fresh) {
		f = gw_src_vec_push(&h->frames, sizeof(*f));
		if (!f)
			return -ENOMEM;
		f->function_id = fn_id;
		f->file_id = file_id;
		f->line = line;
		f->lang = lang;
		*v = (uint32_t)h->frames.len;
	}
	*ret_frame = *v;
	return 0;
}

int gw_kin_node(struct gw_kin_host *h, uint32_t parent, uint32_t frame, uint32_t *ret_node)
{
	bool fresh;
	uint32_t *v = gw_src_map_get(&h->node_map, parent, frame, &fresh);
	struct gw_kin_node *n;

	if (!v)
		return -ENOMEM;
	if (fresh) {
		n = gw_src_vec_push(&h->nodes, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->parent = parent;
		n->frame = frame;
		*v = (uint32_t)h->nodes.len;
	}
	*ret_node = *v;
	return 0;
}

int gw_kin_callstack(struct gw_kin_host *h, struct gw_kin_strings *s, const char *text, size_t len,
		     uint32_t *ret_node)
{
	uint32_t frames[GW_KIN_CALLSTACK_FRAMES], id, node = 0, *v;
	unsigned n = 0;
	bool fresh;
	int r;

	/* Operators of one Python line share the text: parse it once. */
	if ((r = gw_kin_intern(s, text, len, &id)) < 0)
		return r;
	v = gw_src_map_get(&h->callstack_map, id, 0, &fresh);
	if (!v)
		return -ENOMEM;
	if (!fresh) {
		*ret_node = *v;
		return 0;
	}
	for (size_t a = 0; a < len && n < GW_KIN_CALLSTACK_FRAMES;) {
		size_t b = a;

		while (b < len && text[b] != ';')
			b++;
		if (b > a &&
		    (r = gw_kin_frame(h, s, text + a, b - a, GW_FRAME_PYTHON, &frames[n++])) < 0)
			return r;
		a = b + 1;
	}
	/* innermost first in the text; the trie grows from the outermost */
	while (n > 0)
		if ((r = gw_kin_node(h, node, frames[--n], &node)) < 0)
			return r;
	/* the map may have moved while the frames were interned */
	v = gw_src_map_get(&h->callstack_map, id, 0, NULL);
	if (!v)
		return -ENOMEM;
	*v = node;
	*ret_node = node;
	return 0;
}

static int push_corr_dev(struct gw_src_vec *v, uint64_t corr, int64_t device)
{
	struct gw_kin_corr_dev *e = gw_src_vec_push(v, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->corr = corr;
	e->device = device;
	return 0;
}

int gw_kin_gpu_device(struct gw_kin_host *h, uint64_t corr, int64_t device)
{
	if (!h->any_device) {
		h->any_device = true;
		h->device0 = device;
		return 0;
	}
	if (device == h->device0)
		return 0;
	h->many_devices = true;
	return push_corr_dev(&h->other_devs, corr, device);
}

int gw_kin_sync_device(struct gw_kin_host *h, uint64_t corr, int64_t device)
{
	return push_corr_dev(&h->sync_devs, corr, device);
}

static int cmp_span(const void *x, const void *y)
{
	const struct gw_kin_span *p = x, *q = y;

	if (p->tidx != q->tidx)
		return p->tidx < q->tidx ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	/* the enclosing one first */
	return p->end_ns > q->end_ns ? -1 : p->end_ns < q->end_ns;
}

static int cmp_call(const void *x, const void *y)
{
	const struct gw_kin_call *p = x, *q = y;

	if (p->tidx != q->tidx)
		return p->tidx < q->tidx ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return p->corr < q->corr ? -1 : p->corr > q->corr;
}

static int cmp_corr_dev(const void *x, const void *y)
{
	const struct gw_kin_corr_dev *p = x, *q = y;

	return p->corr < q->corr ? -1 : p->corr > q->corr;
}

static const struct gw_kin_corr_dev *find_corr(const struct gw_src_vec *v, uint64_t corr)
{
	const struct gw_kin_corr_dev *e = v->data;
	size_t lo = 0, hi = v->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->len && e[lo].corr == corr ? &e[lo] : NULL;
}

/* The spans open at a time on one thread, outermost first. */
struct open_span {
	uint64_t end_ns;
	uint32_t node, flags;
};

/* Opens the spans of one thread that start by time t, closes those that ended by then. */
static int advance(struct gw_kin_host *h, const struct gw_kin_span *sp, size_t n, size_t *at,
		   struct gw_src_vec *open, uint64_t t, bool python)
{
	struct open_span *o;
	uint32_t node;
	int r;

	for (; *at < n && sp[*at].start_ns <= t; (*at)++) {
		const struct gw_kin_span *s = &sp[*at];

		o = open->data;
		while (open->len && o[open->len - 1].end_ns <= s->start_ns)
			open->len--;
		node = s->ref;
		/* A Python function's node is its frame below the function that called it. */
		if (python &&
		    (r = gw_kin_node(h, open->len ? o[open->len - 1].node : 0, s->ref, &node)) < 0)
			return r;
		o = gw_src_vec_push(open, sizeof(*o));
		if (!o)
			return -ENOMEM;
		o->end_ns = s->end_ns;
		o->node = node;
		o->flags = s->flags;
	}
	o = open->data;
	while (open->len && o[open->len - 1].end_ns <= t)
		open->len--;
	return 0;
}

static bool issues_work(uint8_t category)
{
	return category == GW_API_LAUNCH || category == GW_API_GRAPH_LAUNCH ||
	       category == GW_API_MEMCPY || category == GW_API_MEMSET;
}

/* A call's device: its cuda_sync event's, else its GPU work's, else its thread's current one. */
static int64_t call_device(const struct gw_kin_host *h, const struct gw_kin_call *c,
			   int64_t *thread_dev)
{
	const struct gw_kin_corr_dev *e = find_corr(&h->sync_devs, c->corr);
	int64_t d;

	if (!e && h->many_devices)
		e = find_corr(&h->other_devs, c->corr);
	if (e)
		d = e->device;
	else if (!h->many_devices || issues_work(c->category))
		d = h->device0;
	else
		d = *thread_dev;
	if (e || issues_work(c->category))
		*thread_dev = d;
	return d;
}

/* Walks one thread's calls in time order beside its Python functions and operators. */
static int sweep(struct gw_kin_host *h)
{
	struct gw_kin_span *py = h->python.data, *ops = h->ops.data;
	struct gw_kin_call *calls = h->calls.data;
	struct gw_src_vec open_py = {0}, open_ops = {0};
	size_t pi = 0, oi = 0, ci = 0;
	int r = 0;

	while (ci < h->calls.len) {
		uint32_t t = calls[ci].tidx;
		int64_t thread_dev = h->device0;

		open_py.len = open_ops.len = 0;
		while (pi < h->python.len && py[pi].tidx < t)
			pi++;
		while (oi < h->ops.len && ops[oi].tidx < t)
			oi++;
		size_t pn = pi, on = oi;

		while (pn < h->python.len && py[pn].tidx == t)
			pn++;
		while (on < h->ops.len && ops[on].tidx == t)
			on++;
		for (; ci < h->calls.len && calls[ci].tidx == t; ci++) {
			struct gw_kin_call *c = &calls[ci];
			const struct open_span *o;

			if ((r = advance(h, py, pn, &pi, &open_py, c->start_ns, true)) < 0 ||
			    (r = advance(h, ops, on, &oi, &open_ops, c->start_ns, false)) < 0)
				goto out;
			/* Python's innermost function; else the outermost operator that knows its
			 * Python stack, else the outermost operator: the one user code called. */
			if (open_py.len) {
				c->node = ((struct open_span *)open_py.data)[open_py.len - 1].node;
			} else if (open_ops.len) {
				o = open_ops.data;
				c->node = o[0].node;
				for (size_t k = 0; k < open_ops.len; k++)
					if (o[k].flags & GW_KIN_SPAN_CALLSTACK) {
						c->node = o[k].node;
						break;
					}
			}
			if (c->type == GW_REC_API)
				c->device = (int32_t)call_device(h, c, &thread_dev);
		}
		pi = pn;
		oi = on;
	}
out:
	gw_src_vec_free(&open_py);
	gw_src_vec_free(&open_ops);
	return r;
}

int gw_kin_host_finish(struct gw_kin_host *h, struct gw_kin_strings *s, struct gw_kin_out *o)
{
	const struct gw_kin_thread *t;
	int r;

	gw_src_vec_sort_grouped(&h->python, sizeof(struct gw_kin_span),
				offsetof(struct gw_kin_span, tidx), cmp_span);
	gw_src_vec_sort_grouped(&h->ops, sizeof(struct gw_kin_span),
				offsetof(struct gw_kin_span, tidx), cmp_span);
	gw_src_vec_sort_grouped(&h->calls, sizeof(struct gw_kin_call),
				offsetof(struct gw_kin_call, tidx), cmp_call);
	gw_src_vec_sort(&h->sync_devs, sizeof(struct gw_kin_corr_dev), cmp_corr_dev);
	gw_src_vec_sort(&h->other_devs, sizeof(struct gw_kin_corr_dev), cmp_corr_dev);
	if ((r = sweep(h)) < 0)
		return r;
	/* What only the sweep needed. */
	gw_src_vec_free(&h->python);
	gw_src_vec_free(&h->ops);
	gw_src_map_free(&h->node_map);
	gw_src_map_free(&h->frame_map);
	gw_src_map_free(&h->callstack_map);
	t = h->threads.data;
	for (size_t i = 0; i < h->threads.len; i++) {
		const uint32_t *name = gw_src_map_find(&h->thread_names, (uint64_t)t[i].tid, 0);
		const struct gw_src_string *e = name ? gw_src_strtab_get(&s->tab, *name) : NULL;
		struct gw_record *rec = e ? gw_kin_push_data(o, GW_REC_THREAD,
							     gw_src_strtab_text(&s->tab, e), e->len)
					  : gw_kin_push(o, GW_REC_THREAD);

		if (!rec)
			return -ENOMEM;
		rec->thread.time_ns = t[i].first_ns;
		rec->thread.tid = (uint64_t)t[i].tid;
	}
	return 0;
}

/* The STACK record id of a node, queued with its frames (and their strings) the first time. */
static int emit_stack(struct gw_kin_host *h, struct gw_kin_strings *s, struct gw_kin_out *o,
		      uint32_t node, uint32_t *ret_id)
{
	struct gw_kin_node *nodes = h->nodes.data;
	struct gw_kin_frame *frames = h->frames.data;
	uint64_t ips[GW_MAX_STACK_DEPTH];
	struct gw_record *rec;
	unsigned n = 0;
	int r;

	if (nodes[node - 1].stack_id) {
		*ret_id = nodes[node - 1].stack_id;
		return 0;
	}
	/* innermost first; a deeper stack keeps its innermost frames */
	for (uint32_t x = node; x && n < GW_MAX_STACK_DEPTH; x = nodes[x - 1].parent) {
		struct gw_kin_frame *f = &frames[nodes[x - 1].frame - 1];

		ips[n++] = nodes[x - 1].frame;
		if (f->emitted)
			continue;
		if ((r = gw_kin_emit_string(s, o, f->function_id, GW_STRING_OTHER)) < 0 ||
		    (f->file_id && (r = gw_kin_emit_string(s, o, f->file_id, GW_STRING_OTHER)) < 0))
			return r;
		rec = gw_kin_push(o, GW_REC_FRAME);
		if (!rec)
			return -ENOMEM;
		rec->frame.id = nodes[x - 1].frame;
		rec->frame.lang = f->lang;
		rec->frame.function_id = f->function_id;
		rec->frame.file_id = f->file_id;
		rec->frame.line = f->line;
		f->emitted = true;
	}
	rec = gw_kin_push_data(o, GW_REC_STACK, ips, n);
	if (!rec)
		return -ENOMEM;
	rec->stack.id = ++h->next_stack_id;
	rec->stack.ips_kind = GW_STACK_FRAMES;
	nodes[node - 1].stack_id = (uint32_t)rec->stack.id;
	*ret_id = nodes[node - 1].stack_id;
	return 0;
}

int gw_kin_host_emit(struct gw_kin_host *h, struct gw_kin_strings *s, struct gw_kin_out *o)
{
	const struct gw_kin_thread *threads = h->threads.data;
	unsigned n = 0;
	int r;

	for (; h->emit_at < h->calls.len && n < GW_KIN_EMIT_BATCH; h->emit_at++, n++) {
		const struct gw_kin_call *c = &((struct gw_kin_call *)h->calls.data)[h->emit_at];
		uint64_t tid = (uint64_t)threads[c->tidx].tid;
		uint32_t stack_id = 0;
		struct gw_record *rec;

		if (c->node && (r = emit_stack(h, s, o, c->node, &stack_id)) < 0)
			return r;
		if (c->type == GW_REC_API) {
			rec = gw_kin_push(o, GW_REC_API);
			if (!rec)
				return -ENOMEM;
			rec->api.tid = tid;
			rec->api.start_ns = c->start_ns;
			rec->api.end_ns = c->end_ns;
			rec->api.correlation = c->corr;
			rec->api.category = c->category;
			rec->api.sync_kind = c->sync_kind;
			rec->api.domain = c->domain;
			rec->api.cbid = c->cbid;
			rec->api.name_id = c->name_id;
			rec->api.stack_id = stack_id;
			rec->api.device = c->device < 0 ? 0 : (uint64_t)c->device;
		} else {
			rec = gw_kin_push(o, GW_REC_MEMORY);
			if (!rec)
				return -ENOMEM;
			rec->memory.time_ns = c->start_ns;
			rec->memory.op = c->category;
			rec->memory.mem_kind = GW_MEM_TENSOR;
			rec->memory.tid = tid;
			rec->memory.device = c->device < 0 ? 0 : (uint64_t)c->device;
			rec->memory.address = c->corr;
			rec->memory.bytes = c->bytes;
			rec->memory.stack_id = stack_id;
		}
	}
	return h->emit_at < h->calls.len;
}

void gw_kin_host_free(struct gw_kin_host *h)
{
	gw_src_vec_free(&h->threads);
	gw_src_map_free(&h->thread_map);
	gw_src_map_free(&h->thread_names);
	gw_src_vec_free(&h->python);
	gw_src_vec_free(&h->ops);
	gw_src_vec_free(&h->calls);
	gw_src_vec_free(&h->frames);
	gw_src_map_free(&h->frame_map);
	gw_src_vec_free(&h->nodes);
	gw_src_map_free(&h->node_map);
	gw_src_map_free(&h->callstack_map);
	gw_src_vec_free(&h->sync_devs);
	gw_src_vec_free(&h->other_devs);
}
