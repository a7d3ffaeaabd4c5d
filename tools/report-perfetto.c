/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --perfetto FILE`: streams the traces' events as Chrome trace-event JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "report-perfetto.h"
#include "trace-reader.h"
#include "util.h"

/* Chrome JSON wants integer pids: GPUs get ids far above any Linux pid (pid_max <= 2^22). */
#define GW_PF_GPU_PID(trace, device) (1000000000ll + (long long)(trace)*1000 + (long long)(device))
#define GW_PF_SUMMARY_PID	     999999999ll
#define GW_PF_IDLE_TID		     999999999ll
/* Interned string ids past this are treated as unknown (a corrupt trace must not make us
 * allocate gigabytes). */
#define GW_PF_MAX_STRING_ID	     (1u << 24)
#define GW_PF_MAX_DEVICES	     64
/* The SM-fill counter is exact (a step per kernel start and end) up to this many kernels per
 * trace (64 bytes each while sorting); past it, it falls back to the analysis's bins. */
#define GW_PF_MAX_FILL_KERNELS	     (2u << 20)

struct gw_pf_mem_event {
	uint64_t time_ns;
	uint64_t address;
	uint64_t bytes : 56; /* as recorded: 0 for a free */
	uint64_t device : 7;
	uint64_t is_free : 1;
};

/* A kernel's launch shape, kept from pass 1 until the device limits are all known. */
struct gw_pf_kernel {
	uint64_t start_ns, end_ns;
	uint32_t blocks;
	uint32_t smem;
	uint16_t threads;
	uint8_t regs;
	uint8_t device;
	uint32_t unused;
};

struct gw_pf_fill_step {
	uint64_t time_ns;
	float delta;
	uint32_t device;
};

struct gw_pf_trace {
	int64_t pid;
	char **strings;	  /* by id; demangled for kernel names */
	uint8_t *classes; /* by id: enum gw_bucket of a kernel name */
	size_t n_strings;
	struct gw_vec mem;     /* struct gw_pf_mem_event */
	struct gw_vec kernels; /* struct gw_pf_kernel */
	bool fill_overflow;    /* too many kernels: SM fill from the analysis's bins */
	struct gw_device_limits limits[GW_PF_MAX_DEVICES];
	uint64_t devices_named; /* bitmap of devices whose process got its name */
	struct gw_hmap streams; /* (device, stream) seen */
	struct gw_hmap threads; /* tid seen */
};

struct gw_pf {
	FILE *f;
	const struct gw_analysis *a;
	uint64_t t0;
	bool first;
};

void gw_report_perfetto_options(struct gw_analysis_options *opt)
{
	if (opt->timeline_bins < GW_PERFETTO_TIMELINE_BINS)
		opt->timeline_bins = GW_PERFETTO_TIMELINE_BINS;
	opt->keep_gaps = true;
}

static const char *string_of(const struct gw_pf_trace *t, uint64_t id)
{
	return id < t->n_strings && t->strings[id] ? t->strings[id] : NULL;
}

static int keep_string(struct gw_pf_trace *t, const struct gw_rec_string *s)
{
	char *copy, *text;

	if (s->id == 0 || s->id >= GW_PF_MAX_STRING_ID)
		return 0;
	if (s->id >= t->n_strings) {
		size_t n = s->id * 2 + 16;
		char **grown = realloc(t->strings, n * sizeof(*grown));
		uint8_t *classes;

		if (!grown)
			return -ENOMEM;
		memset(grown + t->n_strings, 0, (n - t->n_strings) * sizeof(*grown));
		t->strings = grown;
		classes = realloc(t->classes, n);
		if (!classes)
			return -ENOMEM;
		memset(classes + t->n_strings, GW_BUCKET_COMPUTE, n - t->n_strings);
		t->classes = classes;
		t->n_strings = n;
	}
	copy = strndup((const char *)s->text.data, s->text.len);
	if (!copy)
		return -ENOMEM;
	if (s->kind == GW_STRING_KERNEL) {
		text = gw_demangle(copy);
		free(copy);
		if (!text)
			return -ENOMEM;
	} else {
		text = copy;
	}
	free(t->strings[s->id]);
	t->strings[s->id] = text;
	if (s->kind == GW_STRING_KERNEL)
		t->classes[s->id] = (uint8_t)gw_kernel_class(text, NULL);
	return 0;
}

static bool is_device_memory(uint64_t kind)
{
	return kind == GW_MEM_DEVICE || kind == GW_MEM_ASYNC || kind == GW_MEM_VMM;
}

static void set_limits(struct gw_device_limits *l, const struct gw_rec_device *d)
{
	/* As the analysis does: a field the record leaves at 0 keeps the assumed value. */
	if (d->sm_count)
		l->sm_count = d->sm_count;
	if (d->max_threads_per_sm)
		l->max_threads_per_sm = d->max_threads_per_sm;
	if (d->max_blocks_per_sm)
		l->max_blocks_per_sm = d->max_blocks_per_sm;
	if (d->regs_per_sm)
		l->regs_per_sm = d->regs_per_sm;
	if (d->smem_per_sm_bytes)
		l->smem_per_sm_bytes = d->smem_per_sm_bytes;
	if (d->warp_size)
		l->warp_size = d->warp_size;
}

static uint64_t clamp_u64(uint64_t v, uint64_t max)
{
	return v < max ? v : max;
}

/* A GPU record CUPTI could not time (start and end 0) has no place on the timeline; the
 * report counts it (untimed_gpu_ops). */
static bool untimed(uint64_t start_ns, uint64_t end_ns)
{
	return !start_ns && !end_ns;
}

static int keep_kernel(struct gw_pf_trace *t, const struct gw_rec_kernel *k)
{
	struct gw_pf_kernel *e;
	uint64_t blocks, threads;

	if (t->fill_overflow || k->device >= GW_PF_MAX_DEVICES || k->end_ns < k->start_ns ||
	    untimed(k->start_ns, k->end_ns))
		return 0;
	if (t->kernels.len >= GW_PF_MAX_FILL_KERNELS) {
		t->fill_overflow = true;
		gw_vec_free(&t->kernels);
		return 0;
	}
	e = gw_vec_push(&t->kernels, sizeof(*e));
	if (!e)
		return -ENOMEM;
	blocks = clamp_u64(k->grid_x, UINT32_MAX) * clamp_u64(k->grid_y, UINT32_MAX);
	blocks = clamp_u64(blocks, UINT32_MAX) * clamp_u64(k->grid_z, UINT32_MAX);
	threads = clamp_u64(k->block_x, 1024) * clamp_u64(k->block_y, 1024) *
		  clamp_u64(k->block_z, 1024);
	e->start_ns = k->start_ns;
	e->end_ns = k->end_ns;
	e->blocks = (uint32_t)clamp_u64(blocks, UINT32_MAX);
	e->threads = (uint16_t)clamp_u64(threads, UINT16_MAX);
	e->regs = (uint8_t)clamp_u64(k->registers_per_thread, UINT8_MAX);
	e->smem = (uint32_t)clamp_u64(k->static_smem_bytes + k->dynamic_smem_bytes, UINT32_MAX);
	e->device = (uint8_t)k->device;
	return 0;
}

/* Pass 1: strings, the earliest start, and the device-memory events to put in time order. */
static int first_pass(const char *path, struct gw_pf_trace *t, uint64_t *t0)
{
	struct gw_reader *r = NULL;
	struct gw_record rec;
	uint64_t records = 0;
	int err, n;

	/* Until a DEVICE record says otherwise, the analysis's assumed limits (an H100's). */
	for (unsigned d = 0; d < GW_PF_MAX_DEVICES; d++)
		t->limits[d] = (struct gw_device_limits){.sm_count = 132,
							 .max_threads_per_sm = 2048,
							 .max_blocks_per_sm = 32,
							 .regs_per_sm = 65536,
							 .smem_per_sm_bytes = 228 * 1024,
							 .warp_size = 32};
	err = gw_reader_open(path, &r);
	if (err < 0)
		return err;
	t->pid = (int64_t)gw_reader_header(r)->pid;
	if (gw_reader_header(r)->start_ns < *t0)
		*t0 = gw_reader_header(r)->start_ns;
	while ((n = gw_reader_next(r, &rec)) > 0) {
		records++;
		if (rec.type == GW_REC_STRING) {
			err = keep_string(t, &rec.string);
		} else if (rec.type == GW_REC_DEVICE && rec.device.device < GW_PF_MAX_DEVICES) {
			set_limits(&t->limits[rec.device.device], &rec.device);
		} else if (rec.type == GW_REC_KERNEL) {
			err = keep_kernel(t, &rec.kernel);
		} else if (rec.type == GW_REC_MEMORY && is_device_memory(rec.memory.mem_kind)) {
			struct gw_pf_mem_event *e = gw_vec_push(&t->mem, sizeof(*e));

			if (!e) {
				err = -ENOMEM;
			} else {
				e->time_ns = rec.memory.time_ns;
				e->address = rec.memory.address;
				e->bytes = rec.memory.bytes;
				e->device = rec.memory.device < GW_PF_MAX_DEVICES
						    ? rec.memory.device
						    : GW_PF_MAX_DEVICES;
				e->is_free = rec.memory.op == GW_MEMORY_FREE;
			}
		}
		if (err < 0)
			break;
	}
	/* Corrupt bytes after good records end the trace there, as in the analysis. */
	if (n < 0 && err >= 0 && !(n == -EBADMSG && records > 0))
		err = n;
	gw_reader_free(r);
	return err;
}

/* Timestamps in microseconds with nanosecond digits, from integers (no rounding drift). */
static void put_ts(FILE *f, const char *key, uint64_t ns, uint64_t t0)
{
	int64_t d = (int64_t)(ns - t0);
	uint64_t m = d < 0 ? (uint64_t)-d : (uint64_t)d;

	fprintf(f, "\"%s\":%s%" PRIu64 ".%03u", key, d < 0 ? "-" : "", m / 1000,
		(unsigned)(m % 1000));
}

static void begin_event(struct gw_pf *pf)
{
	fputs(pf->first ? "\n{" : ",\n{", pf->f);
	pf->first = false;
}

static void metadata(struct gw_pf *pf, const char *what, long long pid, long long tid,
		     const char *name, long long sort_index)
{
	begin_event(pf);
	fprintf(pf->f, "\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{", what,
		pid, tid);
	if (name) {
		fputs("\"name\":", pf->f);
		gw_json_cstr(pf->f, name);
	} else {
		fprintf(pf->f, "\"sort_index\":%lld", sort_index);
	}
	fputs("}}", pf->f);
}

static void name_gpu(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace, uint64_t device)
{
	const struct gw_analysis *a = pf->a;
	const char *dev_name = NULL;
	char *label;

	if (device >= GW_PF_MAX_DEVICES || (t->devices_named & (1ull << device)))
		return;
	t->devices_named |= 1ull << device;
	for (unsigned i = 0; i < a->n_devices; i++)
		if (a->devices[i].trace == trace && a->devices[i].id == device)
			dev_name = a->devices[i].name;
	label = gw_strdupf("GPU %" PRIu64 " %s%s(pid %" PRId64 ")", device,
			   dev_name ? dev_name : "", dev_name ? " " : "", t->pid);
	metadata(pf, "process_name", GW_PF_GPU_PID(trace, device), 0, label ? label : "GPU", 0);
	metadata(pf, "process_sort_index", GW_PF_GPU_PID(trace, device), 0, NULL,
		 (long long)trace * 100 + 50 + (long long)device);
	free(label);
}

static void name_stream(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace, uint64_t device,
			uint64_t stream)
{
	bool fresh = false;
	char label[64];

	name_gpu(pf, t, trace, device);
	if (!gw_hmap_get(&t->streams, device, stream, &fresh) || !fresh)
		return;
	snprintf(label, sizeof(label), "stream %" PRIu64, stream);
	metadata(pf, "thread_name", GW_PF_GPU_PID(trace, device), (long long)stream, label, 0);
}

static void name_thread(struct gw_pf *pf, struct gw_pf_trace *t, uint64_t tid, const char *name)
{
	bool fresh = false;
	char label[64];

	if (!gw_hmap_get(&t->threads, tid, 0, &fresh) || (!fresh && !name))
		return;
	if (!name) {
		snprintf(label, sizeof(label), "thread %" PRIu64, tid);
		name = label;
	}
	metadata(pf, "thread_name", t->pid, (long long)tid, name, 0);
}

static void api_event(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace,
		      const struct gw_rec_api *c)
{
	FILE *f = pf->f;
	const char *name = string_of(t, c->name_id);
	const char *kernel = string_of(t, c->kernel_name_id);

	name_thread(pf, t, c->tid, NULL);
	begin_event(pf);
	fputs("\"ph\":\"X\",\"cat\":\"api\",\"name\":", f);
	if (name)
		gw_json_cstr(f, name);
	else
		fprintf(f, "\"api %" PRIu64 "/%" PRIu64 "\"", c->domain, c->cbid);
	fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",", t->pid, c->tid);
	put_ts(f, "ts", c->start_ns, pf->t0);
	fputc(',', f);
	put_ts(f, "dur", c->end_ns >= c->start_ns ? c->end_ns : c->start_ns, c->start_ns);
	if (c->correlation && (c->category == GW_API_LAUNCH || c->category == GW_API_MEMCPY ||
			       c->category == GW_API_MEMSET))
		fprintf(f, ",\"bind_id\":%" PRIu64 ",\"flow_out\":true",
			(uint64_t)(((uint64_t)trace << 40) |
				   (c->correlation & ((1ull << 40) - 1))));
	fprintf(f, ",\"args\":{\"correlation\":%" PRIu64 ",\"stream\":%" PRIu64, c->correlation,
		c->stream);
	if (c->sync_kind)
		fprintf(f, ",\"sync_kind\":%" PRIu64, c->sync_kind);
	if (c->bytes)
		fprintf(f, ",\"bytes\":%" PRIu64, c->bytes);
	if (kernel) {
		fputs(",\"kernel\":", f);
		gw_json_cstr(f, kernel);
	}
	fputs("}}", f);
}

/* A GPU operation on its stream's track. */
static void gpu_event(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace, const char *cat,
		      const char *name, uint64_t device, uint64_t stream, uint64_t corr,
		      uint64_t start_ns, uint64_t end_ns)
{
	FILE *f = pf->f;

	name_stream(pf, t, trace, device, stream);
	begin_event(pf);
	fprintf(f, "\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	gw_json_cstr(f, name ? name : cat);
	fprintf(f, ",\"pid\":%lld,\"tid\":%" PRIu64 ",", GW_PF_GPU_PID(trace, device), stream);
	put_ts(f, "ts", start_ns, pf->t0);
	fputc(',', f);
	put_ts(f, "dur", end_ns >= start_ns ? end_ns : start_ns, start_ns);
	if (corr)
		fprintf(f, ",\"bind_id\":%" PRIu64 ",\"flow_in\":true",
			(uint64_t)(((uint64_t)trace << 40) | (corr & ((1ull << 40) - 1))));
	fprintf(f, ",\"args\":{\"correlation\":%" PRIu64, corr);
}

/* Pass 2: every host call and GPU operation, in file order. */
static int second_pass(struct gw_pf *pf, const char *path, struct gw_pf_trace *t, unsigned trace)
{
	static const char *const copy_kinds[] = {"memcpy",	"memcpy HtoD", "memcpy DtoH",
						 "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
						 "memcpy AtoD", "memcpy DtoA", "memcpy DtoD",
						 "memcpy HtoH", "memcpy PtoP"};
	struct gw_reader *r = NULL;
	struct gw_record rec;
	FILE *f = pf->f;
	uint64_t records = 0;
	char *label;
	int err, n;

	err = gw_reader_open(path, &r);
	if (err < 0)
		return err;
	label = gw_strdupf("pid %" PRId64 " %.*s", t->pid,
			   (int)strnlen((const char *)gw_reader_header(r)->command.data,
					gw_reader_header(r)->command.len),
			   (const char *)gw_reader_header(r)->command.data);
	metadata(pf, "process_name", t->pid, 0, label ? label : "process", 0);
	metadata(pf, "process_sort_index", t->pid, 0, NULL, (long long)trace * 100);
	free(label);

	while ((n = gw_reader_next(r, &rec)) > 0) {
		records++;
		switch (rec.type) {
		case GW_REC_THREAD: {
			char *name =
				strndup((const char *)rec.thread.name.data, rec.thread.name.len);

			if (name && name[0])
				name_thread(pf, t, rec.thread.tid, name);
			free(name);
			break;
		}
		case GW_REC_API:
			api_event(pf, t, trace, &rec.api);
			break;
		case GW_REC_KERNEL: {
			const struct gw_rec_kernel *k = &rec.kernel;

			if (untimed(k->start_ns, k->end_ns))
				break;
			gpu_event(pf, t, trace, "kernel", string_of(t, k->name_id), k->device,
				  k->stream, k->correlation, k->start_ns, k->end_ns);
			fprintf(f,
				",\"grid\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64
				"],\"block\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64
				"],\"registers\":%" PRIu64 ",\"smem_bytes\":%" PRIu64
				",\"class\":\"%s\"}}",
				k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
				k->registers_per_thread,
				k->static_smem_bytes + k->dynamic_smem_bytes,
				gw_buckets[k->name_id < t->n_strings ? t->classes[k->name_id]
								     : GW_BUCKET_COMPUTE]
					.key);
			break;
		}
		case GW_REC_MEMCPY: {
			const struct gw_rec_memcpy *c = &rec.memcpy;
			const char *name = c->copy_kind < sizeof(copy_kinds) / sizeof(copy_kinds[0])
						   ? copy_kinds[c->copy_kind]
						   : "memcpy";

			if (untimed(c->start_ns, c->end_ns))
				break;
			gpu_event(pf, t, trace, "memcpy", name, c->device, c->stream,
				  c->correlation, c->start_ns, c->end_ns);
			fprintf(f, ",\"bytes\":%" PRIu64 "}}", c->bytes);
			break;
		}
		case GW_REC_MEMSET: {
			const struct gw_rec_memset *s = &rec.memset;

			if (untimed(s->start_ns, s->end_ns))
				break;
			gpu_event(pf, t, trace, "memset", "memset", s->device, s->stream,
				  s->correlation, s->start_ns, s->end_ns);
			fprintf(f, ",\"bytes\":%" PRIu64 "}}", s->bytes);
			break;
		}
		default:
			break;
		}
	}
	err = n < 0 && !(n == -EBADMSG && records > 0) ? n : 0;
	gw_reader_free(r);
	return err;
}

static int cmp_mem(const void *pa, const void *pb)
{
	const struct gw_pf_mem_event *x = pa, *y = pb;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Live device memory per GPU: one counter event per device-memory MEMORY record. A free
 * carries no size; it is paired with its allocation by (device, address). */
static int memory_counters(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace)
{
	struct gw_pf_mem_event *ev = t->mem.data;
	uint64_t live[GW_PF_MAX_DEVICES + 1] = {0};
	struct gw_hmap sizes = {0};
	int err;

	err = gw_sort(ev, t->mem.len, sizeof(*ev), cmp_mem);
	if (err < 0)
		return err;
	for (size_t i = 0; i < t->mem.len; i++) {
		struct gw_pf_mem_event *e = &ev[i];
		uint64_t *slot;

		if (e->is_free) {
			slot = gw_hmap_find(&sizes, e->device, e->address);
			if (slot) {
				live[e->device] -=
					*slot < live[e->device] ? *slot : live[e->device];
				gw_hmap_del(&sizes, e->device, e->address);
			}
		} else {
			slot = gw_hmap_get(&sizes, e->device, e->address, NULL);
			if (!slot) {
				err = -ENOMEM;
				break;
			}
			*slot = e->bytes;
			live[e->device] += e->bytes;
		}
		if (e->device < GW_PF_MAX_DEVICES)
			name_gpu(pf, t, trace, e->device);
		begin_event(pf);
		fprintf(pf->f, "\"ph\":\"C\",\"name\":\"live device memory\",\"pid\":%lld,",
			GW_PF_GPU_PID(trace, e->device));
		put_ts(pf->f, "ts", e->time_ns, pf->t0);
		fprintf(pf->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", live[e->device]);
	}
	gw_hmap_free(&sizes);
	return err;
}

static int cmp_step(const void *pa, const void *pb)
{
	const struct gw_pf_fill_step *x = pa, *y = pb;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/*
 * SM fill per GPU, exactly as DESIGN defines it: f = min(1, sum of the running kernels' fill),
 * one counter event per instant at which it changes (kernel starts and ends).
 */
static int fill_counters(struct gw_pf *pf, struct gw_pf_trace *t, unsigned trace)
{
	const struct gw_pf_kernel *k = t->kernels.data;
	size_t n = t->kernels.len, m = 0;
	struct gw_pf_fill_step *steps;
	double sum[GW_PF_MAX_DEVICES] = {0}, shown[GW_PF_MAX_DEVICES];
	uint64_t touched = 0;
	int err;

	if (t->fill_overflow || n == 0)
		return 0;
	steps = malloc(2 * n * sizeof(*steps));
	if (!steps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		float fill = (float)gw_kernel_fill(&t->limits[k[i].device], k[i].blocks,
						   k[i].threads, k[i].regs, k[i].smem);

		steps[m++] = (struct gw_pf_fill_step){k[i].start_ns, fill, k[i].device};
		steps[m++] = (struct gw_pf_fill_step){k[i].end_ns, -fill, k[i].device};
	}
	gw_vec_free(&t->kernels);
	err = gw_sort(steps, m, sizeof(*steps), cmp_step);
	if (err < 0)
		goto out;
	for (unsigned d = 0; d < GW_PF_MAX_DEVICES; d++)
		shown[d] = -1;
	for (size_t i = 0; i < m; i++) {
		sum[steps[i].device] += steps[i].delta;
		touched |= 1ull << steps[i].device;
		if (i + 1 < m && steps[i + 1].time_ns == steps[i].time_ns)
			continue;
		for (unsigned d = 0; touched; d++) {
			double f;

			if (!(touched & (1ull << d)))
				continue;
			touched &= ~(1ull << d);
			/* Float sums of starts and ends leave crumbs: snap them to 0. */
			f = sum[d] < 1e-6 ? 0 : sum[d] > 1 ? 1 : sum[d];
			if (f == shown[d])
				continue;
			shown[d] = f;
			name_gpu(pf, t, trace, d);
			begin_event(pf);
			fprintf(pf->f, "\"ph\":\"C\",\"name\":\"SM fill\",\"pid\":%lld,",
				GW_PF_GPU_PID(trace, d));
			put_ts(pf->f, "ts", steps[i].time_ns, pf->t0);
			fputs(",\"args\":{\"fill\":", pf->f);
			gw_json_double(pf->f, f);
			fputs("}}", pf->f);
		}
	}
out:
	free(steps);
	return err;
}

/* The analysis's share: the attributed idle gaps, and the SM-fill counter from its timeline
 * bins for traces with too many kernels for the exact one. */
static void analysis_tracks(struct gw_pf *pf, struct gw_pf_trace *traces)
{
	const struct gw_analysis *a = pf->a;
	long long fill_pid = GW_PF_SUMMARY_PID;
	bool binned = false;

	for (unsigned i = 0; i < a->n_traces; i++)
		binned |= traces[i].fill_overflow;
	if (binned && a->n_devices == 1) {
		fill_pid = GW_PF_GPU_PID(a->devices[0].trace, a->devices[0].id);
	} else if (binned) {
		metadata(pf, "process_name", fill_pid, 0, "all GPUs (gpuwhy analysis)", 0);
		metadata(pf, "process_sort_index", fill_pid, 0, NULL, -1);
	}
	for (unsigned i = 0; binned && a->bins && i < a->n_bins; i++) {
		begin_event(pf);
		fprintf(pf->f, "\"ph\":\"C\",\"name\":\"SM fill (bin mean)\",\"pid\":%lld,",
			fill_pid);
		put_ts(pf->f, "ts", a->start_ns + (uint64_t)i * a->bin_ns, pf->t0);
		fputs(",\"args\":{\"fill\":", pf->f);
		gw_json_double(pf->f, a->bins[i].sm_busy);
		fputs("}}", pf->f);
	}

	for (unsigned d = 0; d < a->n_devices; d++) {
		const struct gw_device_result *dev = &a->devices[d];
		long long pid = GW_PF_GPU_PID(dev->trace, dev->id);

		if (dev->trace < a->n_traces)
			name_gpu(pf, &traces[dev->trace], dev->trace, dev->id);
		metadata(pf, "thread_name", pid, GW_PF_IDLE_TID, "GPU idle (attributed cause)", 0);
		metadata(pf, "thread_sort_index", pid, GW_PF_IDLE_TID, NULL, -1);
	}
	for (size_t i = 0; i < a->n_gaps; i++) {
		const struct gw_gap *g = &a->gaps[i];
		const struct gw_device_result *dev;

		if (g->device >= a->n_devices || g->bucket >= GW_BUCKET_COUNT)
			continue;
		dev = &a->devices[g->device];
		begin_event(pf);
		fprintf(pf->f,
			"\"ph\":\"X\",\"cat\":\"idle\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,",
			gw_buckets[g->bucket].key, GW_PF_GPU_PID(dev->trace, dev->id),
			GW_PF_IDLE_TID);
		put_ts(pf->f, "ts", g->start_ns, pf->t0);
		fputc(',', pf->f);
		put_ts(pf->f, "dur", g->end_ns >= g->start_ns ? g->end_ns : g->start_ns,
		       g->start_ns);
		fputs(",\"args\":{\"cause\":", pf->f);
		gw_json_cstr(pf->f, gw_buckets[g->bucket].label);
		fputs("}}", pf->f);
	}
}

static void trace_free(struct gw_pf_trace *t)
{
	for (size_t i = 0; i < t->n_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->classes);
	gw_vec_free(&t->mem);
	gw_vec_free(&t->kernels);
	gw_hmap_free(&t->streams);
	gw_hmap_free(&t->threads);
}

int gw_report_perfetto(const struct gw_analysis *a, const char *const *paths, int n,
		       const char *out)
{
	struct gw_pf pf = {.a = a, .t0 = UINT64_MAX, .first = true};
	struct gw_pf_trace *traces = calloc(n > 0 ? (size_t)n : 1, sizeof(*traces));
	bool to_stdout = strcmp(out, "-") == 0;
	int err = 0;

	if (!traces)
		return -ENOMEM;
	for (int i = 0; i < n && err >= 0; i++)
		err = first_pass(paths[i], &traces[i], &pf.t0);
	if (err < 0)
		goto out;
	if (pf.t0 == UINT64_MAX || (a->start_ns && a->start_ns < pf.t0))
		pf.t0 = a->start_ns;

	pf.f = to_stdout ? stdout : fopen(out, "we");
	if (!pf.f) {
		err = -errno;
		goto out;
	}
	/* The verdict in the trace's metadata (Perfetto shows otherData on its info page). */
	fprintf(pf.f,
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpuwhy-report\","
		"\"compute\":\"%.1f%% of SM-time\",\"largest_loss\":\"%s %.1f%%\"},"
		"\"traceEvents\":[",
		a->breakdown[GW_BUCKET_COMPUTE] * 100,
		a->top_idle < GW_BUCKET_COUNT ? gw_buckets[a->top_idle].key : "none",
		a->top_idle < GW_BUCKET_COUNT ? a->breakdown[a->top_idle] * 100 : 0.0);
	for (int i = 0; i < n && err >= 0; i++)
		err = second_pass(&pf, paths[i], &traces[i], (unsigned)i);
	for (int i = 0; i < n && err >= 0; i++)
		err = memory_counters(&pf, &traces[i], (unsigned)i);
	for (int i = 0; i < n && err >= 0; i++)
		err = fill_counters(&pf, &traces[i], (unsigned)i);
	if (err >= 0)
		analysis_tracks(&pf, traces);
	fputs("\n]}\n", pf.f);
	if (ferror(pf.f) && err >= 0)
		err = -EIO;
	if (to_stdout) {
		if (fflush(pf.f) != 0 && err >= 0)
			err = -errno;
	} else if (fclose(pf.f) != 0 && err >= 0) {
		err = -errno;
	}
out:
	for (int i = 0; i < n; i++)
		trace_free(&traces[i]);
	free(traces);
	return err;
}
