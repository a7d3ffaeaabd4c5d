/* SPDX-License-Identifier: MIT */
/* Recommendations: the quadrant first, then each cause by size, with this run's numbers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define GW_ADVICE_MIN_SHARE 0.02 /* buckets under 2% of SM-time get no recommendation */

static int add_rec(struct gw_analysis *res, enum gw_bucket b, double frac, char *text)
{
	struct gw_recommendation *r;

	if (!text)
		return -ENOMEM;
	r = realloc(res->recs, (res->n_recs + 1) * sizeof(*r));
	if (!r) {
		free(text);
		return -ENOMEM;
	}
	res->recs = r;
	res->recs[res->n_recs++] = (struct gw_recommendation){b, frac, text};
	return 0;
}

static double gib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0 * 1024.0);
}

/* Device time of a bucket in ms: its SM-time over the SMs of all devices. */
static double bucket_ms(const struct gw_analysis *res, int b)
{
	double sms = 0;

	for (unsigned d = 0; d < res->n_devices; d++)
		if (res->devices[d].budget_sm_ns > 0)
			sms += (double)res->devices[d].sm_count;
	return sms > 0 ? res->sm_ns[b] / sms / 1e6 : 0;
}

/* Mean SM fill while kernels run (sm_busy counts idle time as zero fill). */
static double running_fill(const struct gw_analysis *res)
{
	return res->util.kernel_active > 0 ? res->util.sm_busy / res->util.kernel_active : 0;
}

/* How much larger a batch fits below 80% of device memory, in steps of 0.5; nothing
 * allocated leaves room for any batch. */
static double batch_room(const struct gw_analysis *res)
{
	if (res->memory.peak_fraction <= 0)
		return HUGE_VAL;
	return floor(0.8 / res->memory.peak_fraction * 2) / 2;
}

/* "about 2.5x" or "over 16x": a factor past 16 says only that memory is nearly unused. */
static const char *room_text(const struct gw_analysis *res, char *buf, size_t len)
{
	double room = batch_room(res);

	if (room > 16)
		snprintf(buf, len, "over 16x");
	else
		snprintf(buf, len, "about %.1fx", room);
	return buf;
}

/* Whether the measured counters gave some kernels class b (causes.md, Measured counters). */
static bool measured_class(const struct gw_analysis *res, enum gw_bucket b)
{
	for (unsigned i = 0; i < res->counters.n_estimates; i++)
		if (res->counters.estimates[i].applied &&
		    res->counters.estimates[i].measured_class == b)
			return true;
	return false;
}

static char *quadrant_text(const struct gw_analysis *res)
{
	const struct gw_memory *m = &res->memory;
	double c = res->breakdown[GW_BUCKET_COMPUTE] * 100, p = m->peak_fraction * 100;
	char room[32];

	if (!m->recorded)
		return gw_strdupf(
			"Compute is %.0f%% of SM-time; the profile recorded no memory "
			"events (torch.profiler: profile_memory=True), so the memory side "
			"of the verdict is open. Work through the causes below in order of "
			"size, and profile again after each change to check that compute "
			"rose.",
			c);
	if (!m->total_bytes)
		return gw_strdupf("Compute is %.0f%% of SM-time; device memory size unknown, so "
				  "the memory side of the verdict is open. Work through the causes "
				  "below in order of size, and re-run gpuwhy after each change to "
				  "check that compute rose.",
				  c);
	if (res->memory_high && res->compute_high)
		return gw_strdupf(
			"Memory peaked at %.0f%% of %.0f GiB and compute is %.0f%%: near "
			"the ideal. Fine-tune only; a full memory leaves no headroom for "
			"longer inputs, so keep an eye on the peak. Check step time before "
			"and after any change.",
			p, gib(m->total_bytes), c);
	if (res->memory_high)
		return gw_strdupf(
			"Memory peaked at %.0f%% of %.0f GiB while compute is only %.0f%%: memory "
			"is full but the SMs idle. Go through the causes below in order of size. "
			"Memory is what limits a larger batch: activation recomputation, gradient "
			"accumulation, sharded optimizer state or mixed precision (AMP) make room "
			"(trade-off: recomputation costs extra compute, AMP needs loss scaling); "
			"check the loss curve and the new peak after the change.",
			p, gib(m->total_bytes), c);
	if (res->compute_high)
		return gw_strdupf(
			"Compute-dense (%.0f%% of SM-time) with memory at %.0f%% of %.0f GiB: a "
			"batch %s larger fits. Trade-off: a larger batch changes "
			"convergence (retune the learning rate); check the validation loss and "
			"samples per second after the change.",
			c, p, gib(m->total_bytes), room_text(res, room, sizeof(room)));
	return gw_strdupf("Memory peaked at %.0f%% of %.0f GiB and compute is %.0f%%: the GPU is "
			  "waiting for work. Fix the data pipeline and parallelism first, then "
			  "use the room: a batch %s larger fits (trade-off: convergence "
			  "changes, retune the learning rate). Check compute and samples per "
			  "second after each change.",
			  p, gib(m->total_bytes), c, room_text(res, room, sizeof(room)));
}

static char *bucket_text(struct gw_analyzer *a, int b)
{
	const struct gw_analysis *res = a->res;
	double pct = res->breakdown[b] * 100, ms = bucket_ms(res, b);
	const struct gw_sync_site *ss = res->n_sync_sites ? &res->sync_sites[0] : NULL;
	const struct gw_tiny_kernel *tk = res->n_tiny_kernels ? &res->tiny_kernels[0] : NULL;
	const struct gw_fusion_candidate *fc = res->n_fusion ? &res->fusion[0] : NULL;
	double tiny_ms = (double)a->opt.tiny_ns / 1000.0;
	char room[32];

	switch (b) {
	case GW_BUCKET_BANDWIDTH_BOUND:
		if (measured_class(res, b))
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) ran bandwidth-bound kernels (measured "
				"DRAM use of at least 60%% of peak, NVML, or by their names where "
				"the counters could not tell): fuse chains of them (torch.compile) "
				"or move fewer bytes (bf16/fp8). Trade-off: compilation time, "
				"precision. Check the kernels' total time and the model's accuracy "
				"after the change.",
				pct, ms);
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) ran kernels whose names mark them "
			"bandwidth-bound (elementwise, copies, gemv): fuse chains of them "
			"(torch.compile) or move fewer bytes (bf16/fp8). Trade-off: "
			"compilation time, precision. Check the kernels' total time and the "
			"model's accuracy after the change.",
			pct, ms);
	case GW_BUCKET_LOW_INTENSITY:
		if (measured_class(res, b))
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) ran low arithmetic-intensity kernels "
				"(measured DRAM and SM use both under 60%%, NVML, or by their "
				"names where the counters could not tell): fuse them into their "
				"neighbours (torch.compile, fused norm kernels), avoid "
				"materialized transposes. Trade-off: engineering or compile time. "
				"Check their share falls in the next gpuwhy run.",
				pct, ms);
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) ran low arithmetic-intensity "
			"kernels (transposes, norms, softmax, masks): fuse them into their "
			"neighbours (torch.compile, fused norm kernels), avoid materialized "
			"transposes. Trade-off: engineering or compile time. Check their "
			"share falls in the next gpuwhy run.",
			pct, ms);
	case GW_BUCKET_SMALL_BATCH:
		/* the room for a larger batch only where memory was recorded: a torch.profiler
		 * trace without profile_memory has a peak of 0, not an empty GPU */
		if (res->memory.recorded && res->memory.total_bytes && batch_room(res) >= 1.5)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) was idle SMs inside kernels whose "
				"grids "
				"cannot fill the GPU (mean fill while they run %.0f%%). Memory "
				"peaked at %.0f%% "
				"of "
				"%.0f GiB, so a batch %s larger fits. Trade-off: a larger "
				"batch changes convergence; check the loss curve and samples/s.",
				pct, ms, running_fill(res) * 100, res->memory.peak_fraction * 100,
				gib(res->memory.total_bytes), room_text(res, room, sizeof(room)));
		return gw_strdupf("%.0f%% of SM-time (%.1f ms) was idle SMs inside kernels whose "
				  "grids cannot fill the GPU (mean fill while they run %.0f%%): "
				  "give each launch more "
				  "work (larger batch, or run independent work on other streams). "
				  "Trade-off: convergence or code changes; check samples/s.",
				  pct, ms, running_fill(res) * 100);
	case GW_BUCKET_DEPENDENCY_CHAIN:
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) was idle inside a serial chain of "
			"under-filled kernels repeating step after step (an RNN-style loop): "
			"batch independent sequences together, use a fused multi-step "
			"kernel (cuDNN RNN) or a CUDA Graph of the loop. Trade-off: "
			"restructuring the model; check the chain's time per step.",
			pct, ms);
	case GW_BUCKET_LAUNCH_OVERHEAD: {
		double q =
			res->launch_queued_sm_ns / (res->budget_sm_ns > 0 ? res->budget_sm_ns : 1);
		double ic =
			res->launch_in_call_sm_ns / (res->budget_sm_ns > 0 ? res->budget_sm_ns : 1);
		double bt =
			res->launch_between_sm_ns / (res->budget_sm_ns > 0 ? res->budget_sm_ns : 1);

		/* Kernels that already run from a CUDA Graph: what is left is the GPU's own
		 * latency between the graph's nodes, which only fusion removes. */
		if (tk && 2 * res->graph_tiny_kernels > res->counts.tiny_kernels)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) went to launch overhead (queued "
				"%.0f%%, inside launch calls %.0f%%, between them %.0f%%); %llu "
				"kernels ran under %.0f us, %llu of them as nodes of CUDA Graphs, "
				"the most frequent %s (%llu times). They already run from a graph: "
				"fuse the small kernels%s%s%s or give each more work, which gives "
				"back up to %.1f ms. Trade-off: fusion costs engineering; check "
				"launch_overhead in the next run.",
				pct, ms, q * 100, ic * 100, bt * 100,
				(unsigned long long)res->counts.tiny_kernels, tiny_ms,
				(unsigned long long)res->graph_tiny_kernels, tk->name,
				(unsigned long long)tk->count, fc ? " (top candidate: " : "",
				fc ? fc->names[0] : "", fc ? "...)" : "", ms);
		if (tk)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) went to launch overhead (queued "
				"%.0f%%, "
				"inside launch calls %.0f%%, between them %.0f%%); %llu kernels "
				"ran "
				"under %.0f us, the most frequent %s (%llu times, %s). Capture the "
				"loop in a CUDA Graph or fuse the small kernels%s%s%s: that gives "
				"back "
				"up to %.1f ms. Trade-off: graphs need static shapes, fusion costs "
				"engineering; check launch_overhead in the next run.",
				pct, ms, q * 100, ic * 100, bt * 100,
				(unsigned long long)res->counts.tiny_kernels, tiny_ms, tk->name,
				(unsigned long long)tk->count, tk->site.text ? tk->site.text : "?",
				fc ? " (top candidate: " : "", fc ? fc->names[0] : "",
				fc ? "...)" : "", ms);
		/* No kernel ran: the time went between copies and memsets. */
		if (!res->counts.kernels)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) the GPU idled between copies and "
				"memsets issued one by one (queued %.0f%%, inside the calls "
				"%.0f%%, "
				"between them %.0f%%): fewer, larger copies give it back. "
				"Trade-off: batching needs staging buffers; check launch_overhead "
				"in the next run.",
				pct, ms, q * 100, ic * 100, bt * 100);
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) went to launch overhead (queued "
			"%.0f%%, inside launch calls %.0f%%, between them %.0f%%): fewer, "
			"larger launches or a CUDA Graph give it back. Trade-off: graphs need "
			"static shapes; check launch_overhead in the next run.",
			pct, ms, q * 100, ic * 100, bt * 100);
	}
	case GW_BUCKET_HOST_SYNC:
		if (ss)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) the GPU waited on synchronizations. "
				"%s at "
				"%s synchronizes %llu times and exposes %.1f ms of idle GPU: drop "
				"it, "
				"defer the value it reads (keep it on the device, read it every N "
				"steps) or use async copies into pinned memory. Trade-off: later "
				"error detection or stale logging values; check host_sync in the "
				"next "
				"run.",
				pct, ms, ss->api, ss->site.text ? ss->site.text : "?",
				(unsigned long long)ss->count, (double)ss->exposed_ns / 1e6);
		return gw_strdupf("%.0f%% of SM-time (%.1f ms) the GPU waited on synchronizations: "
				  "remove or defer them. Check host_sync in the next run.",
				  pct, ms);
	case GW_BUCKET_DATA_TRANSFER:
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) only copies ran (%llu copies): put "
			"copies on their own stream from pinned memory so they overlap "
			"compute, or keep data resident on the device. Trade-off: pinned "
			"memory is scarce host memory; check data_transfer and step time.",
			pct, ms, (unsigned long long)res->counts.memcpy);
	case GW_BUCKET_HOST_WORK:
		if (ss && ss->host_work_after_ns)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) the GPU waited while the host worked "
				"(gaps over %.0f us); %.1f ms of it followed %s at %s, and may "
				"depend "
				"on the value it synced (move that decision to the device or defer "
				"it). Otherwise: more data-loader workers, prefetching, pinned "
				"memory. "
				"Trade-off: host memory and cores; check host_work in the next "
				"run.",
				pct, ms, (double)a->opt.starve_ns / 1000.0,
				(double)ss->host_work_after_ns / 1e6, ss->api,
				ss->site.text ? ss->site.text : "?");
		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) the GPU waited while the host worked "
			"(gaps over %.0f us): data loading, Python, CPU compute. Use more "
			"data-loader workers and prefetching, move CPU work off the critical "
			"path. Trade-off: host memory and cores; check host_work in the next "
			"run.",
			pct, ms, (double)a->opt.starve_ns / 1000.0);
	case GW_BUCKET_COMMUNICATION:
		return gw_strdupf("%.0f%% of SM-time (%.1f ms) ran NCCL kernels: overlap "
				  "communication with compute (bucketed all-reduce), check the "
				  "interconnect. Trade-off: memory for buckets; check step time.",
				  pct, ms);
	case GW_BUCKET_BLOCKED: {
		const struct gw_blocked_stream *bs = res->n_blocked ? &res->blocked[0] : NULL;

		if (bs)
			return gw_strdupf(
				"%.0f%% of SM-time (%.1f ms) the GPU had work queued and did not "
				"run "
				"it (gaps over %.0f us before queued work); the longest, %.1f ms, "
				"held %s on stream %llu of GPU %llu (%s). Queued work waits for a "
				"stream or event wait on work not yet done, a collective's slower "
				"peer, another process on the GPU, or work outside the trace: find "
				"what that stream waited for. Trade-off: reordering streams and "
				"events; check blocked in the next run.",
				pct, ms, (double)a->opt.queue_ns / 1000.0,
				(double)bs->longest_ns / 1e6, bs->next,
				(unsigned long long)bs->stream, (unsigned long long)bs->device,
				bs->launched ? (bs->site.text ? bs->site.text : "?")
					     : "launched before the trace began");
		return gw_strdupf("%.0f%% of SM-time (%.1f ms) the GPU had work queued and did "
				  "not run it: find the wait that held it. Check blocked in the "
				  "next run.",
				  pct, ms);
	}
	case GW_BUCKET_STARTUP: {
		const struct gw_startup *su = &res->startup;

		return gw_strdupf(
			"%.0f%% of SM-time (%.1f ms) the GPU waited for CUDA to start up: %llu "
			"context creation%s (%.1f ms of host time), %llu lazy kernel or module "
			"load%s (%.1f ms)%s. A one-time cost: a longer run spreads it, and a "
			"benchmark should warm up (run each kernel once) before it times; "
			"CUDA_MODULE_LOADING=EAGER loads every kernel at start instead of at its "
			"first launch. Trade-off: a slower start and the memory of kernels never "
			"used; check startup in the next run.",
			pct, ms, (unsigned long long)su->contexts, su->contexts == 1 ? "" : "s",
			(double)su->context_ns / 1e6, (unsigned long long)su->loadings,
			su->loadings == 1 ? "" : "s", (double)su->loading_ns / 1e6,
			su->compiles ? ", and PTX compiled for this GPU (ship SASS for it)" : "");
	}
	default:
		return NULL;
	}
}

/* "check X in the next run" names the command that makes the check: the text with
 * "(gpuwhy diff THIS NEXT)" after each "in the next run". Takes text; NULL on -ENOMEM. */
static char *name_diff(const struct gw_analysis *res, char *text)
{
	static const char phrase[] = "in the next run";
	const char *path = res->n_traces ? res->traces[0].path : NULL;
	char *hint, *out, *at;

	if (!text || !path || !(at = strstr(text, phrase)))
		return text;
	hint = res->n_traces > 1 ? gw_strdupf(" (gpuwhy diff %s ... --vs NEXT...)", path)
				 : gw_strdupf(" (gpuwhy diff %s NEXT)", path);
	at += sizeof(phrase) - 1;
	out = hint ? gw_strdupf("%.*s%s%s", (int)(at - text), text, hint, at) : NULL;
	free(hint);
	free(text);
	return out;
}

static int cmp_desc(const void *x, const void *y, const double *bd)
{
	int p = *(const int *)x, q = *(const int *)y;

	return bd[p] > bd[q] ? -1 : bd[p] < bd[q];
}

int gw_advise(struct gw_analyzer *a)
{
	struct gw_analysis *res = a->res;
	int order[GW_BUCKET_COUNT], n = 0, r;

	if (res->budget_sm_ns <= 0)
		return 0;
	if ((r = add_rec(res, GW_BUCKET_COUNT, 0, quadrant_text(res))) < 0)
		return r;
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		if (b != GW_BUCKET_COMPUTE && res->breakdown[b] >= GW_ADVICE_MIN_SHARE)
			order[n++] = b;
	/* Largest first (insertion sort: at most ten entries). */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && cmp_desc(&order[j], &order[j - 1], res->breakdown) < 0;
		     j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < n; i++)
		if ((r = add_rec(res, (enum gw_bucket)order[i], res->breakdown[order[i]],
				 name_diff(res, bucket_text(a, order[i])))) < 0)
			return r;
	return 0;
}
