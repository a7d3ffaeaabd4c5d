/* SPDX-License-Identifier: MIT */
/* Reads trace files with the streaming reader and feeds them to one analyzer. */
#include <errno.h>
#include <stdlib.h>

#include "analysis.h"
#include "trace-reader.h"

static int feed_file(struct gw_analyzer *a, const char *path, int i, int n_files,
		     const struct gw_analysis_options *opt)
{
	struct gw_reader *rd = NULL;
	struct gw_record rec = {.type = GW_REC_HEADER};
	uint64_t n = 0;
	int r;

	r = gw_reader_open(path, &rd);
	if (r < 0)
		return r;
	if ((r = gw_analyzer_begin_trace(a, path)) < 0)
		goto out;
	rec.header = *gw_reader_header(rd);
	if ((r = gw_analyzer_add(a, &rec)) < 0)
		goto out;
	while ((r = gw_reader_next(rd, &rec)) > 0) {
		n++;
		if ((r = gw_analyzer_add(a, &rec)) < 0)
			goto out;
		if (opt && opt->progress && !(n & 0xffff))
			opt->progress(opt->progress_ctx, i, n_files, gw_reader_bytes_read(rd),
				      gw_reader_file_size(rd));
	}
	/* Corrupt bytes after good records: keep what was read, as for a cut file. */
	if (r == -EBADMSG && n > 0) {
		gw_analyzer_end_trace(a, true, false);
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	gw_analyzer_end_trace(a, gw_reader_truncated(rd), gw_reader_clean_exit(rd));
out:
	gw_reader_free(rd);
	return r;
}

int gw_analyze_files(const char *const *paths, int n, const struct gw_analysis_options *opt,
		     struct gw_analysis **ret, int *ret_failed)
{
	struct gw_analyzer *a = NULL;
	int r;

	if (ret_failed)
		*ret_failed = -1;
	if ((r = gw_analyzer_new(opt, &a)) < 0)
		return r;
	for (int i = 0; i < n; i++) {
		if ((r = feed_file(a, paths[i], i, n, opt)) < 0) {
			if (ret_failed)
				*ret_failed = i;
			goto out;
		}
	}
	r = gw_analyzer_finish(a, ret);
out:
	gw_analyzer_free(a);
	return r;
}
