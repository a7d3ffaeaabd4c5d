/* SPDX-License-Identifier: MIT */
/* The kineto source on small hand-written torch.profiler traces: what maps to what. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "source.h"

/* A record kept with copies of its text and stack. */
struct rec {
	struct gw_record r;
	char *text; /* STRING text, THREAD / DEVICE name, NOTE text; NUL-terminated */
	uint64_t *ips;
};

struct read {
	struct rec *v;
	size_t n;
	int err;
	bool truncated;
	char reason[256];
};

static char tmp_dir[] = "/tmp/gw-test-kineto-XXXXXX";

static const char *write_file(const char *name, const void *data, size_t len, bool gzip)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	if (gzip) {
		gzFile g = gzopen(path, "wb");

		assert_non_null(g);
		assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
		assert_int_equal(gzclose(g), Z_OK);
		return path;
	}
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

static void read_path(const char *path, const char *format, struct read *out)
{
	struct gw_source *s = NULL;
	struct gw_record r;
	int k;

	memset(out, 0, sizeof(*out));
	k = gw_source_open(path, format ? gw_source_type_by_name(format) : NULL, &s);
	if (k < 0) {
		out->err = k;
		snprintf(out->reason, sizeof(out->reason), "%s", gw_source_strerror(k));
		return;
	}
	while ((k = gw_source_next(s, &r)) > 0) {
		struct rec *e;
		const struct gw_bytes *b = NULL;

		out->v = realloc(out->v, (out->n + 1) * sizeof(*out->v));
		assert_non_null(out->v);
		e = &out->v[out->n++];
		memset(e, 0, sizeof(*e));
		e->r = r;
		if (r.type == GW_REC_STRING)
			b = &r.string.text;
		else if (r.type == GW_REC_THREAD)
			b = &r.thread.name;
		else if (r.type == GW_REC_DEVICE)
			b = &r.device.name;
		else if (r.type == GW_REC_NOTE)
			b = &r.note.text;
		if (b) {
			/* an empty text may have no bytes at all */
			e->text = b->len ? strndup((const char *)b->data, b->len) : strdup("");
			assert_non_null(e->text);
		}
		if (r.type == GW_REC_STACK) {
			e->ips = calloc(r.stack.ips.depth + 1, sizeof(uint64_t));
			if (r.stack.ips.depth)
				memcpy(e->ips, r.stack.ips.ips,
				       r.stack.ips.depth * sizeof(uint64_t));
		}
	}
	out->err = k;
	if (k < 0)
		snprintf(out->reason, sizeof(out->reason), "%s", gw_source_strerror(k));
	out->truncated = s->truncated;
	gw_source_free(s);
}

static void read_text(const char *json, struct read *out)
{
	read_path(write_file("t.json", json, strlen(json), false), NULL, out);
}

/* Reads {TOP "traceEvents": [EVENT, ...]} (top: members before the events, or ""); the
 * events are the arguments up to NULL. With top NULL, the 2020 format's bare [EVENT, ...]. */
static void read_events(struct read *out, const char *top, ...)
{
	size_t len = 64 + (top ? strlen(top) : 0), n;
	const char *e;
	char *doc;
	va_list ap;

	va_start(ap, top);
	while ((e = va_arg(ap, const char *)))
		len += strlen(e) + 2;
	va_end(ap);
	doc = malloc(len);
	assert_non_null(doc);
	n = (size_t)snprintf(doc, len, top ? "{%s\"traceEvents\": [" : "[", top ? top : "");
	va_start(ap, top);
	for (bool first = true; (e = va_arg(ap, const char *)); first = false)
		n += (size_t)snprintf(doc + n, len - n, "%s%s", first ? "" : ",", e);
	va_end(ap);
	snprintf(doc + n, len - n, top ? "]}" : "]");
	read_text(doc, out);
	free(doc);
}

static void read_free(struct read *rd)
{
	for (size_t i = 0; i < rd->n; i++) {
		free(rd->v[i].text);
		free(rd->v[i].ips);
	}
	free(rd->v);
}

static size_t count(const struct read *rd, uint8_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < rd->n; i++)
		n += rd->v[i].r.type == type;
	return n;
}

/* The k-th record of a type, or NULL. */
static const struct rec *nth(const struct read *rd, uint8_t type, size_t k)
{
	for (size_t i = 0; i < rd->n; i++)
		if (rd->v[i].r.type == type && k-- == 0)
			return &rd->v[i];
	return NULL;
}

static const char *string(const struct read *rd, uint64_t id)
{
	for (size_t i = 0; i < rd->n; i++)
		if (rd->v[i].r.type == GW_REC_STRING && rd->v[i].r.string.id == id)
			return rd->v[i].text;
	return NULL;
}

static const struct gw_rec_frame *frame(const struct read *rd, uint64_t id)
{
	for (size_t i = 0; i < rd->n; i++)
		if (rd->v[i].r.type == GW_REC_FRAME && rd->v[i].r.frame.id == id)
			return &rd->v[i].r.frame;
	return NULL;
}

static const struct rec *stack(const struct read *rd, uint64_t id)
{
	for (size_t i = 0; i < rd->n; i++)
		if (rd->v[i].r.type == GW_REC_STACK && rd->v[i].r.stack.id == id)
			return &rd->v[i];
	return NULL;
}

/* The API record of a correlation id. */
static const struct gw_rec_api *api(const struct read *rd, uint64_t corr)
{
	for (size_t i = 0; i < rd->n; i++)
		if (rd->v[i].r.type == GW_REC_API && rd->v[i].r.api.correlation == corr)
			return &rd->v[i].r.api;
	return NULL;
}

/* A cc-8.6 device 0 (16 blocks per SM), and a device 1 that runs nothing. */
#define DEVPROPS                                                                                   \
	"\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU A\", \"totalGlobalMem\": 1000, "       \
	"\"computeMajor\": 8, \"computeMinor\": 6, \"maxThreadsPerBlock\": 1024, "                 \
	"\"maxThreadsPerMultiprocessor\": 1536, \"regsPerBlock\": 65536, "                         \
	"\"regsPerMultiprocessor\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, "       \
	"\"sharedMemPerMultiprocessor\": 102400, \"numSms\": 84, \"sharedMemPerBlockOptin\": "     \
	"101376}, {\"id\": 1, \"name\": \"GPU B\", \"numSms\": 10, \"computeMajor\": 9, "          \
	"\"computeMinor\": 0}]"

#define KERNEL(ts, dur, corr, name)                                                                \
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" name "\", \"pid\": 0, \"tid\": 7, "    \
	"\"ts\": " ts ", \"dur\": " dur ", \"args\": {\"device\": 0, \"stream\": 7, "              \
	"\"correlation\": " corr ", \"registers per thread\": 40, \"shared memory\": 2048, "       \
	"\"grid\": [4, 2, 1], \"block\": [256, 1, 1]}}"

#define RUNTIME_ON(tid, name, ts, dur, corr)                                                       \
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" name "\", \"pid\": 100, "        \
	"\"tid\": " tid ", \"ts\": " ts ", \"dur\": " dur ", \"args\": {\"cbid\": 211, "           \
	"\"correlation\": " corr "}}"
#define RUNTIME(name, ts, dur, corr) RUNTIME_ON("100", name, ts, dur, corr)

static void test_kernel_and_launch(void **state)
{
	struct read rd;
	const struct gw_rec_kernel *k;
	const struct gw_rec_device *d;
	const struct gw_rec_api *a;

	(void)state;
	read_events(&rd, "\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3}, " DEVPROPS ", ",
		    RUNTIME("cudaLaunchKernel", "10", "4", "5"),
		    KERNEL("20.5", "3.25", "5", "gemm_k"),
		    RUNTIME("cudaEventQuery", "30", "1", "6"), NULL);
	assert_int_equal(rd.err, 0);
	assert_false(rd.truncated);
	assert_int_equal(rd.v[0].r.type, GW_REC_HEADER);
	assert_int_equal(rd.v[0].r.header.capture_mode, GW_CAPTURE_IMPORT_KINETO);
	assert_int_equal(rd.v[0].r.header.pid, 100);
	assert_int_equal(rd.v[0].r.header.rank, 3);
	assert_int_equal(count(&rd, GW_REC_HEADER), 1);
	k = &nth(&rd, GW_REC_KERNEL, 0)->r.kernel;
	assert_int_equal(k->start_ns, 20500);
	assert_int_equal(k->end_ns, 23750);
	assert_int_equal(k->device, 0);
	assert_int_equal(k->stream, 7);
	assert_int_equal(k->correlation, 5);
	assert_int_equal(k->grid_x * k->grid_y * k->grid_z, 8);
	assert_int_equal(k->block_x, 256);
	assert_int_equal(k->registers_per_thread, 40);
	assert_int_equal(k->static_smem_bytes, 2048);
	assert_string_equal(string(&rd, k->name_id), "gemm_k");
	/* only the device that ran work; its block limit from the compute capability */
	assert_int_equal(count(&rd, GW_REC_DEVICE), 1);
	d = &nth(&rd, GW_REC_DEVICE, 0)->r.device;
	assert_string_equal(nth(&rd, GW_REC_DEVICE, 0)->text, "GPU A");
	assert_int_equal(d->sm_count, 84);
	assert_int_equal(d->max_blocks_per_sm, 16);
	assert_int_equal(d->max_threads_per_sm, 1536);
	assert_int_equal(d->smem_per_sm_bytes, 102400);
	/* the limit without opt-in (the occupancy model derives the opt-in one) */
	assert_int_equal(d->max_smem_per_block_bytes, 49152);
	assert_int_equal(d->memory_total_bytes, 1000);
	/* a call gpuwhy's capture does not record (cudaEventQuery) is left out */
	assert_int_equal(count(&rd, GW_REC_API), 1);
	a = api(&rd, 5);
	assert_non_null(a);
	assert_int_equal(a->category, GW_API_LAUNCH);
	assert_int_equal(a->sync_kind, GW_SYNC_NONE);
	assert_int_equal(a->start_ns, 10000);
	assert_int_equal(a->end_ns, 14000);
	assert_int_equal(a->tid, 100);
	assert_int_equal(a->cbid, 211);
	assert_string_equal(string(&rd, a->name_id), "cudaLaunchKernel");
	assert_int_equal(count(&rd, GW_REC_THREAD), 1);
	read_free(&rd);
}

static void test_copies_syncs_graphs(void **state)
{
	struct read rd;
	const struct gw_rec_memcpy *c;
	const struct gw_rec_sync *s;

	(void)state;
	read_events(
		&rd, "",
		"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> "
		"Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 2, \"args\": {\"device\": "
		"0, \"stream\": 7, \"correlation\": 1, \"bytes\": 4096}}",
		"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> "
		"Pinned)\", \"pid\": 0, \"tid\": 7, \"ts\": 8, \"dur\": 1, \"args\": {\"device\": "
		"0, \"stream\": 7, \"correlation\": 2, \"bytes\": 8}}",
		"{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": "
		"0, \"tid\": 7, \"ts\": 9, \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, "
		"\"correlation\": 3, \"bytes\": 64}}",
		KERNEL("20", "1", "9", "k1"), KERNEL("22", "1", "9", "k2"),
		KERNEL("24", "1", "9", "k3"), RUNTIME("cudaMemcpyAsync", "4", "4", "1"),
		RUNTIME("cudaMemcpy", "7", "3", "2"), RUNTIME("cudaGraphLaunch", "15", "2", "9"),
		RUNTIME("cudaStreamSynchronize", "26", "3", "10"),
		"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 26, \"dur\": 3, \"args\": {\"cuda_sync_kind\": \"Stream "
		"Sync\", \"stream\": 7, \"correlation\": 10, \"device\": 0}}",
		"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"pid\": 0, "
		"\"tid\": -1, \"ts\": 30, \"dur\": 1, \"args\": {\"cuda_sync_kind\": \"Event "
		"Sync\", \"stream\": -1, \"wait_on_cuda_event_id\": 8, \"correlation\": 11, "
		"\"device\": 0}}",
		NULL);
	assert_int_equal(rd.err, 0);
	c = &nth(&rd, GW_REC_MEMCPY, 0)->r.memcpy;
	assert_int_equal(c->copy_kind, 1); /* CUPTI's HTOD */
	assert_int_equal(c->src_kind, 1);  /* pageable */
	assert_int_equal(c->dst_kind, 3);  /* device */
	assert_int_equal(c->bytes, 4096);
	c = &nth(&rd, GW_REC_MEMCPY, 1)->r.memcpy;
	assert_int_equal(c->copy_kind, 2);
	assert_int_equal(c->src_kind, 3);
	assert_int_equal(c->dst_kind, 2); /* pinned */
	assert_int_equal(nth(&rd, GW_REC_MEMSET, 0)->r.memset.mem_kind, 3);
	assert_int_equal(nth(&rd, GW_REC_MEMSET, 0)->r.memset.bytes, 64);
	/* the async copy's wait comes from its pageable MEMCPY, as for a captured trace */
	assert_int_equal(api(&rd, 1)->sync_kind, GW_SYNC_NONE);
	assert_int_equal(api(&rd, 1)->category, GW_API_MEMCPY);
	assert_int_equal(api(&rd, 2)->sync_kind, GW_SYNC_COPY);
	/* one graph launch, three kernels on its correlation */
	assert_int_equal(api(&rd, 9)->category, GW_API_GRAPH_LAUNCH);
	assert_int_equal(count(&rd, GW_REC_KERNEL), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nth(&rd, GW_REC_KERNEL, i)->r.kernel.correlation, 9);
	assert_int_equal(api(&rd, 10)->category, GW_API_SYNC);
	assert_int_equal(api(&rd, 10)->sync_kind, GW_SYNC_EXPLICIT);
	s = &nth(&rd, GW_REC_SYNC, 0)->r.sync;
	assert_int_equal(s->type, 3); /* stream synchronize */
	assert_int_equal(s->stream, 7);
	assert_int_equal(s->correlation, 10);
	s = &nth(&rd, GW_REC_SYNC, 1)->r.sync;
	assert_int_equal(s->type, 1); /* event synchronize, on no stream */
	assert_int_equal(s->stream, 0);
	assert_int_equal(s->event, 8);
	/* no device record: the analysis assumes limits and says so */
	assert_int_equal(count(&rd, GW_REC_DEVICE), 0);
	read_free(&rd);
}

#define PY(name, ts, dur, id, parent)                                                              \
	"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"" name "\", \"pid\": 100, "     \
	"\"tid\": 100, \"ts\": " ts ", \"dur\": " dur ", \"args\": {\"Python id\": " id ", "       \
	"\"Python parent id\": " parent "}}"
#define OP(name, ts, dur, tid)                                                                     \
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 100, \"tid\": " tid \
	", \"ts\": " ts ", \"dur\": " dur ", \"args\": {}}"

/* Python stacks: the enclosing python_function chain of a call, innermost first. */
static void test_python_stacks(void **state)
{
	struct read rd;
	const struct gw_rec_api *a;
	const struct rec *st;
	const struct gw_rec_frame *f;

	(void)state;
	read_events(&rd, "", RUNTIME("cudaDeviceSynchronize", "50", "5", "1"),
		    RUNTIME("cudaLaunchKernel", "300", "5", "2"),
		    OP("autograd::engine::evaluate_function: MmBackward0", "400", "50", "200"),
		    OP("aten::mm", "410", "20", "200"),
		    RUNTIME_ON("200", "cudaLaunchKernel", "415", "5", "3"),
		    PY("train.py(87): step", "0", "200", "1", "null"),
		    PY("torch/nn/modules/module.py(1501): _call_impl", "20", "100", "2", "1"),
		    PY("<built-in method item of Tensor object at 0x7fdc681f0eb0>", "40", "30", "3",
		       "2"),
		    NULL);
	assert_int_equal(rd.err, 0);
	/* the call inside item() inside _call_impl inside step */
	a = api(&rd, 1);
	assert_non_null(a);
	assert_int_not_equal(a->stack_id, 0);
	st = stack(&rd, a->stack_id);
	assert_non_null(st);
	assert_int_equal(st->r.stack.ips_kind, GW_STACK_FRAMES);
	assert_int_equal(st->r.stack.ips.depth, 3);
	f = frame(&rd, st->ips[0]);
	assert_int_equal(f->lang, GW_FRAME_PYTHON);
	assert_string_equal(string(&rd, f->function_id), "<built-in method item of Tensor object>");
	assert_int_equal(f->file_id, 0);
	f = frame(&rd, st->ips[1]);
	assert_string_equal(string(&rd, f->function_id), "_call_impl");
	assert_string_equal(string(&rd, f->file_id), "torch/nn/modules/module.py");
	assert_int_equal(f->line, 1501);
	f = frame(&rd, st->ips[2]);
	assert_string_equal(string(&rd, f->function_id), "step");
	assert_string_equal(string(&rd, f->file_id), "train.py");
	assert_int_equal(f->line, 87);
	/* outside every Python function and operator: no stack */
	assert_int_equal(api(&rd, 2)->stack_id, 0);
	/* without Python stacks, the outermost operator names the site */
	a = api(&rd, 3);
	assert_int_equal(a->tid, 200);
	st = stack(&rd, a->stack_id);
	assert_non_null(st);
	assert_int_equal(st->r.stack.ips.depth, 1);
	f = frame(&rd, st->ips[0]);
	assert_int_equal(f->lang, GW_FRAME_NATIVE);
	assert_string_equal(string(&rd, f->function_id),
			    "autograd::engine::evaluate_function: MmBackward0");
	assert_int_equal(count(&rd, GW_REC_THREAD), 2);
	read_free(&rd);
}

#define MEM(ts, addr, bytes, alloc, reserved)                                                      \
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "   \
	"\"pid\": 100, \"tid\": 100, \"ts\": " ts ", \"args\": {\"Total Reserved\": " reserved     \
	", \"Total Allocated\": " alloc ", \"Bytes\": " bytes ", \"Addr\": " addr ", \"Device "    \
	"Id\": 0, \"Device Type\": 1}}"

static void test_memory(void **state)
{
	struct read rd;
	const struct gw_rec_memory *m;
	size_t reserved = 0, allocated = 0;

	(void)state;
	read_events(&rd, "", MEM("1", "4096", "512", "512", "2097152"),
		    MEM("2", "8192", "256", "768", "2097152"),
		    MEM("3", "4096", "-512", "256", "2097152"),
		    MEM("4", "12288", "4194304", "4194560", "6291456"),
		    "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": "
		    "100, \"ts\": 5, \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Bytes\": "
		    "64}}",
		    NULL);
	assert_int_equal(rd.err, 0);
	/* blocks of the caching allocator: CUDA ones only */
	assert_int_equal(count(&rd, GW_REC_MEMORY), 4);
	m = &nth(&rd, GW_REC_MEMORY, 0)->r.memory;
	assert_int_equal(m->op, GW_MEMORY_ALLOC);
	assert_int_equal(m->mem_kind, GW_MEM_TENSOR);
	assert_int_equal(m->address, 4096);
	assert_int_equal(m->bytes, 512);
	assert_int_equal(m->time_ns, 1000);
	m = &nth(&rd, GW_REC_MEMORY, 2)->r.memory;
	assert_int_equal(m->op, GW_MEMORY_FREE);
	assert_int_equal(m->address, 4096);
	assert_int_equal(m->bytes, 0);
	/* allocated at every event, reserved when it changes */
	for (size_t i = 0; i < rd.n; i++) {
		const struct gw_rec_counter *c = &rd.v[i].r.counter;

		if (rd.v[i].r.type != GW_REC_COUNTER)
			continue;
		if (c->counter == GW_COUNTER_ALLOCATOR_RESERVED) {
			assert_int_equal(c->value, reserved++ ? 6291456 : 2097152);
		} else {
			static const uint64_t want[] = {512, 768, 256, 4194560};

			assert_int_equal(c->counter, GW_COUNTER_ALLOCATOR_ALLOCATED);
			assert_int_equal(c->value, want[allocated++]);
		}
	}
	assert_int_equal(reserved, 2);
	assert_int_equal(allocated, 4);
	read_free(&rd);
}

#define OLD_MEM(ts, bytes)                                                                         \
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, "           \
	"\"ts\": " ts ", \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": " bytes "}}"

/* The 2021 format gives block sizes only: the allocated curve from its lowest level. */
static void test_memory_2021(void **state)
{
	static const uint64_t want[] = {100, 300, 0, 50};
	struct read rd;
	size_t n = 0;

	(void)state;
	read_events(&rd, NULL, OLD_MEM("1", "200"), OLD_MEM("0", "-100"), OLD_MEM("2", "-300"),
		    OLD_MEM("3", "50"), NULL);
	assert_int_equal(rd.err, 0);
	assert_int_equal(count(&rd, GW_REC_MEMORY), 0);
	for (size_t i = 0; i < rd.n; i++) {
		if (rd.v[i].r.type != GW_REC_COUNTER)
			continue;
		assert_int_equal(rd.v[i].r.counter.time_ns, n * 1000);
		assert_int_equal(rd.v[i].r.counter.value, want[n]);
		n++;
	}
	assert_int_equal(n, 4);
	read_free(&rd);
}

/* Times: baseTimeNanoseconds before the events is added; after them it comes too late. */
static void test_base_time(void **state)
{
	struct read rd;

	(void)state;
	read_events(&rd, "\"baseTimeNanoseconds\": 1700000000000000000, ",
		    KERNEL("1.5", "0.001", "1", "k"), NULL);
	assert_int_equal(rd.err, 0);
	assert_true(nth(&rd, GW_REC_KERNEL, 0)->r.kernel.start_ns == 1700000000000001500ull);
	assert_true(nth(&rd, GW_REC_KERNEL, 0)->r.kernel.end_ns == 1700000000000001501ull);
	read_free(&rd);
	read_text("{\"traceEvents\": [" KERNEL("1712195495505543.2", "1", "1",
					       "k") "], "
						    "\"baseTimeNanoseconds\": 5}",
		  &rd);
	assert_int_equal(rd.err, 0);
	assert_true(nth(&rd, GW_REC_KERNEL, 0)->r.kernel.start_ns == 1712195495505543200ull);
	assert_int_equal(nth(&rd, GW_REC_NOTE, 0)->r.note.level, GW_NOTE_INFO);
	read_free(&rd);
}

/* The 2020 format: a bare array, capitalised categories, tids as text, no deviceProperties. */
static void test_legacy(void **state)
{
	struct read rd;

	(void)state;
	read_events(
		&rd, NULL,
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::add\", \"pid\": 9, "
		"\"tid\": \"4093687616\", \"ts\": 1, \"dur\": 9, \"args\": {}}",
		"{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
		"9, \"tid\": \"4093687616\", \"ts\": 2, \"dur\": 3, \"args\": {\"cbid\": 211, "
		"\"correlation\": 77, \"external id\": 1}}",
		"{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"add_kernel\", \"pid\": 0, "
		"\"tid\": \"stream 7\", \"ts\": 6, \"dur\": 2, \"args\": {\"device\": 0, "
		"\"correlation\": 77, \"grid\": [1, 1, 1], \"block\": [32, 1, 1]}}",
		"{\"ph\": \"X\", \"cat\": \"Memset\", \"name\": \"Memset (Device)\", \"pid\": 0, "
		"\"tid\": \"stream 7\", \"ts\": 9, \"dur\": 1, \"args\": {\"device\": 0, "
		"\"correlation\": 78, \"bytes\": 4}}",
		NULL);
	assert_int_equal(rd.err, 0);
	assert_int_equal(nth(&rd, GW_REC_KERNEL, 0)->r.kernel.stream, 7);
	assert_int_equal(nth(&rd, GW_REC_MEMSET, 0)->r.memset.stream, 7);
	assert_int_equal(api(&rd, 77)->tid, 4093687616u);
	assert_int_equal(api(&rd, 77)->category, GW_API_LAUNCH);
	assert_int_equal(count(&rd, GW_REC_STACK), 1);
	assert_int_equal(count(&rd, GW_REC_DEVICE), 0);
	read_free(&rd);
}

/* A call's device: from its cuda_sync event, else the device its thread last worked on. */
static void test_two_devices(void **state)
{
	struct read rd;

	(void)state;
	read_events(&rd, "", KERNEL("10", "1", "1", "k"),
		    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 1, \"tid\": 9, "
		    "\"ts\": 30, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 9, "
		    "\"correlation\": 3}}",
		    RUNTIME("cudaLaunchKernel", "5", "1", "1"),
		    RUNTIME("cudaDeviceSynchronize", "12", "1", "2"),
		    RUNTIME("cudaLaunchKernel", "25", "1", "3"),
		    RUNTIME("cudaDeviceSynchronize", "35", "1", "4"),
		    "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Context Sync\", \"pid\": "
		    "0, \"tid\": -1, \"ts\": 12, \"dur\": 1, \"args\": {\"cuda_sync_kind\": "
		    "\"Context Sync\", \"stream\": -1, \"correlation\": 2, \"device\": 0}}",
		    NULL);
	assert_int_equal(rd.err, 0);
	assert_int_equal(api(&rd, 1)->device, 0);
	assert_int_equal(api(&rd, 2)->device, 0);
	assert_int_equal(api(&rd, 3)->device, 1);
	assert_int_equal(api(&rd, 4)->device, 1);
	read_free(&rd);
}

/* gzip, in one member or several, and a file cut short. */
static void test_gzip_and_cut(void **state)
{
	static const char doc[] = "{\"traceEvents\": [" KERNEL("1", "1", "1", "a") "," KERNEL(
		"3", "1", "2", "b") "," RUNTIME("cudaLaunchKernel", "0", "1", "1") "]}";
	const char *half = "{\"traceEvents\": [" KERNEL("1", "1", "1", "a") "," RUNTIME(
		"cudaLaunchKernel", "0", "1", "1") ", {\"ph\": \"X\", \"cat\": \"ker";
	uint8_t two[4096];
	size_t n1, n2;
	struct read rd;
	FILE *f;
	char path[512];

	(void)state;
	read_path(write_file("t.json.gz", doc, strlen(doc), true), NULL, &rd);
	assert_int_equal(rd.err, 0);
	assert_int_equal(count(&rd, GW_REC_KERNEL), 2);
	assert_int_equal(count(&rd, GW_REC_API), 1);
	read_free(&rd);
	/* the same text as two gzip members back to back */
	snprintf(path, sizeof(path), "%s", write_file("a.gz", doc, 40, true));
	f = fopen(path, "rb");
	n1 = fread(two, 1, sizeof(two), f);
	fclose(f);
	write_file("b.gz", doc + 40, strlen(doc) - 40, true);
	snprintf(path, sizeof(path), "%s/b.gz", tmp_dir);
	f = fopen(path, "rb");
	n2 = fread(two + n1, 1, sizeof(two) - n1, f);
	fclose(f);
	read_path(write_file("two.json.gz", two, n1 + n2, false), NULL, &rd);
	assert_int_equal(rd.err, 0);
	assert_int_equal(count(&rd, GW_REC_KERNEL), 2);
	read_free(&rd);
	/* cut inside an event: what came before, the call kept for the end, and a warning */
	read_text(half, &rd);
	assert_int_equal(rd.err, 0);
	assert_true(rd.truncated);
	assert_int_equal(count(&rd, GW_REC_KERNEL), 1);
	assert_int_equal(count(&rd, GW_REC_API), 1);
	assert_int_equal(nth(&rd, GW_REC_NOTE, 0)->r.note.level, GW_NOTE_WARNING);
	assert_non_null(strstr(nth(&rd, GW_REC_NOTE, 0)->text, "cut file"));
	read_free(&rd);
	/* the same cut in a .gz: the stream ends early */
	read_path(write_file("half.json.gz", half, strlen(half), true), NULL, &rd);
	assert_int_equal(rd.err, 0);
	assert_true(rd.truncated);
	read_free(&rd);
	snprintf(path, sizeof(path), "%s", write_file("full.json.gz", doc, strlen(doc), true));
	f = fopen(path, "rb");
	n1 = fread(two, 1, sizeof(two), f);
	fclose(f);
	read_path(write_file("cut.json.gz", two, n1 - 12, false), NULL, &rd);
	assert_int_equal(rd.err, 0);
	assert_true(rd.truncated);
	assert_non_null(strstr(nth(&rd, GW_REC_NOTE, 0)->text, "cut"));
	read_free(&rd);
}

/* Bad input: one reason, with the byte offset, and no records after it. */
static void test_bad_input(void **state)
{
	static const struct {
		const char *json, *reason;
		int err;
	} cases[] = {
		{"{\"traceEvents\": [" KERNEL("\"1\"", "1", "1", "k") "]}",
		 "\"ts\" is a string, not a number", -EINVAL},
		{"{\"traceEvents\": [" KERNEL("1", "true", "1", "k") "]}",
		 "\"dur\" is not a number", -EINVAL},
		{"{\"traceEvents\": [" KERNEL("1", "1", "1.5", "k") "]}",
		 "\"correlation\" is not a whole number", -EINVAL},
		{"{\"traceEvents\": [" KERNEL("1", "1", "99999999999999999999", "k") "]}",
		 "\"correlation\" is out of range", -EINVAL},
		{"{\"traceEvents\": [" RUNTIME("cudaLaunchKernel", "1", "1",
					       "1") ", "
						    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", "
						    "\"name\": \"cudaLaunchKernel\", "
						    "\"pid\": 1, \"ts\": 1, \"dur\": 1}]}",
		 "without \"tid\"", -EINVAL},
		{"{\"deviceProperties\": [{\"id\": 0, \"numSms\": -5}], \"traceEvents\": []}",
		 "\"numSms\" is negative", -EINVAL},
		{"{\"baseTimeNanoseconds\": \"soon\", \"traceEvents\": []}", "baseTimeNanoseconds",
		 -EINVAL},
		{"{\"traceEvents\": [] ] }", "not JSON", -EBADMSG},
		{"[1, 2, 3]", "not a trace", -EBADMSG},
		{"{\"traceEvents\": [{\"a\": 1}]}", "no event has a \"ph\"", -EBADMSG},
		{"\"a string\"", "not a trace", -EBADMSG},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct read rd;

		read_path(write_file("bad.json", cases[i].json, strlen(cases[i].json), false),
			  "kineto", &rd);
		if (rd.err != cases[i].err || !strstr(rd.reason, cases[i].reason))
			fail_msg("case %zu: got %d \"%s\", want %d \"%s\"", i, rd.err, rd.reason,
				 cases[i].err, cases[i].reason);
		if (cases[i].err == -EINVAL)
			assert_non_null(strstr(rd.reason, "byte "));
		read_free(&rd);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_and_launch),
		cmocka_unit_test(test_copies_syncs_graphs),
		cmocka_unit_test(test_python_stacks),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_memory_2021),
		cmocka_unit_test(test_base_time),
		cmocka_unit_test(test_legacy),
		cmocka_unit_test(test_two_devices),
		cmocka_unit_test(test_gzip_and_cut),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
