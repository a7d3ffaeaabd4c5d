/* SPDX-License-Identifier: MIT */
/* Reads input files through their sources and feeds them to one analyzer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "source.h"

static int feed_file(struct gw_analyzer *a, struct gw_inputs *in, int i,
		     const struct gw_analysis_options *opt)
{
	struct gw_source *src = NULL;
	struct gw_record rec;
	uint64_t n = 0;
	int r;

	r = gw_source_open(in->paths[i], in->format, &src);
	if (r < 0)
		goto out;
	if ((r = gw_analyzer_begin_trace(a, in->paths[i])) < 0)
		goto out;
	while ((r = gw_source_next(src, &rec)) > 0) {
		n++;
		if ((r = gw_analyzer_add(a, &rec)) < 0)
			goto out;
		if (opt && opt->progress && !(n & 0xffff)) {
			uint64_t done, size;

			gw_source_progress(src, &done, &size);
			opt->progress(opt->progress_ctx, i, in->n, done, size);
		}
	}
	/* Corrupt bytes after good records: keep what was read, as for a cut file. */
	if (r == -EBADMSG && n > 1) {
		gw_analyzer_end_trace(a, true, false);
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	gw_analyzer_end_trace(a, src->truncated, src->clean_exit);
out:
	if (r == -E2BIG)
		snprintf(in->reason, sizeof(in->reason),
			 "more than 65535 devices or traces: more than one report can hold");
	else if (r < 0)
		snprintf(in->reason, sizeof(in->reason), "%s", gw_source_strerror(r));
	gw_source_free(src);
	return r;
}

int gw_analyze_files(struct gw_inputs *in, const struct gw_analysis_options *opt,
		     struct gw_analysis **ret)
{
	struct gw_analyzer *a = NULL;
	int r;

	in->failed = -1;
	in->reason[0] = '\0';
	if ((r = gw_analyzer_new(opt, &a)) < 0)
		return r;
	for (int i = 0; i < in->n; i++) {
		if ((r = feed_file(a, in, i, opt)) < 0) {
			in->failed = i;
			goto out;
		}
	}
	r = gw_analyzer_finish(a, ret);
out:
	if (r < 0 && !in->reason[0])
		snprintf(in->reason, sizeof(in->reason), "%s", gw_source_strerror(r));
	gw_analyzer_free(a);
	return r;
}
