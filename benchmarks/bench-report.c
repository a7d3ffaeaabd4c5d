/* SPDX-License-Identifier: MIT */
/* gpuwhy-report's analysis throughput (launches per second on one core) and memory per event. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "trace-reader.h"
#include "trace-writer.h"

/*
 * The synthetic trace: a training-like loop on one device with a few kernel shapes, per
 * launch an API record and a KERNEL record (GPU records written in batches of 1000 after
 * their API records, as CUPTI delivers them), a stream synchronize every 64 launches and an
 * allocation/free pair every 1024. Names, grids and durations vary so every rule runs: full
 * and partial waves, tiny kernels, queued and starved gaps, sync debt.
 */
#define NAMES 6

static const struct {
	const char *name;
	uint64_t interval, call, gpu, grid, block;
} loop[NAMES] = {
	{"sgemm_128x64_nn", 5000, 3500, 40000, 2112, 256},
	{"elementwise_add_kernel", 4000, 3200, 9000, 4096, 256},
	{"layer_norm_fwd", 4500, 3300, 6000, 512, 256},
	{"relu_kernel", 4000, 3000, 2000, 64, 256},
	{"softmax_warp_fwd", 4200, 3100, 4000, 132, 512},
	{"rnn_cell_step", 4100, 3000, 3000, 16, 128},
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void emit(enum gw_rec_type t, const void *rec)
{
	while (!gw_emit(t, rec))
		gw_writer_flush(1000000);
}

static int write_trace(const char *path, uint64_t launches)
{
	struct gw_writer_options opt = {.thread_buffer_bytes = 64u << 20};
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION, .pid = 1, .rank = -1};
	struct gw_rec_device dev = {.device = 0,
				    .name = {(const uint8_t *)"synthetic", 9},
				    .sm_count = 132,
				    .memory_total_bytes = 80ull << 30,
				    .max_threads_per_sm = 2048,
				    .max_blocks_per_sm = 32,
				    .regs_per_sm = 65536,
				    .smem_per_sm_bytes = 228 * 1024,
				    .warp_size = 32};
	static struct gw_rec_kernel batch[1000];
	uint64_t host = 1000000000, gpu = 1000050000, corr = 0;
	size_t nb = 0;
	int r;

	opt.fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (opt.fd < 0)
		return -errno;
	if ((r = gw_writer_start(&opt, &hdr)) < 0)
		return r;
	emit(GW_REC_DEVICE, &dev);
	for (unsigned k = 0; k < NAMES; k++) {
		struct gw_rec_string s = {.id = 2 + k, .kind = GW_STRING_KERNEL};

		s.text = (struct gw_bytes){(const uint8_t *)loop[k].name,
					   (uint32_t)strlen(loop[k].name)};
		emit(GW_REC_STRING, &s);
	}
	for (uint64_t i = 0; i < launches; i++) {
		unsigned k = (unsigned)(i % NAMES);
		struct gw_rec_api a = {.tid = 1234, .category = GW_API_LAUNCH, .name_id = 1};
		struct gw_rec_kernel *kr = &batch[nb++];

		a.start_ns = host;
		a.end_ns = host + loop[k].call;
		a.correlation = ++corr;
		a.kernel_name_id = 2 + k;
		a.grid_x = loop[k].grid;
		a.block_x = loop[k].block;
		a.stack_id = 1 + i % 7;
		host += loop[k].interval;
		emit(GW_REC_API, &a);
		memset(kr, 0, sizeof(*kr));
		kr->stream = 7;
		kr->correlation = a.correlation;
		kr->start_ns = gpu > a.end_ns ? gpu : a.end_ns;
		kr->end_ns = kr->start_ns + loop[k].gpu;
		gpu = kr->end_ns + 1000;
		kr->name_id = 2 + k;
		kr->grid_x = loop[k].grid;
		kr->block_x = loop[k].block;
		kr->registers_per_thread = 32;
		if (i % 64 == 63) {
			/* The host waits for the device: it resumes when the queue drained. */
			struct gw_rec_api s = {.tid = 1234,
					       .category = GW_API_SYNC,
					       .sync_kind = GW_SYNC_EXPLICIT,
					       .name_id = 1,
					       .stack_id = 9};

			s.start_ns = host;
			s.end_ns = (gpu > host ? gpu : host) + 2000;
			s.correlation = ++corr;
			host = s.end_ns + 30000;
			emit(GW_REC_API, &s);
		}
		if (i % 1024 == 0) {
			struct gw_rec_memory m = {.time_ns = host,
						  .op = GW_MEMORY_ALLOC,
						  .mem_kind = GW_MEM_DEVICE,
						  .address = 0x1000 + i,
						  .bytes = 1 << 20,
						  .stack_id = 3};

			emit(GW_REC_MEMORY, &m);
			m.op = GW_MEMORY_FREE;
			m.bytes = 0;
			m.time_ns = host + 100000;
			emit(GW_REC_MEMORY, &m);
		}
		if (nb == 1000 || i + 1 == launches) {
			for (size_t b = 0; b < nb; b++)
				emit(GW_REC_KERNEL, &batch[b]);
			nb = 0;
		}
	}
	return gw_writer_stop(true, 0);
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	uint64_t launches = 10000000, t0, t1, c0, c1, n = 0;
	const char *dir = getenv("TMPDIR");
	char path[4096];
	struct gw_reader *rd = NULL;
	struct gw_record rec;
	struct gw_analysis_options opt;
	struct gw_analysis *res = NULL;
	struct gw_analyzer *an = NULL;
	uint64_t cf;
	long rss0, rss1;
	double read_s, total_s;
	struct stat sb;
	int r;

	/* --write FILE N: only write the synthetic trace (for profiling the analysis alone). */
	if (argc > 3 && strcmp(argv[1], "--write") == 0)
		return write_trace(argv[2], strtoull(argv[3], NULL, 10)) < 0;
	/* --trace FILE: analyse an existing trace instead (FILE is kept). */
	bool given = argc > 2 && strcmp(argv[1], "--trace") == 0;

	if (argc > 1 && strcmp(argv[1], "--quick") == 0)
		launches = 1000000;
	else if (argc > 1 && !given)
		launches = strtoull(argv[1], NULL, 10);
	snprintf(path, sizeof(path), "%s/bench-report-%d.trace.zst", dir ? dir : "/tmp",
		 (int)getpid());
	if (given) {
		snprintf(path, sizeof(path), "%s", argv[2]);
	} else if ((r = write_trace(path, launches)) < 0) {
		fprintf(stderr, "bench-report: writing %s: %s\n", path, strerror(-r));
		return 1;
	}
	stat(path, &sb);

	/* Decoding alone: the reader's share of the time. */
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if ((r = gw_reader_open(path, &rd)) < 0) {
		fprintf(stderr, "bench-report: %s: %s\n", path, gw_reader_strerror(r));
		return 1;
	}
	while (gw_reader_next(rd, &rec) > 0)
		n++;
	gw_reader_free(rd);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	read_s = (double)(c1 - c0) / 1e9;

	/* Decoding and analysis, as gpuwhy-report runs them (one thread): the records are fed
	 * as they are decoded, then attributed. */
	gw_analysis_options_init(&opt);
	opt.symbolize = false; /* synthetic stacks have no module map */
	rss0 = maxrss_kib();
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	r = gw_reader_open(path, &rd);
	if (r >= 0)
		r = gw_analyzer_new(&opt, &an);
	if (r >= 0)
		r = gw_analyzer_begin_trace(an, path);
	while (r >= 0 && (r = gw_reader_next(rd, &rec)) > 0)
		r = gw_analyzer_add(an, &rec);
	gw_reader_free(rd);
	cf = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (r >= 0)
		r = gw_analyzer_finish(an, &res);
	gw_analyzer_free(an);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	rss1 = maxrss_kib();
	if (!given)
		unlink(path);
	else
		launches = res ? res->counts.launches : 0;
	if (r < 0) {
		fprintf(stderr, "bench-report: analysis: %s\n", strerror(-r));
		return 1;
	}
	total_s = (double)(c1 - c0) / 1e9;
	printf("launches                      %" PRIu64 " (%" PRIu64 " records, %.1f MiB trace)\n",
	       launches, n, (double)sb.st_size / (1 << 20));
	printf("decode only                   %.3f s CPU, %.2f M launches/s\n", read_s,
	       (double)launches / read_s / 1e6);
	printf("decode + analysis (report)    %.3f s CPU (%.3f s wall), %.2f M launches/s\n",
	       total_s, (double)(t1 - t0) / 1e9, (double)launches / total_s / 1e6);
	printf("analysis alone                %.3f s CPU, %.2f M launches/s (collect %.3f s, "
	       "attribute %.3f s)\n",
	       total_s - read_s, (double)launches / (total_s - read_s) / 1e6,
	       (double)(cf - c0) / 1e9 - read_s, (double)(c1 - cf) / 1e9);
	printf("events held                   %zu, %.1f bytes per event (tables)\n",
	       res->events_held, (double)res->bytes_held / (double)res->events_held);
	printf("peak RSS growth               %.1f MiB, %.1f bytes per event\n",
	       (double)(rss1 - rss0) / 1024,
	       (double)(rss1 - rss0) * 1024 / (double)res->events_held);
	printf("breakdown                    ");
	for (int b = 0; b < GW_BUCKET_COUNT; b++)
		if (res->breakdown[b] >= 0.001)
			printf(" %s %.3f", gw_buckets[b].key, res->breakdown[b]);
	printf("\n");
	gw_analysis_free(res);
	return 0;
}
