/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --json`: the analysis as a gpuwhy-report/1 JSON document. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json-out.h"
#include "report-json.h"

/* Strict UTF-8 (json-out.c): a lead byte and the right number of continuation bytes is not
 * enough, overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either, and
 * a JSON reader decoding the report rejects them. */
static void jstr(FILE *f, const char *s)
{
	gw_json_cstr(f, s);
}

static void jnum(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.12g", v);
}

static void jkey(FILE *f, const char *k)
{
	fprintf(f, "\"%s\":", k);
}

static void breakdown(FILE *f, const double *bd)
{
	fputc('{', f);
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		if (b)
			fputc(',', f);
		jkey(f, gw_buckets[b].key);
		jnum(f, bd[b]);
	}
	fputc('}', f);
}

static void counts(FILE *f, const struct gw_counts *c)
{
	fprintf(f,
		"{\"kernels\":%" PRIu64 ",\"tiny_kernels\":%" PRIu64 ",\"launches\":%" PRIu64
		",\"host_syncs\":%" PRIu64 ",\"memcpy\":%" PRIu64 ",\"memset\":%" PRIu64
		",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"syncs_explicit\":%" PRIu64
		",\"syncs_copy\":%" PRIu64 ",\"syncs_implicit\":%" PRIu64
		",\"captured_launches\":%" PRIu64 ",\"syncs_poll\":%" PRIu64
		",\"poll_queries\":%" PRIu64 ",\"host_functions\":%" PRIu64
		",\"value_waits\":%" PRIu64 ",\"peer_copies\":%" PRIu64 "}",
		c->kernels, c->tiny_kernels, c->launches, c->host_syncs, c->memcpy, c->memset,
		c->allocations, c->frees, c->syncs_by_kind[GW_SYNC_EXPLICIT],
		c->syncs_by_kind[GW_SYNC_COPY], c->syncs_by_kind[GW_SYNC_IMPLICIT],
		c->captured_launches, c->syncs_by_kind[GW_SYNC_POLL], c->poll_queries,
		c->host_functions, c->value_waits, c->peer_copies);
}

/* The site's fields, inside an object already opened (leading comma included). */
static void site(FILE *f, const struct gw_site *s)
{
	fputs(",\"site\":", f);
	jstr(f, s->text);
	fputs(",\"function\":", f);
	jstr(f, s->function);
	fputs(",\"file\":", f);
	jstr(f, s->file);
	fprintf(f, ",\"line\":%u,\"module\":", s->line);
	jstr(f, s->module);
	fprintf(f, ",\"offset\":%" PRIu64 ",\"trace_index\":%u,\"frames\":[", s->offset, s->trace);
	for (unsigned i = 0; i < s->n_frames; i++) {
		if (i)
			fputc(',', f);
		jstr(f, s->frames[i]);
	}
	/* the same frames, field by field, each with its language */
	fprintf(f, "],\"lang\":\"%s\",\"native_site\":",
		s->lang == GW_FRAME_PYTHON ? "python" : "native");
	jstr(f, s->native);
	fputs(",\"stack\":[", f);
	for (unsigned i = 0; i < s->n_frames; i++) {
		const struct gw_frame_detail *d = s->details ? &s->details[i] : NULL;

		fprintf(f, "%s{\"lang\":\"%s\",\"text\":", i ? "," : "",
			d && d->lang == GW_FRAME_PYTHON ? "python" : "native");
		jstr(f, s->frames[i]);
		fputs(",\"function\":", f);
		jstr(f, d ? d->function : NULL);
		fputs(",\"file\":", f);
		jstr(f, d ? d->file : NULL);
		fprintf(f, ",\"line\":%u,\"module\":", d ? d->line : 0);
		jstr(f, d ? d->module : NULL);
		fputc('}', f);
	}
	fputc(']', f);
}

static void bucket_values(FILE *f, const double *v)
{
	breakdown(f, v);
}

/* "steps": every step; "step_summary": the statistics over them and the slowest. */
static void jnum_or_null(FILE *f, double v)
{
	if (v < 0)
		fputs("null", f);
	else
		jnum(f, v);
}

/* One device's series: {"dram_bw_util": [[t_ns, value], ...], ...}; each value holds from its
 * time to the next point's, and a last point at the last window's end closes the series. */
static void series_of(FILE *f, const struct gw_counters *c, unsigned device)
{
	bool first = true;

	fputc('{', f);
	for (unsigned i = 0; i < c->n_series; i++) {
		const struct gw_counter_series *s = &c->series[i];

		if (s->device != device)
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		jkey(f, s->key);
		fputc('[', f);
		for (size_t k = 0; k < s->n; k++) {
			fprintf(f, "%s[%" PRIu64 ",", k ? "," : "", s->points[k].start_ns);
			jnum(f, s->points[k].value);
			fputc(']', f);
		}
		if (s->n) {
			fprintf(f, ",[%" PRIu64 ",", s->points[s->n - 1].end_ns);
			jnum(f, s->points[s->n - 1].value);
			fputc(']', f);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

static void counters(FILE *f, const struct gw_counters *c)
{
	static const char *const sources[] = {NULL, "gpm", "samples"};
	unsigned devices[64], nd = 0;

	for (unsigned i = 0; i < c->n_series; i++) {
		unsigned k = 0;

		while (k < nd && devices[k] != c->series[i].device)
			k++;
		if (k == nd && nd < 64)
			devices[nd++] = c->series[i].device;
	}
	fprintf(f, "{\"measured\":%s,\"source\":", c->measured ? "true" : "false");
	jstr(f, c->measured && c->source < 3 ? sources[c->source] : NULL);
	fputs(",\"period_ns\":", f);
	if (c->period_ns)
		fprintf(f, "%" PRIu64, c->period_ns);
	else
		fputs("null", f);
	fputs(",\"reason\":", f);
	jstr(f, c->measured ? NULL : c->reason);
	/* the first device's series at the top, every device's below */
	fputs(",\"series\":", f);
	if (nd)
		series_of(f, c, devices[0]);
	else
		fputs("{}", f);
	fputs(",\"devices\":[", f);
	for (unsigned k = 0; k < nd; k++) {
		fprintf(f, "%s{\"device\":%u,\"means\":{", k ? "," : "", devices[k]);
		for (unsigned i = 0, n = 0; i < c->n_series; i++)
			if (c->series[i].device == devices[k]) {
				fputs(n++ ? "," : "", f);
				jkey(f, c->series[i].key);
				jnum_or_null(f, c->series[i].mean);
			}
		fputs("},\"series\":", f);
		series_of(f, c, devices[k]);
		fputc('}', f);
	}
	fprintf(f, "],\"windows\":%u,\"dram_fit_rms\":", c->windows);
	jnum(f, c->dram_fit_rms);
	fputs(",\"dram_r2\":", f);
	jnum(f, c->windows ? c->dram_r2 : NAN);
	fputs(",\"reclassified_share\":", f);
	jnum(f, c->reclassified_share);
	fputs(",\"estimates\":[", f);
	for (unsigned i = 0; i < c->n_estimates; i++) {
		const struct gw_usage_estimate *e = &c->estimates[i];

		fprintf(f, "%s{\"device\":%u,\"name\":", i ? "," : "", e->device);
		jstr(f, e->name);
		fprintf(f, ",\"kernels\":%s,\"busy_ns\":%" PRIu64 ",\"windows\":%u,\"dram\":",
			e->kernels ? "true" : "false", e->busy_ns, e->windows);
		jnum(f, e->dram);
		fputs(",\"dram_se\":", f);
		jnum_or_null(f, e->dram_se);
		fputs(",\"sm\":", f);
		jnum_or_null(f, e->sm);
		fputs(",\"sm_se\":", f);
		jnum_or_null(f, e->sm < 0 ? -1 : e->sm_se);
		fputs(",\"name_class\":", f);
		jstr(f, e->kernels ? gw_buckets[e->name_class].key : NULL);
		fputs(",\"measured_class\":", f);
		jstr(f, e->kernels && e->measured_class < GW_BUCKET_COUNT
				? gw_buckets[e->measured_class].key
				: NULL);
		fputs(",\"agrees\":", f);
		fputs(!e->kernels || e->measured_class >= GW_BUCKET_COUNT ? "null"
		      : e->measured_class == e->name_class		  ? "true"
									  : "false",
		      f);
		fputs(",\"confidence\":", f);
		jstr(f, e->confidence);
		fprintf(f, ",\"applied\":%s}", e->applied ? "true" : "false");
	}
	fputs("]}", f);
}

static void steps(FILE *f, const struct gw_steps *ss)
{
	fputs(",\"steps\":[", f);
	for (unsigned i = 0; i < ss->n; i++) {
		const struct gw_step *p = &ss->steps[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, p->name);
		fprintf(f,
			",\"trace_index\":%u,\"tid\":%" PRIu64 ",\"start_ns\":%" PRIu64
			",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"device_ns\":",
			p->trace, p->tid, p->start_ns, p->end_ns, p->duration_ns);
		jnum(f, p->device_ns);
		fprintf(f, ",\"ops\":%" PRIu64 ",\"breakdown\":", p->ops);
		breakdown(f, p->breakdown);
		fputc('}', f);
	}
	fputs("],\"step_summary\":{\"count\":", f);
	fprintf(f, "%u,\"pattern\":", ss->n);
	jstr(f, ss->pattern);
	fprintf(f,
		",\"ranges\":%" PRIu64 ",\"median_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64
		",\"max_ns\":%" PRIu64 ",\"mean_ns\":%" PRIu64 ",\"sm_share\":",
		ss->ranges, ss->median_ns, ss->p90_ns, ss->max_ns, ss->mean_ns);
	jnum(f, ss->sm_share);
	fputs(",\"breakdown\":", f);
	breakdown(f, ss->mean_breakdown);
	fputs(",\"mean_bucket_ns\":", f);
	bucket_values(f, ss->mean_bucket_ns);
	fputs(",\"median_bucket_ns\":", f);
	bucket_values(f, ss->median_bucket_ns);
	fputs(",\"slowest\":[", f);
	for (unsigned i = 0; i < ss->n_slow; i++) {
		const struct gw_slow_step *w = &ss->slow[i];

		fprintf(f, "%s{\"index\":%u,\"name\":", i ? "," : "", w->step);
		jstr(f, ss->steps[w->step].name);
		fprintf(f,
			",\"duration_ns\":%" PRIu64 ",\"over_median_ns\":%" PRId64 ",\"bucket\":",
			ss->steps[w->step].duration_ns, w->over_ns);
		/* GW_BUCKET_COUNT: no bucket explains it (null) */
		jstr(f, w->bucket < GW_BUCKET_COUNT ? gw_buckets[w->bucket].key : NULL);
		fputs(",\"bucket_over_median_ns\":", f);
		jnum(f, w->bucket_over_ns);
		fputs(",\"what\":", f);
		jstr(f, w->what);
		site(f, &w->site);
		fputc('}', f);
	}
	fputs("],\"range_names\":[", f);
	for (unsigned i = 0; i < ss->n_names; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, ss->names[i]);
		fprintf(f, ",\"count\":%" PRIu64 "}", ss->name_counts[i]);
	}
	fputs("]}", f);
}

int gw_report_json(const struct gw_analysis *res, const struct gw_analysis_options *opt, FILE *f)
{
	const struct gw_trace_info *t0 = res->n_traces ? &res->traces[0] : NULL;
	uint64_t records = 0, dropped = 0, untimed = 0;
	bool truncated = false, clean = res->n_traces > 0;
	double budget = res->budget_sm_ns > 0 ? res->budget_sm_ns : 1;

	for (unsigned i = 0; i < res->n_traces; i++) {
		records += res->traces[i].records;
		dropped += res->traces[i].dropped_records;
		untimed += res->traces[i].untimed_gpu_ops;
		truncated |= res->traces[i].truncated;
		clean &= res->traces[i].clean_exit;
	}
	fputs("{\"schema\":\"gpuwhy-report/1\",\"trace\":{", f);
	fprintf(f, "\"pid\":%" PRIu64 ",\"command\":", t0 ? t0->pid : 0);
	jstr(f, t0 ? t0->command : NULL);
	fprintf(f, ",\"records\":%" PRIu64 ",\"dropped_records\":%" PRIu64, records, dropped);
	fprintf(f, ",\"untimed_gpu_ops\":%" PRIu64, untimed);
	fprintf(f, ",\"truncated\":%s,\"clean_exit\":%s},", truncated ? "true" : "false",
		clean ? "true" : "false");
	fprintf(f,
		"\"window\":{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"duration_ns\":%" PRIu64 "},",
		res->start_ns, res->end_ns, res->end_ns - res->start_ns);

	fputs("\"devices\":[", f);
	for (unsigned i = 0; i < res->n_devices; i++) {
		const struct gw_device_result *d = &res->devices[i];

		fprintf(f, "%s{\"id\":%" PRIu64 ",\"name\":", i ? "," : "", d->id);
		jstr(f, d->name ? d->name : "(no device record)");
		fprintf(f,
			",\"sm_count\":%" PRIu64 ",\"memory_total_bytes\":%" PRIu64
			",\"trace_index\":%u,\"described\":%s,\"peak_bytes\":%" PRIu64
			",\"processes\":%u}",
			d->sm_count, d->memory_total_bytes, d->trace,
			d->described ? "true" : "false", d->peak_bytes, d->processes);
	}
	fputs("],\"breakdown\":", f);
	breakdown(f, res->breakdown);
	/* Without any GPU operation there is no SM-time to attribute: no cause (null); without
	 * idle SM-time, no idle cause (every key ties at 0). */
	fputs(",\"dominant_cause\":", f);
	jstr(f, res->budget_sm_ns > 0 ? gw_buckets[res->dominant].key : NULL);
	fputs(",\"top_idle_cause\":", f);
	jstr(f, res->budget_sm_ns > 0 && res->top_idle < GW_BUCKET_COUNT
			? gw_buckets[res->top_idle].key
			: NULL);
	fputs(",\"counts\":", f);
	counts(f, &res->counts);
	fprintf(f,
		",\"memory\":{\"peak_bytes\":%" PRIu64 ",\"final_bytes\":%" PRIu64
		",\"growth_bytes_per_s\":",
		res->memory.peak_bytes, res->memory.final_bytes);
	jnum(f, res->memory.growth_bytes_per_s);
	fprintf(f, ",\"total_bytes\":%" PRIu64 ",\"peak_fraction\":", res->memory.total_bytes);
	jnum(f, res->memory.peak_fraction);
	fprintf(f,
		",\"managed_peak_bytes\":%" PRIu64 ",\"pinned_peak_bytes\":%" PRIu64
		",\"never_freed\":%" PRIu64 ",\"never_freed_bytes\":%" PRIu64
		",\"recorded\":%s,\"allocator_reserved_peak_bytes\":%" PRIu64
		",\"allocator_allocated_peak_bytes\":%" PRIu64,
		res->memory.managed_peak_bytes, res->memory.pinned_peak_bytes,
		res->memory.never_freed, res->memory.never_freed_bytes,
		res->memory.recorded ? "true" : "false", res->memory.allocator_reserved_peak_bytes,
		res->memory.allocator_allocated_peak_bytes);
	/* CUPTI's own buffers on the device: null when the trace does not say */
	fputs(",\"cupti_buffer_bytes\":", f);
	if (res->memory.cupti_buffer_bytes)
		fprintf(f, "%" PRIu64, res->memory.cupti_buffer_bytes);
	else
		fputs("null", f);
	fputs(",\"cupti_buffer_limit_bytes\":", f);
	if (res->memory.cupti_buffer_limit_bytes)
		fprintf(f, "%" PRIu64 "}", res->memory.cupti_buffer_limit_bytes);
	else
		fputs("null}", f);
	fputs(",\"utilization\":{\"kernel_active\":", f);
	jnum(f, res->util.kernel_active);
	fputs(",\"sm_busy\":", f);
	jnum(f, res->util.sm_busy);
	fputs(",\"compute\":", f);
	jnum(f, res->util.compute);
	fputs(",\"memory_bandwidth\":", f);
	if (res->util.memory_bandwidth < 0)
		fputs("null", f);
	else
		jnum(f, res->util.memory_bandwidth);
	fputs(",\"sources\":{\"kernel_active\":\"share of time with any kernel running "
	      "(nvidia-smi GPU-Util)\",\"sm_busy\":\"mean SM fill from launch configurations "
	      "(estimate of DCGM SM_ACTIVE)\",\"compute\":\"the compute bucket\","
	      "\"memory_bandwidth\":",
	      f);
	jstr(f, res->util.memory_bandwidth >= 0
			? "measured: NVML GPM DRAM_BW_UTIL, mean over the devices' windows"
			: "hardware counters only; not measured");
	fputs("},\"counters\":", f);
	counters(f, &res->counters);
	fputc('}', f);
	fprintf(f, ",\"quadrant\":{\"memory\":\"%s\",\"compute\":\"%s\"}",
		!res->memory.recorded ? "unknown"
		: res->memory_high    ? "high"
				      : "low",
		res->compute_high ? "high" : "low");
	fputs(",\"launch_overhead_split\":{\"queued\":", f);
	jnum(f, res->launch_queued_sm_ns / budget);
	fputs(",\"in_launch_calls\":", f);
	jnum(f, res->launch_in_call_sm_ns / budget);
	fputs(",\"between_launches\":", f);
	jnum(f, res->launch_between_sm_ns / budget);
	fputs("},\"unclassified_kernel_share\":", f);
	jnum(f, res->unclassified_kernel_share);
	fprintf(f,
		",\"startup\":{\"context_creation_ns\":%" PRIu64 ",\"contexts\":%" PRIu64
		",\"loading_ns\":%" PRIu64 ",\"loadings\":%" PRIu64 ",\"compile_ns\":%" PRIu64
		",\"compiles\":%" PRIu64 "}",
		res->startup.context_ns, res->startup.contexts, res->startup.loading_ns,
		res->startup.loadings, res->startup.compile_ns, res->startup.compiles);
	if (opt)
		fprintf(f,
			",\"thresholds\":{\"tiny_ns\":%" PRIu64 ",\"starve_ns\":%" PRIu64
			",\"queue_ns\":%" PRIu64 ",\"skew_ns\":%" PRIu64 "}",
			opt->tiny_ns, opt->starve_ns, opt->queue_ns, opt->skew_ns);

	fputs(",\"sync_sites\":[", f);
	for (unsigned i = 0; i < res->n_sync_sites; i++) {
		const struct gw_sync_site *s = &res->sync_sites[i];

		fprintf(f, "%s{\"api\":", i ? "," : "");
		jstr(f, s->api);
		fprintf(f,
			",\"kind\":\"%s\",\"count\":%" PRIu64 ",\"wait_ns\":%" PRIu64
			",\"exposed_ns\":%" PRIu64 ",\"exposed_fraction\":",
			gw_sync_kind_name(s->kind)->key, s->count, s->wait_ns, s->exposed_ns);
		jnum(f, s->exposed_sm_ns / budget);
		fprintf(f, ",\"host_work_after_ns\":%" PRIu64, s->host_work_after_ns);
		site(f, &s->site);
		fputc('}', f);
	}
	fputs("],\"blocked_streams\":[", f);
	for (unsigned i = 0; i < res->n_blocked; i++) {
		const struct gw_blocked_stream *b = &res->blocked[i];

		fprintf(f,
			"%s{\"device\":%" PRIu64 ",\"stream\":%" PRIu64 ",\"gaps\":%" PRIu64
			",\"total_ns\":%" PRIu64 ",\"longest_ns\":%" PRIu64 ",\"next\":",
			i ? "," : "", b->device, b->stream, b->gaps, b->total_ns, b->longest_ns);
		jstr(f, b->next);
		fprintf(f, ",\"launched_in_trace\":%s", b->launched ? "true" : "false");
		site(f, &b->site);
		fputs(",\"held_by\":", f);
		if (b->held_by) {
			fputs("{\"api\":", f);
			jstr(f, b->held_by);
			site(f, &b->held_site);
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputs("],\"host_function_sites\":[", f);
	for (unsigned i = 0; i < res->n_host_funcs; i++) {
		const struct gw_host_func_site *h = &res->host_funcs[i];

		fprintf(f, "%s{\"api\":", i ? "," : "");
		jstr(f, h->api);
		fprintf(f, ",\"calls\":%" PRIu64 ",\"gaps\":%" PRIu64 ",\"held_ns\":%" PRIu64,
			h->calls, h->gaps, h->held_ns);
		site(f, &h->site);
		fputc('}', f);
	}
	fputs("],\"tiny_kernels_top\":[", f);
	for (unsigned i = 0; i < res->n_tiny_kernels; i++) {
		const struct gw_tiny_kernel *k = &res->tiny_kernels[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, k->name);
		fprintf(f,
			",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"mean_ns\":%" PRIu64
			",\"gap_before_ns\":%" PRIu64,
			k->count, k->total_ns, k->count ? k->total_ns / k->count : 0,
			k->gap_before_ns);
		site(f, &k->site);
		fputc('}', f);
	}
	fputs("],\"allocation_sites\":[", f);
	for (unsigned i = 0; i < res->n_alloc_sites; i++) {
		const struct gw_alloc_site *s = &res->alloc_sites[i];

		fprintf(f,
			"%s{\"kind\":\"%s\",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"max_bytes\":%" PRIu64 ",\"never_freed\":%" PRIu64
			",\"never_freed_bytes\":%" PRIu64,
			i ? "," : "", gw_mem_kind_name(s->kind)->key, s->count, s->bytes,
			s->max_bytes, s->never_freed, s->never_freed_bytes);
		site(f, &s->site);
		fputc('}', f);
	}
	fputs("],\"fusion_candidates\":[", f);
	for (unsigned i = 0; i < res->n_fusion; i++) {
		const struct gw_fusion_candidate *c = &res->fusion[i];

		fprintf(f, "%s{\"kernels\":[", i ? "," : "");
		for (unsigned k = 0; k < c->n_kernels; k++) {
			if (k)
				fputc(',', f);
			jstr(f, c->names[k]);
		}
		fprintf(f,
			"],\"occurrences\":%" PRIu64 ",\"kernel_ns\":%" PRIu64
			",\"saved_ns\":%" PRIu64,
			c->occurrences, c->kernel_ns, c->saved_ns);
		site(f, &c->site);
		fputc('}', f);
	}
	fputs("],\"kernels_top\":[", f);
	for (unsigned i = 0; i < res->n_kernels; i++) {
		const struct gw_kernel_stat *k = &res->kernels[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, k->name);
		fprintf(f,
			",\"class\":\"%s\",\"classified\":%s,\"count\":%" PRIu64
			",\"total_ns\":%" PRIu64 ",\"mean_fill\":",
			gw_buckets[k->cls].key, k->classified ? "true" : "false", k->count,
			k->total_ns);
		jnum(f, k->mean_fill);
		fprintf(f, ",\"chain_count\":%" PRIu64, k->chain_count);
		site(f, &k->site);
		fputc('}', f);
	}
	fputs("],\"recommendations\":[", f);
	for (unsigned i = 0; i < res->n_recs; i++) {
		const struct gw_recommendation *r = &res->recs[i];

		fprintf(f, "%s{\"bucket\":\"%s\",\"fraction\":", i ? "," : "",
			r->bucket < GW_BUCKET_COUNT ? gw_buckets[r->bucket].key : "quadrant");
		jnum(f, r->fraction);
		fputs(",\"text\":", f);
		jstr(f, r->text);
		fputc('}', f);
	}
	fputc(']', f);
	steps(f, &res->steps);
	fputs(",\"warnings\":[", f);
	for (unsigned i = 0; i < res->n_warnings; i++) {
		if (i)
			fputc(',', f);
		jstr(f, res->warnings[i]);
	}
	fputc(']', f);
	if (res->n_devices > 1) {
		fputs(",\"per_device\":[", f);
		for (unsigned i = 0; i < res->n_devices; i++) {
			const struct gw_device_result *d = &res->devices[i];

			fprintf(f,
				"%s{\"id\":%" PRIu64 ",\"trace_index\":%u,\"sm_count\":%" PRIu64
				",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"breakdown\":",
				i ? "," : "", d->id, d->trace, d->sm_count, d->start_ns, d->end_ns);
			breakdown(f, d->breakdown);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputs(",\"traces\":[", f);
	for (unsigned i = 0; i < res->n_traces; i++) {
		const struct gw_trace_info *t = &res->traces[i];

		fprintf(f, "%s{\"path\":", i ? "," : "");
		jstr(f, t->path);
		fprintf(f, ",\"pid\":%" PRIu64 ",\"rank\":%" PRId64 ",\"command\":", t->pid,
			t->rank);
		jstr(f, t->command);
		fprintf(f,
			",\"records\":%" PRIu64 ",\"dropped_records\":%" PRIu64
			",\"untimed_gpu_ops\":%" PRIu64
			",\"truncated\":%s,\"clean_exit\":%s,\"start_ns\":%" PRIu64
			",\"end_ns\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"breakdown\":",
			t->records, t->dropped_records, t->untimed_gpu_ops,
			t->truncated ? "true" : "false", t->clean_exit ? "true" : "false",
			t->start_ns, t->end_ns, t->peak_bytes);
		breakdown(f, t->breakdown);
		/* as at the top: no GPU operation, no SM-time, no cause */
		fputs(",\"dominant_cause\":", f);
		jstr(f, t->end_ns > t->start_ns ? gw_buckets[t->dominant].key : NULL);
		fputs(",\"top_idle_cause\":", f);
		jstr(f, t->top_idle < GW_BUCKET_COUNT ? gw_buckets[t->top_idle].key : NULL);
		fputs(",\"counts\":", f);
		counts(f, &t->counts);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}
