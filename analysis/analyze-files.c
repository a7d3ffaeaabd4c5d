/* SPDX-License-Identifier: MIT */
/* Reads input files through their sources and feeds them to one analyzer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "source.h"
#include "util.h"

/* What tells one input from another: its file, and for gpuwhy's own captures the process. */
struct input_id {
	dev_t dev;
	ino_t ino;
	bool captured; /* a gpuwhy capture: pid, host and start are the process's own */
	uint64_t pid, start_ns, start_realtime_ns;
	char host[256];
};

static void input_id(const char *path, const struct gw_rec_header *h, struct input_id *ret)
{
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (stat(path, &st) == 0) {
		ret->dev = st.st_dev;
		ret->ino = st.st_ino;
	}
	ret->captured =
		(h->capture_mode == GW_CAPTURE_CUPTI || h->capture_mode == GW_CAPTURE_NONE) &&
		h->pid;
	ret->pid = h->pid;
	ret->start_ns = h->start_ns;
	ret->start_realtime_ns = h->start_realtime_ns;
	snprintf(ret->host, sizeof(ret->host), "%.*s", (int)h->host.len,
		 h->host.data ? (const char *)h->host.data : "");
}

/* Whether x is an input already read: the same file, or a copy of the same process's trace. */
static bool same_input(const struct input_id *x, const struct input_id *y)
{
	if (x->ino && x->dev == y->dev && x->ino == y->ino)
		return true;
	return x->captured && y->captured && x->pid == y->pid && x->start_ns == y->start_ns &&
	       x->start_realtime_ns == y->start_realtime_ns && !strcmp(x->host, y->host);
}

static int feed_file(struct gw_analyzer *a, struct gw_inputs *in, int i,
		     const struct gw_analysis_options *opt, struct input_id *ids)
{
	struct gw_source *src = NULL;
	struct gw_record rec;
	uint64_t n = 0;
	int r;

	r = gw_source_open(in->paths[i], in->format, &src);
	if (r < 0)
		goto out;
	/* the header first: an input given twice is counted once */
	if ((r = gw_source_next(src, &rec)) <= 0)
		goto first;
	if (rec.type == GW_REC_HEADER) {
		input_id(in->paths[i], &rec.header, &ids[i]);
		for (int k = 0; k < i; k++) {
			char *text;

			if (!same_input(&ids[k], &ids[i]))
				continue;
			text = gw_strdupf("%s is the same trace as %s: counted once", in->paths[i],
					  in->paths[k]);
			r = text ? gw_analyzer_warn(a, text) : -ENOMEM;
			free(text);
			ids[i] = (struct input_id){0}; /* nothing to match later inputs against */
			goto out;
		}
	}
	if ((r = gw_analyzer_begin_trace(a, in->paths[i])) < 0)
		goto out;
	do {
		n++;
		if ((r = gw_analyzer_add(a, &rec)) < 0)
			goto out;
		if (opt && opt->progress && !(n & 0xffff)) {
			uint64_t done, size;

			gw_source_progress(src, &done, &size);
			opt->progress(opt->progress_ctx, i, in->n, done, size);
		}
	} while ((r = gw_source_next(src, &rec)) > 0);
first:
	/* Corrupt bytes after good records: keep what was read, as for a cut file. */
	if (r == -EBADMSG && n > 1) {
		gw_analyzer_end_trace(a, true, false);
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	if (n)
		gw_analyzer_end_trace(a, src->truncated, src->clean_exit);
	if (src->skipped) {
		char *text = gw_strdupf("%s: %llu corrupt part%s passed over (%s): %s records are "
					"lost, what followed was read",
					in->paths[i], (unsigned long long)src->skipped,
					src->skipped == 1 ? " was" : "s were",
					src->skip_reason ? src->skip_reason : "corrupt bytes",
					src->skipped == 1 ? "its" : "their");

		r = text ? gw_analyzer_warn(a, text) : -ENOMEM;
		free(text);
	}
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
	struct input_id *ids = calloc(in->n > 0 ? (size_t)in->n : 1, sizeof(*ids));
	int r;

	in->failed = -1;
	in->reason[0] = '\0';
	if (!ids)
		return -ENOMEM;
	if ((r = gw_analyzer_new(opt, &a)) < 0)
		goto out;
	for (int i = 0; i < in->n; i++) {
		if ((r = feed_file(a, in, i, opt, ids)) < 0) {
			in->failed = i;
			goto out;
		}
	}
	r = gw_analyzer_finish(a, ret);
out:
	if (r < 0 && !in->reason[0])
		snprintf(in->reason, sizeof(in->reason), "%s", gw_source_strerror(r));
	gw_analyzer_free(a);
	free(ids);
	return r;
}
