/* SPDX-License-Identifier: MIT */
/* The trace writer: per-thread lock-free buffers drained by one thread into zstd frames. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwhy/trace-format.h"

struct gw_writer_options {
	int fd;			    /* already opened output file; the writer owns it after start */
	const char *path;	    /* its path, to reopen it if the program takes fd (or NULL) */
	uint64_t flush_interval_ns; /* a frame at least this often; 0 = 250 ms */
	size_t thread_buffer_bytes; /* per-thread ring, rounded up to a power of two; 0 = 1 MiB */
	size_t frame_bytes;	    /* encoded bytes that end a frame; 0 = 1 MiB, at most 32 MiB */
	int zstd_level;		    /* 0 = default (1: see bench-trace) */
	unsigned max_threads;	    /* threads with a buffer at once; 0 = 256 */
};

/*
 * Starts the writer: writes the file header (hdr, whose BYTES are only read during the call),
 * maps the buffer pool and starts the writer thread with all signals blocked. The fd is the
 * writer's from then on, even when this fails after taking it. Returns 0, -EBUSY when a writer
 * is running, -EINVAL for a bad option, or the -errno of what failed.
 *
 * The writer thread keeps the file in a descriptor table of its own (close_range's
 * CLOSE_RANGE_UNSHARE, or unshare(CLONE_FILES)), holding nothing else, and fd is closed in the
 * process's table: the program can neither close nor reuse the trace's descriptor, fork
 * children and exec'd images do not inherit it. Where the kernel or a seccomp filter refuses
 * (the stats say which), fd stays in the process's table and is checked (device and inode)
 * before every write: a descriptor the program closed or took over is never written to; the
 * file is reopened from path (O_APPEND, the same inode only), else writing stops and the
 * records that follow are counted as dropped.
 */
int gw_writer_start(const struct gw_writer_options *opt, const struct gw_rec_header *hdr);

/*
 * Copies one record of a type of trace-format.h (rec points to its struct gw_rec_NAME, and
 * the data its BYTES/IPS fields point to) into the calling thread's buffer. Hot path, any
 * thread: no lock, no malloc, no syscall (a thread's first call claims a buffer with an atomic
 * and registers it with pthread_setspecific). Not reentrant within one thread: a signal
 * handler must not emit while its thread is inside gw_emit (the hooks' recursion guard).
 * Returns false when the record was dropped (buffer full, no buffer left, record too large:
 * counted in the trace's DROPS records) or no writer is running (not counted). IPS lists
 * deeper than GW_MAX_STACK_DEPTH are cut to their innermost GW_MAX_STACK_DEPTH entries.
 */
bool gw_emit(enum gw_rec_type type, const void *rec);

/* Asks for a frame with everything emitted before the call; waits at most timeout_ns for it. */
void gw_writer_flush(uint64_t timeout_ns);

/* Same, async-signal-safe (futex and clock only), for fatal-signal handlers. */
void gw_writer_flush_from_signal(uint64_t timeout_ns);

/*
 * Drains every buffer, writes a GW_REC_FOOTER (end time, totals, footer_flags) as the last
 * record when clean, closes the fd and joins the writer thread. Emits racing with the stop may
 * be lost; the buffers stay mapped so such an emit never faults. Returns 0, -EINVAL when no
 * writer runs, or the -errno of the first failed write.
 */
int gw_writer_stop(bool clean, uint64_t footer_flags);

/* Retires the calling thread's buffer: the writer drains it into a frame, then reuses it.
 * Runs automatically at thread exit through a pthread key destructor. */
void gw_writer_thread_exit(void);

/* In a fork child: forgets the inherited writer (fd closed, no thread, buffers abandoned)
 * without touching any lock. A later gw_writer_start starts afresh. */
void gw_writer_atfork_child(void);

struct gw_writer_stats {
	uint64_t records;	/* records in frames written (header and footer excluded) */
	uint64_t bytes_written; /* file bytes, header included */
	uint64_t dropped;	/* records lost: buffers, writes, and emitted DROPS records */
	uint64_t frames;	/* data frames written */
	unsigned reopened;    /* times the program took the descriptor and the file was reopened */
	bool private_fd;      /* the descriptor lived in the writer thread's own table */
	bool descriptor_lost; /* the program took the descriptor; the file could not be reopened */
	bool removed;	      /* at stop, the file had no name left (its directory was removed) */
};

/* Totals of the running writer, or of the last one stopped. Any thread. */
void gw_writer_get_stats(struct gw_writer_stats *ret);

/* Tests only: while stalled, the writer thread drains nothing (flushes time out). */
void gw_writer_test_stall(bool stall);
