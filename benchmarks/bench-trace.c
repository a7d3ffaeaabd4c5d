/* SPDX-License-Identifier: MIT */
/* Trace writer and reader throughput, and trace bytes per launch on a repetitive loop. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "gpuwhy/trace-codec.h"
#include "trace-reader.h"
#include "clock.h"
#include "trace-writer.h"

#define NAMES 4

/* The loop of the bytes-per-launch workload: a few kernels, each with its own launch shape,
 * API interval (4-6 us), API call duration and GPU duration, in ns. */
static const struct {
	uint64_t interval, call, gpu, grid, block;
} loop[NAMES] = {
	{4000, 3200, 6000, 1024, 256},
	{5000, 3500, 2500, 80, 128},
	{6000, 3900, 9000, 4096, 256},
	{4500, 3300, 1500, 132, 512},
};

/* CPU time of the calling thread: on a shared machine, wall time also counts other loads. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The whole process: the reader decompresses on a thread of its own. */
static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Uniform in [-j, j]. */
static int64_t jitter(int64_t j)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return j ? (int64_t)(rng_state % (uint64_t)(2 * j + 1)) - j : 0;
}

static const char *tmp_path(char *buf, size_t size)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, size, "%s/gw-bench-XXXXXX", dir ? dir : "/tmp");
	return buf;
}

static int start(struct gw_writer_options *opt, char *path)
{
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION, .pid = 1, .rank = -1};
	int r;

	opt->fd = mkstemp(path);
	if (opt->fd < 0)
		return -errno;
	r = gw_writer_start(opt, &hdr);
	if (r < 0)
		fprintf(stderr, "bench-trace: gw_writer_start: %s\n", strerror(-r));
	return r;
}

static void fill_api(struct gw_rec_api *a, uint64_t i)
{
	memset(a, 0, sizeof(*a));
	a->tid = 1234;
	a->start_ns = 1000000 + i * 5000;
	a->end_ns = a->start_ns + 3500;
	a->correlation = i;
	a->category = GW_API_LAUNCH;
	a->cbid = 211;
	a->name_id = 1;
	a->kernel_name_id = 2 + i % NAMES;
	a->grid_x = 1024;
	a->block_x = 256;
}

struct producer {
	uint64_t n;
	uint64_t accepted;
	uint64_t elapsed_ns;
	uint64_t cpu_ns;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct gw_rec_api a;
	uint64_t t0, c0;

	fill_api(&a, 1);
	t0 = gw_now_ns();
	c0 = cpu_ns();
	for (uint64_t i = 0; i < p->n; i++) {
		a.correlation = i;
		a.start_ns += 5000;
		a.end_ns += 5000;
		p->accepted += gw_emit(GW_REC_API, &a);
	}
	p->elapsed_ns = gw_now_ns() - t0;
	p->cpu_ns = cpu_ns() - c0;
	return NULL;
}

/* Producers emit API records as fast as they can into rings large enough for all of them:
 * the cost of gw_emit itself. Then the stop: what the writer thread needs to encode and
 * compress everything. Reported from the second run, when the ring pages are mapped in. */
static void bench_emit(int threads, uint64_t per_thread, bool print)
{
	struct gw_writer_options opt = {
		.thread_buffer_bytes = per_thread * (8 + sizeof(struct gw_rec_api)) + 65536,
	};
	struct producer p[8] = {0};
	pthread_t t[8];
	uint64_t t0, t1, t2, accepted = 0, slowest = 0, cpu = 0;
	struct gw_writer_stats st;
	char path[256];

	tmp_path(path, sizeof(path));
	if (start(&opt, path) < 0)
		return;
	t0 = gw_now_ns();
	for (int i = 0; i < threads; i++) {
		p[i].n = per_thread;
		pthread_create(&t[i], NULL, produce, &p[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		accepted += p[i].accepted;
		if (p[i].elapsed_ns > slowest)
			slowest = p[i].elapsed_ns;
		cpu += p[i].cpu_ns;
	}
	t1 = gw_now_ns();
	gw_writer_stop(true, 0);
	t2 = gw_now_ns();
	gw_writer_get_stats(&st);
	unlink(path);
	if (!print)
		return;
	printf("emit      %d producer%s  %6.1f M records/s per producer (wall), %6.1f M/s per "
	       "producer CPU-second, %6.1f M/s together (wall); %" PRIu64 " of %" PRIu64
	       " accepted\n",
	       threads, threads > 1 ? "s" : " ", (double)per_thread * 1e3 / (double)slowest,
	       (double)accepted * 1e3 / (double)cpu, (double)accepted * 1e3 / (double)(t1 - t0),
	       accepted, per_thread * threads);
	printf("writer    drain+encode+compress  %6.1f M records/s (%" PRIu64 " records, %" PRIu64
	       " frames, %.2f bytes/record)\n",
	       (double)st.records * 1e3 / (double)(t2 - t0), st.records, st.frames,
	       (double)st.bytes_written / (double)st.records);
}

/* Launch i of the loop: its API record from the host clock, its kernel from the GPU's. */
static void loop_launch(uint64_t i, int64_t j, uint64_t *host, uint64_t *gpu, struct gw_rec_api *a,
			struct gw_rec_kernel *kr)
{
	unsigned k = (unsigned)(i % NAMES);

	fill_api(a, i + 1);
	a->start_ns = *host;
	a->end_ns = *host + loop[k].call + (uint64_t)jitter(j);
	a->kernel_name_id = 2 + k;
	a->grid_x = loop[k].grid;
	a->block_x = loop[k].block;
	*host += loop[k].interval + (uint64_t)jitter(j);

	memset(kr, 0, sizeof(*kr));
	kr->stream = 7;
	kr->correlation = i + 1;
	kr->start_ns = *gpu;
	kr->end_ns = *gpu + loop[k].gpu + (uint64_t)jitter(j);
	*gpu = kr->end_ns + 1000 + (uint64_t)jitter(j);
	kr->name_id = 2 + k;
	kr->grid_x = loop[k].grid;
	kr->block_x = loop[k].block;
	kr->registers_per_thread = 32;
}

/*
 * The repetitive loop: one API record per launch from the application thread, the kernel
 * records in batches of 1000 as CUPTI delivers them. Kernels run back to back on the GPU.
 * Writes the trace to path; returns its size in bytes.
 */
static uint64_t write_loop(const char *path_template, char *path, uint64_t launches, int64_t j,
			   int level, size_t frame_bytes)
{
	struct gw_writer_options opt = {
		.zstd_level = level,
		.frame_bytes = frame_bytes,
		.thread_buffer_bytes = 64u << 20,
	};
	static struct gw_rec_kernel batch[1000];
	uint64_t host = 1000000000, gpu = 1000050000;
	struct gw_rec_api a;
	struct stat sb;
	size_t nb = 0;

	strcpy(path, path_template);
	rng_state = 0x9e3779b97f4a7c15ull;
	if (start(&opt, path) < 0)
		return 0;
	for (uint64_t i = 0; i < launches; i++) {
		struct gw_rec_kernel *kr = &batch[nb++];

		loop_launch(i, j, &host, &gpu, &a, kr);
		while (!gw_emit(GW_REC_API, &a))
			gw_writer_flush(1000000);
		if (nb == 1000 || i + 1 == launches) {
			for (size_t b = 0; b < nb; b++)
				while (!gw_emit(GW_REC_KERNEL, &batch[b]))
					gw_writer_flush(1000000);
			nb = 0;
		}
	}
	gw_writer_stop(true, 0);
	if (stat(path, &sb) < 0)
		return 0;
	return (uint64_t)sb.st_size;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Whole reads of the file, each in a fresh reader (its thread started anew); the median of
 * READ_PASSES, then the slowest and the fastest: one read of a few tens of ms on a shared
 * machine is at the mercy of whatever else runs. */
#define READ_PASSES 7
static void bench_read(const char *path, uint64_t launches)
{
	double wall[READ_PASSES], cpu[READ_PASSES];
	uint64_t n = 0;

	for (int pass = 0; pass < READ_PASSES; pass++) {
		struct gw_reader *r = NULL;
		struct gw_record rec;
		uint64_t t0, t1, c0, c1;
		int k;

		n = 0;
		t0 = gw_now_ns();
		c0 = process_cpu_ns();
		if ((k = gw_reader_open(path, &r)) < 0) {
			fprintf(stderr, "bench-trace: %s: %s\n", path, gw_reader_strerror(k));
			return;
		}
		while ((k = gw_reader_next(r, &rec)) > 0)
			n++;
		t1 = gw_now_ns();
		c1 = process_cpu_ns();
		gw_reader_free(r);
		wall[pass] = (double)n * 1e3 / (double)(t1 - t0);
		cpu[pass] = (double)n * 1e3 / (double)(c1 - c0);
	}
	qsort(wall, READ_PASSES, sizeof(wall[0]), cmp_double);
	qsort(cpu, READ_PASSES, sizeof(cpu[0]), cmp_double);
	printf("reader    %6.1f M records/s (wall), %6.1f M/s per CPU-second (%" PRIu64
	       " records of %" PRIu64 " launches, read + decompress + decode, all threads;"
	       " median of %d reads, wall %.1f-%.1f)\n",
	       wall[READ_PASSES / 2], cpu[READ_PASSES / 2], n, launches, READ_PASSES, wall[0],
	       wall[READ_PASSES - 1]);
}

/*
 * Decoding alone, on one thread, without zstd or the reader: the loop's records (+-64 ns),
 * encoded as the writer encodes them into 1 MiB frames (1000 API records, then their 1000
 * kernels), decoded by gw_decode_record. CPU ns a record, the best of DECODE_PASSES.
 */
#define DECODE_FRAME  (1u << 20)
#define DECODE_PASSES 5

struct encoded {
	uint8_t *buf;
	size_t *frame_end; /* offsets of frame ends */
	size_t nframes;
	uint64_t records;
};

static int encode_loop(struct encoded *e, uint64_t launches)
{
	static struct gw_rec_kernel batch[1000];
	static struct gw_codec_state cs;
	uint64_t host = 1000000000, gpu = 1000050000;
	size_t cap = (size_t)launches * 2 * 64 + DECODE_FRAME, at = 0, frame_start = 0, nb = 0;
	struct gw_rec_api a;

	e->buf = malloc(cap);
	e->frame_end = calloc(cap / (DECODE_FRAME / 2) + 2, sizeof(size_t));
	if (!e->buf || !e->frame_end)
		return -1;
	e->nframes = 0;
	e->records = 0;
	rng_state = 0x9e3779b97f4a7c15ull;
	gw_codec_reset(&cs);
	for (uint64_t i = 0; i < launches; i++) {
		bool batch_done;

		loop_launch(i, 64, &host, &gpu, &a, &batch[nb++]);
		batch_done = nb == 1000 || i + 1 == launches;
		/* the API record, then the batch of kernels when it is complete */
		for (size_t b = 0; b < 1 + (batch_done ? nb : 0); b++) {
			int n;

			if (at - frame_start > DECODE_FRAME - 512) {
				e->frame_end[e->nframes++] = at;
				frame_start = at;
				gw_codec_reset(&cs);
			}
			n = b ? gw_encode_record(&cs, GW_REC_KERNEL, &batch[b - 1], e->buf + at,
						 cap - at)
			      : gw_encode_record(&cs, GW_REC_API, &a, e->buf + at, cap - at);
			if (n < 0)
				return -1;
			at += (size_t)n;
			e->records++;
		}
		if (batch_done)
			nb = 0;
	}
	e->frame_end[e->nframes++] = at;
	return 0;
}

/* One pass over the frames; returns a sum of the fields read (0 on a decoding error), so that
 * nothing is optimized out. */
static uint64_t decode_pass(const struct encoded *e)
{
	static struct gw_codec_state cs;
	struct gw_record rec;
	uint64_t sum = 0;
	size_t p = 0;

	for (size_t f = 0; f < e->nframes; f++) {
		size_t end = e->frame_end[f], consumed;

		gw_codec_reset(&cs);
		while (p < end) {
			if (gw_decode_record(&cs, e->buf + p, end - p, &rec, &consumed) != 1)
				return 0;
			p += consumed;
			sum += rec.type == GW_REC_API ? rec.api.end_ns : rec.kernel.end_ns;
		}
	}
	return sum;
}

/* A trace file's data frames, decompressed one after the other into e (the file header, a
 * skippable frame, is left out); 0 or -1 with a message. */
static int load_frames(struct encoded *e, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *in = NULL;
	size_t in_len = 0, pos = 0, cap = 0, at = 0, *frame_end;
	struct gw_codec_state cs;
	struct gw_record rec;
	long size;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(in = malloc((size_t)size + 1)) || fread(in, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "bench-trace: %s: cannot read it\n", path);
		goto fail;
	}
	in_len = (size_t)size;
	e->frame_end = NULL;
	e->nframes = 0;
	e->records = 0;
	while (pos + 8 <= in_len) {
		uint32_t magic = (uint32_t)in[pos] | (uint32_t)in[pos + 1] << 8 |
				 (uint32_t)in[pos + 2] << 16 | (uint32_t)in[pos + 3] << 24;
		size_t z = ZSTD_findFrameCompressedSize(in + pos, in_len - pos);
		unsigned long long content;

		if ((magic & 0xFFFFFFF0u) == 0x184D2A50u && !ZSTD_isError(z)) {
			pos += z; /* the file header */
			continue;
		}
		content = ZSTD_getFrameContentSize(in + pos, in_len - pos);
		if (ZSTD_isError(z) || content > (64u << 20))
			break; /* a cut last frame */
		if (at + content > cap) {
			uint8_t *bigger = realloc(e->buf, (at + content) * 2);

			if (!bigger)
				goto fail;
			e->buf = bigger;
			cap = (at + content) * 2;
		}
		if (!(frame_end = realloc(e->frame_end, (e->nframes + 1) * sizeof(size_t))))
			goto fail;
		e->frame_end = frame_end;
		if (ZSTD_isError(ZSTD_decompress(e->buf + at, content, in + pos, z)))
			break;
		/* count the frame's records, and check it decodes */
		gw_codec_reset(&cs);
		for (size_t p = at, end = at + content, consumed; p < end; p += consumed) {
			if (gw_decode_record(&cs, e->buf + p, end - p, &rec, &consumed) < 0)
				goto fail;
			e->records++;
		}
		at += content;
		e->frame_end[e->nframes++] = at;
		pos += z;
	}
	free(in);
	fclose(f);
	return e->nframes ? 0 : -1;
fail:
	free(in);
	if (f)
		fclose(f);
	return -1;
}

static void bench_decode(uint64_t launches, const char *path)
{
	struct encoded e = {0};
	double best = 1e30;
	uint64_t sum = 0;

	if (path ? load_frames(&e, path) < 0 : encode_loop(&e, launches) < 0) {
		fprintf(stderr, "bench-trace: cannot %s\n",
			path ? "decode that trace" : "encode the loop");
		exit(1);
	}
	for (int pass = 0; pass < DECODE_PASSES; pass++) {
		uint64_t c0 = cpu_ns(), c1;

		sum = decode_pass(&e);
		c1 = cpu_ns();
		if ((double)(c1 - c0) < best)
			best = (double)(c1 - c0);
	}
	printf("decode    %5.1f ns/record, %5.1f M records/s (gw_decode_record alone: %" PRIu64
	       " records in %zu frames%s%s, one thread, no zstd, best of %d)%s\n",
	       best / (double)e.records, (double)e.records * 1e3 / best, e.records, e.nframes,
	       path ? " of " : "", path ? path : "", DECODE_PASSES, sum ? "" : " DECODING FAILED");
	free(e.buf);
	free(e.frame_end);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	uint64_t per = quick ? 200000 : 1000000, launches = quick ? 200000 : 1000000;
	static const int64_t jitters[] = {0, 16, 64, 256};
	static const int levels[] = {1, 3, 6, 9};
	char tmpl[256], path[256], keep[256] = "";

	/* --read FILE: only the reader, over an existing trace (for profilers) */
	if (argc > 2 && !strcmp(argv[1], "--read")) {
		bench_read(argv[2], 0);
		return 0;
	}
	/* --decode [FILE]: only the decoder, without zstd or the reader, on the loop's records
	 * or on an existing trace's */
	if (argc > 1 && !strcmp(argv[1], "--decode")) {
		bench_decode(1000000, argc > 2 ? argv[2] : NULL);
		return 0;
	}
	/* --frames: the reader by frame size; a capture ends a frame every 50 ms, so a real
	 * trace's frames are often far smaller than the 1 MiB the loop's are */
	if (argc > 1 && !strcmp(argv[1], "--frames")) {
		static const size_t sizes[] = {64u << 10, 256u << 10, 1u << 20};

		tmp_path(tmpl, sizeof(tmpl));
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			if (!write_loop(tmpl, path, 1000000, 64, 1, sizes[i]))
				return 1;
			printf("%4zu KiB frames: ", sizes[i] >> 10);
			bench_read(path, 1000000);
			unlink(path);
		}
		return 0;
	}
	tmp_path(tmpl, sizeof(tmpl));
	printf("bench-trace: %s run; this machine has %ld CPUs\n", quick ? "quick" : "full",
	       sysconf(_SC_NPROCESSORS_ONLN));
	/* the first run of each geometry faults the rings in; the pool is kept for the second */
	bench_emit(1, per, false);
	bench_emit(1, per, true);
	bench_emit(4, per / 4, false);
	bench_emit(4, per / 4, true);

	printf("bytes per launch (API + KERNEL record), %" PRIu64 " launches, 1 MiB frames "
	       "(writer default: zstd 1):\n",
	       launches);
	printf("  jitter(ns)");
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
		printf("   zstd %d", levels[l]);
	printf("\n");
	for (size_t j = 0; j < sizeof(jitters) / sizeof(jitters[0]); j++) {
		printf("  +-%-8" PRId64, jitters[j]);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			uint64_t size = write_loop(tmpl, path, launches, jitters[j], levels[l], 0);

			printf("  %7.2f", (double)size / (double)launches);
			if (jitters[j] == 64 && levels[l] == 1)
				strcpy(keep, path);
			else
				unlink(path);
		}
		printf("\n");
	}
	bench_decode(launches, NULL);
	if (keep[0]) {
		bench_read(keep, launches);
		if (!getenv("GW_BENCH_KEEP"))
			unlink(keep);
		else
			printf("kept %s\n", keep);
	}
	return 0;
}
