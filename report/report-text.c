/* SPDX-License-Identifier: MIT */
/* The default text report: a first screen to act on, then the details. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "report-text.h"

#define BAR_WIDTH 32

struct style {
	const char *bold, *dim, *red, *yellow, *green, *cyan, *reset;
};

static const struct style plain = {"", "", "", "", "", "", ""};
static const struct style ansi = {"\033[1m",  "\033[2m",  "\033[31m", "\033[33m",
				  "\033[32m", "\033[36m", "\033[0m"};

static double ms(double ns)
{
	return ns / 1e6;
}

static double gib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0 * 1024.0);
}

/* Bytes for humans: "512 B", "3.2 MiB", "1.50 GiB". */
static const char *human(uint64_t b, char *buf, size_t len)
{
	if (b < 1024)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < (1ull << 20))
		snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
	else if (b < (1ull << 30))
		snprintf(buf, len, "%.1f MiB", (double)b / (1024.0 * 1024.0));
	else
		snprintf(buf, len, "%.2f GiB", gib(b));
	return buf;
}

/* Device time of a bucket: its SM-time over the SMs of the devices that ran something. */
static double bucket_ns(const struct gw_analysis *res, int b)
{
	double sms = 0;

	for (unsigned d = 0; d < res->n_devices; d++)
		if (res->devices[d].budget_sm_ns > 0)
			sms += (double)res->devices[d].sm_count;
	return sms > 0 ? res->sm_ns[b] / sms : 0;
}

static void bar(FILE *f, double frac, const char *color, const struct style *st)
{
	int n = (int)(frac * BAR_WIDTH + 0.5);

	fputs(color, f);
	for (int i = 0; i < BAR_WIDTH; i++)
		fputs(i < n ? "\u2588" : (st == &plain ? "." : "\u2591"), f);
	fputs(st->reset, f);
}

/* Wraps text at width, each line indented. */
static void wrapped(FILE *f, const char *text, int indent, int width)
{
	const char *p = text;

	while (*p) {
		int len = (int)strlen(p), cut = len;

		if (len > width) {
			cut = width;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = width;
		}
		fprintf(f, "%*s%.*s\n", indent, "", cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

static const struct gw_kernel_stat *top_kernel(const struct gw_analysis *res, int bucket)
{
	const struct gw_kernel_stat *best = NULL;

	for (unsigned i = 0; i < res->n_kernels; i++) {
		const struct gw_kernel_stat *k = &res->kernels[i];
		bool match;

		switch (bucket) {
		case GW_BUCKET_SMALL_BATCH:
			match = k->mean_fill < 0.999 && k->chain_count < k->count;
			if (match && (!best || k->unfilled_sm_ns > best->unfilled_sm_ns))
				best = k;
			continue;
		case GW_BUCKET_DEPENDENCY_CHAIN:
			match = k->chain_count > 0;
			break;
		default:
			match = (int)k->cls == bucket;
		}
		if (match && !best)
			best = k; /* kernels are by total time: the first match is the largest */
	}
	return best;
}

/* Where a cause comes from: the call site the report can name for it. */
static void cause_site(FILE *f, const struct gw_analysis *res, int b, const struct style *st)
{
	const struct gw_kernel_stat *k;

	switch (b) {
	case GW_BUCKET_HOST_SYNC:
		if (res->n_sync_sites) {
			const struct gw_sync_site *s = &res->sync_sites[0];

			fprintf(f, "     at %s%s%s: %s x%" PRIu64 ", exposed %.2f ms of idle GPU\n",
				st->cyan, s->site.text, st->reset, s->api, s->count,
				ms((double)s->exposed_ns));
		}
		return;
	case GW_BUCKET_LAUNCH_OVERHEAD:
		if (res->n_tiny_kernels) {
			const struct gw_tiny_kernel *t = &res->tiny_kernels[0];

			fprintf(f, "     at %s%s%s: %s x%" PRIu64 " under the tiny threshold\n",
				st->cyan, t->site.text, st->reset, t->name, t->count);
		}
		return;
	case GW_BUCKET_HOST_WORK:
		/* queued work that waited for a host function to run: named first */
		if (res->n_host_funcs && res->host_funcs[0].held_ns) {
			const struct gw_host_func_site *h = &res->host_funcs[0];

			fprintf(f,
				"     queued work waited %.2f ms for host functions (%s at %s%s%s, "
				"%" PRIu64 " calls) to run on the host\n",
				ms((double)h->held_ns), h->api, st->cyan, h->site.text, st->reset,
				h->calls);
		}
		for (unsigned i = 0; i < res->n_sync_sites; i++)
			if (res->sync_sites[i].host_work_after_ns) {
				fprintf(f,
					"     follows %s at %s%s%s (%.2f ms of host work after "
					"it)\n",
					res->sync_sites[i].api, st->cyan,
					res->sync_sites[i].site.text, st->reset,
					ms((double)res->sync_sites[i].host_work_after_ns));
				return;
			}
		return;
	case GW_BUCKET_DATA_TRANSFER:
		return;
	case GW_BUCKET_BLOCKED:
		if (res->n_blocked) {
			const struct gw_blocked_stream *s = &res->blocked[0];

			fprintf(f,
				"     stream %" PRIu64 " of GPU %" PRIu64 ": %" PRIu64
				" waits, the longest %.2f ms before %s (%s%s%s)\n",
				s->stream, s->device, s->gaps, ms((double)s->longest_ns), s->next,
				st->cyan, s->launched ? s->site.text : "launched before the trace",
				st->reset);
			if (s->held_by)
				fprintf(f,
					"     held by %s at %s%s%s: a wait for a value in memory, "
					"which something outside the GPU's queued work writes\n",
					s->held_by, st->cyan, s->held_site.text, st->reset);
		}
		return;
	default:
		k = top_kernel(res, b);
		if (k)
			fprintf(f, "     at %s%s%s: %s x%" PRIu64 ", mean fill %.0f%%\n", st->cyan,
				k->site.text, st->reset, k->name, k->count, k->mean_fill * 100);
	}
}

static const char *rec_for(const struct gw_analysis *res, int b)
{
	for (unsigned i = 0; i < res->n_recs; i++)
		if ((int)res->recs[i].bucket == b)
			return res->recs[i].text;
	return gw_buckets[b].remedy;
}

/* The step's device time in bucket b. */
static double step_bucket_ns(const struct gw_step *s, int b)
{
	return s->device_ns * s->breakdown[b];
}

/* "step 17: 182.0 ms, +41.0 ms over the median: host_sync +38.2 ms, cudaStreamSynchronize at
 * train (train.py:87)" */
static void slow_step(FILE *f, const struct gw_steps *ss, const struct gw_slow_step *w,
		      const struct style *st)
{
	const struct gw_step *p = &ss->steps[w->step];

	fprintf(f, "  %s: %.2f ms, +%.2f ms over the median: ", p->name, ms((double)p->duration_ns),
		ms((double)w->over_ns));
	if (w->bucket >= GW_BUCKET_COUNT) {
		fputs("no part of its GPU time grew (the host's range outlasted its GPU work)\n",
		      f);
		return;
	}
	fprintf(f, "%s %+.2f ms", gw_buckets[w->bucket].key, ms(w->bucket_over_ns));
	if (w->what)
		fprintf(f, ", %s%s", w->bucket == GW_BUCKET_HOST_WORK ? "after " : "", w->what);
	if (w->what && w->site.stack_id)
		fprintf(f, " at %s%s%s", st->cyan, w->site.text, st->reset);
	fputc('\n', f);
}

/* The steps on the first screen: how many, how long, where their time goes, the slowest. */
static void steps_summary(FILE *f, const struct gw_analysis *res, const struct style *st)
{
	const struct gw_steps *ss = &res->steps;
	int order[GW_BUCKET_COUNT], shown = 0;
	double dev = 0;

	if (!ss->n)
		return;
	for (int b = 0; b < GW_BUCKET_COUNT; b++) {
		order[b] = b;
		dev += ss->mean_bucket_ns[b];
	}
	for (int i = 1; i < GW_BUCKET_COUNT; i++)
		for (int j = i;
		     j > 0 && ss->mean_bucket_ns[order[j]] > ss->mean_bucket_ns[order[j - 1]];
		     j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	fprintf(f, "\n%sSteps%s: %u ranges (%s%s%s), %.0f%% of the SM-time\n", st->bold, st->reset,
		ss->n, ss->steps[0].name, ss->n > 1 ? " ... " : "",
		ss->n > 1 ? ss->steps[ss->n - 1].name : "", ss->sm_share * 100);
	fprintf(f, "  time per step: median %.2f ms, p90 %.2f ms, max %.2f ms\n",
		ms((double)ss->median_ns), ms((double)ss->p90_ns), ms((double)ss->max_ns));
	fprintf(f, "  GPU time per step %.2f ms (mean):", ms(dev));
	for (int i = 0; i < GW_BUCKET_COUNT && shown < 5; i++) {
		int b = order[i];

		if (dev <= 0 || ss->mean_bucket_ns[b] / dev < 0.005)
			continue;
		fprintf(f, "%s %s %.2f ms", shown++ ? "," : "", gw_buckets[b].key,
			ms(ss->mean_bucket_ns[b]));
	}
	fputc('\n', f);
	if (ss->n_slow) {
		fprintf(f, "  slowest:\n");
		for (unsigned i = 0; i < ss->n_slow && i < 3; i++) {
			fputs("  ", f);
			slow_step(f, ss, &ss->slow[i], st);
		}
	}
}

static void first_screen(FILE *f, const struct gw_analysis *res, const struct style *st)
{
	const struct gw_trace_info *t = res->n_traces ? &res->traces[0] : NULL;
	int order[GW_BUCKET_COUNT], shown = 0;
	double dur = (double)(res->end_ns - res->start_ns);
	char hb[32], hb2[32];

	fprintf(f, "%sgpuwhy%s: ", st->bold, st->reset);
	if (t && (!t->command || !*t->command) && t->path) {
		/* an imported trace names no command: the file it came from does */
		const char *base = strrchr(t->path, '/');

		fprintf(f, "%s (%s)", base ? base + 1 : t->path,
			t->capture_mode == GW_CAPTURE_IMPORT_KINETO ? "torch.profiler trace"
			: t->capture_mode == GW_CAPTURE_IMPORT_NSYS ? "Nsight Systems export"
								    : "no command recorded");
	} else {
		/* the command line on one line, whatever its arguments hold */
		for (const char *c = t && t->command ? t->command : "?"; *c; c++)
			fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
	}
	fprintf(f, " (pid %" PRIu64 ")%s: %.3f s on %u GPU%s", t ? t->pid : 0,
		res->n_traces > 1 ? " and more" : "", dur / 1e9, res->n_devices,
		res->n_devices == 1 ? "" : "s");
	if (res->n_devices == 1 && res->devices[0].name)
		fprintf(f, " (%s, %" PRIu64 " SMs)", res->devices[0].name,
			res->devices[0].sm_count);
	fputs("\n", f);
	for (unsigned i = 0; i < res->n_warnings; i++)
		fprintf(f, "%swarning:%s %s\n", st->yellow, st->reset, res->warnings[i]);
	if (res->budget_sm_ns <= 0) {
		fputs("\nNo GPU operation was recorded: nothing to attribute.\n", f);
		return;
	}
	if (res->top_idle < GW_BUCKET_COUNT)
		fprintf(f,
			"\n%sVerdict:%s useful compute on %.0f%% of SM-time; "
			"the largest idle cause is %s%s%s (%.0f%%).\n",
			st->bold, st->reset, res->breakdown[GW_BUCKET_COMPUTE] * 100, st->red,
			gw_buckets[res->top_idle].label, st->reset,
			res->breakdown[res->top_idle] * 100);
	else
		fprintf(f, "\n%sVerdict:%s useful compute on %.0f%% of SM-time; no idle SM-time.\n",
			st->bold, st->reset, res->breakdown[GW_BUCKET_COMPUTE] * 100);
	if (!res->memory.recorded)
		fprintf(f, "%sQuadrant:%s memory not recorded (the profile has no memory events)",
			st->bold, st->reset);
	else
		fprintf(f, "%sQuadrant:%s memory %s%s%s", st->bold, st->reset,
			res->memory_high ? st->yellow : st->green,
			res->memory_high ? "HIGH" : "low", st->reset);
	if (res->memory.recorded && res->memory.total_bytes)
		fprintf(f, " (peak %s of %.0f GiB, %.0f%%)",
			human(res->memory.peak_bytes, hb, sizeof(hb)), gib(res->memory.total_bytes),
			res->memory.peak_fraction * 100);
	if (res->memory.allocator_reserved_peak_bytes && res->memory.allocator_allocated_peak_bytes)
		fprintf(f, "; the caching allocator held %s at most, tensors used %s (%.0f%%)",
			human(res->memory.allocator_reserved_peak_bytes, hb, sizeof(hb)),
			human(res->memory.allocator_allocated_peak_bytes, hb2, sizeof(hb2)),
			100.0 * (double)res->memory.allocator_allocated_peak_bytes /
				(double)res->memory.allocator_reserved_peak_bytes);
	fprintf(f, ", compute %s%s%s (%.0f%%)\n", res->compute_high ? st->green : st->red,
		res->compute_high ? "HIGH" : "low", st->reset,
		res->breakdown[GW_BUCKET_COMPUTE] * 100);

	fprintf(f, "\n%sWhere the SM-time went%s\n", st->bold, st->reset);
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		order[b] = b;
	for (int i = 1; i < GW_BUCKET_COUNT; i++)
		for (int j = i; j > 0 && res->breakdown[order[j]] > res->breakdown[order[j - 1]];
		     j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < GW_BUCKET_COUNT; i++) {
		int b = order[i];
		char cause[8] = "";

		if (res->breakdown[b] < 0.0005)
			continue;
		if (gw_buckets[b].cause)
			snprintf(cause, sizeof(cause), "[%d]", gw_buckets[b].cause);
		fprintf(f, "  %-17s %-4s ", gw_buckets[b].key, cause);
		bar(f, res->breakdown[b], b == GW_BUCKET_COMPUTE ? st->green : st->red, st);
		fprintf(f, " %5.1f%% %10.2f ms\n", res->breakdown[b] * 100, ms(bucket_ns(res, b)));
	}

	fprintf(f, "\n%sTop causes%s\n", st->bold, st->reset);
	for (int i = 0; i < GW_BUCKET_COUNT && shown < 3; i++) {
		int b = order[i];

		if (b == GW_BUCKET_COMPUTE || res->breakdown[b] < 0.005)
			continue;
		shown++;
		fprintf(f, "  %d. %s%s%s", shown, st->bold, gw_buckets[b].label, st->reset);
		if (gw_buckets[b].cause)
			fprintf(f, " (cause %d)", gw_buckets[b].cause);
		fprintf(f, ": %.1f%%\n", res->breakdown[b] * 100);
		cause_site(f, res, b, st);
		wrapped(f, rec_for(res, b), 5, 88);
	}
	if (!shown)
		fputs("  none above 0.5% of SM-time\n", f);
	steps_summary(f, res, st);
	if (res->n_recs && res->recs[0].bucket == GW_BUCKET_COUNT) {
		fprintf(f, "\n%sAdvice%s\n", st->bold, st->reset);
		wrapped(f, res->recs[0].text, 2, 92);
	}
}

/* The C library's frames below main or below a thread's function (how every program and
 * every thread starts) tell the reader nothing. A thread's start is only taken as such
 * when the frame says it is the C library's, as a program may have its own start_thread. */
static bool libc_start_frame(const char *frame)
{
	static const char *const names[] = {"__libc_start_call_main", "__libc_start_main",
					    "_start"};
	static const char *const thread_starts[] = {
		"start_thread (pthread_create.c:",
		"start_thread (libc.so",
		"__clone3 (clone3.S:",
		"__clone3 (libc.so",
		"__clone (clone.S:",
		"__clone (libc.so",
		"clone3 (clone3.S:",
		"clone (clone.S:",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(frame, names[i], n) && (frame[n] == ' ' || frame[n] == '@'))
			return true;
	}
	for (size_t i = 0; i < sizeof(thread_starts) / sizeof(thread_starts[0]); i++)
		if (!strncmp(frame, thread_starts[i], strlen(thread_starts[i])))
			return true;
	return false;
}

/* Below a site's line: for a Python site, the native frame that issued the CUDA call; then
 * the frames that called it. */
static void site_frames(FILE *f, const struct gw_site *s)
{
	if (s->native)
		fprintf(f, "          via %s\n", s->native);
	for (unsigned i = 1; i < s->n_frames && i < 4 && !libc_start_frame(s->frames[i]); i++)
		fprintf(f, "          called from %s\n", s->frames[i]);
}

#define STEP_ROWS 20
#define STEP_COLS 5

/* The step table (every step up to STEP_ROWS, else the slowest), or why there is none. */
static void step_details(FILE *f, const struct gw_analysis *res, const struct style *st)
{
	const struct gw_steps *ss = &res->steps;
	int cols[STEP_COLS], nc = 0;
	bool all = ss->n <= STEP_ROWS;

	if (!ss->n) {
		if (ss->n_names) {
			fprintf(f,
				"Steps: none among %" PRIu64 " ranges (pattern %s); the most "
				"frequent:",
				ss->ranges, ss->pattern);
			for (unsigned i = 0; i < ss->n_names; i++)
				fprintf(f, "%s \"%s\" x%" PRIu64, i ? "," : "", ss->names[i],
					ss->name_counts[i]);
			fputs(" (--steps REGEX names the steps)\n", f);
		} else {
			fputs("Steps: no ranges in the trace; the figures are for the whole run "
			      "(mark each step with an NVTX range, torch.cuda.nvtx.range_push or "
			      "torch.profiler's schedule, to see it per step)\n",
			      f);
		}
		return;
	}
	for (int b = 0; b < GW_BUCKET_COUNT && nc < STEP_COLS; b++) {
		int best = -1;

		for (int c = 0; c < GW_BUCKET_COUNT; c++) {
			bool used = false;

			for (int k = 0; k < nc; k++)
				used |= cols[k] == c;
			if (!used && ss->mean_breakdown[c] >= 0.01 &&
			    (best < 0 || ss->mean_breakdown[c] > ss->mean_breakdown[best]))
				best = c;
		}
		if (best < 0)
			break;
		cols[nc++] = best;
	}
	fprintf(f, "\n%sSteps%s (%s; GPU time of each step's work, ms)\n", st->bold, st->reset,
		all ? "all" : "the slowest");
	fprintf(f, "  %-24s %10s %9s", "step", "duration", "GPU");
	for (int k = 0; k < nc; k++)
		fprintf(f, " %16.16s", gw_buckets[cols[k]].key);
	fprintf(f, " %9s\n", "other");
	for (unsigned r = 0; r < (all ? ss->n : ss->n_slow); r++) {
		const struct gw_step *p = &ss->steps[all ? r : ss->slow[r].step];
		double other = p->device_ns;

		fprintf(f, "  %-24.24s %10.2f %9.2f", p->name, ms((double)p->duration_ns),
			ms(p->device_ns));
		for (int k = 0; k < nc; k++) {
			fprintf(f, " %16.2f", ms(step_bucket_ns(p, cols[k])));
			other -= step_bucket_ns(p, cols[k]);
		}
		fprintf(f, " %9.2f\n", ms(other > 0 ? other : 0));
	}
	if (!all)
		fprintf(f, "  (%u steps in all; --json lists every one)\n", ss->n);
	if (ss->n_slow > 3) {
		fprintf(f, "  slower than the median:\n");
		for (unsigned i = 0; i < ss->n_slow; i++)
			slow_step(f, ss, &ss->slow[i], st);
	}
}

/* A kernel's name cut to its first n bytes (whole UTF-8 characters) for a column. */
static void name_column(FILE *f, const char *name, int n)
{
	int len = (int)strlen(name);

	if (len > n) {
		len = n - 3;
		while (len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
			len--;
		fprintf(f, "  %.*s...%*s", len, name, n - len - 3, "");
	} else {
		fprintf(f, "  %-*s", n, name);
	}
}

static void percent_se(FILE *f, double v, double se)
{
	char b[32];

	if (v < 0)
		snprintf(b, sizeof(b), "-");
	else if (se < 0)
		snprintf(b, sizeof(b), "%.1f ?", v * 100);
	else
		snprintf(b, sizeof(b), "%.1f±%.2f", v * 100, se * 100);
	/* ± is two bytes */
	fprintf(f, " %-*s", v >= 0 && se >= 0 ? 13 : 12, b);
}

/* The measured counters: what each kernel uses by the windows, where names and counters
 * disagree, how sure (causes.md, Measured counters). */
static void counters_details(FILE *f, const struct gw_analysis *res, const struct style *st)
{
	const struct gw_counters *c = &res->counters;
	bool gpm = c->source == GW_SAMPLER_GPM, any_moved = false;

	if (!c->measured)
		return;
	fprintf(f, "\n%sMeasured counters%s (NVML %s", st->bold, st->reset,
		gpm ? "GPM metrics" : "utilization samples");
	if (c->period_ns)
		fprintf(f, ", sampled every %.0f ms", ms((double)c->period_ns));
	fprintf(f, "; %u windows", c->windows);
	if (c->windows)
		fprintf(f, ", fit RMS %.1f%%, R2 %.3f", c->dram_fit_rms * 100, c->dram_r2);
	fprintf(f, ")\n");
	for (unsigned i = 0; i < c->n_series; i++)
		if (c->series[i].mean >= 0)
			fprintf(f, "  %-13s mean %5.1f%% (device %" PRIu64 ")\n", c->series[i].key,
				c->series[i].mean * 100, res->devices[c->series[i].device].id);
	if (!c->n_estimates)
		return;
	fprintf(f,
		"  %s while each ran (least squares over the windows; ± one standard error, ? "
		"when it ran only beside others in one proportion):\n",
		gpm ? "DRAM and SM use" : "memory busy and SM use");
	fprintf(f, "  %-40s %9s %-12s %-12s %-16s %-16s %s\n", "kernels", "time",
		gpm ? "DRAM %" : "mem busy %", "SM %", "name says", "counters say", "confidence");
	for (unsigned i = 0; i < c->n_estimates; i++) {
		const struct gw_usage_estimate *e = &c->estimates[i];
		bool moved = e->applied && e->measured_class != e->name_class;

		name_column(f, e->name, 40);
		fprintf(f, " %6.1f ms", ms((double)e->busy_ns));
		percent_se(f, e->dram, e->dram_se);
		percent_se(f, e->sm, e->sm_se);
		fprintf(f, " %-16s %-16s %s%s\n", e->kernels ? gw_buckets[e->name_class].key : "-",
			!e->kernels			      ? "-"
			: e->measured_class < GW_BUCKET_COUNT ? gw_buckets[e->measured_class].key
							      : "(undecided)",
			e->confidence,
			moved ? "  <- names disagree: counted as the counters say"
			: e->kernels && e->measured_class < GW_BUCKET_COUNT &&
					e->measured_class != e->name_class
				? "  <- names disagree, estimate unclear: names kept"
				: "");
		any_moved |= moved;
	}
	if (!gpm)
		fprintf(f,
			"  (utilization samples time memory use, not bandwidth: the classes stay "
			"the names')\n");
	else if (any_moved)
		fprintf(f,
			"  The counters moved %.1f%% of kernel time to another class than its "
			"name's.\n",
			c->reclassified_share * 100);
}

static void details(FILE *f, const struct gw_analysis *res, const struct gw_analysis_options *opt,
		    const struct style *st)
{
	const struct gw_counts *c = &res->counts;
	double budget = res->budget_sm_ns > 0 ? res->budget_sm_ns : 1;
	char hb[32];

	fprintf(f, "\n%s-- Details --%s\n", st->bold, st->reset);
	fprintf(f,
		"Utilization: kernel_active %.1f%% (any kernel running; nvidia-smi GPU-Util), "
		"sm_busy %.1f%% (mean SM fill from launch configurations; estimate of DCGM "
		"SM_ACTIVE), compute %.1f%% (the bucket), ",
		res->util.kernel_active * 100, res->util.sm_busy * 100, res->util.compute * 100);
	if (res->util.memory_bandwidth >= 0)
		fprintf(f,
			"memory bandwidth %.1f%% of peak (measured: NVML GPM DRAM_BW_UTIL, mean)\n",
			res->util.memory_bandwidth * 100);
	else if (res->counters.measured)
		fprintf(f, "memory bandwidth not measured (only NVML utilization samples)\n");
	else
		fprintf(f, "memory bandwidth not measured (%s)\n",
			res->counters.reason ? res->counters.reason
					     : "no measured counters in the trace");
	fprintf(f,
		"Launch overhead split: queued %.1f%%, inside launch calls %.1f%%, between "
		"launches %.1f%%\n",
		res->launch_queued_sm_ns / budget * 100, res->launch_in_call_sm_ns / budget * 100,
		res->launch_between_sm_ns / budget * 100);
	fprintf(f,
		"Kernel classes come from names; %.1f%% of kernel time matched no rule "
		"(counted as compute)\n",
		res->unclassified_kernel_share * 100);
	counters_details(f, res, st);
	if (res->startup.contexts || res->startup.loadings || res->startup.compiles)
		fprintf(f,
			"Start-up (host time, in the window or not): %" PRIu64
			" context creation%s %.2f ms, %" PRIu64 " lazy load%s %.2f ms, %" PRIu64
			" PTX compilation%s %.2f ms\n",
			res->startup.contexts, res->startup.contexts == 1 ? "" : "s",
			ms((double)res->startup.context_ns), res->startup.loadings,
			res->startup.loadings == 1 ? "" : "s", ms((double)res->startup.loading_ns),
			res->startup.compiles, res->startup.compiles == 1 ? "" : "s",
			ms((double)res->startup.compile_ns));
	fprintf(f,
		"Counts: %" PRIu64 " kernels (%" PRIu64 " under %.0f us), %" PRIu64
		" launches, %" PRIu64 " synchronizing calls, %" PRIu64 " copies, %" PRIu64
		" memsets, %" PRIu64 " allocations, %" PRIu64 " frees",
		c->kernels, c->tiny_kernels, opt ? (double)opt->tiny_ns / 1000 : 10.0, c->launches,
		c->host_syncs, c->memcpy, c->memset, c->allocations, c->frees);
	if (c->captured_launches)
		fprintf(f, "; %" PRIu64 " launches recorded into CUDA graphs (not run then)",
			c->captured_launches);
	if (c->syncs_by_kind[GW_SYNC_POLL])
		fprintf(f, "; %" PRIu64 " polling waits (%" PRIu64 " queries)",
			c->syncs_by_kind[GW_SYNC_POLL], c->poll_queries);
	if (c->host_functions)
		fprintf(f, "; %" PRIu64 " host functions", c->host_functions);
	if (c->value_waits)
		fprintf(f, "; %" PRIu64 " waits for a value", c->value_waits);
	if (c->peer_copies)
		fprintf(f, "; %" PRIu64 " peer-to-peer copies", c->peer_copies);
	fputc('\n', f);
	fprintf(f, "Memory: peak %s", human(res->memory.peak_bytes, hb, sizeof(hb)));
	fprintf(f, ", final %s", human(res->memory.final_bytes, hb, sizeof(hb)));
	fprintf(f, ", growth %.1f MiB/s", res->memory.growth_bytes_per_s / (1024.0 * 1024.0));
	fprintf(f, ", never freed %" PRIu64 " allocations (%s)", res->memory.never_freed,
		human(res->memory.never_freed_bytes, hb, sizeof(hb)));
	fprintf(f, "; managed peak %s", human(res->memory.managed_peak_bytes, hb, sizeof(hb)));
	fprintf(f, ", pinned host peak %s\n", human(res->memory.pinned_peak_bytes, hb, sizeof(hb)));
	/* the profiler's own device memory: the program had that much less under gpuwhy */
	if (res->memory.cupti_buffer_bytes) {
		fprintf(f, "Profiler (CUPTI) buffers: at least %s of device memory a GPU",
			human(res->memory.cupti_buffer_bytes, hb, sizeof(hb)));
		if (res->memory.cupti_buffer_limit_bytes)
			fprintf(f, ", up to %s under a dense flow of kernels",
				human(res->memory.cupti_buffer_limit_bytes, hb, sizeof(hb)));
		fputs(", not in the peak above: a run near the memory limit has that much less "
		      "under gpuwhy\n",
		      f);
	}

	step_details(f, res, st);
	if (res->n_sync_sites) {
		fprintf(f, "\n%sSynchronizing calls%s (by exposed idle)\n", st->bold, st->reset);
		for (unsigned i = 0; i < res->n_sync_sites; i++) {
			const struct gw_sync_site *s = &res->sync_sites[i];

			fprintf(f,
				"  %-24s %-8s x%-8" PRIu64
				" waited %9.2f ms  exposed %9.2f ms  %s\n",
				s->api, gw_sync_kind_name(s->kind)->key, s->count,
				ms((double)s->wait_ns), ms((double)s->exposed_ns), s->site.text);
			site_frames(f, &s->site);
		}
	}
	if (res->n_host_funcs) {
		fprintf(f, "\n%sHost functions%s (queued work they held, host work)\n", st->bold,
			st->reset);
		for (unsigned i = 0; i < res->n_host_funcs; i++) {
			const struct gw_host_func_site *h = &res->host_funcs[i];

			fprintf(f, "  %-24s x%-8" PRIu64 " held %9.2f ms (%" PRIu64 " gaps)  %s\n",
				h->api, h->calls, ms((double)h->held_ns), h->gaps, h->site.text);
			site_frames(f, &h->site);
		}
	}
	if (res->n_tiny_kernels) {
		fprintf(f, "\n%sTiny kernels%s (under %.0f us, by count)\n", st->bold, st->reset,
			opt ? (double)opt->tiny_ns / 1000 : 10.0);
		for (unsigned i = 0; i < res->n_tiny_kernels; i++) {
			const struct gw_tiny_kernel *t = &res->tiny_kernels[i];

			fprintf(f, "  x%-9" PRIu64 " mean %6.2f us  idle before %9.2f ms  %s  %s\n",
				t->count,
				t->count ? (double)t->total_ns / (double)t->count / 1000 : 0,
				ms((double)t->gap_before_ns), t->name, t->site.text);
		}
	}
	if (res->n_fusion) {
		fprintf(f, "\n%sFusion candidates%s (repeated tiny-kernel sequences)\n", st->bold,
			st->reset);
		for (unsigned i = 0; i < res->n_fusion; i++) {
			const struct gw_fusion_candidate *fc = &res->fusion[i];

			fprintf(f, "  x%-9" PRIu64 " gives back %9.2f ms: ", fc->occurrences,
				ms((double)fc->saved_ns));
			for (unsigned k = 0; k < fc->n_kernels; k++)
				fprintf(f, "%s%s", k ? " -> " : "", fc->names[k]);
			fprintf(f, "  (%s)\n", fc->site.text);
		}
	}
	if (res->n_kernels) {
		fprintf(f, "\n%sKernels%s (by GPU time)\n", st->bold, st->reset);
		for (unsigned i = 0; i < res->n_kernels && i < 10; i++) {
			const struct gw_kernel_stat *k = &res->kernels[i];

			fprintf(f, "  %10.2f ms x%-8" PRIu64 " fill %3.0f%% %-16s %s%s  %s\n",
				ms((double)k->total_ns), k->count, k->mean_fill * 100,
				gw_buckets[k->cls].key, k->name, k->chain_count ? " [chain]" : "",
				k->site.text);
		}
	}
	if (res->n_alloc_sites) {
		fprintf(f, "\n%sAllocation sites%s (by bytes)\n", st->bold, st->reset);
		for (unsigned i = 0; i < res->n_alloc_sites; i++) {
			const struct gw_alloc_site *s = &res->alloc_sites[i];

			char hb2[32];

			fprintf(f,
				"  %10s in %-7" PRIu64 " (largest %s, %" PRIu64
				" never freed)  %s\n",
				human(s->bytes, hb, sizeof(hb)), s->count,
				human(s->max_bytes, hb2, sizeof(hb2)), s->never_freed,
				s->site.text);
			site_frames(f, &s->site);
		}
	}
	if (res->n_devices > 1) {
		fprintf(f, "\n%sPer device%s\n", st->bold, st->reset);
		for (unsigned i = 0; i < res->n_devices; i++) {
			const struct gw_device_result *d = &res->devices[i];

			fprintf(f, "  trace %u device %" PRIu64 " (%" PRIu64 " SMs):", d->trace,
				d->id, d->sm_count);
			for (int b = 0; b < GW_BUCKET_COUNT; b++)
				if (d->breakdown[b] >= 0.005)
					fprintf(f, " %s %.1f%%", gw_buckets[b].key,
						d->breakdown[b] * 100);
			fputc('\n', f);
		}
	}
	if (res->n_traces > 1) {
		fprintf(f, "\n%sPer trace%s\n", st->bold, st->reset);
		for (unsigned i = 0; i < res->n_traces; i++) {
			const struct gw_trace_info *t = &res->traces[i];

			fprintf(f,
				"  %s (pid %" PRIu64 ", rank %" PRId64
				"): compute %.1f%%, top idle %s %.1f%%%s\n",
				t->path, t->pid, t->rank, t->breakdown[GW_BUCKET_COMPUTE] * 100,
				t->top_idle < GW_BUCKET_COUNT ? gw_buckets[t->top_idle].key
							      : "none",
				t->top_idle < GW_BUCKET_COUNT ? t->breakdown[t->top_idle] * 100
							      : 0.0,
				t->truncated ? " [truncated]" : "");
		}
	}
	if (res->n_recs > 1) {
		fprintf(f, "\n%sAll recommendations%s\n", st->bold, st->reset);
		for (unsigned i = 1; i < res->n_recs; i++) {
			fprintf(f, "  - %s:\n", gw_buckets[res->recs[i].bucket].key);
			wrapped(f, res->recs[i].text, 4, 90);
		}
	}
}

/*
 * Everything the report prints passes through this filter on its way to the terminal: names and
 * command lines come from the trace, and a trace is anybody's bytes. Control characters and C1
 * controls (U+0080..U+009F, which some terminals obey) become '?'; an escape sequence passes
 * only when it sets colours (ESC [ digits ; m) and colours are on. Newlines pass.
 */
struct safe_out {
	FILE *to;
	bool sgr;     /* colour sequences may pass */
	int state;    /* 0 text, 1 after ESC, 2 inside ESC [, 3 after 0xC2 */
	char seq[24]; /* the escape sequence so far */
	unsigned seq_len;
};

static void safe_put(struct safe_out *s, unsigned char c)
{
	switch (s->state) {
	case 1:
		if (c == '[') {
			s->seq[s->seq_len++] = (char)c;
			s->state = 2;
			return;
		}
		fputc('?', s->to);
		s->state = 0;
		break;
	case 2:
		if (((c >= '0' && c <= '9') || c == ';') && s->seq_len < sizeof(s->seq) - 1) {
			s->seq[s->seq_len++] = (char)c;
			return;
		}
		if (c == 'm' && s->sgr) {
			fwrite(s->seq, 1, s->seq_len, s->to);
			fputc('m', s->to);
			s->state = 0;
			return;
		}
		/* not a colour: the escape is dropped, what followed it is text */
		fputc('?', s->to);
		fwrite(s->seq + 1, 1, s->seq_len - 1, s->to);
		s->state = 0;
		break;
	case 3:
		s->state = 0;
		if (c >= 0x80 && c <= 0x9f) {
			fputc('?', s->to);
			return;
		}
		fputc(0xc2, s->to);
		break;
	default:
		break;
	}
	if (c == 0x1b) {
		s->seq[0] = (char)c;
		s->seq_len = 1;
		s->state = 1;
	} else if (c == 0xc2) {
		s->state = 3;
	} else if ((c < 0x20 && c != '\n') || c == 0x7f) {
		fputc('?', s->to);
	} else {
		fputc(c, s->to);
	}
}

static ssize_t safe_write(void *cookie, const char *buf, size_t n)
{
	struct safe_out *s = cookie;

	for (size_t i = 0; i < n; i++)
		safe_put(s, (unsigned char)buf[i]);
	return ferror(s->to) ? -1 : (ssize_t)n;
}

int gw_report_text(const struct gw_analysis *res, const struct gw_analysis_options *opt, FILE *to,
		   bool color)
{
	const struct style *st = color ? &ansi : &plain;
	struct safe_out s = {.to = to, .sgr = color};
	FILE *f = fopencookie(&s, "w", (cookie_io_functions_t){.write = safe_write});
	int r;

	if (!f)
		return -errno;
	first_screen(f, res, st);
	if (res->budget_sm_ns > 0)
		details(f, res, opt, st);
	r = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !r)
		r = -EIO;
	return ferror(to) ? -EIO : r;
}
