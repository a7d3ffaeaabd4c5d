/* SPDX-License-Identifier: MIT */
/* Writes the fuzz seed corpus: small valid traces from the real writer, and damaged copies. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace-writer.h"

static const char *dir;

static int open_out(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fprintf(stderr, "gen-corpus: %s: %s\n", path, strerror(errno));
	return fd;
}

static int start(const char *name, uint64_t frame_bytes)
{
	static const char cmd[] = "./train\0--epochs\0001";
	struct gw_rec_header h = {
		.format_version = GW_FORMAT_VERSION,
		.flags = GW_HEADER_STACKS,
		.pid = 100,
		.ppid = 1,
		.rank = 3,
		.clock_id = 4,
		.start_ns = 5000000,
		.capture_mode = GW_CAPTURE_CUPTI,
		.cupti_version = 26,
		.host = {(const uint8_t *)"gpu-node", 8},
		.command = {(const uint8_t *)cmd, sizeof(cmd) - 1},
	};
	struct gw_writer_options opt = {.frame_bytes = frame_bytes};

	opt.fd = open_out(name);
	if (opt.fd < 0)
		return -1;
	return gw_writer_start(&opt, &h);
}

static void all_types(void)
{
	static const uint64_t ips[] = {0x401000, 0x401234, 0x7f00deadbeef, 0x400ff0};
	static const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef, 0x01};
	struct gw_rec_device d = {.name = {(const uint8_t *)"GPU", 3},
				  .sm_count = 132,
				  .memory_total_bytes = 80ull << 30,
				  .warp_size = 32};
	struct gw_rec_string s = {
		.id = 1, .kind = GW_STRING_KERNEL, .text = {(const uint8_t *)"_Z6kernelPf", 11}};
	struct gw_rec_stack st = {.id = 1, .ips = {ips, 4}};
	struct gw_rec_module m = {.time_ns = 5000001,
				  .event = GW_MODULE_LOADED,
				  .base = 0x400000,
				  .size = 4096,
				  .build_id = {build_id, 5},
				  .path = {(const uint8_t *)"/bin/train", 10}};
	struct gw_rec_thread t = {
		.time_ns = 5000002, .tid = 101, .name = {(const uint8_t *)"main", 4}};
	struct gw_rec_api a = {.tid = 101,
			       .start_ns = 5000100,
			       .end_ns = 5004000,
			       .correlation = 1,
			       .category = GW_API_LAUNCH,
			       .kernel_name_id = 1,
			       .grid_x = 64,
			       .block_x = 256,
			       .stack_id = 1};
	struct gw_rec_kernel k = {.correlation = 1,
				  .start_ns = 5005000,
				  .end_ns = 5009000,
				  .name_id = 1,
				  .grid_x = 64,
				  .block_x = 256,
				  .registers_per_thread = 32};
	struct gw_rec_memcpy c = {.correlation = 2,
				  .start_ns = 5010000,
				  .end_ns = 5011000,
				  .bytes = 4096,
				  .copy_kind = 2};
	struct gw_rec_memset ms = {
		.correlation = 3, .start_ns = 5012000, .end_ns = 5012500, .bytes = 512};
	struct gw_rec_memory mem = {.time_ns = 5000050,
				    .op = GW_MEMORY_ALLOC,
				    .mem_kind = GW_MEM_DEVICE,
				    .address = 0x7f0000000000,
				    .bytes = 1 << 20,
				    .stack_id = 1};
	struct gw_rec_sync sy = {
		.correlation = 4, .start_ns = 5013000, .end_ns = 5020000, .type = 3};
	struct gw_rec_drops dr = {.time_ns = 5020001, .source = GW_DROP_CUPTI, .count = 2};
	struct gw_rec_note n = {.time_ns = 5020002,
				.level = GW_NOTE_WARNING,
				.text = {(const uint8_t *)"stacks off", 10}};

	if (start("valid-all-types.trace", 0) < 0)
		return;
	gw_emit(GW_REC_DEVICE, &d);
	gw_emit(GW_REC_STRING, &s);
	gw_emit(GW_REC_STACK, &st);
	gw_emit(GW_REC_MODULE, &m);
	gw_emit(GW_REC_THREAD, &t);
	gw_emit(GW_REC_MEMORY, &mem);
	gw_emit(GW_REC_API, &a);
	gw_emit(GW_REC_KERNEL, &k);
	gw_emit(GW_REC_MEMCPY, &c);
	gw_emit(GW_REC_MEMSET, &ms);
	gw_emit(GW_REC_SYNC, &sy);
	gw_emit(GW_REC_DROPS, &dr);
	gw_emit(GW_REC_NOTE, &n);
	gw_writer_stop(true, 0);
}

/* 48 launches in frames of about 512 bytes; clean or not. */
static void launches(const char *name, bool clean)
{
	if (start(name, 512) < 0)
		return;
	for (uint64_t i = 1; i <= 48; i++) {
		struct gw_rec_api a = {.tid = 101,
				       .start_ns = 6000000 + i * 5000,
				       .end_ns = 6003500 + i * 5000,
				       .correlation = i,
				       .category = GW_API_LAUNCH,
				       .kernel_name_id = 1 + i % 3,
				       .grid_x = 128,
				       .block_x = 256};
		struct gw_rec_kernel k = {.correlation = i,
					  .start_ns = 6010000 + i * 4000,
					  .end_ns = 6013000 + i * 4000,
					  .name_id = 1 + i % 3,
					  .grid_x = 128,
					  .block_x = 256};

		gw_emit(GW_REC_API, &a);
		gw_emit(GW_REC_KERNEL, &k);
	}
	gw_writer_stop(clean, 0);
}

static uint8_t *slurp(const char *name, size_t *size)
{
	char path[4096];
	FILE *f;
	uint8_t *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static void put(const char *name, const uint8_t *p, size_t n)
{
	int fd = open_out(name);

	if (fd < 0)
		return;
	if (write(fd, p, n) != (ssize_t)n)
		fprintf(stderr, "gen-corpus: short write to %s\n", name);
	close(fd);
}

/* Damaged copies of a valid trace: cut, a byte flipped, a future format version. */
static void variants(void)
{
	size_t n;
	uint8_t *buf = slurp("valid-launches.trace", &n);

	if (!buf || n < 64)
		return;
	put("cut-half.trace", buf, n / 2);
	put("cut-tail.trace", buf, n - 3);
	put("cut-header.trace", buf, 14);
	buf[n / 2] ^= 0x20;
	put("flip-data.trace", buf, n);
	buf[n / 2] ^= 0x20;
	buf[16] = GW_FORMAT_VERSION + 1;
	put("version-future.trace", buf, n);
	free(buf);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	all_types();
	launches("valid-launches.trace", true);
	launches("unclean.trace", false);
	variants();
	return 0;
}
