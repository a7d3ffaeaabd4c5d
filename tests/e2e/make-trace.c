/* SPDX-License-Identifier: MIT */
/* Writes a synthetic trace of a known shape through the real trace writer (a test input). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace-writer.h"

/*
 * The shape, which tests/e2e/test-perfetto.py and test-html.py derive their expectations from:
 * iteration i of N (a period of 10 us, from t = 1 ms):
 *   - one cudaLaunchKernel API call [t + 1 us, t + 3 us] on thread 1000 and its KERNEL on
 *     stream 7 + i % STREAMS, [t + 4 us, t + 4 + d us], d = 2 us for even i ("add_kernel",
 *     1 block) and 5 us for odd i ("gemm_kernel", 264 blocks of 256 threads);
 *   - when i % 100 == 99: a synchronous cudaMemcpy DtoH API call and its MEMCPY
 *     [t + 9.5 us, t + 9.8 us] (4096 bytes) on stream 7;
 *   - when i % 1000 == 0: cudaMalloc of (i / 1000 % 8 + 1) MiB (a MEMORY alloc) and a cudaMemset
 *     with its MEMSET [t + 9 us, t + 9.3 us];
 *   - when i % 1000 == 500 and i / 1000 is even: cudaFree of that iteration's allocation
 *     (a MEMORY free, bytes 0 as capture writes it).
 * One DEVICE (device 0, 132 SMs, 80 GiB) and one THREAD record. The records are flushed in
 * frames of at most 100000 so the writer never drops one. With UNTIMED, that many more
 * launches follow, each of an add_kernel CUPTI could not time (start and end 0). With EDGES
 * (1), two records at the format's edges follow the loop, 10 us apart: a 3 MiB allocation of
 * a memory kind this build does not know (42: device memory, by the analysis's rule), never
 * freed, and a gemm_kernel of grid (264, 0, 0) and block (256, 0, 0) running 5 us (a 0
 * dimension counts as 1).
 */
#define GW_T0_NS     1000000ull
#define GW_PERIOD_NS 10000ull
#define GW_MIB	     (1ull << 20)
#define GW_TID	     1000

enum {
	S_LAUNCH = 1,
	S_MEMCPY,
	S_MALLOC,
	S_FREE,
	S_MEMSET,
	S_THREAD,
	S_ADD,
	S_GEMM,
};

static void emit_string(uint64_t id, uint64_t kind, const char *text)
{
	struct gw_rec_string s = {
		.id = id,
		.kind = kind,
		.text = {(const uint8_t *)text, (uint32_t)strlen(text)},
	};

	gw_emit(GW_REC_STRING, &s);
}

static void emit_api(uint64_t start, uint64_t end, uint64_t corr, uint64_t category, uint64_t name,
		     uint64_t sync_kind, uint64_t bytes, uint64_t dst)
{
	struct gw_rec_api a = {
		.tid = GW_TID,
		.start_ns = start,
		.end_ns = end,
		.correlation = corr,
		.category = category,
		.sync_kind = sync_kind,
		.name_id = name,
		.bytes = bytes,
		.dst = dst,
	};

	gw_emit(GW_REC_API, &a);
}

/* A kernel of blocks 256-thread blocks, 32 registers a thread, timed [start, end]. */
static void emit_kernel(uint64_t stream, uint64_t corr, uint64_t name, uint64_t blocks,
			uint64_t start, uint64_t end)
{
	struct gw_rec_kernel k = {
		.stream = stream,
		.correlation = corr,
		.start_ns = start,
		.end_ns = end,
		.name_id = name,
		.grid_x = blocks,
		.grid_y = 1,
		.grid_z = 1,
		.block_x = 256,
		.block_y = 1,
		.block_z = 1,
		.registers_per_thread = 32,
	};

	gw_emit(GW_REC_KERNEL, &k);
}

int main(int argc, char **argv)
{
	static const char command[] = "make-trace";
	struct gw_writer_options opt = {.thread_buffer_bytes = 64u << 20};
	struct gw_rec_header hdr = {
		.format_version = GW_FORMAT_VERSION,
		.pid = (uint64_t)getpid(),
		.rank = -1,
		.start_ns = GW_T0_NS / 2,
		.capture_mode = GW_CAPTURE_CUPTI,
		.host = {(const uint8_t *)"synthetic", 9},
		.command = {(const uint8_t *)command, sizeof(command) - 1},
	};
	struct gw_rec_device dev = {
		.name = {(const uint8_t *)"synthetic device (test trace)", 29},
		.sm_count = 132,
		.cc_major = 9,
		.memory_total_bytes = 80ull << 30,
		.max_threads_per_sm = 2048,
		.max_blocks_per_sm = 32,
		.regs_per_sm = 65536,
		.smem_per_sm_bytes = 228 << 10,
		.max_threads_per_block = 1024,
		.max_regs_per_block = 65536,
		.max_smem_per_block_bytes = 227 << 10,
		.warp_size = 32,
	};
	struct gw_rec_thread thr = {
		.time_ns = GW_T0_NS, .tid = GW_TID, .name = {(const uint8_t *)"main", 4}};
	unsigned long n, streams, untimed = 0;
	bool edges;
	uint64_t corr = 0;
	int r;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: make-trace OUT KERNELS STREAMS [UNTIMED [EDGES]]\n");
		return 2;
	}
	if (argc >= 5)
		untimed = strtoul(argv[4], NULL, 10);
	edges = argc == 6 && strtoul(argv[5], NULL, 10) != 0;
	n = strtoul(argv[2], NULL, 10);
	streams = strtoul(argv[3], NULL, 10);
	if (!streams)
		streams = 1;
	opt.fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (opt.fd < 0) {
		fprintf(stderr, "make-trace: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	r = gw_writer_start(&opt, &hdr);
	if (r < 0) {
		fprintf(stderr, "make-trace: writer: %s\n", strerror(-r));
		return 1;
	}
	gw_emit(GW_REC_DEVICE, &dev);
	emit_string(S_LAUNCH, GW_STRING_API, "cudaLaunchKernel");
	emit_string(S_MEMCPY, GW_STRING_API, "cudaMemcpy");
	emit_string(S_MALLOC, GW_STRING_API, "cudaMalloc");
	emit_string(S_FREE, GW_STRING_API, "cudaFree");
	emit_string(S_MEMSET, GW_STRING_API, "cudaMemset");
	emit_string(S_ADD, GW_STRING_KERNEL, "_Z10add_kernelPfS_i");
	emit_string(S_GEMM, GW_STRING_KERNEL, "gemm_kernel");
	gw_emit(GW_REC_THREAD, &thr);

	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = GW_T0_NS + i * GW_PERIOD_NS;

		emit_api(t + 1000, t + 3000, ++corr, GW_API_LAUNCH, S_LAUNCH, GW_SYNC_NONE, 0, 0);
		emit_kernel(7 + i % streams, corr, i % 2 ? S_GEMM : S_ADD, i % 2 ? 264 : 1,
			    t + 4000, t + 4000 + (i % 2 ? 5000 : 2000));
		if (i % 1000 == 0) {
			uint64_t addr = 0x7f0000000000ull + i * GW_MIB;
			struct gw_rec_memory m = {
				.time_ns = t + 8500,
				.op = GW_MEMORY_ALLOC,
				.mem_kind = GW_MEM_DEVICE,
				.tid = GW_TID,
				.correlation = ++corr,
				.address = addr,
				.bytes = (i / 1000 % 8 + 1) * GW_MIB,
			};
			struct gw_rec_memset ms = {
				.stream = 7,
				.correlation = ++corr,
				.start_ns = t + 9000,
				.end_ns = t + 9300,
				.bytes = m.bytes,
			};

			emit_api(t + 8000, t + 8500, m.correlation, GW_API_ALLOC, S_MALLOC,
				 GW_SYNC_NONE, m.bytes, addr);
			gw_emit(GW_REC_MEMORY, &m);
			emit_api(t + 8600, t + 8900, ms.correlation, GW_API_MEMSET, S_MEMSET,
				 GW_SYNC_NONE, ms.bytes, addr);
			gw_emit(GW_REC_MEMSET, &ms);
		}
		if (i % 1000 == 500 && (i / 1000) % 2 == 0) {
			uint64_t addr = 0x7f0000000000ull + (i - 500) * GW_MIB;
			struct gw_rec_memory m = {
				.time_ns = t + 8500,
				.op = GW_MEMORY_FREE,
				.mem_kind = GW_MEM_DEVICE,
				.tid = GW_TID,
				.correlation = ++corr,
				.address = addr,
			};

			emit_api(t + 8000, t + 8500, m.correlation, GW_API_FREE, S_FREE,
				 GW_SYNC_IMPLICIT, 0, addr);
			gw_emit(GW_REC_MEMORY, &m);
		}
		if (i % 100 == 99) {
			struct gw_rec_memcpy c = {
				.stream = 7,
				.correlation = ++corr,
				.start_ns = t + 9500,
				.end_ns = t + 9800,
				.bytes = 4096,
				.copy_kind = 2, /* DtoH */
			};

			emit_api(t + 9400, t + 9900, c.correlation, GW_API_MEMCPY, S_MEMCPY,
				 GW_SYNC_COPY, c.bytes, 0);
			gw_emit(GW_REC_MEMCPY, &c);
		}
		if (i % 20000 == 19999)
			gw_writer_flush(10ull * 1000 * 1000 * 1000);
	}
	for (unsigned long i = 0; i < untimed; i++) {
		uint64_t t = GW_T0_NS + (n + i) * GW_PERIOD_NS;

		emit_api(t + 1000, t + 3000, ++corr, GW_API_LAUNCH, S_LAUNCH, GW_SYNC_NONE, 0, 0);
		emit_kernel(7, corr, S_ADD, 1, 0, 0);
	}
	if (edges) {
		uint64_t t = GW_T0_NS + (n + untimed) * GW_PERIOD_NS;
		struct gw_rec_memory m = {
			.time_ns = t,
			.op = GW_MEMORY_ALLOC,
			.mem_kind = 42,
			.tid = GW_TID,
			.correlation = ++corr,
			.address = 0x7e0000000000ull,
			.bytes = 3 * GW_MIB,
		};
		struct gw_rec_kernel k = {
			.stream = 7,
			.correlation = ++corr,
			.start_ns = t + 10000,
			.end_ns = t + 15000,
			.name_id = S_GEMM,
			.grid_x = 264,
			.block_x = 256,
			.registers_per_thread = 32,
		};

		gw_emit(GW_REC_MEMORY, &m);
		emit_api(t + 9000, t + 9500, k.correlation, GW_API_LAUNCH, S_LAUNCH, GW_SYNC_NONE,
			 0, 0);
		gw_emit(GW_REC_KERNEL, &k);
	}
	r = gw_writer_stop(true, 0);
	if (r < 0) {
		fprintf(stderr, "make-trace: writer: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
