/* SPDX-License-Identifier: MIT */
/* NVTX ranges, marks, domains and registered strings into RANGE records (the NVTX injection). */
#include "nvtx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <gpuwhy/trace-format.h>

#include "capture-state.h"
#include "clock.h"
#include "intern.h"
#include "trace-writer.h"

/*
 * A range's name is copied when it opens (NVTX's message lives only during the call) into the
 * opening thread's stack of open ranges, and written with the range when it ends: one record a
 * range, no allocation, no lock. Names are not interned: a framework that names every range
 * after its operator and sequence number would fill the id table; registered strings are.
 */
#define NAME_MAX_BYTES 128  /* a name's bytes kept, cut at a character boundary */
#define THREAD_DEPTH   32   /* push/pop ranges open on one thread, all domains */
#define THREADS	       256  /* threads with push/pop ranges open at once */
#define SLOTS	       1024 /* start/end ranges open at once (a power of two) */
#define DOMAINS	       256
#define DOMAIN_NAME    64
#define ARENA_BYTES    (256u << 10) /* registered strings */
#define BUSY	       UINT64_MAX   /* a start/end slot being written or read */

struct domain {
	char name[DOMAIN_NAME];
};

struct reg_string {
	uint16_t len;
	char text[]; /* NUL-terminated */
};

struct open_range {
	uint64_t start_ns;
	const struct domain *domain;   /* NULL: the default domain */
	const struct reg_string *name; /* a registered name, else text */
	uint32_t category;
	uint16_t len;
	uint8_t flags; /* GW_RANGE_* */
	char text[NAME_MAX_BYTES];
};

struct thread_ranges {
	_Atomic bool taken;
	uint32_t depth; /* open ranges, counting those too deep to keep */
	struct open_range r[THREAD_DEPTH];
};

struct slot {
	_Atomic uint64_t id; /* the open range's id, 0 free, BUSY in use */
	uint64_t tid;
	struct open_range r;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool ready;
static _Atomic int attached;
static pthread_key_t thread_key;
static struct thread_ranges *pool;
static struct slot *slots;
static char *arena;
static _Atomic size_t arena_used;
static struct domain domains[DOMAINS];
static _Atomic unsigned n_domains;
static _Atomic uint64_t next_id;
/* Ranges lost, by why: too deep, no stack left, start/end table full, end of an unknown id. */
static _Atomic uint64_t lost_deep, lost_threads, lost_slots, lost_unknown;

static __thread __attribute__((tls_model("initial-exec"))) struct thread_ranges *mine;
static __thread __attribute__((tls_model("initial-exec"))) bool inside;

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void thread_gone(void *p)
{
	struct thread_ranges *t = p;

	t->depth = 0;
	atomic_store_explicit(&t->taken, false, memory_order_release);
}

static void init(void)
{
	if (pthread_key_create(&thread_key, thread_gone) != 0)
		return;
	pool = map(THREADS * sizeof(*pool));
	slots = map(SLOTS * sizeof(*slots));
	arena = map(ARENA_BYTES);
	ready = pool && slots && arena;
}

/* The calling thread's stack of open push/pop ranges, claimed at its first push. */
static struct thread_ranges *thread_stack(void)
{
	if (mine)
		return mine;
	for (unsigned i = 0; i < THREADS; i++) {
		bool no = false;

		if (atomic_load_explicit(&pool[i].taken, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&pool[i].taken, &no, true))
			continue;
		pool[i].depth = 0;
		mine = &pool[i];
		pthread_setspecific(thread_key, mine);
		return mine;
	}
	return NULL;
}

static uint64_t thread_id(void)
{
	return gw_capturing() ? gw_thread_id() : (uint64_t)syscall(SYS_gettid);
}

/* Cuts n bytes of UTF-8 at a character boundary at most max bytes long. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	n = max;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static void set_ascii(struct open_range *o, const char *s)
{
	size_t n = s ? strnlen(s, NAME_MAX_BYTES + 1) : 0;
	size_t k = utf8_cut(s, n, NAME_MAX_BYTES);

	o->name = NULL;
	o->flags = k < n ? GW_RANGE_NAME_CUT : 0;
	o->len = (uint16_t)k;
	if (k)
		memcpy(o->text, s, k);
}

/* A wide string (UTF-32 here) as UTF-8; a code point that is none becomes U+FFFD. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap, bool *cut)
{
	size_t n = 0;

	*cut = false;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char b[4];
		size_t k;

		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		if (c < 0x80) {
			b[0] = (char)c, k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f)), k = 3;
		} else {
			b[0] = (char)(0xf0 | c >> 18), b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k > cap) {
			*cut = true;
			break;
		}
		memcpy(out + n, b, k);
		n += k;
	}
	return n;
}

static void set_wide(struct open_range *o, const wchar_t *w)
{
	bool cut;

	o->name = NULL;
	o->len = (uint16_t)wide_to_utf8(w, o->text, NAME_MAX_BYTES, &cut);
	o->flags = cut ? GW_RANGE_NAME_CUT : 0;
}

static void set_attributes(struct open_range *o, const nvtxEventAttributes_t *a)
{
	o->category = 0;
	o->len = 0;
	o->flags = 0;
	o->name = NULL;
	/* fields past what the caller's version of the struct has are not read */
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return;
	o->category = a->category;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		set_ascii(o, a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		set_wide(o, a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		o->name = (const struct reg_string *)a->message.registered;
		break;
	default:
		break;
	}
}

static void emit(const struct open_range *o, unsigned kind, uint64_t tid, uint64_t end_tid,
		 uint64_t end_ns, uint32_t depth)
{
	struct gw_rec_range rec = {
		.tid = tid,
		.start_ns = o->start_ns,
		.end_ns = end_ns,
		.kind = kind,
		.depth = depth,
		.category = o->category,
		.end_tid = end_tid != tid ? end_tid : 0,
		.flags = o->flags,
	};

	if (o->domain)
		rec.domain_id = gw_intern_string_static(GW_STRING_DOMAIN, o->domain->name);
	if (o->name)
		rec.name_id = gw_intern_string_static(GW_STRING_RANGE, o->name->text);
	else
		rec.name = (struct gw_bytes){(const uint8_t *)o->text, o->len};
	gw_emit(GW_REC_RANGE, &rec);
}

/* ---- push/pop ---- */

/* Opens a push/pop range on this thread; the caller fills its name. Returns it, or NULL when
 * it is not kept (too deep, no stack), *depth the range's level. */
static struct open_range *push(const struct domain *d, int *depth)
{
	struct thread_ranges *t = thread_stack();
	struct open_range *o;

	if (!t) {
		atomic_fetch_add_explicit(&lost_threads, 1, memory_order_relaxed);
		*depth = 0;
		return NULL;
	}
	*depth = (int)t->depth;
	if (t->depth++ >= THREAD_DEPTH)
		return NULL;
	o = &t->r[t->depth - 1];
	o->start_ns = gw_now_ns();
	o->domain = d;
	return o;
}

static int pop(const struct domain *d)
{
	struct thread_ranges *t = mine;
	uint64_t end = gw_now_ns();
	uint32_t kept, same = 0;
	int i;

	if (!t || !t->depth)
		return -1; /* a pop without its push */
	kept = t->depth < THREAD_DEPTH ? t->depth : THREAD_DEPTH;
	if (t->depth > THREAD_DEPTH) {
		/* the innermost was too deep to keep */
		t->depth--;
		atomic_fetch_add_explicit(&lost_deep, 1, memory_order_relaxed);
		return (int)t->depth;
	}
	/* each domain nests on its own: the innermost range of this domain ends */
	for (i = (int)kept - 1; i >= 0 && t->r[i].domain != d; i--)
		;
	if (i < 0)
		return -1;
	for (int k = 0; k < i; k++)
		same += t->r[k].domain == d;
	if (gw_capturing()) {
		uint64_t tid = gw_thread_id();

		emit(&t->r[i], GW_RANGE_PUSH_POP, tid, tid, end, same);
	}
	if (i < (int)kept - 1)
		memmove(&t->r[i], &t->r[i + 1], (kept - 1 - (unsigned)i) * sizeof(t->r[0]));
	t->depth--;
	return (int)same;
}

#define GUARD(fail)                                                                                \
	do {                                                                                       \
		if (inside)                                                                        \
			return fail;                                                               \
		inside = true;                                                                     \
	} while (0)
#define UNGUARD() (inside = false)

static int push_a(const char *message)
{
	struct open_range *o;
	int depth;

	GUARD(-1);
	if ((o = push(NULL, &depth))) {
		o->category = 0;
		set_ascii(o, message);
	}
	UNGUARD();
	return depth;
}

static int push_w(const wchar_t *message)
{
	struct open_range *o;
	int depth;

	GUARD(-1);
	if ((o = push(NULL, &depth))) {
		o->category = 0;
		set_wide(o, message);
	}
	UNGUARD();
	return depth;
}

static int domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
	struct open_range *o;
	int depth;

	GUARD(-1);
	if ((o = push((const struct domain *)domain, &depth)))
		set_attributes(o, a);
	UNGUARD();
	return depth;
}

static int push_ex(const nvtxEventAttributes_t *a)
{
	return domain_push_ex(NULL, a);
}

static int domain_pop(nvtxDomainHandle_t domain)
{
	int r;

	GUARD(-1);
	r = pop((const struct domain *)domain);
	UNGUARD();
	return r;
}

static int pop_default(void)
{
	return domain_pop(NULL);
}

/* ---- start/end ---- */

/* Opens a start/end range in the table: its id (never 0), with o pointing to fill the name. */
static nvtxRangeId_t start(const struct domain *d, struct open_range **o)
{
	uint64_t id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
	struct slot *s = &slots[id & (SLOTS - 1)];
	uint64_t old = atomic_load_explicit(&s->id, memory_order_relaxed);

	*o = NULL;
	if (old == BUSY || !atomic_compare_exchange_strong(&s->id, &old, BUSY)) {
		atomic_fetch_add_explicit(&lost_slots, 1, memory_order_relaxed);
		return id;
	}
	if (old) /* an older range never ended: its slot is needed */
		atomic_fetch_add_explicit(&lost_slots, 1, memory_order_relaxed);
	s->tid = thread_id();
	s->r.start_ns = gw_now_ns();
	s->r.domain = d;
	*o = &s->r;
	return id;
}

static void publish(nvtxRangeId_t id, struct open_range *o)
{
	if (o)
		atomic_store_explicit(&slots[id & (SLOTS - 1)].id, id, memory_order_release);
}

static nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
	struct open_range *o;
	nvtxRangeId_t id;

	GUARD(0);
	id = start((const struct domain *)domain, &o);
	if (o)
		set_attributes(o, a);
	publish(id, o);
	UNGUARD();
	return id;
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	return domain_start_ex(NULL, a);
}

static nvtxRangeId_t start_a(const char *message)
{
	struct open_range *o;
	nvtxRangeId_t id;

	GUARD(0);
	id = start(NULL, &o);
	if (o) {
		o->category = 0;
		set_ascii(o, message);
	}
	publish(id, o);
	UNGUARD();
	return id;
}

static nvtxRangeId_t start_w(const wchar_t *message)
{
	struct open_range *o;
	nvtxRangeId_t id;

	GUARD(0);
	id = start(NULL, &o);
	if (o) {
		o->category = 0;
		set_wide(o, message);
	}
	publish(id, o);
	UNGUARD();
	return id;
}

static void domain_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
	struct slot *s;
	uint64_t want = id, end = gw_now_ns();

	(void)domain; /* the id alone names the range */
	GUARD();
	s = &slots[id & (SLOTS - 1)];
	if (!id || !atomic_compare_exchange_strong(&s->id, &want, BUSY)) {
		atomic_fetch_add_explicit(&lost_unknown, 1, memory_order_relaxed);
	} else {
		if (gw_capturing())
			emit(&s->r, GW_RANGE_START_END, s->tid, gw_thread_id(), end, 0);
		atomic_store_explicit(&s->id, 0, memory_order_release);
	}
	UNGUARD();
}

static void end_default(nvtxRangeId_t id)
{
	domain_end(NULL, id);
}

/* ---- marks ---- */

static void mark(const struct open_range *o)
{
	if (gw_capturing()) {
		uint64_t tid = gw_thread_id();

		emit(o, GW_RANGE_MARK, tid, tid, o->start_ns, 0);
	}
}

static void domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
	struct open_range o;

	GUARD();
	o.start_ns = gw_now_ns();
	o.domain = (const struct domain *)domain;
	set_attributes(&o, a);
	mark(&o);
	UNGUARD();
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	domain_mark_ex(NULL, a);
}

static void mark_a(const char *message)
{
	struct open_range o;

	GUARD();
	o.start_ns = gw_now_ns();
	o.domain = NULL;
	o.category = 0;
	set_ascii(&o, message);
	mark(&o);
	UNGUARD();
}

static void mark_w(const wchar_t *message)
{
	struct open_range o;

	GUARD();
	o.start_ns = gw_now_ns();
	o.domain = NULL;
	o.category = 0;
	set_wide(&o, message);
	mark(&o);
	UNGUARD();
}

/* ---- domains and registered strings (rare: no hot path) ---- */

static nvtxDomainHandle_t domain_create(const char *name, size_t len)
{
	unsigned n = atomic_load(&n_domains), i;

	len = utf8_cut(name, len, DOMAIN_NAME - 1);
	for (i = 0; i < n && i < DOMAINS; i++)
		if (strlen(domains[i].name) == len && !memcmp(domains[i].name, name, len))
			return (nvtxDomainHandle_t)&domains[i];
	i = atomic_fetch_add(&n_domains, 1);
	if (i >= DOMAINS)
		return NULL; /* its ranges count as the default domain's */
	memcpy(domains[i].name, name, len);
	domains[i].name[len] = '\0';
	return (nvtxDomainHandle_t)&domains[i];
}

static nvtxDomainHandle_t domain_create_a(const char *name)
{
	return name ? domain_create(name, strnlen(name, DOMAIN_NAME)) : NULL;
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
	char buf[DOMAIN_NAME];
	bool cut;

	return name ? domain_create(buf, wide_to_utf8(name, buf, sizeof(buf) - 1, &cut)) : NULL;
}

static nvtxStringHandle_t register_string(const char *text, size_t len)
{
	size_t need = (offsetof(struct reg_string, text) + len + 1 + 7) & ~(size_t)7;
	size_t at = atomic_fetch_add(&arena_used, need);
	struct reg_string *s;

	if (at + need > ARENA_BYTES)
		return NULL;
	s = (struct reg_string *)(arena + at);
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	s->len = (uint16_t)len;
	return (nvtxStringHandle_t)s;
}

static nvtxStringHandle_t register_string_a(nvtxDomainHandle_t domain, const char *text)
{
	size_t n = text ? strnlen(text, GW_RANGE_NAME_MAX + 1) : 0;

	(void)domain;
	return register_string(text ? text : "", utf8_cut(text, n, GW_RANGE_NAME_MAX));
}

static nvtxStringHandle_t register_string_w(nvtxDomainHandle_t domain, const wchar_t *text)
{
	char buf[GW_RANGE_NAME_MAX];
	bool cut;

	(void)domain;
	return register_string(buf, wide_to_utf8(text, buf, sizeof(buf), &cut));
}

static void domain_destroy(nvtxDomainHandle_t domain)
{
	(void)domain; /* kept: records of the domain's ranges still name it */
}

static void initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- attaching to an NVTX instance ---- */

#define SET(table, size, id, fn)                                                                   \
	do {                                                                                       \
		if ((unsigned)(id) < (size) && (table)[id])                                        \
			*(table)[id] = (NvtxFunctionPointer)(fn);                                  \
	} while (0)

int gw_nvtx_attach(const void *(*get_export_table)(uint32_t id))
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;
	NvtxFunctionTable t;
	unsigned n;

	pthread_once(&once, init);
	if (!ready || !get_export_table)
		return 1;
	cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 1;
	vi = get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
		SET(t, n, NVTX_CBID_CORE_MarkEx, mark_ex);
		SET(t, n, NVTX_CBID_CORE_MarkA, mark_a);
		SET(t, n, NVTX_CBID_CORE_MarkW, mark_w);
		SET(t, n, NVTX_CBID_CORE_RangeStartEx, start_ex);
		SET(t, n, NVTX_CBID_CORE_RangeStartA, start_a);
		SET(t, n, NVTX_CBID_CORE_RangeStartW, start_w);
		SET(t, n, NVTX_CBID_CORE_RangeEnd, end_default);
		SET(t, n, NVTX_CBID_CORE_RangePushEx, push_ex);
		SET(t, n, NVTX_CBID_CORE_RangePushA, push_a);
		SET(t, n, NVTX_CBID_CORE_RangePushW, push_w);
		SET(t, n, NVTX_CBID_CORE_RangePop, pop_default);
	}
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
		SET(t, n, NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex);
		SET(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start_ex);
		SET(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domain_end);
		SET(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domain_push_ex);
		SET(t, n, NVTX_CBID_CORE2_DomainRangePop, domain_pop);
		SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a);
		SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w);
		SET(t, n, NVTX_CBID_CORE2_DomainCreateA, domain_create_a);
		SET(t, n, NVTX_CBID_CORE2_DomainCreateW, domain_create_w);
		SET(t, n, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
		SET(t, n, NVTX_CBID_CORE2_Initialize, initialize);
	}
	atomic_store(&attached, 1);
	return 1;
}

int gw_nvtx_attached(void)
{
	return atomic_load(&attached);
}

void gw_nvtx_exit_notes(void)
{
	uint64_t deep = atomic_load(&lost_deep), threads = atomic_load(&lost_threads);
	uint64_t full = atomic_load(&lost_slots), unknown = atomic_load(&lost_unknown);
	char text[400];
	struct gw_rec_note note;

	if (!deep && !threads && !full && !unknown)
		return;
	snprintf(text, sizeof(text),
		 "NVTX ranges not recorded: %llu nested deeper than %d, %llu on threads past the "
		 "first %d with ranges open, %llu past %d start/end ranges open at once, %llu "
		 "ends of ranges that were not open",
		 (unsigned long long)deep, THREAD_DEPTH, (unsigned long long)threads, THREADS,
		 (unsigned long long)full, SLOTS, (unsigned long long)unknown);
	note = (struct gw_rec_note){
		.time_ns = gw_now_ns(),
		.level = GW_NOTE_WARNING,
		.text = {(const uint8_t *)text, (uint32_t)strlen(text)},
	};
	gw_emit(GW_REC_NOTE, &note);
}

void gw_nvtx_fork_child(void)
{
	/* only this thread is left: the others' stacks are free again */
	for (unsigned i = 0; pool && i < THREADS; i++)
		if (&pool[i] != mine)
			thread_gone(&pool[i]);
}
