/* SPDX-License-Identifier: MIT */
/* `gpuwhy-report --html FILE`: writes the analysis as JSON into the embedded page template. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "report-html.h"

/* From the page template, generated at build time by report/html/embed.py. */
extern const char gw_html_page_head[];
extern const char gw_html_page_tail[];

/* Cells the gaps are summed into when there are too many to draw one by one. */
#define GW_HTML_GAP_CELLS 16000u

void gw_report_html_options(struct gw_analysis_options *opt)
{
	if (opt->timeline_bins < GW_HTML_TIMELINE_BINS)
		opt->timeline_bins = GW_HTML_TIMELINE_BINS;
	opt->keep_gaps = true;
}

static void key_u64(FILE *f, const char *key, uint64_t v, bool comma)
{
	fprintf(f, "\"%s\":%" PRIu64 "%s", key, v, comma ? "," : "");
}

static void key_dbl(FILE *f, const char *key, double v, bool comma)
{
	fprintf(f, "\"%s\":", key);
	gw_json_double(f, v);
	if (comma)
		fputc(',', f);
}

static void key_str(FILE *f, const char *key, const char *v, bool comma)
{
	fprintf(f, "\"%s\":", key);
	gw_json_cstr(f, v);
	if (comma)
		fputc(',', f);
}

static void write_site(FILE *f, const struct gw_site *s)
{
	fputs("\"site\":{", f);
	key_str(f, "text", s->text ? s->text : "(no stack)", true);
	fputs("\"frames\":[", f);
	for (unsigned i = 0; i < s->n_frames; i++) {
		if (i)
			fputc(',', f);
		gw_json_cstr(f, s->frames[i]);
	}
	fputs("]}", f);
}

static bool simulated(const struct gw_analysis *a)
{
	for (unsigned i = 0; i < a->n_devices; i++)
		if (a->devices[i].name && strcasestr(a->devices[i].name, "gpusim"))
			return true;
	return false;
}

static void write_header_part(FILE *f, const struct gw_analysis *a)
{
	fprintf(f, "\"schema\":\"gpuwhy-html/1\",\"simulated\":%s,",
		simulated(a) ? "true" : "false");
	key_u64(f, "duration_ns", a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0, true);

	fputs("\"traces\":[", f);
	for (unsigned i = 0; i < a->n_traces; i++) {
		const struct gw_trace_info *t = &a->traces[i];

		fputs(i ? ",{" : "{", f);
		key_str(f, "path", t->path, true);
		key_u64(f, "pid", t->pid, true);
		fprintf(f, "\"rank\":%" PRId64 ",", t->rank);
		key_str(f, "command", t->command, true);
		key_u64(f, "records", t->records, true);
		key_u64(f, "dropped_records", t->dropped_records, true);
		key_dbl(f, "compute", t->breakdown[GW_BUCKET_COMPUTE], true);
		key_str(f, "top_idle",
			t->top_idle < GW_BUCKET_COUNT ? gw_buckets[t->top_idle].key : NULL, true);
		key_dbl(f, "top_idle_fraction",
			t->top_idle < GW_BUCKET_COUNT ? t->breakdown[t->top_idle] : 0, true);
		fprintf(f, "\"truncated\":%s,\"clean_exit\":%s}", t->truncated ? "true" : "false",
			t->clean_exit ? "true" : "false");
	}
	fputs("],\"devices\":[", f);
	for (unsigned i = 0; i < a->n_devices; i++) {
		const struct gw_device_result *d = &a->devices[i];

		fputs(i ? ",{" : "{", f);
		key_u64(f, "trace", d->trace, true);
		key_u64(f, "id", d->id, true);
		key_str(f, "name", d->name, true);
		key_u64(f, "sm_count", d->sm_count, true);
		key_u64(f, "memory_total_bytes", d->memory_total_bytes, true);
		key_u64(f, "peak_bytes", d->peak_bytes, true);
		key_dbl(f, "compute", d->breakdown[GW_BUCKET_COMPUTE], true);
		fprintf(f, "\"described\":%s}", d->described ? "true" : "false");
	}
	fputs("],\"buckets\":[", f);
	for (unsigned b = 0; b < GW_BUCKET_COUNT; b++) {
		fputs(b ? ",{" : "{", f);
		key_str(f, "key", gw_buckets[b].key, true);
		key_str(f, "label", gw_buckets[b].label, true);
		fprintf(f, "\"cause\":%d,", gw_buckets[b].cause);
		key_str(f, "remedy", gw_buckets[b].remedy, true);
		key_dbl(f, "fraction", a->breakdown[b], true);
		key_dbl(f, "sm_ns", a->sm_ns[b], false);
		fputc('}', f);
	}
	fputs("],", f);
	key_str(f, "dominant", a->dominant < GW_BUCKET_COUNT ? gw_buckets[a->dominant].key : NULL,
		true);
	key_str(f, "top_idle", a->top_idle < GW_BUCKET_COUNT ? gw_buckets[a->top_idle].key : NULL,
		true);
	fprintf(f, "\"quadrant\":{\"memory\":\"%s\",\"compute\":\"%s\"},",
		a->memory_high ? "high" : "low", a->compute_high ? "high" : "low");

	fputs("\"util\":{", f);
	key_dbl(f, "kernel_active", a->util.kernel_active, true);
	key_dbl(f, "sm_busy", a->util.sm_busy, true);
	key_dbl(f, "compute", a->util.compute, true);
	if (a->util.memory_bandwidth < 0)
		fputs("\"memory_bandwidth\":null", f);
	else
		key_dbl(f, "memory_bandwidth", a->util.memory_bandwidth, false);
	fputs("},\"memory\":{", f);
	key_u64(f, "peak_bytes", a->memory.peak_bytes, true);
	key_u64(f, "final_bytes", a->memory.final_bytes, true);
	key_dbl(f, "growth_bytes_per_s", a->memory.growth_bytes_per_s, true);
	key_u64(f, "total_bytes", a->memory.total_bytes, true);
	key_dbl(f, "peak_fraction", a->memory.peak_fraction, true);
	key_u64(f, "managed_peak_bytes", a->memory.managed_peak_bytes, true);
	key_u64(f, "pinned_peak_bytes", a->memory.pinned_peak_bytes, true);
	key_u64(f, "never_freed", a->memory.never_freed, true);
	key_u64(f, "never_freed_bytes", a->memory.never_freed_bytes, false);
	fputs("},\"counts\":{", f);
	key_u64(f, "kernels", a->counts.kernels, true);
	key_u64(f, "tiny_kernels", a->counts.tiny_kernels, true);
	key_u64(f, "launches", a->counts.launches, true);
	key_u64(f, "host_syncs", a->counts.host_syncs, true);
	key_u64(f, "memcpy", a->counts.memcpy, true);
	key_u64(f, "memset", a->counts.memset, true);
	key_u64(f, "allocations", a->counts.allocations, true);
	key_u64(f, "frees", a->counts.frees, false);
	fputs("},\"launch_split\":{", f);
	key_dbl(f, "queued_sm_ns", a->launch_queued_sm_ns, true);
	key_dbl(f, "in_call_sm_ns", a->launch_in_call_sm_ns, true);
	key_dbl(f, "between_sm_ns", a->launch_between_sm_ns, false);
	fputs("},", f);
	key_dbl(f, "unclassified_kernel_share", a->unclassified_kernel_share, true);
}

/* The drawing timeline, merged down to at most 2 * GW_HTML_TIMELINE_BINS bins. Values are
 * shares of the bin's SM-time (per bucket), means (fill, kernel-active) and maxima (bytes). */
static void write_timeline(FILE *f, const struct gw_analysis *a)
{
	unsigned group = 1, n;
	double sms = 0, bin_ns;

	for (unsigned i = 0; i < a->n_devices; i++)
		sms += (double)a->devices[i].sm_count;
	if (a->n_bins > 2 * GW_HTML_TIMELINE_BINS)
		group = (a->n_bins + GW_HTML_TIMELINE_BINS - 1) / GW_HTML_TIMELINE_BINS;
	n = a->bins ? (a->n_bins + group - 1) / group : 0;
	bin_ns = (double)a->bin_ns * group;

	fputs("\"timeline\":{", f);
	key_dbl(f, "bin_ns", bin_ns, true);
	fprintf(f, "\"n\":%u,\"sm\":[", n);
	for (unsigned b = 0; b < GW_BUCKET_COUNT; b++) {
		fputs(b ? ",[" : "[", f);
		for (unsigned i = 0; i < n; i++) {
			double sum = 0;

			for (unsigned j = i * group; j < (i + 1) * group && j < a->n_bins; j++)
				sum += a->bins[j].sm_ns[b];
			if (i)
				fputc(',', f);
			fprintf(f, "%.4g", sms > 0 && bin_ns > 0 ? sum / (bin_ns * sms) : 0.0);
		}
		fputc(']', f);
	}
	fputs("],\"busy\":[", f);
	for (unsigned i = 0; i < n; i++) {
		double sum = 0;
		unsigned k = 0;

		for (unsigned j = i * group; j < (i + 1) * group && j < a->n_bins; j++, k++)
			sum += a->bins[j].sm_busy;
		fprintf(f, "%s%.4g", i ? "," : "", k ? sum / k : 0.0);
	}
	fputs("],\"active\":[", f);
	for (unsigned i = 0; i < n; i++) {
		double sum = 0;
		unsigned k = 0;

		for (unsigned j = i * group; j < (i + 1) * group && j < a->n_bins; j++, k++)
			sum += a->bins[j].kernel_active;
		fprintf(f, "%s%.4g", i ? "," : "", k ? sum / k : 0.0);
	}
	fputs("],\"live\":[", f);
	for (unsigned i = 0; i < n; i++) {
		uint64_t max = 0;

		for (unsigned j = i * group; j < (i + 1) * group && j < a->n_bins; j++)
			if (a->bins[j].live_bytes_max > max)
				max = a->bins[j].live_bytes_max;
		fprintf(f, "%s%" PRIu64, i ? "," : "", max);
	}
	fputs("]},", f);
}

/*
 * Too many gaps to draw one by one: sum their idle time per bucket in GW_HTML_GAP_CELLS cells
 * and draw each cell in its largest bucket, with an opacity that says how much of the cell
 * was idle. Adjacent cells of the same bucket are merged. Returns 0 or -ENOMEM.
 */
static int write_gap_cells(FILE *f, const struct gw_analysis *a, uint64_t t0, uint64_t span)
{
	const unsigned cells = GW_HTML_GAP_CELLS;
	double cell_ns = (double)span / cells;
	double *idle = calloc((size_t)cells * GW_BUCKET_COUNT, sizeof(*idle));
	double devices = a->n_devices ? a->n_devices : 1;
	int run_b = -1;
	unsigned run_start = 0;
	double run_alpha = 0;
	bool first = true;

	if (!idle)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_gaps; i++) {
		const struct gw_gap *g = &a->gaps[i];
		double s, e;
		unsigned c0, c1;

		if (g->end_ns <= g->start_ns || g->bucket >= GW_BUCKET_COUNT || g->end_ns <= t0)
			continue;
		s = (double)(g->start_ns > t0 ? g->start_ns - t0 : 0);
		e = (double)(g->end_ns - t0);
		c0 = (unsigned)(s / cell_ns);
		c1 = (unsigned)(e / cell_ns);
		for (unsigned c = c0; c <= c1 && c < cells; c++) {
			double lo = fmax(s, c * cell_ns), hi = fmin(e, (c + 1) * cell_ns);

			if (hi > lo)
				idle[(size_t)c * GW_BUCKET_COUNT + g->bucket] += hi - lo;
		}
	}
	for (unsigned c = 0; c <= cells; c++) {
		int best = -1;
		double best_ns = 0, sum = 0, alpha = 0;

		for (unsigned b = 0; c < cells && b < GW_BUCKET_COUNT; b++) {
			double v = idle[(size_t)c * GW_BUCKET_COUNT + b];

			sum += v;
			if (v > best_ns) {
				best_ns = v;
				best = (int)b;
			}
		}
		if (best >= 0)
			alpha = fmin(1.0, sum / (cell_ns * devices));
		if (best == run_b && best >= 0) {
			run_alpha = fmax(run_alpha, alpha);
			continue;
		}
		if (run_b >= 0) {
			fprintf(f, "%s%.0f,%.0f,%d,%.0f", first ? "" : ",", run_start * cell_ns,
				c * cell_ns, run_b, fmax(10.0, run_alpha * 100));
			first = false;
		}
		run_b = best;
		run_start = c;
		run_alpha = alpha;
	}
	free(idle);
	return 0;
}

static int write_gaps(FILE *f, const struct gw_analysis *a)
{
	uint64_t t0 = a->start_ns, span = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
	bool exact = a->n_gaps <= GW_HTML_MAX_GAPS;
	int r = 0;

	fprintf(f, "\"gaps\":{\"exact\":%s,\"count\":%zu,\"list\":[", exact ? "true" : "false",
		a->n_gaps);
	if (exact) {
		bool first = true;

		for (size_t i = 0; i < a->n_gaps; i++) {
			const struct gw_gap *g = &a->gaps[i];

			if (g->end_ns <= g->start_ns || g->start_ns < t0 ||
			    g->bucket >= GW_BUCKET_COUNT)
				continue;
			fprintf(f, "%s%" PRIu64 ",%" PRIu64 ",%u,100", first ? "" : ",",
				g->start_ns - t0, g->end_ns - t0, g->bucket);
			first = false;
		}
	} else if (span > 0) {
		r = write_gap_cells(f, a, t0, span);
	}
	fputs("]},", f);
	return r;
}

static void write_sites(FILE *f, const struct gw_analysis *a)
{
	fputs("\"sync_sites\":[", f);
	for (unsigned i = 0; i < a->n_sync_sites; i++) {
		const struct gw_sync_site *s = &a->sync_sites[i];

		fputs(i ? ",{" : "{", f);
		key_str(f, "api", s->api, true);
		key_u64(f, "kind", s->kind, true);
		key_u64(f, "count", s->count, true);
		key_u64(f, "wait_ns", s->wait_ns, true);
		key_u64(f, "exposed_ns", s->exposed_ns, true);
		key_u64(f, "host_work_after_ns", s->host_work_after_ns, true);
		write_site(f, &s->site);
		fputc('}', f);
	}
	fputs("],\"tiny_kernels\":[", f);
	for (unsigned i = 0; i < a->n_tiny_kernels; i++) {
		const struct gw_tiny_kernel *t = &a->tiny_kernels[i];

		fputs(i ? ",{" : "{", f);
		key_str(f, "name", t->name, true);
		key_u64(f, "count", t->count, true);
		key_u64(f, "total_ns", t->total_ns, true);
		key_u64(f, "gap_before_ns", t->gap_before_ns, true);
		write_site(f, &t->site);
		fputc('}', f);
	}
	fputs("],\"alloc_sites\":[", f);
	for (unsigned i = 0; i < a->n_alloc_sites; i++) {
		const struct gw_alloc_site *s = &a->alloc_sites[i];

		fputs(i ? ",{" : "{", f);
		key_u64(f, "kind", s->kind, true);
		key_u64(f, "count", s->count, true);
		key_u64(f, "bytes", s->bytes, true);
		key_u64(f, "max_bytes", s->max_bytes, true);
		key_u64(f, "never_freed", s->never_freed, true);
		key_u64(f, "never_freed_bytes", s->never_freed_bytes, true);
		write_site(f, &s->site);
		fputc('}', f);
	}
	fputs("],\"fusion\":[", f);
	for (unsigned i = 0; i < a->n_fusion; i++) {
		const struct gw_fusion_candidate *c = &a->fusion[i];

		fputs(i ? ",{\"names\":[" : "{\"names\":[", f);
		for (unsigned k = 0; k < c->n_kernels; k++) {
			if (k)
				fputc(',', f);
			gw_json_cstr(f, c->names[k]);
		}
		fputs("],", f);
		key_u64(f, "occurrences", c->occurrences, true);
		key_u64(f, "kernel_ns", c->kernel_ns, true);
		key_u64(f, "saved_ns", c->saved_ns, true);
		write_site(f, &c->site);
		fputc('}', f);
	}
	fputs("],\"kernels\":[", f);
	for (unsigned i = 0; i < a->n_kernels; i++) {
		const struct gw_kernel_stat *k = &a->kernels[i];

		fputs(i ? ",{" : "{", f);
		key_str(f, "name", k->name, true);
		key_str(f, "class", k->cls < GW_BUCKET_COUNT ? gw_buckets[k->cls].key : NULL, true);
		fprintf(f, "\"classified\":%s,", k->classified ? "true" : "false");
		key_u64(f, "count", k->count, true);
		key_u64(f, "total_ns", k->total_ns, true);
		key_dbl(f, "mean_fill", k->mean_fill, true);
		key_u64(f, "chain_count", k->chain_count, true);
		write_site(f, &k->site);
		fputc('}', f);
	}
	fputs("],\"recs\":[", f);
	for (unsigned i = 0; i < a->n_recs; i++) {
		const struct gw_recommendation *r = &a->recs[i];

		fputs(i ? ",{" : "{", f);
		key_str(f, "bucket", r->bucket < GW_BUCKET_COUNT ? gw_buckets[r->bucket].key : NULL,
			true);
		key_dbl(f, "fraction", r->fraction, true);
		key_str(f, "text", r->text, false);
		fputc('}', f);
	}
	fputs("],\"warnings\":[", f);
	for (unsigned i = 0; i < a->n_warnings; i++) {
		if (i)
			fputc(',', f);
		gw_json_cstr(f, a->warnings[i]);
	}
	fputs("]", f);
}

int gw_report_html(const struct gw_analysis *a, const struct gw_analysis_options *opt,
		   const char *path)
{
	bool to_stdout = strcmp(path, "-") == 0;
	FILE *f = to_stdout ? stdout : fopen(path, "we");
	int r;

	if (!f)
		return -errno;
	fputs(gw_html_page_head, f);
	fputc('{', f);
	write_header_part(f, a);
	if (opt)
		fprintf(f, "\"tiny_us\":%.3g,\"starve_us\":%.3g,", opt->tiny_ns / 1e3,
			opt->starve_ns / 1e3);
	write_timeline(f, a);
	r = write_gaps(f, a);
	if (r < 0)
		goto out;
	write_sites(f, a);
	fputc('}', f);
	fputs(gw_html_page_tail, f);
out:
	if (ferror(f) && r >= 0)
		r = -EIO;
	if (to_stdout) {
		if (fflush(f) != 0 && r >= 0)
			r = -errno;
	} else if (fclose(f) != 0 && r >= 0) {
		r = -errno;
	}
	return r;
}
