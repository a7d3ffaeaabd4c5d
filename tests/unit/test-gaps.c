/* SPDX-License-Identifier: MIT */
/* State C, the idle gaps: queued work, sync debt, short and long starvation, sync kinds, polling
 * waits, host functions and waits for a value that hold queued work; peer copies. */
#include <stdio.h>

#include "analysis-test-util.h"

/* Four SMs; 32 blocks of 256 threads fill them exactly (fill 1), so kernel time is compute
 * and every other SM-ns comes from the gap rules. */
#define SMS  4
#define FULL 32

static void setup_dev(struct tb *t)
{
	tb_device(t, 0, SMS);
	tb_string(t, 1, "sgemm_kernel");
}

/* Rule 1: K2's launch returned (5 us) long before K1 ended (15 us), at least --skew-us: the
 * 1 us gap is the GPU's own latency between queued operations. */
static void queued_is_launch_overhead(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 15000);
	tb_launch(&t, 1, 4000, 5000, 0, 7, 1, FULL, 16000, 26000);
	res = tb_finish(&t);
	/* Window 5000..26000: 20 us of kernels, 1 us queued gap. */
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 20000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 1000.0 * SMS, 1e-6);
	assert_near(res->launch_queued_sm_ns, 1000.0 * SMS, 1e-6);
	assert_near(res->breakdown[GW_BUCKET_LAUNCH_OVERHEAD], 1000.0 / 21000.0, 1e-12);
	assert_int_equal(res->n_gaps, 1);
	assert_int_equal(res->gaps[0].bucket, GW_BUCKET_LAUNCH_OVERHEAD);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * Rule 1, long: K2 was queued at 5 us, but the GPU ran it 64 us after K1 ended (at 15 us):
 * per-launch latency is microseconds, so the 64 us are blocked (queued work held by a wait),
 * and the blocked stream is named. At --queue-us 100 the same gap is launch overhead.
 */
/*
 * Rule 1 and the clocks: K2's launch returned 4 us before K1 ended, nearer than --skew-us
 * (10 us): with GPU times that may be that far off, K2 may not have been queued yet, and the
 * 3 us gap is judged by rule 3 (starved, short: launch overhead between launches). With
 * --skew-us 0 the same gap is queued.
 */
static void near_launch_is_not_assumed_queued(void **state)
{
	struct gw_analysis_options opt;
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		gw_analysis_options_init(&opt);
		if (pass)
			opt.skew_ns = 0;
		tb_init_opt(&t, &opt);
		setup_dev(&t);
		tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 15000);
		tb_launch(&t, 1, 4000, 11000, 0, 7, 1, FULL, 18000, 28000);
		res = tb_finish(&t);
		assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 3000.0 * SMS, 1e-6);
		assert_near(res->launch_queued_sm_ns, pass ? 3000.0 * SMS : 0, 1e-6);
		assert_near(res->launch_between_sm_ns, pass ? 0 : 3000.0 * SMS, 1e-6);
		tb_assert_sums_to_one(res);
		gw_analysis_free(res);
	}
}

/*
 * Rule 0: K2's first launch (14..40 us) loaded it lazily for 23 us (15..38) while the GPU sat
 * idle after K1 (15 us) until K2 ran (41 us): those 23 us are start-up, the 3 us left are
 * launch overhead (starved, short). A context created before the window counts in the totals
 * only.
 */
static void startup_before_the_rules(void **state)
{
	struct gw_record o = {.type = GW_REC_OVERHEAD};
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	o.overhead = (struct gw_rec_overhead){
		.kind = GW_OVERHEAD_CONTEXT_CREATION, .tid = 1, .start_ns = 100, .end_ns = 2100};
	tb_add(&t, &o);
	o.overhead = (struct gw_rec_overhead){
		.kind = GW_OVERHEAD_FUNCTION_LOADING, .tid = 1, .start_ns = 15000, .end_ns = 38000};
	tb_add(&t, &o);
	tb_launch(&t, 1, 2500, 4000, 0, 7, 1, FULL, 5000, 15000);
	tb_launch(&t, 1, 14000, 40000, 0, 7, 1, FULL, 41000, 51000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_STARTUP), 23000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 3000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 20000.0 * SMS, 1e-6);
	assert_int_equal(res->startup.contexts, 1);
	assert_int_equal(res->startup.context_ns, 2000);
	assert_int_equal(res->startup.loadings, 1);
	assert_int_equal(res->startup.loading_ns, 23000);
	assert_int_equal(res->top_idle, GW_BUCKET_STARTUP);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

static void queued_long_gap_is_blocked(void **state)
{
	struct gw_analysis_options opt;
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		gw_analysis_options_init(&opt);
		if (pass)
			opt.queue_ns = 100000;
		tb_init_opt(&t, &opt);
		setup_dev(&t);
		tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 15000);
		tb_launch(&t, 1, 4000, 5000, 0, 7, 1, FULL, 79000, 89000);
		res = tb_finish(&t);
		/* window 5..89 us: 20 us of kernels, 64 us queued */
		assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 20000.0 * SMS, 1e-6);
		if (!pass) {
			assert_near(tb_sm(res, GW_BUCKET_BLOCKED), 64000.0 * SMS, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 0, 1e-6);
			assert_int_equal(res->top_idle, GW_BUCKET_BLOCKED);
			assert_int_equal(res->n_blocked, 1);
			assert_int_equal(res->blocked[0].stream, 7);
			assert_int_equal(res->blocked[0].gaps, 1);
			assert_int_equal(res->blocked[0].longest_ns, 64000);
			assert_true(res->blocked[0].launched);
			assert_string_equal(res->blocked[0].next, "sgemm_kernel");
		} else {
			assert_near(tb_sm(res, GW_BUCKET_BLOCKED), 0, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 64000.0 * SMS, 1e-6);
			assert_int_equal(res->n_blocked, 0);
		}
		tb_assert_sums_to_one(res);
		gw_analysis_free(res);
	}
}

/*
 * GPU work whose launch call is not in the trace (it began after the launch, as a profiler
 * window does) is queued work: a 3 us gap before it is launch overhead, a 50 us one blocked.
 * Neither is host work, although no call of the host explains them.
 */
static void unlaunched_work_is_queued(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record k;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	k = tb_kernel_rec(901, 0, 7, 1, FULL, 5000, 15000);
	tb_add(&t, &k);
	k = tb_kernel_rec(902, 0, 7, 1, FULL, 18000, 28000);
	tb_add(&t, &k);
	k = tb_kernel_rec(903, 0, 7, 1, FULL, 78000, 88000);
	tb_add(&t, &k);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 3000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_BLOCKED), 50000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 0, 1e-6);
	assert_int_equal(res->n_blocked, 1);
	assert_false(res->blocked[0].launched);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * While only NCCL kernels run, their unfilled SMs are the collective's (communication), not
 * a small batch: an all-reduce of 8 blocks on 4 SMs (fill 8 / 32 = 0.25) for 10 us, then a
 * gemm of 8 blocks beside nothing: its unfilled 0.75 is small_batch.
 */
static void nccl_unfilled_is_communication(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_string(&t, 2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	tb_launch(&t, 1, 0, 4000, 0, 7, 2, 8, 5000, 15000);
	tb_launch(&t, 1, 4000, 8000, 0, 7, 1, 8, 15000, 25000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_COMMUNICATION), 10000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 0.25 * 10000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_SMALL_BATCH), 0.75 * 10000.0 * SMS, 1e-6);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * Rule 2: a device sync called at 4.1 us while K1 runs until 55 us waited W = 50.9 us. The
 * next starved gap (55..61 us, 6 us) is all host_sync; the remaining debt 44.9 us goes to
 * the next gap (71..275 us). Its remainder, 159.1 us, is over 100 us: host_work, except the
 * 4 us K3's thread spent inside K3's launch call, which is launch_overhead.
 */
static void sync_debt(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	const double window = 285000 - 5000;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 55000);
	tb_sync(&t, 1, 4100, 55500, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
	tb_launch(&t, 1, 56000, 60000, 0, 7, 1, FULL, 61000, 71000);
	tb_launch(&t, 1, 270000, 274000, 0, 7, 1, FULL, 275000, 285000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 70000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), (6000.0 + 44900.0) * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 4000.0 * SMS, 1e-6);
	assert_near(res->launch_in_call_sm_ns, 4000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), (159100.0 - 4000.0) * SMS, 1e-6);
	assert_near(res->breakdown[GW_BUCKET_HOST_SYNC], 50900.0 / window, 1e-12);
	assert_int_equal(res->counts.host_syncs, 1);
	assert_int_equal(res->n_sync_sites, 1);
	assert_int_equal(res->sync_sites[0].count, 1);
	assert_int_equal(res->sync_sites[0].kind, GW_SYNC_EXPLICIT);
	assert_int_equal(res->sync_sites[0].wait_ns, 50900);
	assert_int_equal(res->sync_sites[0].exposed_ns, 50900);
	assert_int_equal(res->sync_sites[0].host_work_after_ns, 155100);
	assert_int_equal(res->top_idle, GW_BUCKET_HOST_WORK);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* Rule 3, short: a 33 us starved gap is launch_overhead. A sync called inside it, with
 * nothing queued, waited for nothing and exposes nothing. */
static void short_starve_is_launch_overhead(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, FULL, 2000, 12000);
	tb_sync(&t, 1, 20000, 20500, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
	tb_launch(&t, 1, 40000, 44000, 0, 7, 1, FULL, 45000, 55000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 33000.0 * SMS, 1e-6);
	assert_near(res->launch_between_sm_ns, 33000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 0, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 0, 1e-6);
	assert_int_equal(res->sync_sites[0].wait_ns, 0);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* The same trace with --starve-us 10: the 33 us gap is now host work, less the 4 us inside
 * K2's launch call. */
static void starve_threshold_option(void **state)
{
	struct gw_analysis_options opt;
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	gw_analysis_options_init(&opt);
	opt.symbolize = false;
	opt.starve_ns = 10000;
	tb_init_opt(&t, &opt);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, FULL, 2000, 12000);
	tb_launch(&t, 1, 40000, 44000, 0, 7, 1, FULL, 45000, 55000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 29000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 4000.0 * SMS, 1e-6);
	gw_analysis_free(res);
}

/* Rule 3, long: 293 us of starvation on device 0 is host work but for K2's own 4 us launch
 * call. Thread 2's launch call for device 1 during the gap is not device 0's N's thread. */
static void long_starve_is_host_work(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	const struct gw_device_result *d0 = NULL;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_device(&t, 1, SMS);
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, FULL, 2000, 12000);
	tb_launch(&t, 2, 100000, 104000, 1, 9, 1, FULL, 105000, 115000);
	tb_launch(&t, 1, 300000, 304000, 0, 7, 1, FULL, 305000, 315000);
	res = tb_finish(&t);
	for (unsigned i = 0; i < res->n_devices; i++)
		if (res->devices[i].id == 0)
			d0 = &res->devices[i];
	assert_non_null(d0);
	assert_near(d0->sm_ns[GW_BUCKET_HOST_WORK], 289000.0 * SMS, 1e-6);
	assert_near(d0->sm_ns[GW_BUCKET_LAUNCH_OVERHEAD], 4000.0 * SMS, 1e-6);
	assert_near(d0->breakdown[GW_BUCKET_COMPUTE], 20000.0 / 313000.0, 1e-12);
	gw_analysis_free(res);
}

/* B: only a copy runs -> data_transfer. */
static void copy_only_is_data_transfer(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record api, cp;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	api = tb_api_rec(&t, 1, 0, 500, 0, GW_API_MEMCPY, GW_SYNC_NONE);
	tb_add(&t, &api);
	cp = tb_copy_rec(api.api.correlation, 0, 1000, 3000, false);
	cp.memcpy.src_kind = 2; /* pinned */
	cp.memcpy.dst_kind = 3;
	tb_add(&t, &cp);
	tb_launch(&t, 1, 600, 900, 0, 7, 1, FULL, 3000, 5000);
	res = tb_finish(&t);
	assert_near(res->breakdown[GW_BUCKET_DATA_TRANSFER], 0.5, 1e-12);
	assert_near(res->breakdown[GW_BUCKET_COMPUTE], 0.5, 1e-12);
	assert_int_equal(res->counts.memcpy, 1);
	assert_int_equal(res->counts.host_syncs, 0); /* a pinned async copy does not sync */
	gw_analysis_free(res);
}

static const struct gw_sync_site *site_named(const struct gw_analysis *res, const char *api)
{
	for (unsigned i = 0; i < res->n_sync_sites; i++)
		if (strcmp(res->sync_sites[i].api, api) == 0)
			return &res->sync_sites[i];
	fail_msg("no sync site %s", api);
	return NULL;
}

/* Sync kinds: explicit, a pageable async copy (a copy sync the capture cannot see at call
 * time, found from the activity record's memory kinds), an implicit free. */
static void sync_kinds(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record r, cp;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_string(&t, 10, "cudaStreamSynchronize");
	tb_string(&t, 11, "cudaMemcpyAsync");
	tb_string(&t, 12, "cudaFree");
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, FULL, 2000, 12000);
	r = tb_api_rec(&t, 1, 1000, 12500, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
	r.api.name_id = 10;
	tb_add(&t, &r);
	r = tb_api_rec(&t, 1, 13000, 20000, 0, GW_API_MEMCPY, GW_SYNC_NONE);
	r.api.name_id = 11;
	tb_add(&t, &r);
	cp = tb_copy_rec(r.api.correlation, 0, 15000, 19000, true);
	tb_add(&t, &cp);
	r = tb_api_rec(&t, 1, 20000, 21000, 0, GW_API_FREE, GW_SYNC_IMPLICIT);
	r.api.name_id = 12;
	tb_add(&t, &r);
	res = tb_finish(&t);
	assert_int_equal(res->counts.host_syncs, 3);
	assert_int_equal(res->counts.syncs_by_kind[GW_SYNC_EXPLICIT], 1);
	assert_int_equal(res->counts.syncs_by_kind[GW_SYNC_COPY], 1);
	assert_int_equal(res->counts.syncs_by_kind[GW_SYNC_IMPLICIT], 1);
	assert_int_equal(site_named(res, "cudaStreamSynchronize")->kind, GW_SYNC_EXPLICIT);
	assert_int_equal(site_named(res, "cudaMemcpyAsync")->kind, GW_SYNC_COPY);
	assert_int_equal(site_named(res, "cudaFree")->kind, GW_SYNC_IMPLICIT);
	/* The stream sync waited from 1 us until K1 drained at 12 us. */
	assert_int_equal(site_named(res, "cudaStreamSynchronize")->wait_ns, 11000);
	gw_analysis_free(res);
}

/* A sync that returns before the device drains (an event sync on earlier work) waited only
 * until its return: W = 20 - 4.1 = 15.9 us, paid by the next starved gap (55..95 us); the
 * rest of that gap, 24.1 us, is short starvation. */
static void sync_returning_before_drain(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 55000);
	tb_sync(&t, 1, 4100, 20000, 0, GW_API_SYNC, GW_SYNC_EXPLICIT);
	tb_launch(&t, 1, 90000, 94000, 0, 7, 1, FULL, 95000, 105000);
	res = tb_finish(&t);
	assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 15900.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 24100.0 * SMS, 1e-6);
	assert_int_equal(res->sync_sites[0].wait_ns, 15900);
	gw_analysis_free(res);
}

/* A sync on device 1, which had finished its work, sets no debt on device 0: device 0's
 * 6 us gap is short starvation. */
static void sync_debt_is_per_device(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	const struct gw_device_result *d0 = NULL;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_device(&t, 1, SMS);
	tb_launch(&t, 1, 0, 500, 1, 3, 1, FULL, 1000, 2000);
	tb_launch(&t, 1, 600, 4000, 0, 7, 1, FULL, 5000, 55000);
	tb_sync(&t, 1, 4100, 55500, 1, GW_API_SYNC, GW_SYNC_EXPLICIT);
	tb_launch(&t, 1, 56000, 60000, 0, 7, 1, FULL, 61000, 71000);
	res = tb_finish(&t);
	for (unsigned i = 0; i < res->n_devices; i++)
		if (res->devices[i].id == 0)
			d0 = &res->devices[i];
	assert_non_null(d0);
	assert_near(d0->sm_ns[GW_BUCKET_HOST_SYNC], 0, 1e-6);
	assert_near(d0->sm_ns[GW_BUCKET_LAUNCH_OVERHEAD], 6000.0 * SMS, 1e-6);
	assert_int_equal(res->sync_sites[0].wait_ns, 0);
	gw_analysis_free(res);
}

/*
 * A synchronous D2H copy called at 4.1 us while K1 runs (until 55 us) waits for K1 and for
 * its own copy (56..60 us): W = 60 - 4.1 = 55.9 us. The 1 us between K1 and the copy is no
 * drain (the copy was issued, its call still waiting): short starvation. The next gap
 * (60..105 us, 45 us) is all host_sync.
 */
static void sync_copy_waits_for_its_own_copy(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record r, cp;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 55000);
	r = tb_api_rec(&t, 1, 4100, 62000, 0, GW_API_MEMCPY, GW_SYNC_COPY);
	tb_add(&t, &r);
	cp = tb_copy_rec(r.api.correlation, 7, 56000, 60000, false);
	cp.memcpy.bytes = 4;
	tb_add(&t, &cp);
	tb_launch(&t, 1, 100000, 104000, 0, 7, 1, FULL, 105000, 115000);
	res = tb_finish(&t);
	assert_int_equal(res->sync_sites[0].wait_ns, 55900);
	assert_int_equal(res->sync_sites[0].exposed_ns, 45000);
	assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 45000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_DATA_TRANSFER), 4000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 1000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 60000.0 * SMS, 1e-6);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/*
 * An async copy from pageable memory called on an idle device (K1 ended at 12 us) stages
 * from 20 us and waits for its own copy (25..29 us), returning at 30 us. It waited while the
 * device worked for it: W = 29 - 25 = 4 us (the staging before was the host's own work), paid
 * by the next gap (29..35 us); the rest of that gap and the 13 us before the copy are short
 * starvation.
 */
static void pageable_copy_on_idle_device(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record r, cp;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_launch(&t, 1, 0, 1000, 0, 7, 1, FULL, 2000, 12000);
	r = tb_api_rec(&t, 1, 20000, 30000, 0, GW_API_MEMCPY, GW_SYNC_NONE);
	tb_add(&t, &r);
	cp = tb_copy_rec(r.api.correlation, 7, 25000, 29000, true);
	tb_add(&t, &cp);
	tb_launch(&t, 1, 30000, 34000, 0, 7, 1, FULL, 35000, 45000);
	res = tb_finish(&t);
	assert_int_equal(res->counts.syncs_by_kind[GW_SYNC_COPY], 1);
	assert_int_equal(res->sync_sites[0].wait_ns, 4000);
	assert_int_equal(res->sync_sites[0].exposed_ns, 4000);
	assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 4000.0 * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), (13000.0 + 2000.0) * SMS, 1e-6);
	assert_near(tb_sm(res, GW_BUCKET_DATA_TRANSFER), 4000.0 * SMS, 1e-6);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* The launch_overhead recommendation for the nodes of a CUDA Graph: three 5 us kernels of one
 * graph launch, 1 us apart (queued), or the same three from three launch calls. */
static const char *launch_rec(bool graph)
{
	static char text[1024];
	struct tb t;
	struct gw_analysis *res;
	struct gw_record api;

	tb_init(&t);
	setup_dev(&t);
	api = tb_api_rec(&t, 1, 0, 4000, 0, graph ? GW_API_GRAPH_LAUNCH : GW_API_LAUNCH,
			 GW_SYNC_NONE);
	tb_add(&t, &api);
	for (unsigned k = 0; k < 3; k++) {
		struct gw_record r;

		if (!graph && k) {
			api = tb_api_rec(&t, 1, 1000 * k, 1000 * k + 500, 0, GW_API_LAUNCH,
					 GW_SYNC_NONE);
			tb_add(&t, &api);
		}
		r = tb_kernel_rec(api.api.correlation, 0, 7, 1, FULL, 5000 + 6000 * k,
				  10000 + 6000 * k);
		tb_add(&t, &r);
	}
	res = tb_finish(&t);
	assert_int_equal(res->counts.tiny_kernels, 3);
	assert_int_equal(res->graph_tiny_kernels, graph ? 3 : 0);
	assert_int_equal(res->top_idle, GW_BUCKET_LAUNCH_OVERHEAD);
	text[0] = 0;
	for (unsigned i = 0; i < res->n_recs; i++)
		if (res->recs[i].bucket == GW_BUCKET_LAUNCH_OVERHEAD)
			snprintf(text, sizeof(text), "%s", res->recs[i].text);
	gw_analysis_free(res);
	return text;
}

/* Advising a CUDA Graph for kernels that already run from one would send the user in a
 * circle: what is left between graph nodes, only fusion removes. */
static void graph_nodes_are_not_told_to_use_graphs(void **state)
{
	(void)state;
	assert_non_null(strstr(launch_rec(false), "Capture the loop in a CUDA Graph"));
	assert_null(strstr(launch_rec(true), "Capture the loop in a CUDA Graph"));
	assert_non_null(strstr(launch_rec(true), "already run from a graph"));
}

/*
 * Stream capture: three launches on stream 5 between cudaStreamBeginCapture and
 * cudaStreamEndCapture are graph nodes (no kernel ran then); one on stream 6 meanwhile is a
 * launch; the graph's launch runs the three kernels, which join it. A capture that failed
 * (its status nonzero) starts nothing. A launch whose stream the trace does not know is
 * recorded when its thread is the one recording.
 */
static void captured_launches_are_graph_nodes(void **state)
{
	struct gw_record r, k;
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	r = tb_api_rec(&t, 1, 1000, 1100, 0, GW_API_CAPTURE_BEGIN, GW_SYNC_NONE);
	r.api.stream = 5;
	tb_add(&t, &r);
	for (int i = 0; i < 3; i++) {
		r = tb_api_rec(&t, 1, 1200 + 100 * i, 1250 + 100 * i, 0, GW_API_LAUNCH,
			       GW_SYNC_NONE);
		r.api.stream = 5;
		tb_add(&t, &r);
	}
	r = tb_api_rec(&t, 1, 1600, 1700, 0, GW_API_CAPTURE_BEGIN, GW_SYNC_NONE);
	r.api.stream = 9;
	r.api.status = 1; /* refused */
	tb_add(&t, &r);
	r = tb_api_rec(&t, 1, 1700, 1800, 0, GW_API_LAUNCH, GW_SYNC_NONE);
	r.api.stream = 6;
	tb_add(&t, &r);
	k = tb_kernel_rec(r.api.correlation, 0, 6, 1, FULL, 2000, 3000);
	tb_add(&t, &k);
	r = tb_api_rec(&t, 1, 1900, 1950, 0, GW_API_LAUNCH, GW_SYNC_NONE);
	r.api.stream = 9; /* not capturing: its capture failed */
	tb_add(&t, &r);
	/* a stream unknown (0, as nvcc 13's <<<>>> launch leaves it): another thread's launch
	 * is a launch; one of the recording thread is taken as recorded */
	r = tb_api_rec(&t, 2, 1900, 1950, 0, GW_API_LAUNCH, GW_SYNC_NONE);
	tb_add(&t, &r);
	r = tb_api_rec(&t, 1, 1960, 1990, 0, GW_API_LAUNCH, GW_SYNC_NONE);
	tb_add(&t, &r);
	r = tb_api_rec(&t, 1, 2000, 2100, 0, GW_API_CAPTURE_END, GW_SYNC_NONE);
	r.api.stream = 5;
	tb_add(&t, &r);
	r = tb_api_rec(&t, 1, 4000, 4100, 0, GW_API_GRAPH_LAUNCH, GW_SYNC_NONE);
	r.api.stream = 5;
	tb_add(&t, &r);
	for (int i = 0; i < 3; i++) {
		k = tb_kernel_rec(r.api.correlation, 0, 5, 1, FULL, 5000 + 2000 * (uint64_t)i,
				  6000 + 2000 * (uint64_t)i);
		tb_add(&t, &k);
	}
	res = tb_finish(&t);
	assert_int_equal(res->counts.captured_launches, 4);
	/* the stream 6 and 9 launches, thread 2's and the graph launch */
	assert_int_equal(res->counts.launches, 4);
	assert_int_equal(res->counts.kernels, 4);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

/* A polling wait as capture writes it: the SYNC record of a thread's queries of one stream. */
static void tb_poll(struct tb *t, uint64_t tid, uint64_t s, uint64_t e, uint64_t queries,
		    uint64_t name_id)
{
	struct gw_record r = {.type = GW_REC_SYNC};

	r.sync = (struct gw_rec_sync){.correlation = ++t->corr,
				      .start_ns = s,
				      .end_ns = e,
				      .type = 3,
				      .stream = 7,
				      .queries = queries,
				      .tid = tid,
				      .name_id = name_id};
	tb_add(t, &r);
}

/*
 * Polling is a host sync (doc/causes.md): the host spun on cudaStreamQuery from 4.1 us, while
 * K1 ran until 55 us, to 55.6 us, 500 queries in all. It waited W = 55 - 4.1 = 50.9 us for
 * the device: the gap after K1 (55..61 us, 6 us) is host_sync, as after a
 * cudaStreamSynchronize (sync_debt). A SYNC record of one synchronizing call (queries 0, as
 * imported traces carry CUPTI's) is no wait of its own; without the polling record the same
 * 6 us are launch overhead (a short starved gap).
 */
static void polling_is_host_sync(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		tb_init(&t);
		setup_dev(&t);
		tb_string(&t, 9, "cudaStreamQuery");
		tb_launch(&t, 1, 0, 4000, 0, 7, 1, FULL, 5000, 55000);
		tb_poll(&t, 1, 4100, 55600, pass ? 0 : 500, 9);
		tb_launch(&t, 1, 56000, 60000, 0, 7, 1, FULL, 61000, 71000);
		res = tb_finish(&t);
		assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 60000.0 * SMS, 1e-6);
		if (pass) {
			assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 0, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 6000.0 * SMS, 1e-6);
			assert_int_equal(res->counts.host_syncs, 0);
			assert_int_equal(res->n_sync_sites, 0);
		} else {
			assert_near(tb_sm(res, GW_BUCKET_HOST_SYNC), 6000.0 * SMS, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 0, 1e-6);
			assert_int_equal(res->counts.host_syncs, 1);
			assert_int_equal(res->counts.syncs_by_kind[GW_SYNC_POLL], 1);
			assert_int_equal(res->counts.poll_queries, 500);
			assert_int_equal(res->n_sync_sites, 1);
			assert_string_equal(res->sync_sites[0].api, "cudaStreamQuery");
			assert_int_equal(res->sync_sites[0].kind, GW_SYNC_POLL);
			assert_int_equal(res->sync_sites[0].wait_ns, 50900);
			assert_int_equal(res->sync_sites[0].exposed_ns, 6000);
		}
		tb_assert_sums_to_one(res);
		gw_analysis_free(res);
	}
}

/* A call that issues a host function or a wait for a value to `stream` (CUPTI's id), with its
 * STREAM_OP record. */
static void tb_stream_op(struct tb *t, uint64_t s, uint64_t e, uint64_t stream, uint64_t kind,
			 uint64_t name_id)
{
	struct gw_record r =
		tb_api_rec(t, 1, s, e, 0,
			   kind == GW_STREAM_OP_HOST_FUNC ? GW_API_HOST_FUNC : GW_API_STREAM_WAIT,
			   GW_SYNC_NONE);
	struct gw_record o = {.type = GW_REC_STREAM_OP};

	r.api.name_id = name_id;
	tb_add(t, &r);
	o.stream_op = (struct gw_rec_stream_op){
		.correlation = r.api.correlation, .kind = kind, .tid = 1, .stream = stream};
	tb_add(t, &o);
}

/*
 * Queued work behind a host function: K2 was queued at 5 us, after a host function issued to
 * its stream (7) after K1. K1 ended at 15 us; K2 ran at 79 us: the stream was held the 64 us
 * while the host ran the function. That is host work on the GPU's timeline (doc/causes.md),
 * not blocked, and the host function's site is named. Passes: 1, the host function went to
 * another stream (8): K2 was not behind it, the gap is blocked; 2, it was issued before K1
 * (K1 ran after it): the gap before K2 is blocked; 3, as 0 but K2 ran 1 us after K1: the
 * GPU's own latency (launch overhead), whatever was queued; 4, K2's launch returned only at
 * 20 us, after K1 ended: from then on (59 us) the host function held it, host work by its
 * site; the 5 us before, with nothing queued, are judged by rule 3 (starved, short: launch
 * overhead).
 */
static void host_function_holds_queued_work(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	for (int pass = 0; pass < 5; pass++) {
		tb_init(&t);
		setup_dev(&t);
		tb_string(&t, 9, "cudaLaunchHostFunc");
		if (pass == 2)
			tb_stream_op(&t, 0, 500, 7, GW_STREAM_OP_HOST_FUNC, 9);
		tb_launch(&t, 1, 1000, 4000, 0, 7, 1, FULL, 5000, 15000);
		if (pass != 2)
			tb_stream_op(&t, 4000, 4500, pass == 1 ? 8 : 7, GW_STREAM_OP_HOST_FUNC, 9);
		tb_launch(&t, 1, 4500, pass == 4 ? 20000 : 5000, 0, 7, 1, FULL,
			  pass == 3 ? 16000 : 79000, pass == 3 ? 26000 : 89000);
		res = tb_finish(&t);
		assert_near(tb_sm(res, GW_BUCKET_COMPUTE), 20000.0 * SMS, 1e-6);
		assert_int_equal(res->counts.host_functions, 1);
		assert_int_equal(res->n_host_funcs, 1);
		assert_string_equal(res->host_funcs[0].api, "cudaLaunchHostFunc");
		assert_int_equal(res->host_funcs[0].calls, 1);
		if (pass == 0) {
			assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 64000.0 * SMS, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_BLOCKED), 0, 1e-6);
			assert_int_equal(res->n_blocked, 0);
			assert_int_equal(res->host_funcs[0].gaps, 1);
			assert_int_equal(res->host_funcs[0].held_ns, 64000);
			assert_int_equal(res->top_idle, GW_BUCKET_HOST_WORK);
		} else if (pass == 4) {
			assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 59000.0 * SMS, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 5000.0 * SMS, 1e-6);
			assert_int_equal(res->host_funcs[0].gaps, 1);
			assert_int_equal(res->host_funcs[0].held_ns, 59000);
			assert_int_equal(res->n_blocked, 0);
		} else if (pass == 3) {
			assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), 1000.0 * SMS, 1e-6);
			assert_int_equal(res->host_funcs[0].gaps, 0);
		} else {
			assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 0, 1e-6);
			assert_near(tb_sm(res, GW_BUCKET_BLOCKED), 64000.0 * SMS, 1e-6);
			assert_int_equal(res->host_funcs[0].gaps, 0);
			assert_int_equal(res->host_funcs[0].held_ns, 0);
			assert_int_equal(res->n_blocked, 1);
			assert_null(res->blocked[0].held_by);
		}
		tb_assert_sums_to_one(res);
		gw_analysis_free(res);
	}
}

/*
 * Queued work behind a wait for a value in memory (cuStreamWaitValue32): the GPU had K2 and
 * did not run it until something outside its queued work wrote the value: blocked, as any
 * wait on work the trace does not show (design.md rule C.1), and the blocked stream names the
 * wait that held it.
 */
static void wait_value_is_blocked_and_named(void **state)
{
	struct tb t;
	struct gw_analysis *res;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 1: K2 issued only at 20 us, after K1 ended: blocked from then (59 us), the
		 * 5 us before with nothing queued are launch overhead (rule 3) */
		uint64_t held = pass ? 59000 : 64000;

		tb_init(&t);
		setup_dev(&t);
		tb_string(&t, 9, "cuStreamWaitValue32_v2");
		tb_launch(&t, 1, 1000, 4000, 0, 7, 1, FULL, 5000, 15000);
		tb_stream_op(&t, 4000, 4500, 7, GW_STREAM_OP_WAIT_VALUE, 9);
		tb_launch(&t, 1, 4500, pass ? 20000 : 5000, 0, 7, 1, FULL, 79000, 89000);
		res = tb_finish(&t);
		assert_near(tb_sm(res, GW_BUCKET_BLOCKED), (double)held * SMS, 1e-6);
		assert_near(tb_sm(res, GW_BUCKET_LAUNCH_OVERHEAD), (64000.0 - (double)held) * SMS,
			    1e-6);
		assert_near(tb_sm(res, GW_BUCKET_HOST_WORK), 0, 1e-6);
		assert_int_equal(res->counts.value_waits, 1);
		assert_int_equal(res->n_host_funcs, 0);
		assert_int_equal(res->n_blocked, 1);
		assert_int_equal(res->blocked[0].longest_ns, held);
		assert_non_null(res->blocked[0].held_by);
		assert_string_equal(res->blocked[0].held_by, "cuStreamWaitValue32_v2");
		tb_assert_sums_to_one(res);
		gw_analysis_free(res);
	}
}

/*
 * A peer-to-peer copy (CUPTI's MEMCPY2, both devices named) keeps both GPUs copying: the
 * 10 us copy, the only operation, is data transfer on device 0 and on device 1; it is one
 * copy in the counts.
 */
static void peer_copy_on_both_devices(void **state)
{
	struct tb t;
	struct gw_analysis *res;
	struct gw_record api, cp;

	(void)state;
	tb_init(&t);
	setup_dev(&t);
	tb_device(&t, 1, SMS);
	api = tb_api_rec(&t, 1, 1000, 2000, 0, GW_API_MEMCPY, GW_SYNC_NONE);
	tb_add(&t, &api);
	cp = tb_copy_rec(api.api.correlation, 7, 5000, 15000, false);
	cp.memcpy.copy_kind = 10; /* CUPTI_ACTIVITY_MEMCPY_KIND_PTOP */
	cp.memcpy.src_device = 0 + 1;
	cp.memcpy.dst_device = 1 + 1;
	tb_add(&t, &cp);
	res = tb_finish(&t);
	assert_int_equal(res->n_devices, 2);
	for (unsigned d = 0; d < 2; d++) {
		assert_near(res->devices[d].sm_ns[GW_BUCKET_DATA_TRANSFER], 10000.0 * SMS, 1e-6);
		assert_int_equal(res->devices[d].end_ns - res->devices[d].start_ns, 10000);
	}
	assert_near(res->breakdown[GW_BUCKET_DATA_TRANSFER], 1, 1e-12);
	assert_int_equal(res->counts.memcpy, 1);
	assert_int_equal(res->counts.peer_copies, 1);
	tb_assert_sums_to_one(res);
	gw_analysis_free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(queued_is_launch_overhead),
		cmocka_unit_test(queued_long_gap_is_blocked),
		cmocka_unit_test(near_launch_is_not_assumed_queued),
		cmocka_unit_test(startup_before_the_rules),
		cmocka_unit_test(unlaunched_work_is_queued),
		cmocka_unit_test(nccl_unfilled_is_communication),
		cmocka_unit_test(sync_debt),
		cmocka_unit_test(short_starve_is_launch_overhead),
		cmocka_unit_test(starve_threshold_option),
		cmocka_unit_test(long_starve_is_host_work),
		cmocka_unit_test(copy_only_is_data_transfer),
		cmocka_unit_test(sync_kinds),
		cmocka_unit_test(sync_returning_before_drain),
		cmocka_unit_test(sync_debt_is_per_device),
		cmocka_unit_test(sync_copy_waits_for_its_own_copy),
		cmocka_unit_test(pageable_copy_on_idle_device),
		cmocka_unit_test(graph_nodes_are_not_told_to_use_graphs),
		cmocka_unit_test(captured_launches_are_graph_nodes),
		cmocka_unit_test(polling_is_host_sync),
		cmocka_unit_test(host_function_holds_queued_work),
		cmocka_unit_test(wait_value_is_blocked_and_named),
		cmocka_unit_test(peer_copy_on_both_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
