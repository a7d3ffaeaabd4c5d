/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --perfetto FILE`: the analysis's event view as Chrome trace-event JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "report-perfetto.h"
#include "util.h"

/* Chrome JSON wants integer pids: GPUs get ids far above any Linux pid (pid_max <= 2^22). */
#define GW_PF_GPU_PID(trace, device) (1000000000ll + (long long)(trace)*1000 + (long long)(device))
#define GW_PF_SUMMARY_PID	     999999999ll
#define GW_PF_IDLE_TID		     999999999ll

struct gw_pf {
	FILE *f;
	const struct gw_analysis *a;
	uint64_t t0;
	uint64_t cut; /* nothing from this time on is written (UINT64_MAX: no cut) */
	bool first;
	bool *gpu_named;	/* per device index */
	struct gw_hmap streams; /* (device index, stream) named */
	struct gw_hmap threads; /* (trace, tid) named */
};

void gw_report_perfetto_options(struct gw_analysis_options *opt)
{
	if (opt->timeline_bins < GW_PERFETTO_TIMELINE_BINS)
		opt->timeline_bins = GW_PERFETTO_TIMELINE_BINS;
	opt->keep_gaps = true;
	opt->keep_events = true;
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

static long long gpu_pid(const struct gw_pf *pf, unsigned device)
{
	const struct gw_device_result *d = &pf->a->devices[device];

	return GW_PF_GPU_PID(d->trace, d->id);
}

static int64_t trace_pid(const struct gw_pf *pf, unsigned trace)
{
	return trace < pf->a->n_traces ? (int64_t)pf->a->traces[trace].pid : 0;
}

static void name_gpu(struct gw_pf *pf, unsigned device)
{
	const struct gw_device_result *d = &pf->a->devices[device];
	char *label;

	if (pf->gpu_named[device])
		return;
	pf->gpu_named[device] = true;
	label = gw_strdupf("GPU %" PRIu64 " %s%s(pid %" PRId64 ")", d->id, d->name ? d->name : "",
			   d->name ? " " : "", trace_pid(pf, d->trace));
	metadata(pf, "process_name", gpu_pid(pf, device), 0, label ? label : "GPU", 0);
	metadata(pf, "process_sort_index", gpu_pid(pf, device), 0, NULL,
		 (long long)d->trace * 100 + 50 + (long long)d->id);
	free(label);
}

static void name_stream(struct gw_pf *pf, unsigned device, uint64_t stream)
{
	bool fresh = false;
	char label[64];

	name_gpu(pf, device);
	if (!gw_hmap_get(&pf->streams, device, stream, &fresh) || !fresh)
		return;
	snprintf(label, sizeof(label), "stream %" PRIu64, stream);
	metadata(pf, "thread_name", gpu_pid(pf, device), (long long)stream, label, 0);
}

/* A host thread's track, named once: by its THREAD record's name, else by its tid. */
static void name_thread(struct gw_pf *pf, unsigned trace, uint64_t tid, const char *name)
{
	bool fresh = false;
	char label[64];

	if (!gw_hmap_get(&pf->threads, trace, tid, &fresh) || (!fresh && !name))
		return;
	if (!name) {
		snprintf(label, sizeof(label), "thread %" PRIu64, tid);
		name = label;
	}
	metadata(pf, "thread_name", trace_pid(pf, trace), (long long)tid, name, 0);
}

static uint64_t flow_id(unsigned trace, uint64_t corr)
{
	return ((uint64_t)trace << 40) | (corr & ((1ull << 40) - 1));
}

static void call_event(struct gw_pf *pf, const struct gw_view_call *c)
{
	FILE *f = pf->f;

	name_thread(pf, c->trace, c->tid, NULL);
	begin_event(pf);
	fputs("\"ph\":\"X\",\"cat\":\"api\",\"name\":", f);
	if (c->name)
		gw_json_cstr(f, c->name);
	else
		fprintf(f, "\"api %" PRIu32 "/%" PRIu32 "\"", c->domain, c->cbid);
	fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRIu64 ",", trace_pid(pf, c->trace), c->tid);
	put_ts(f, "ts", c->start_ns, pf->t0);
	fputc(',', f);
	put_ts(f, "dur", c->end_ns, c->start_ns);
	if (c->correlation && (c->category == GW_API_LAUNCH || c->category == GW_API_MEMCPY ||
			       c->category == GW_API_MEMSET))
		fprintf(f, ",\"bind_id\":%" PRIu64 ",\"flow_out\":true",
			flow_id(c->trace, c->correlation));
	fprintf(f, ",\"args\":{\"correlation\":%" PRIu64 ",\"stream\":%" PRIu64, c->correlation,
		c->stream);
	if (c->sync_kind)
		fprintf(f, ",\"sync_kind\":%u", c->sync_kind);
	if (c->bytes)
		fprintf(f, ",\"bytes\":%" PRIu64, c->bytes);
	if (c->kernel) {
		fputs(",\"kernel\":", f);
		gw_json_cstr(f, c->kernel);
	}
	if (c->site && c->site->n_frames) {
		const struct gw_site *s = c->site;

		/* the call site as the report names it, and the frames below it */
		fputs(",\"site\":", f);
		gw_json_cstr(f, s->text);
		fprintf(f, ",\"site_lang\":\"%s\"",
			s->lang == GW_FRAME_PYTHON ? "python" : "native");
		if (s->native) {
			fputs(",\"native_site\":", f);
			gw_json_cstr(f, s->native);
		}
		fputs(",\"stack\":[", f);
		for (unsigned i = 0; i < s->n_frames; i++) {
			if (i)
				fputc(',', f);
			gw_json_cstr(f, s->frames[i]);
		}
		fputc(']', f);
	}
	fputs("}}", f);
}

/* A GPU operation on its stream's track. */
static void op_event(struct gw_pf *pf, const struct gw_view_op *o)
{
	static const char *const copy_kinds[] = {"memcpy",	"memcpy HtoD", "memcpy DtoH",
						 "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
						 "memcpy AtoD", "memcpy DtoA", "memcpy DtoD",
						 "memcpy HtoH", "memcpy PtoP"};
	static const char *const cats[] = {"", "kernel", "memcpy", "memset"};
	const char *cat = cats[o->kind], *name = o->name;
	unsigned trace = o->trace;
	FILE *f = pf->f;

	if (o->kind == GW_VIEW_MEMCPY)
		name = o->copy_kind < sizeof(copy_kinds) / sizeof(copy_kinds[0])
			       ? copy_kinds[o->copy_kind]
			       : "memcpy";
	name_stream(pf, o->device, o->stream);
	begin_event(pf);
	fprintf(f, "\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	gw_json_cstr(f, name ? name : cat);
	fprintf(f, ",\"pid\":%lld,\"tid\":%" PRIu64 ",", gpu_pid(pf, o->device), o->stream);
	put_ts(f, "ts", o->start_ns, pf->t0);
	fputc(',', f);
	put_ts(f, "dur", o->end_ns, o->start_ns);
	if (o->correlation)
		fprintf(f, ",\"bind_id\":%" PRIu64 ",\"flow_in\":true",
			flow_id(trace, o->correlation));
	fprintf(f, ",\"args\":{\"correlation\":%" PRIu64, o->correlation);
	if (o->kind == GW_VIEW_KERNEL) {
		fprintf(f,
			",\"grid\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],\"block\":[%" PRIu64
			",%" PRIu64 ",%" PRIu64 "],\"registers\":%" PRIu64
			",\"smem_bytes\":%" PRIu64 ",\"class\":\"%s\",\"fill\":",
			o->grid[0], o->grid[1], o->grid[2], o->block[0], o->block[1], o->block[2],
			o->registers, o->smem_bytes,
			o->cls < GW_BUCKET_COUNT ? gw_buckets[o->cls].key : "compute");
		gw_json_double(f, o->fill);
		fputs("}}", f);
	} else {
		fprintf(f, ",\"bytes\":%" PRIu64 "}}", o->bytes);
	}
}

/* A counter's value from t on; bytes are whole numbers, printed whole. */
static void counter_event(struct gw_pf *pf, long long pid, const char *name, const char *arg,
			  uint64_t t, double value)
{
	begin_event(pf);
	fprintf(pf->f, "\"ph\":\"C\",\"name\":\"%s\",\"pid\":%lld,", name, pid);
	put_ts(pf->f, "ts", t, pf->t0);
	fprintf(pf->f, ",\"args\":{\"%s\":", arg);
	if (strcmp(arg, "bytes") == 0)
		fprintf(pf->f, "%" PRIu64, (uint64_t)value);
	else
		gw_json_double(pf->f, value);
	fputs("}}", pf->f);
}

/* Per trace: its process, its threads, its calls; then every GPU operation. */
static void events(struct gw_pf *pf)
{
	const struct gw_analysis *a = pf->a;
	const struct gw_event_view *v = a->view;

	for (unsigned t = 0; t < a->n_traces; t++) {
		const struct gw_trace_info *ti = &a->traces[t];
		char *label =
			gw_strdupf("pid %" PRIu64 " %s", ti->pid, ti->command ? ti->command : "");

		metadata(pf, "process_name", (long long)ti->pid, 0, label ? label : "process", 0);
		metadata(pf, "process_sort_index", (long long)ti->pid, 0, NULL, (long long)t * 100);
		free(label);
	}
	for (size_t i = 0; i < v->n_threads; i++)
		if (v->threads[i].name && v->threads[i].name[0])
			name_thread(pf, v->threads[i].trace, v->threads[i].tid, v->threads[i].name);
	for (size_t i = 0; i < v->n_calls; i++)
		if (v->calls[i].start_ns < pf->cut)
			call_event(pf, &v->calls[i]);
	for (size_t i = 0; i < v->n_ops; i++)
		if (v->ops[i].start_ns < pf->cut)
			op_event(pf, &v->ops[i]);
	for (size_t i = 0; i < v->n_memory && v->memory[i].time_ns < pf->cut; i++) {
		name_gpu(pf, v->memory[i].device);
		counter_event(pf, gpu_pid(pf, v->memory[i].device), "live device memory", "bytes",
			      v->memory[i].time_ns, v->memory[i].value);
	}
	for (size_t i = 0; v->fill_complete && i < v->n_fill && v->fill[i].time_ns < pf->cut; i++) {
		name_gpu(pf, v->fill[i].device);
		counter_event(pf, gpu_pid(pf, v->fill[i].device), "SM fill", "fill",
			      v->fill[i].time_ns, v->fill[i].value);
	}
}

/* The analysis's share: the attributed idle gaps, and the SM-fill counter from its timeline
 * bins when the view could not keep every step. */
static void analysis_tracks(struct gw_pf *pf)
{
	const struct gw_analysis *a = pf->a;
	long long fill_pid = GW_PF_SUMMARY_PID;
	bool binned = !a->view->fill_complete;

	if (binned && a->n_devices == 1) {
		fill_pid = gpu_pid(pf, 0);
	} else if (binned) {
		metadata(pf, "process_name", fill_pid, 0, "all GPUs (gpuwhy analysis)", 0);
		metadata(pf, "process_sort_index", fill_pid, 0, NULL, -1);
	}
	for (unsigned i = 0;
	     binned && a->bins && i < a->n_bins && a->start_ns + (uint64_t)i * a->bin_ns < pf->cut;
	     i++)
		counter_event(pf, fill_pid, "SM fill (bin mean)", "fill",
			      a->start_ns + (uint64_t)i * a->bin_ns, a->bins[i].sm_busy);

	/* the measured counters (NVML), a window's mean from its start, the last closed at its
	 * end */
	for (unsigned i = 0; i < a->counters.n_series; i++) {
		const struct gw_counter_series *s = &a->counters.series[i];
		char name[64];

		if (s->device >= a->n_devices || !s->n)
			continue;
		snprintf(name, sizeof(name), "%s (measured, NVML)", s->key);
		name_gpu(pf, s->device);
		for (size_t k = 0; k < s->n && s->points[k].start_ns < pf->cut; k++)
			counter_event(pf, gpu_pid(pf, s->device), name, "share",
				      s->points[k].start_ns, s->points[k].value);
		if (s->points[s->n - 1].end_ns < pf->cut)
			counter_event(pf, gpu_pid(pf, s->device), name, "share",
				      s->points[s->n - 1].end_ns, s->points[s->n - 1].value);
	}
	for (unsigned d = 0; d < a->n_devices; d++) {
		name_gpu(pf, d);
		metadata(pf, "thread_name", gpu_pid(pf, d), GW_PF_IDLE_TID,
			 "GPU idle (attributed cause)", 0);
		metadata(pf, "thread_sort_index", gpu_pid(pf, d), GW_PF_IDLE_TID, NULL, -1);
	}
	for (size_t i = 0; i < a->n_gaps; i++) {
		const struct gw_gap *g = &a->gaps[i];

		if (g->device >= a->n_devices || g->bucket >= GW_BUCKET_COUNT ||
		    g->start_ns >= pf->cut)
			continue;
		begin_event(pf);
		fprintf(pf->f,
			"\"ph\":\"X\",\"cat\":\"idle\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,",
			gw_buckets[g->bucket].key, gpu_pid(pf, g->device), GW_PF_IDLE_TID);
		put_ts(pf->f, "ts", g->start_ns, pf->t0);
		fputc(',', pf->f);
		put_ts(pf->f, "dur", g->end_ns >= g->start_ns ? g->end_ns : g->start_ns,
		       g->start_ns);
		fputs(",\"args\":{\"cause\":", pf->f);
		gw_json_cstr(pf->f, gw_buckets[g->bucket].label);
		fputs("}}", pf->f);
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return p < q ? -1 : p > q;
}

/* The time before which at most max calls and operations start (UINT64_MAX: all of them fit).
 * A cut in time rather than a sample: what is shown is the run as it was, up to a point. */
static int cut_time(const struct gw_event_view *v, uint64_t max, uint64_t *ret)
{
	size_t n = v->n_calls + v->n_ops, k = 0;
	uint64_t *t;

	*ret = UINT64_MAX;
	if (!max || n <= max)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_calls; i++)
		t[k++] = v->calls[i].start_ns;
	for (size_t i = 0; i < v->n_ops; i++)
		t[k++] = v->ops[i].start_ns;
	qsort(t, n, sizeof(*t), cmp_u64);
	/* events at the cut's own time all go, so it may take fewer than max */
	*ret = t[max];
	free(t);
	return 0;
}

int gw_report_perfetto(const struct gw_analysis *a, uint64_t max_events, FILE *f)
{
	struct gw_pf pf = {.a = a, .t0 = UINT64_MAX, .first = true, .f = f};
	int err = 0;

	if (!a->view)
		return -EINVAL; /* analysed without gw_report_perfetto_options */
	pf.gpu_named = calloc(a->n_devices + 1u, sizeof(*pf.gpu_named));
	if (!pf.gpu_named)
		return -ENOMEM;
	/* Time 0 is the earliest capture start, or the first GPU operation if earlier. */
	for (unsigned t = 0; t < a->n_traces; t++)
		if (a->traces[t].capture_start_ns < pf.t0)
			pf.t0 = a->traces[t].capture_start_ns;
	if (pf.t0 == UINT64_MAX || (a->start_ns && a->start_ns < pf.t0))
		pf.t0 = a->start_ns;

	if ((err = cut_time(a->view, max_events, &pf.cut)) < 0)
		goto out;
	/* The verdict in the trace's metadata (Perfetto shows otherData on its info page). */
	fprintf(pf.f,
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpuwhy-report\","
		"\"compute\":\"%.1f%% of SM-time\",\"largest_loss\":\"%s %.1f%%\"",
		a->breakdown[GW_BUCKET_COMPUTE] * 100,
		a->top_idle < GW_BUCKET_COUNT ? gw_buckets[a->top_idle].key : "none",
		a->top_idle < GW_BUCKET_COUNT ? a->breakdown[a->top_idle] * 100 : 0.0);
	if (pf.cut != UINT64_MAX) {
		fputs(",\"cut_at\":\"", pf.f);
		fprintf(pf.f,
			"%.3f ms: the run is shown up to there (--perfetto-max-events %" PRIu64
			"); the report covers all of it\"",
			(double)(pf.cut - pf.t0) / 1e6, max_events);
	}
	fputs("},\"traceEvents\":[", pf.f);
	events(&pf);
	analysis_tracks(&pf);
	fputs("\n]}\n", pf.f);
	err = ferror(pf.f) ? -EIO : 0;
out:
	free(pf.gpu_named);
	gw_hmap_free(&pf.streams);
	gw_hmap_free(&pf.threads);
	return err;
}
