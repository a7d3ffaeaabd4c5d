/* SPDX-License-Identifier: MIT */
/* `gpuwhy diff`'s renderers: text, JSON (gpuwhy-diff/1) and the page. */
#include "report-diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json-out.h"

/* From the diff page's template, generated at build time by report/html/embed.py. */
extern const char gw_diff_page_head[];
extern const char gw_diff_page_tail[];

/* Buckets under this share on both sides, and with no time either side, are not listed. */
#define GW_DIFF_MIN_SHARE 0.001

static double ms(double ns)
{
	return ns / 1e6;
}

static bool listed(const struct gw_diff *d, int b)
{
	return d->before.share[b] >= GW_DIFF_MIN_SHARE || d->after.share[b] >= GW_DIFF_MIN_SHARE;
}

/* Bytes for humans, signed: "512 B", "-3.2 MiB". */
static const char *human(double b, char *buf, size_t len)
{
	double a = fabs(b);

	if (a < 1024)
		snprintf(buf, len, "%.0f B", b);
	else if (a < 1048576.0)
		snprintf(buf, len, "%.1f KiB", b / 1024);
	else if (a < 1073741824.0)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
	return buf;
}

static void inputs(FILE *f, const char *const *p, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", p[i]);
}

/* "+12%" of after over before, or "new" / "gone". */
static const char *change(double before, double after, char *buf, size_t len)
{
	if (before == 0 && after == 0)
		snprintf(buf, len, "=");
	else if (before == 0)
		snprintf(buf, len, "new");
	else if (after == 0)
		snprintf(buf, len, "gone");
	else
		snprintf(buf, len, "%+.0f%%", (after - before) / before * 100);
	return buf;
}

static void text_sites(FILE *f, const struct gw_diff *d)
{
	static const char *const label[] = {
		[GW_DIFF_SYNC] = "synchronizing calls (exposed idle)",
		[GW_DIFF_HOST_AFTER_SYNC] = "host work after a synchronizing call",
		[GW_DIFF_TINY_KERNEL] = "tiny kernels (idle before their launches)",
		[GW_DIFF_ALLOCATION] = "allocations (bytes)",
	};
	int kind = -1;

	if (!d->n_sites)
		return;
	fprintf(f, "\nSites that changed most (%s; matched by call or kernel, function and file)\n",
		d->per_step ? "per step" : "per run");
	for (unsigned i = 0; i < d->n_sites; i++) {
		const struct gw_diff_site *s = &d->sites[i];
		char b1[32], b2[32], c[16];

		if ((int)s->kind != kind) {
			kind = (int)s->kind;
			fprintf(f, "  %s\n", label[kind]);
		}
		if (s->kind == GW_DIFF_ALLOCATION)
			fprintf(f, "    %10s -> %-10s", human(s->before, b1, sizeof(b1)),
				human(s->after, b2, sizeof(b2)));
		else
			fprintf(f, "    %7.2f -> %-7.2f ms", ms(s->before), ms(s->after));
		fprintf(f, " %-5s x%.4g -> x%.4g  %s at %s\n",
			change(s->before, s->after, c, sizeof(c)), s->before_count, s->after_count,
			s->name, s->where ? s->where : "(no stack)");
	}
}

int gw_report_diff_text(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f,
			bool color)
{
	const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
	const char *yellow = color ? "\033[33m" : "";
	const struct gw_analysis *b = d->before.a, *a = d->after.a;
	char h1[32], h2[32], c[16];

	fprintf(f, "%sgpuwhy diff%s: before ", bold, reset);
	inputs(f, in->before, in->n_before);
	fputs("; after ", f);
	inputs(f, in->after, in->n_after);
	fputc('\n', f);
	for (unsigned i = 0; i < d->n_warnings; i++)
		fprintf(f, "%swarning:%s %s\n", yellow, reset, d->warnings[i]);
	fprintf(f, "\n%sVerdict:%s %s\n", bold, reset, d->verdict);

	if (d->per_step)
		fprintf(f,
			"\n%sPer step%s (%u steps before, %u after): share of the steps' SM-time, "
			"and GPU time a step (mean)\n",
			bold, reset, d->before.steps, d->after.steps);
	else
		fprintf(f, "\n%sPer run%s: share of the SM-time, and GPU time of the run\n", bold,
			reset);
	fprintf(f, "  %-17s %8s %8s %8s   %10s %10s %10s\n", "bucket", "before", "after", "points",
		"ms before", "ms after", "ms delta");
	for (int k = 0; k < GW_BUCKET_COUNT; k++) {
		if (!listed(d, k))
			continue;
		fprintf(f, "  %-17s %7.1f%% %7.1f%% %+8.1f   %10.2f %10.2f %+10.2f\n",
			gw_buckets[k].key, d->before.share[k] * 100, d->after.share[k] * 100,
			d->delta_share[k] * 100, ms(d->before.device_ns[k]),
			ms(d->after.device_ns[k]), ms(d->delta_ns[k]));
	}
	fprintf(f, "  %-17s %8s %8s %8s   %10.2f %10.2f %+10.2f\n", "GPU time", "", "", "",
		ms(d->before.gpu_ns), ms(d->after.gpu_ns), ms(d->after.gpu_ns - d->before.gpu_ns));
	if (d->per_step)
		fprintf(f,
			"  wall time a step (its range): median %.2f -> %.2f ms (%s), p90 %.2f -> "
			"%.2f ms, max %.2f -> %.2f ms\n",
			ms((double)b->steps.median_ns), ms((double)a->steps.median_ns),
			change((double)b->steps.median_ns, (double)a->steps.median_ns, c,
			       sizeof(c)),
			ms((double)b->steps.p90_ns), ms((double)a->steps.p90_ns),
			ms((double)b->steps.max_ns), ms((double)a->steps.max_ns));
	else
		fprintf(f, "  GPU window: %.2f -> %.2f ms (%s)\n", ms(d->before.wall_ns),
			ms(d->after.wall_ns),
			change(d->before.wall_ns, d->after.wall_ns, c, sizeof(c)));
	text_sites(f, d);
	fprintf(f, "\n%sMemory%s: peak %s", bold, reset,
		human((double)b->memory.peak_bytes, h1, sizeof(h1)));
	fprintf(f, " -> %s (%s), growth %.1f -> %.1f MiB/s%s\n",
		human((double)a->memory.peak_bytes, h2, sizeof(h2)),
		change((double)b->memory.peak_bytes, (double)a->memory.peak_bytes, c, sizeof(c)),
		b->memory.growth_bytes_per_s / 1048576.0, a->memory.growth_bytes_per_s / 1048576.0,
		b->memory.recorded && a->memory.recorded ? "" : " (not recorded in both)");
	return ferror(f) ? -EIO : 0;
}

static void jnum(FILE *f, double v)
{
	gw_json_double(f, v);
}

static void jbuckets(FILE *f, const double *v)
{
	fputc('{', f);
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		fprintf(f, "%s\"%s\":", b ? "," : "", gw_buckets[b].key);
		jnum(f, v[b]);
	}
	fputc('}', f);
}

static void jlist(FILE *f, const char *const *p, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		gw_json_cstr(f, p[i]);
	}
	fputc(']', f);
}

static void jside(FILE *f, const struct gw_diff_side *s, const char *const *paths, int n)
{
	const struct gw_analysis *a = s->a;

	fputs("{\"inputs\":", f);
	jlist(f, paths, n);
	fprintf(f, ",\"steps\":%u,\"gpu_ns\":", s->steps);
	jnum(f, s->gpu_ns);
	fputs(",\"wall_ns\":", f);
	jnum(f, s->wall_ns);
	fputs(",\"step_median_ns\":", f);
	if (a->steps.n)
		fprintf(f, "%" PRIu64, a->steps.median_ns);
	else
		fputs("null", f);
	fprintf(f, ",\"window_ns\":%" PRIu64 ",\"sm_count\":", a->end_ns - a->start_ns);
	jnum(f, s->sms);
	fputs(",\"breakdown\":", f);
	jbuckets(f, s->share);
	fputs(",\"device_ns\":", f);
	jbuckets(f, s->device_ns);
	fputs(",\"sm_ns\":", f);
	jbuckets(f, s->sm_ns);
	fputs(",\"top_idle_cause\":", f);
	gw_json_cstr(f, s->top_idle < GW_BUCKET_COUNT ? gw_buckets[s->top_idle].key : NULL);
	fprintf(f,
		",\"memory\":{\"recorded\":%s,\"peak_bytes\":%" PRIu64 ",\"growth_bytes_per_s\":",
		a->memory.recorded ? "true" : "false", a->memory.peak_bytes);
	jnum(f, a->memory.growth_bytes_per_s);
	fprintf(f, "},\"kernels\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"host_syncs\":%" PRIu64 "}",
		a->counts.kernels, a->counts.launches, a->counts.host_syncs);
}

int gw_report_diff_json(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f)
{
	const struct gw_analysis *b = d->before.a, *a = d->after.a;

	fprintf(f, "{\"schema\":\"gpuwhy-diff/1\",\"per\":\"%s\",\"before\":",
		d->per_step ? "step" : "run");
	jside(f, &d->before, in->before, in->n_before);
	fputs(",\"after\":", f);
	jside(f, &d->after, in->after, in->n_after);
	fputs(",\"delta\":{\"breakdown\":", f);
	jbuckets(f, d->delta_share);
	fputs(",\"device_ns\":", f);
	jbuckets(f, d->delta_ns);
	fputs(",\"gpu\":", f);
	jnum(f, d->gpu_change);
	fputs(",\"wall\":", f);
	jnum(f, d->wall_change);
	fprintf(f, ",\"memory\":{\"peak_bytes\":%" PRId64 ",\"growth_bytes_per_s\":",
		(int64_t)(a->memory.peak_bytes - b->memory.peak_bytes));
	jnum(f, a->memory.growth_bytes_per_s - b->memory.growth_bytes_per_s);
	fputs("}},\"sites\":[", f);
	for (unsigned i = 0; i < d->n_sites; i++) {
		const struct gw_diff_site *s = &d->sites[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", gw_diff_site_key(s->kind));
		gw_json_cstr(f, s->name);
		fputs(",\"function\":", f);
		gw_json_cstr(f, s->function);
		fputs(",\"file\":", f);
		gw_json_cstr(f, s->file);
		fputs(",\"site\":", f);
		gw_json_cstr(f, s->where);
		fprintf(f, ",\"unit\":\"%s\",\"before\":",
			s->kind == GW_DIFF_ALLOCATION ? "bytes" : "ns");
		jnum(f, s->before);
		fputs(",\"after\":", f);
		jnum(f, s->after);
		fputs(",\"before_count\":", f);
		jnum(f, s->before_count);
		fputs(",\"after_count\":", f);
		jnum(f, s->after_count);
		fputc('}', f);
	}
	fputs("],\"verdict\":", f);
	gw_json_cstr(f, d->verdict);
	fputs(",\"warnings\":", f);
	jlist(f, (const char *const *)d->warnings, (int)d->n_warnings);
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}

int gw_report_diff_html(const struct gw_diff *d, const struct gw_diff_inputs *in, FILE *f)
{
	int r;

	fputs(gw_diff_page_head, f);
	fputs("{\"diff\":", f);
	if ((r = gw_report_diff_json(d, in, f)) < 0)
		return r;
	fputs(",\"page\":{\"buckets\":[", f);
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		fprintf(f, "%s{\"key\":\"%s\",\"label\":", b ? "," : "", gw_buckets[b].key);
		gw_json_cstr(f, gw_buckets[b].label);
		fputc('}', f);
	}
	fputs("]}}", f);
	fputs(gw_diff_page_tail, f);
	return ferror(f) ? -EIO : 0;
}
