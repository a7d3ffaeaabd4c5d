/* SPDX-License-Identifier: MIT */
/* The NVTX injection fed by a stand-in NVTX instance: every range a RANGE record, with its
 * nesting, domain, registered name and threads; names cut and converted; lost ranges counted. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include <cmocka.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "capture-state.h"
#include "intern.h"
#include "nvtx.h"
#include "trace-reader.h"
#include "trace-writer.h"

#include "capture-test-util.h"

#define MAX_RECS 128

/* ---- a stand-in NVTX instance: the tables the injection fills ---- */

static NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE], core2[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_slots[NVTX_CBID_CORE_SIZE], *core2_slots[NVTX_CBID_CORE2_SIZE];

static int NVTX_API get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned *size)
{
	if (m == NVTX_CB_MODULE_CORE) {
		for (unsigned i = 0; i < NVTX_CBID_CORE_SIZE; i++)
			core_slots[i] = &core[i];
		*out = core_slots;
		*size = NVTX_CBID_CORE_SIZE;
		return 1;
	}
	if (m == NVTX_CB_MODULE_CORE2) {
		for (unsigned i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
			core2_slots[i] = &core2[i];
		*out = core2_slots;
		*size = NVTX_CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static const NvtxExportTableCallbacks callbacks = {sizeof(callbacks), get_module};

static const void *NVTX_API get_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

#define CALL(table, id, type) ((type)(table)[id])
#define PUSH_A(s)	      CALL(core, NVTX_CBID_CORE_RangePushA, nvtxRangePushA_impl_fntype)(s)
#define PUSH_W(s)	      CALL(core, NVTX_CBID_CORE_RangePushW, nvtxRangePushW_impl_fntype)(s)
#define POP()		      CALL(core, NVTX_CBID_CORE_RangePop, nvtxRangePop_impl_fntype)()
#define MARK_A(s)	      CALL(core, NVTX_CBID_CORE_MarkA, nvtxMarkA_impl_fntype)(s)
#define START_A(s)	      CALL(core, NVTX_CBID_CORE_RangeStartA, nvtxRangeStartA_impl_fntype)(s)
#define END(id)		      CALL(core, NVTX_CBID_CORE_RangeEnd, nvtxRangeEnd_impl_fntype)(id)
#define DOMAIN_CREATE(s)                                                                           \
	CALL(core2, NVTX_CBID_CORE2_DomainCreateA, nvtxDomainCreateA_impl_fntype)(s)
#define REGISTER(d, s)                                                                             \
	CALL(core2, NVTX_CBID_CORE2_DomainRegisterStringA, nvtxDomainRegisterStringA_impl_fntype)  \
	(d, s)
#define DOMAIN_PUSH(d, a)                                                                          \
	CALL(core2, NVTX_CBID_CORE2_DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(d, a)
#define DOMAIN_POP(d) CALL(core2, NVTX_CBID_CORE2_DomainRangePop, nvtxDomainRangePop_impl_fntype)(d)

/* ---- the trace the ranges go to ---- */

struct range {
	struct gw_rec_range r;
	char name[300];
};

static char trace_path[64];
static struct range ranges[MAX_RECS];
static char strings[MAX_RECS][64];
static uint64_t string_kind[MAX_RECS];
static char notes[4][512];
static unsigned nranges, nnotes;

static void start(void)
{
	gw_test_capture_start(trace_path, sizeof(trace_path), "nvtx");
}

static void finish(void)
{
	struct gw_reader *r;
	struct gw_record rec;

	atomic_store(&gw_capture_on, false);
	assert_int_equal(gw_writer_stop(true, 0), 0);
	assert_int_equal(gw_reader_open(trace_path, &r), 0);
	nranges = nnotes = 0;
	memset(strings, 0, sizeof(strings));
	while (gw_reader_next(r, &rec) == 1) {
		if (rec.type == GW_REC_RANGE && nranges < MAX_RECS) {
			struct range *g = &ranges[nranges++];

			g->r = rec.range;
			snprintf(g->name, sizeof(g->name), "%.*s", (int)rec.range.name.len,
				 (const char *)rec.range.name.data);
		} else if (rec.type == GW_REC_STRING && rec.string.id < MAX_RECS) {
			snprintf(strings[rec.string.id], sizeof(strings[0]), "%.*s",
				 (int)rec.string.text.len, (const char *)rec.string.text.data);
			string_kind[rec.string.id] = rec.string.kind;
		} else if (rec.type == GW_REC_NOTE && nnotes < 4) {
			snprintf(notes[nnotes++], sizeof(notes[0]), "%.*s", (int)rec.note.text.len,
				 (const char *)rec.note.text.data);
		}
	}
	gw_reader_free(r);
	unlink(trace_path);
}

static const struct range *named(const char *name)
{
	for (unsigned i = 0; i < nranges; i++)
		if (!strcmp(ranges[i].name, name))
			return &ranges[i];
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(gw_nvtx_attach(get_table), 1);
	assert_non_null(core[NVTX_CBID_CORE_RangePushA]);
	assert_non_null(core2[NVTX_CBID_CORE2_DomainCreateA]);
	assert_int_equal(gw_nvtx_attached(), 1);
	return 0;
}

/* push/pop nests per thread: the inner range's depth is 1, both on this thread. */
static void nesting(void **state)
{
	const struct range *s, *f;

	(void)state;
	start();
	assert_int_equal(PUSH_A("step 1"), 0);
	assert_int_equal(PUSH_A("forward"), 1);
	assert_int_equal(POP(), 1);
	assert_int_equal(POP(), 0);
	assert_int_equal(POP(), -1); /* nothing open */
	finish();
	assert_int_equal(nranges, 2);
	s = named("step 1");
	f = named("forward");
	assert_true(s && f);
	assert_int_equal(s->r.kind, GW_RANGE_PUSH_POP);
	assert_int_equal(s->r.depth, 0);
	assert_int_equal(f->r.depth, 1);
	assert_int_equal(s->r.tid, (uint64_t)syscall(SYS_gettid));
	assert_true(s->r.start_ns <= f->r.start_ns && f->r.end_ns <= s->r.end_ns);
	assert_true(f->r.start_ns < f->r.end_ns);
}

/* A domain nests on its own; its name and a registered name are STRING records. */
static void domains_and_registered_names(void **state)
{
	nvtxDomainHandle_t d, again;
	nvtxEventAttributes_t a = {0};
	const struct range *x, *y;

	(void)state;
	d = DOMAIN_CREATE("dom");
	again = DOMAIN_CREATE("dom");
	assert_non_null(d);
	assert_ptr_equal(d, again);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 7;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = REGISTER(d, "setup");
	assert_non_null(a.message.registered);
	start();
	PUSH_A("outer");
	assert_int_equal(DOMAIN_PUSH(d, &a), 1); /* one range open on the thread below it */
	assert_int_equal(POP(), 0);		 /* ends "outer", the default domain's */
	assert_int_equal(DOMAIN_POP(d), 0);	 /* ends "setup", its own */
	finish();
	assert_int_equal(nranges, 2);
	x = named("outer");
	y = named("");
	assert_true(x && y);
	assert_true(x->r.end_ns <= y->r.end_ns);
	assert_int_equal(x->r.domain_id, 0);
	assert_true(y->r.name_id && y->r.name_id < MAX_RECS && y->r.domain_id < MAX_RECS);
	assert_string_equal(strings[y->r.name_id], "setup");
	assert_int_equal(string_kind[y->r.name_id], GW_STRING_RANGE);
	assert_string_equal(strings[y->r.domain_id], "dom");
	assert_int_equal(string_kind[y->r.domain_id], GW_STRING_DOMAIN);
	assert_int_equal(y->r.category, 7);
	assert_int_equal(y->r.depth, 0); /* no range of its domain around it */
}

static nvtxRangeId_t shared_id;
static uint64_t ender_tid;

static void *ender(void *arg)
{
	(void)arg;
	ender_tid = (uint64_t)syscall(SYS_gettid);
	END(shared_id);
	return NULL;
}

/* A start/end range ended on another thread; a mark; an end of nothing. */
static void start_end_and_marks(void **state)
{
	pthread_t t;
	const struct range *r, *m;

	(void)state;
	start();
	shared_id = START_A("load");
	assert_true(shared_id != 0);
	assert_int_equal(pthread_create(&t, NULL, ender, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	END(shared_id); /* ended already: nothing */
	MARK_A("here");
	finish();
	assert_int_equal(nranges, 2);
	r = named("load");
	m = named("here");
	assert_true(r && m);
	assert_int_equal(r->r.kind, GW_RANGE_START_END);
	assert_int_equal(r->r.tid, (uint64_t)syscall(SYS_gettid));
	assert_int_equal(r->r.end_tid, ender_tid);
	assert_int_equal(m->r.kind, GW_RANGE_MARK);
	assert_int_equal(m->r.start_ns, m->r.end_ns);
}

/* Names: cut at 128 bytes on a character boundary, flagged; wide strings as UTF-8. */
static void names(void **state)
{
	char longname[300];
	const struct range *r;

	(void)state;
	memset(longname, 'a', 127);
	memcpy(longname + 127, "\xc3\xa9tail", 7); /* an é across byte 128 */
	start();
	PUSH_A(longname);
	POP();
	PUSH_W(L"\u00fcber \u03bb \U0001F600");
	POP();
	finish();
	assert_int_equal(nranges, 2);
	assert_int_equal(strlen(ranges[0].name), 127);
	assert_int_equal(ranges[0].r.flags, GW_RANGE_NAME_CUT);
	r = named("\xc3\xbc"
		  "ber \xce\xbb \xf0\x9f\x98\x80");
	assert_non_null(r);
	assert_int_equal(r->r.flags, 0);
}

/* Ranges open while capture is off are kept: one that ends after capture starts is recorded;
 * one entirely before is not. 40 ranges deep: the 32 outermost recorded, the rest counted. */
static void capture_off_and_too_deep(void **state)
{
	int depth = 0;

	(void)state;
	PUSH_A("before");
	POP();
	PUSH_A("across");
	start();
	POP();
	for (int i = 0; i < 40; i++)
		depth = PUSH_A("deep");
	assert_int_equal(depth, 39);
	for (int i = 0; i < 40; i++)
		POP();
	gw_nvtx_exit_notes();
	finish();
	assert_null(named("before"));
	assert_non_null(named("across"));
	assert_int_equal(nranges, 1 + 32);
	assert_int_equal(nnotes, 1);
	assert_non_null(strstr(notes[0], "8 nested deeper than 32"));
	assert_non_null(strstr(notes[0], "1 ends of ranges that were not open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nesting),
		cmocka_unit_test(domains_and_registered_names),
		cmocka_unit_test(start_end_and_marks),
		cmocka_unit_test(names),
		cmocka_unit_test(capture_off_and_too_deep),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
