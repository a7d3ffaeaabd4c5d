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
#include "report-json.h"

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

static bool simulated(const struct gw_analysis *a)
{
	for (unsigned i = 0; i < a->n_devices; i++)
		if (a->devices[i].name && strcasestr(a->devices[i].name, "gpusim"))
			return true;
	return false;
}

/* The names the page shows, from the tables that own them: buckets, sync and memory kinds. */
static void write_names(FILE *f)
{
	fputs("\"buckets\":[", f);
	for (unsigned b = 0; b < GW_BUCKET_COUNT; b++) {
		fputs(b ? ",{" : "{", f);
		key_str(f, "key", gw_buckets[b].key, true);
		key_str(f, "label", gw_buckets[b].label, true);
		fprintf(f, "\"cause\":%d,", gw_buckets[b].cause);
		key_str(f, "remedy", gw_buckets[b].remedy, false);
		fputc('}', f);
	}
	fputs("],\"sync_kinds\":{", f);
	for (unsigned k = 0; k < gw_n_sync_kind_names; k++)
		key_str(f, gw_sync_kind_names[k].key, gw_sync_kind_names[k].label,
			k + 1 < gw_n_sync_kind_names);
	fputs("},\"mem_kinds\":{", f);
	for (unsigned k = 0, first = 1; k < gw_n_mem_kind_names; k++) {
		if (!gw_mem_kind_names[k].key)
			continue;
		if (!first)
			fputc(',', f);
		key_str(f, gw_mem_kind_names[k].key, gw_mem_kind_names[k].label, false);
		first = 0;
	}
	fputs("},", f);
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
	fputs("]}", f);
	return r;
}

int gw_report_html(const struct gw_analysis *a, const struct gw_analysis_options *opt, FILE *f)
{
	int r;

	/* The page's data: the report exactly as --json writes it, and what only the drawing
	 * needs beside it. */
	fputs(gw_html_page_head, f);
	fputs("{\"report\":", f);
	if ((r = gw_report_json(a, opt, f)) < 0)
		goto out;
	fprintf(f, ",\"page\":{\"schema\":\"gpuwhy-page/1\",\"simulated\":%s,",
		simulated(a) ? "true" : "false");
	write_names(f);
	write_timeline(f, a);
	r = write_gaps(f, a);
	if (r < 0)
		goto out;
	fputs("}}", f);
	fputs(gw_html_page_tail, f);
out:
	return r < 0 ? r : ferror(f) ? -EIO : 0;
}
