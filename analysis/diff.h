/* SPDX-License-Identifier: MIT */
/* Two analyses compared (`gpuwhy diff`): per bucket, per step or per run, sites, memory, verdict. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

/* One side of a comparison, on the basis both share: per step when both have steps, else per
 * run (the whole GPU window). */
struct gw_diff_side {
	const struct gw_analysis *a; /* borrowed */
	unsigned steps;
	double share[GW_BUCKET_COUNT];	   /* fractions of the steps' SM-time, or the run's */
	double device_ns[GW_BUCKET_COUNT]; /* device time a step (the mean), or of the run */
	double sm_ns[GW_BUCKET_COUNT];	   /* SM-time a step (the mean), or of the run */
	double gpu_ns;			   /* the sum of device_ns: GPU time a step, or the run's */
	double wall_ns;			   /* a step's wall time (the median), or the GPU window */
	double sms;			   /* SMs of the devices that ran something */
	enum gw_bucket top_idle;	   /* GW_BUCKET_COUNT: none over 0.5% */
};

enum gw_diff_site_kind {
	GW_DIFF_SYNC,		 /* a synchronizing call site: exposed idle time */
	GW_DIFF_HOST_AFTER_SYNC, /* host work after a synchronizing call */
	GW_DIFF_TINY_KERNEL,	 /* a tiny kernel: the idle time before its launches */
	GW_DIFF_ALLOCATION,	 /* an allocation site: bytes */
	GW_DIFF_SITE_KINDS
};

/* A site on both sides, matched by what it is (the call or kernel) and its function and file
 * (not its address or line: another build moves both). Values per step, or per run. */
struct gw_diff_site {
	enum gw_diff_site_kind kind;
	const char *name;     /* the call, the kernel, or the memory kind (borrowed) */
	const char *function; /* borrowed; NULL unknown */
	const char *file;     /* borrowed; NULL unknown */
	const char *where;    /* the site's text, after's when it has one (borrowed) */
	double before, after; /* ns (bytes for allocations) */
	double before_count, after_count;
};

struct gw_diff {
	struct gw_diff_side before, after;
	bool per_step;			     /* both sides have steps */
	double delta_share[GW_BUCKET_COUNT]; /* after's share minus before's */
	double delta_ns[GW_BUCKET_COUNT];    /* device time a step (or run), after minus before */
	double gpu_change;		     /* (after - before) / before of gpu_ns; NaN unknown */
	double wall_change;		     /* the same of wall_ns */
	struct gw_diff_site *sites;	     /* by kind, then by the size of the change */
	unsigned n_sites;
	char *verdict; /* one sentence */
	char **warnings;
	unsigned n_warnings;
};

/* Sites of each kind kept, those that changed most. */
#define GW_DIFF_SITES_PER_KIND 5

/*
 * Compares before with after (neither is modified; both must outlive the result, whose strings
 * point into them). Returns 0 and *ret (free with gw_diff_free), or -ENOMEM.
 */
int gw_diff_new(const struct gw_analysis *before, const struct gw_analysis *after,
		struct gw_diff **ret);
void gw_diff_free(struct gw_diff *d);

/* The key of a site kind ("sync", "host_work_after_sync", "tiny_kernel", "allocation"). */
const char *gw_diff_site_key(enum gw_diff_site_kind kind);
