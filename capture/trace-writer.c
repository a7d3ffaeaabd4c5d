/* SPDX-License-Identifier: MIT */
/* The trace writer: per-thread single-producer rings drained by one thread into zstd frames. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "gpuwhy/trace-codec.h"
#include "clock.h"
#include "descriptors.h"
#include "trace-writer.h"

#define GW_DEFAULT_FLUSH_NS   (250ull * 1000 * 1000)
#define GW_DEFAULT_THREAD_BUF (1u << 20)
#define GW_MIN_THREAD_BUF     4096u
#define GW_MAX_THREAD_BUF     (1ull << 32)
#define GW_DEFAULT_FRAME      (1u << 20)
#define GW_MAX_FRAME	      (32u << 20)
#define GW_DEFAULT_LEVEL      1
#define GW_DEFAULT_THREADS    256u
#define GW_MAX_THREADS	      65536u
/* Slack past frame_bytes so any record that fits a ring also fits the frame being built. */
#define GW_FRAME_SLACK	      (GW_MAX_RECORD_PAYLOAD + 4096u)

/* How long the writer sleeps between passes: while data flows, long enough for the fullest
 * ring to gain about a quarter of its size at the rate just seen (within the busy bounds);
 * backing off when idle. */
#define GW_BUSY_SLEEP_NS     (200ull * 1000)
#define GW_BUSY_SLEEP_MAX_NS (5ull * 1000 * 1000)
#define GW_IDLE_SLEEP_MIN_NS (500ull * 1000)
#define GW_IDLE_SLEEP_MAX_NS (10ull * 1000 * 1000)

enum { GW_SLOT_FREE, GW_SLOT_ACTIVE, GW_SLOT_RETIRED };
enum { GW_W_NONE, GW_W_RUNNING, GW_W_STOPPING };
/* Where the writer thread's descriptor lives, as it reports to the starting thread. */
enum { GW_FD_PENDING, GW_FD_PRIVATE, GW_FD_SHARED };

/* One thread's ring. head belongs to the producer, tail to the writer: separate cache lines. */
struct gw_thread_buf {
	_Alignas(64) _Atomic uint64_t head;
	uint64_t tail_cache; /* the producer's last look at tail */
	_Atomic uint64_t dropped;
	_Alignas(64) _Atomic uint64_t tail;
	uint64_t dropped_seen; /* writer: already reported in a DROPS record */
	_Atomic int state;
	uint8_t *data;
};

/* Ring entry: this header, the record struct, then each BYTES/IPS field's data, 8-aligned.
 * size 0 marks the unused end of the ring before a wrap. */
struct gw_entry {
	uint32_t size;
	uint32_t type;
};

static struct {
	_Atomic int state;
	_Atomic uint32_t gen; /* bumped by start and fork: invalidates threads' buffer pointers */
	int fd;
	struct gw_fd_id fd_id;	   /* the file fd was opened on */
	char path[PATH_MAX];	   /* to reopen it when fd is shared and the program took it */
	_Atomic uint32_t fd_table; /* futex: GW_FD_* */
	bool reopen_note;	   /* a NOTE about a reopen is due in the next frame */

	/* the pool: slot array then the rings, one mapping kept across stop/start */
	uint8_t *pool;
	size_t pool_size;
	struct gw_thread_buf *slots;
	unsigned nslots;
	size_t buf_bytes;

	uint64_t flush_ns;
	size_t frame_bytes;
	pthread_t thread;
	ZSTD_CCtx *cctx;
	uint8_t *frame, *zbuf;
	size_t frame_cap, zcap, frame_len;
	uint64_t frame_records;
	struct gw_codec_state codec;

	_Atomic uint32_t wake;	     /* futex: the writer sleeps on it */
	_Atomic uint32_t flush_req;  /* flush requests made */
	_Atomic uint32_t flush_done; /* futex: last request a written frame answered */
	_Atomic bool stall;
	bool stop_clean;
	uint64_t stop_flags;

	_Atomic uint64_t lost_other; /* no buffer left, record too large */
	uint64_t lost_other_seen;
	int write_err; /* first write error; nothing more is written after it */

	_Atomic uint64_t st_records, st_bytes, st_frames, st_write_drops, st_buffer_drops;
	_Atomic uint64_t st_source_drops; /* DROPS records emitted by others (CUPTI's losses) */
	unsigned st_reopened;
	bool st_private, st_lost, st_removed;
} w = {.fd = -1};

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;

/* initial-exec: no lazy TLS allocation when a thread's first event arrives in a hook. */
static __thread __attribute__((tls_model("initial-exec"))) struct gw_thread_buf *tls_buf;
static __thread __attribute__((tls_model("initial-exec"))) uint32_t tls_gen;

static void futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};

	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void wake_writer(void)
{
	atomic_fetch_add(&w.wake, 1);
	futex_wake(&w.wake);
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void thread_key_destructor(void *arg)
{
	(void)arg;
	gw_writer_thread_exit();
}

static void make_thread_key(void)
{
	if (pthread_key_create(&thread_key, thread_key_destructor) != 0)
		thread_key = (pthread_key_t)-1;
}

static struct gw_thread_buf *claim_buffer(void)
{
	uint32_t gen = atomic_load_explicit(&w.gen, memory_order_acquire);

	for (unsigned i = 0; i < w.nslots; i++) {
		struct gw_thread_buf *b = &w.slots[i];
		int expected = GW_SLOT_FREE;

		if (atomic_load_explicit(&b->state, memory_order_relaxed) != GW_SLOT_FREE)
			continue;
		if (atomic_compare_exchange_strong(&b->state, &expected, GW_SLOT_ACTIVE)) {
			tls_buf = b;
			tls_gen = gen;
			if (thread_key != (pthread_key_t)-1)
				pthread_setspecific(thread_key, b);
			return b;
		}
	}
	return NULL;
}

static size_t var_size(const struct gw_record_info *info, const void *rec)
{
	size_t n = 0;

	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		const void *p = (const uint8_t *)rec + f->offset;

		if (f->kind == GW_FIELD_BYTES) {
			n += align8(((const struct gw_bytes *)p)->len);
		} else if (f->kind == GW_FIELD_IPS) {
			uint32_t d = ((const struct gw_ips *)p)->depth;

			n += 8 * (size_t)(d < GW_MAX_STACK_DEPTH ? d : GW_MAX_STACK_DEPTH);
		}
	}
	return n;
}

/* Copies the BYTES/IPS data after the struct copy and cuts over-deep stacks. */
static void copy_var(const struct gw_record_info *info, uint8_t *copy, uint8_t *var)
{
	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];
		uint8_t *p = copy + f->offset;

		if (f->kind == GW_FIELD_BYTES) {
			struct gw_bytes *b = (struct gw_bytes *)p;

			if (b->len)
				memcpy(var, b->data, b->len);
			var += align8(b->len);
		} else if (f->kind == GW_FIELD_IPS) {
			struct gw_ips *s = (struct gw_ips *)p;

			if (s->depth > GW_MAX_STACK_DEPTH)
				s->depth = GW_MAX_STACK_DEPTH;
			if (s->depth)
				memcpy(var, s->ips, 8 * (size_t)s->depth);
			var += 8 * (size_t)s->depth;
		}
	}
}

bool gw_emit(enum gw_rec_type type, const void *rec)
{
	const struct gw_record_info *info;
	struct gw_thread_buf *b;
	struct gw_entry *e;
	uint64_t head;
	size_t need, off, pad = 0, var = 0;

	if (atomic_load_explicit(&w.state, memory_order_acquire) != GW_W_RUNNING)
		return false;
	info = gw_record_info(type);
	if (!info || !rec)
		return false;
	b = tls_buf;
	if (!b || tls_gen != atomic_load_explicit(&w.gen, memory_order_relaxed)) {
		b = claim_buffer();
		if (!b) {
			atomic_fetch_add_explicit(&w.lost_other, 1, memory_order_relaxed);
			return false;
		}
	}
	if (info->nvar)
		var = var_size(info, rec);
	need = sizeof(*e) + info->size + var;
	if (need > w.buf_bytes / 2 || var > GW_MAX_RECORD_PAYLOAD - 4096)
		goto drop;

	head = atomic_load_explicit(&b->head, memory_order_relaxed);
	off = head & (w.buf_bytes - 1);
	if (off + need > w.buf_bytes)
		pad = w.buf_bytes - off;
	if (head + pad + need - b->tail_cache > w.buf_bytes) {
		b->tail_cache = atomic_load_explicit(&b->tail, memory_order_acquire);
		if (head + pad + need - b->tail_cache > w.buf_bytes)
			goto drop;
	}
	if (pad) {
		((struct gw_entry *)(b->data + off))->size = 0;
		off = 0;
	}
	e = (struct gw_entry *)(b->data + off);
	e->size = (uint32_t)need;
	e->type = type;
	memcpy(e + 1, rec, info->size);
	if (info->nvar)
		copy_var(info, (uint8_t *)(e + 1), (uint8_t *)(e + 1) + info->size);
	atomic_store_explicit(&b->head, head + pad + need, memory_order_release);
	return true;

drop:
	atomic_store_explicit(&b->dropped,
			      atomic_load_explicit(&b->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return false;
}

void gw_writer_thread_exit(void)
{
	struct gw_thread_buf *b = tls_buf;

	tls_buf = NULL;
	if (!b || tls_gen != atomic_load_explicit(&w.gen, memory_order_acquire))
		return;
	atomic_store_explicit(&b->state, GW_SLOT_RETIRED, memory_order_release);
	if (atomic_load_explicit(&w.state, memory_order_acquire) == GW_W_RUNNING)
		wake_writer();
}

/* ---- the writer thread ---- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The descriptor is in the process's table (no table of its own) and the program closed it,
 * or its number is another file now: the trace file is opened again, appending, if it is the
 * same file still. The old number is never closed: it is the program's. */
static int reopen_trace(void)
{
	struct gw_fd_id id;
	int fd;

	if (!w.path[0])
		return -EBADF;
	fd = open(w.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (gw_fd_identify(fd, &id) < 0 || id.dev != w.fd_id.dev || id.ino != w.fd_id.ino) {
		close(fd);
		return -ENOENT;
	}
	fd = gw_fd_move_high(fd);
	if (fd < 0)
		return fd;
	w.fd = fd;
	w.st_reopened++;
	w.reopen_note = true;
	return 0;
}

/* Every write of the file: a shared descriptor is checked first, as the program may have
 * closed it and opened a file of its own under the same number. */
static int write_out(const uint8_t *p, size_t n)
{
	int r;

	if (atomic_load(&w.fd_table) != GW_FD_PRIVATE && !gw_fd_is(w.fd, &w.fd_id)) {
		r = reopen_trace();
		if (r < 0) {
			w.st_lost = true;
			return r;
		}
	}
	return write_all(w.fd, p, n);
}

static uint64_t total_buffer_drops(void)
{
	uint64_t n = atomic_load(&w.lost_other);

	for (unsigned i = 0; i < w.nslots; i++)
		n += atomic_load_explicit(&w.slots[i].dropped, memory_order_relaxed);
	return n;
}

static void add_record(unsigned type, const void *rec);

/* A DROPS record for the buffer drops not yet reported, into the frame being built. */
static void add_drops_record(void)
{
	struct gw_rec_drops d = {.source = GW_DROP_THREAD_BUFFER};
	uint64_t n = atomic_load(&w.lost_other), seen = w.lost_other_seen;

	w.lost_other_seen = n;
	d.count = n - seen;
	for (unsigned i = 0; i < w.nslots; i++) {
		struct gw_thread_buf *b = &w.slots[i];

		n = atomic_load_explicit(&b->dropped, memory_order_relaxed);
		d.count += n - b->dropped_seen;
		b->dropped_seen = n;
	}
	if (!d.count)
		return;
	atomic_fetch_add(&w.st_buffer_drops, d.count);
	d.time_ns = gw_now_ns();
	add_record(GW_REC_DROPS, &d);
}

/* The frame about to be written says that the descriptor was reopened (into the frame's slack:
 * ending a frame here would recurse). */
static void add_reopen_note(void)
{
	static const char text[] = "the program closed the trace's descriptor or put a file of its "
				   "own under its number; gpuwhy reopened the trace and wrote "
				   "nothing there";
	struct gw_rec_note note = {
		.time_ns = gw_now_ns(),
		.level = GW_NOTE_INFO,
		.text = {(const uint8_t *)text, sizeof(text) - 1},
	};
	int n = gw_encode_record(&w.codec, GW_REC_NOTE, &note, w.frame + w.frame_len,
				 w.frame_cap - w.frame_len);

	if (n > 0) {
		w.frame_len += (size_t)n;
		w.frame_records++;
		w.reopen_note = false;
	}
}

static void end_frame(void)
{
	size_t z;
	int r;

	add_drops_record();
	if (!w.frame_len)
		return;
	/* the descriptor checked (and reopened) before compressing, so the frame can say so */
	if (!w.write_err && atomic_load(&w.fd_table) != GW_FD_PRIVATE &&
	    !gw_fd_is(w.fd, &w.fd_id) && (r = reopen_trace()) < 0) {
		w.st_lost = true;
		w.write_err = r;
	}
	if (w.reopen_note)
		add_reopen_note();
	if (w.write_err) {
		atomic_fetch_add(&w.st_write_drops, w.frame_records);
		goto reset;
	}
	z = ZSTD_compress2(w.cctx, w.zbuf, w.zcap, w.frame, w.frame_len);
	r = ZSTD_isError(z) ? -ENOMEM : write_out(w.zbuf, z);
	if (r < 0) {
		w.write_err = r;
		atomic_fetch_add(&w.st_write_drops, w.frame_records);
		goto reset;
	}
	atomic_fetch_add(&w.st_records, w.frame_records);
	atomic_fetch_add(&w.st_bytes, z);
	atomic_fetch_add(&w.st_frames, 1);
reset:
	w.frame_len = 0;
	w.frame_records = 0;
	gw_codec_reset(&w.codec);
}

static void add_record(unsigned type, const void *rec)
{
	int n = gw_encode_record(&w.codec, type, rec, w.frame + w.frame_len,
				 w.frame_cap - w.frame_len);

	if (n == -ENOSPC && w.frame_len) {
		end_frame();
		n = gw_encode_record(&w.codec, type, rec, w.frame, w.frame_cap);
	}
	if (n < 0) {
		atomic_fetch_add(&w.lost_other, 1);
		return;
	}
	w.frame_len += (size_t)n;
	w.frame_records++;
	if (w.frame_len >= w.frame_bytes)
		end_frame();
}

/* Points the BYTES/IPS fields of a ring entry's struct at the entry's own copy of the data. */
static void fix_pointers(const struct gw_record_info *info, uint8_t *rec)
{
	uint8_t *var = rec + info->size;

	for (unsigned i = 0; i < info->nfields; i++) {
		const struct gw_field_info *f = &info->fields[i];

		if (f->kind == GW_FIELD_BYTES) {
			struct gw_bytes *b = (struct gw_bytes *)(rec + f->offset);

			b->data = var;
			var += align8(b->len);
		} else if (f->kind == GW_FIELD_IPS) {
			struct gw_ips *s = (struct gw_ips *)(rec + f->offset);

			s->ips = (const uint64_t *)var;
			var += 8 * (size_t)s->depth;
		}
	}
}

static size_t drain_buffer(struct gw_thread_buf *b, uint64_t *max_bytes)
{
	uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
	size_t n = 0;

	if (head - tail > *max_bytes)
		*max_bytes = head - tail;
	while (tail != head) {
		size_t off = tail & (w.buf_bytes - 1);
		struct gw_entry *e = (struct gw_entry *)(b->data + off);
		const struct gw_record_info *info;

		if (!e->size) {
			tail += w.buf_bytes - off;
			continue;
		}
		info = gw_record_info(e->type);
		if (info->nvar)
			fix_pointers(info, (uint8_t *)(e + 1));
		/* losses reported by others (CUPTI's) count in the footer's total too */
		if (e->type == GW_REC_DROPS)
			atomic_fetch_add(&w.st_source_drops,
					 ((struct gw_rec_drops *)(e + 1))->count);
		add_record(e->type, e + 1);
		tail += e->size;
		if (!(++n & 255))
			atomic_store_explicit(&b->tail, tail, memory_order_release);
	}
	atomic_store_explicit(&b->tail, tail, memory_order_release);
	return n;
}

/* One pass over every buffer; *retired set when a buffer of an exited thread was freed;
 * *max_bytes raised to the most bytes one buffer held. */
static size_t drain_all(bool *retired, uint64_t *max_bytes)
{
	size_t n = 0;

	for (unsigned i = 0; i < w.nslots; i++) {
		struct gw_thread_buf *b = &w.slots[i];
		int st = atomic_load_explicit(&b->state, memory_order_acquire);

		if (st == GW_SLOT_FREE)
			continue;
		n += drain_buffer(b, max_bytes);
		if (st == GW_SLOT_RETIRED) {
			atomic_store_explicit(&b->state, GW_SLOT_FREE, memory_order_release);
			*retired = true;
		}
	}
	return n;
}

/* The footer goes last, and is not among the records it counts. */
static void add_footer(void)
{
	struct gw_rec_footer f = {.flags = w.stop_flags};
	int n;

	add_drops_record();
	f.end_ns = gw_now_ns();
	f.records = atomic_load(&w.st_records) + w.frame_records;
	f.dropped = atomic_load(&w.st_buffer_drops) + atomic_load(&w.st_write_drops) +
		    atomic_load(&w.st_source_drops);
	n = gw_encode_record(&w.codec, GW_REC_FOOTER, &f, w.frame + w.frame_len,
			     w.frame_cap - w.frame_len);
	if (n > 0)
		w.frame_len += (size_t)n;
}

/* Closes, in this thread's own table, every descriptor but keep (and the directory listing
 * them): where close_range cannot (a kernel before 5.9). */
static int close_all_but(int keep)
{
	DIR *d = opendir("/proc/thread-self/fd");
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd != keep && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
	return 0;
}

/*
 * Gives the calling thread (the writer) a descriptor table of its own that holds keep alone. A
 * copy of the program's other descriptors must not stay there: a pipe's write end held open
 * by it would keep the program's reader from ever seeing the end of the pipe.
 */
static int make_private_fd_table(int keep)
{
	if (keep <= 0)
		return -EINVAL;
	if (syscall(SYS_close_range, 0u, (unsigned)keep - 1, CLOSE_RANGE_UNSHARE) == 0) {
		syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u);
		return 0;
	}
	if (unshare(CLONE_FILES) < 0)
		return -errno;
	if (close_all_but(keep) < 0) {
		/* no listing: every number up to the limit */
		for (int fd = 0, max = (int)sysconf(_SC_OPEN_MAX); fd < max && fd < (1 << 20); fd++)
			if (fd != keep)
				close(fd);
	}
	return 0;
}

/* At the end, in the writer thread: whether the file still has a name, and the descriptor
 * closed (a shared one only when it is still the trace's). */
static void close_trace(void)
{
	struct stat st;
	bool ours = atomic_load(&w.fd_table) == GW_FD_PRIVATE || gw_fd_is(w.fd, &w.fd_id);

	w.st_removed = ours && fstat(w.fd, &st) == 0 && st.st_nlink == 0;
	if (ours && atomic_load(&w.fd_table) == GW_FD_PRIVATE)
		close(w.fd);
}

static void *writer_main(void *arg)
{
	uint64_t next_flush = gw_now_ns() + w.flush_ns, idle_sleep = GW_IDLE_SLEEP_MIN_NS;
	uint64_t last_pass = gw_now_ns(), max_bytes = 0;
	bool retired;

	(void)arg;
	atomic_store(&w.fd_table, make_private_fd_table(w.fd) == 0 ? GW_FD_PRIVATE : GW_FD_SHARED);
	futex_wake(&w.fd_table);
	for (;;) {
		uint32_t wake = atomic_load(&w.wake), req = atomic_load(&w.flush_req);
		int state = atomic_load(&w.state);
		uint64_t t, sleep;
		size_t moved = 0;

		if (state == GW_W_STOPPING)
			break;
		retired = false;
		max_bytes = 0;
		if (!atomic_load(&w.stall)) {
			moved = drain_all(&retired, &max_bytes);
			t = gw_now_ns();
			if (retired || t >= next_flush || req != atomic_load(&w.flush_done)) {
				end_frame();
				next_flush = t + w.flush_ns;
				atomic_store(&w.flush_done, req);
				futex_wake(&w.flush_done);
			}
		}
		t = gw_now_ns();
		if (atomic_load(&w.stall)) {
			sleep = GW_IDLE_SLEEP_MIN_NS;
		} else if (moved) {
			/* max_bytes arrived in t - last_pass: a quarter ring takes this long */
			sleep = max_bytes ? (t - last_pass) * (w.buf_bytes / 4) / max_bytes : 0;
			if (sleep > GW_BUSY_SLEEP_MAX_NS)
				sleep = GW_BUSY_SLEEP_MAX_NS;
			if (sleep < GW_BUSY_SLEEP_NS)
				sleep = GW_BUSY_SLEEP_NS;
			idle_sleep = GW_IDLE_SLEEP_MIN_NS;
		} else {
			sleep = idle_sleep;
			if (idle_sleep < GW_IDLE_SLEEP_MAX_NS)
				idle_sleep *= 2;
		}
		if (!atomic_load(&w.stall)) {
			if (next_flush <= t)
				continue;
			if (next_flush - t < sleep)
				sleep = next_flush - t;
		}
		last_pass = t;
		futex_wait(&w.wake, wake, sleep);
	}

	do {
		retired = false;
	} while (drain_all(&retired, &max_bytes));
	if (w.stop_clean)
		add_footer();
	end_frame();
	close_trace();
	atomic_store(&w.flush_done, atomic_load(&w.flush_req));
	futex_wake(&w.flush_done);
	return NULL;
}

/* ---- control ---- */

static size_t round_pow2(size_t n)
{
	size_t p = GW_MIN_THREAD_BUF;

	while (p < n)
		p <<= 1;
	return p;
}

static int map_pool(unsigned nslots, size_t buf_bytes)
{
	size_t slots_size = align8(sizeof(struct gw_thread_buf) * nslots);
	size_t size;
	void *p;

	slots_size = (slots_size + 4095) & ~(size_t)4095;
	size = slots_size + (size_t)nslots * buf_bytes;
	if (w.pool && (w.nslots != nslots || w.buf_bytes != buf_bytes)) {
		munmap(w.pool, w.pool_size);
		w.pool = NULL;
	}
	if (!w.pool) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		w.pool = p;
		w.pool_size = size;
	}
	w.slots = (struct gw_thread_buf *)w.pool;
	w.nslots = nslots;
	w.buf_bytes = buf_bytes;
	for (unsigned i = 0; i < nslots; i++) {
		struct gw_thread_buf *b = &w.slots[i];

		atomic_store(&b->head, 0);
		atomic_store(&b->tail, 0);
		atomic_store(&b->dropped, 0);
		atomic_store(&b->state, GW_SLOT_FREE);
		b->tail_cache = 0;
		b->dropped_seen = 0;
		b->data = w.pool + slots_size + (size_t)i * buf_bytes;
	}
	return 0;
}

static int write_file_header(const struct gw_rec_header *hdr)
{
	struct gw_codec_state *cs = &w.codec;
	size_t cap = 64 + 20 * 16 + (size_t)hdr->host.len + hdr->command.len + hdr->cupti_path.len;
	uint32_t version = GW_FORMAT_VERSION, magic = GW_SKIPPABLE_MAGIC, content;
	uint8_t *buf = malloc(cap);
	int n, r;

	if (!buf)
		return -ENOMEM;
	gw_codec_reset(cs);
	n = gw_encode_record(cs, GW_REC_HEADER, hdr, buf + 20, cap - 20);
	gw_codec_reset(cs);
	if (n < 0) {
		r = n;
		goto out;
	}
	content = GW_FILE_MAGIC_LEN + 4 + (uint32_t)n;
	/* the format is little-endian; so are the machines CUDA runs on */
	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &content, 4);
	memcpy(buf + 8, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN);
	memcpy(buf + 16, &version, 4);
	r = write_out(buf, 20 + (size_t)n);
	if (r == 0)
		atomic_fetch_add(&w.st_bytes, 20 + (uint64_t)n);
out:
	free(buf);
	return r;
}

static void release_resources(void)
{
	ZSTD_freeCCtx(w.cctx);
	w.cctx = NULL;
	free(w.frame);
	free(w.zbuf);
	w.frame = w.zbuf = NULL;
	/* a private descriptor was closed by the writer thread; a shared one is closed only while
	 * it is still the trace's: its number may be the program's file now */
	if (w.fd >= 0 && atomic_load(&w.fd_table) != GW_FD_PRIVATE && gw_fd_is(w.fd, &w.fd_id))
		close(w.fd);
	w.fd = -1;
}

int gw_writer_start(const struct gw_writer_options *opt, const struct gw_rec_header *hdr)
{
	size_t buf_bytes, frame_bytes;
	unsigned nslots;
	sigset_t all, old;
	int level, r;

	if (!opt || opt->fd < 0 || !hdr)
		return -EINVAL;
	pthread_mutex_lock(&ctl_lock);
	if (atomic_load(&w.state) != GW_W_NONE) {
		pthread_mutex_unlock(&ctl_lock);
		return -EBUSY;
	}
	w.fd = opt->fd;
	atomic_store(&w.fd_table, GW_FD_PENDING);
	if (gw_fd_identify(w.fd, &w.fd_id) < 0) {
		r = -EBADF;
		goto fail;
	}
	w.path[0] = '\0';
	if (opt->path && strlen(opt->path) < sizeof(w.path))
		strcpy(w.path, opt->path);
	w.st_reopened = 0;
	w.st_private = w.st_lost = w.st_removed = false;
	w.reopen_note = false;
	buf_bytes = opt->thread_buffer_bytes ? opt->thread_buffer_bytes : GW_DEFAULT_THREAD_BUF;
	frame_bytes = opt->frame_bytes ? opt->frame_bytes : GW_DEFAULT_FRAME;
	nslots = opt->max_threads ? opt->max_threads : GW_DEFAULT_THREADS;
	level = opt->zstd_level ? opt->zstd_level : GW_DEFAULT_LEVEL;
	if (buf_bytes > GW_MAX_THREAD_BUF || nslots > GW_MAX_THREADS || level < ZSTD_minCLevel() ||
	    level > ZSTD_maxCLevel()) {
		r = -EINVAL;
		goto fail;
	}
	w.frame_bytes = frame_bytes < GW_MAX_FRAME ? frame_bytes : GW_MAX_FRAME;
	w.flush_ns = opt->flush_interval_ns ? opt->flush_interval_ns : GW_DEFAULT_FLUSH_NS;
	pthread_once(&key_once, make_thread_key);

	/* under strict overcommit the whole pool is committed up front: settle for fewer threads */
	while ((r = map_pool(nslots, round_pow2(buf_bytes))) == -ENOMEM && nslots > 8)
		nslots /= 2;
	if (r < 0)
		goto fail;
	w.frame_cap = w.frame_bytes + GW_FRAME_SLACK;
	w.zcap = ZSTD_compressBound(w.frame_cap);
	w.frame = malloc(w.frame_cap);
	w.zbuf = malloc(w.zcap);
	w.cctx = ZSTD_createCCtx();
	if (!w.frame || !w.zbuf || !w.cctx) {
		r = -ENOMEM;
		goto fail;
	}
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_checksumFlag, 1);
	w.frame_len = 0;
	w.frame_records = 0;
	w.write_err = 0;
	w.lost_other_seen = 0;
	atomic_store(&w.lost_other, 0);
	atomic_store(&w.st_records, 0);
	atomic_store(&w.st_bytes, 0);
	atomic_store(&w.st_frames, 0);
	atomic_store(&w.st_write_drops, 0);
	atomic_store(&w.st_buffer_drops, 0);
	atomic_store(&w.st_source_drops, 0);
	atomic_store(&w.flush_done, atomic_load(&w.flush_req));
	r = write_file_header(hdr);
	if (r < 0)
		goto fail;

	atomic_fetch_add(&w.gen, 1);
	atomic_store(&w.state, GW_W_RUNNING);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&w.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		atomic_store(&w.state, GW_W_NONE);
		goto fail;
	}
	/* The writer thread has its own copy of the descriptor now, or keeps using this one. */
	while (atomic_load(&w.fd_table) == GW_FD_PENDING)
		futex_wait(&w.fd_table, GW_FD_PENDING, 100000000ull);
	w.st_private = atomic_load(&w.fd_table) == GW_FD_PRIVATE;
	if (w.st_private)
		close(w.fd);
	pthread_mutex_unlock(&ctl_lock);
	return 0;

fail:
	release_resources();
	pthread_mutex_unlock(&ctl_lock);
	return r;
}

int gw_writer_stop(bool clean, uint64_t footer_flags)
{
	int r;

	pthread_mutex_lock(&ctl_lock);
	if (atomic_load(&w.state) != GW_W_RUNNING) {
		pthread_mutex_unlock(&ctl_lock);
		return -EINVAL;
	}
	w.stop_clean = clean;
	w.stop_flags = footer_flags;
	atomic_store(&w.stall, false);
	atomic_store(&w.state, GW_W_STOPPING);
	wake_writer();
	pthread_join(w.thread, NULL);
	r = w.write_err;
	release_resources();
	atomic_store(&w.state, GW_W_NONE);
	pthread_mutex_unlock(&ctl_lock);
	return r;
}

static void flush_wait(uint64_t timeout_ns)
{
	uint64_t deadline, t;
	uint32_t req;

	if (atomic_load(&w.state) != GW_W_RUNNING)
		return;
	req = atomic_fetch_add(&w.flush_req, 1) + 1;
	wake_writer();
	deadline = gw_now_ns() + timeout_ns;
	for (;;) {
		uint32_t done = atomic_load(&w.flush_done);

		if ((int32_t)(done - req) >= 0)
			return;
		t = gw_now_ns();
		if (t >= deadline || atomic_load(&w.state) != GW_W_RUNNING)
			return;
		futex_wait(&w.flush_done, done, deadline - t);
	}
}

void gw_writer_flush(uint64_t timeout_ns)
{
	flush_wait(timeout_ns);
}

void gw_writer_flush_from_signal(uint64_t timeout_ns)
{
	int saved = errno;

	flush_wait(timeout_ns);
	errno = saved;
}

void gw_writer_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	/* the parent's locks may have been held by threads that do not exist here */
	memcpy(&ctl_lock, &fresh, sizeof(fresh));
	tls_buf = NULL;
	atomic_fetch_add(&w.gen, 1);
	if (atomic_load(&w.state) == GW_W_NONE)
		return;
	atomic_store(&w.state, GW_W_NONE);
	/* the parent's descriptor: in this process's table only when it was not the writer
	 * thread's own (a fork copies the forking thread's table) */
	if (w.fd >= 0 && atomic_load(&w.fd_table) != GW_FD_PRIVATE && gw_fd_is(w.fd, &w.fd_id))
		close(w.fd);
	w.fd = -1;
	/* the compression context and frame buffers are abandoned: freeing could take malloc's
	 * lock; the pool mapping is reset and reused by the next start */
	w.cctx = NULL;
	w.frame = w.zbuf = NULL;
}

void gw_writer_get_stats(struct gw_writer_stats *ret)
{
	ret->records = atomic_load(&w.st_records);
	ret->bytes_written = atomic_load(&w.st_bytes);
	ret->frames = atomic_load(&w.st_frames);
	ret->reopened = w.st_reopened;
	ret->private_fd = w.st_private;
	ret->descriptor_lost = w.st_lost;
	ret->removed = w.st_removed;
	ret->dropped = atomic_load(&w.st_write_drops) + atomic_load(&w.st_buffer_drops) +
		       atomic_load(&w.st_source_drops);
	if (atomic_load(&w.state) == GW_W_RUNNING)
		ret->dropped = atomic_load(&w.st_write_drops) + total_buffer_drops() +
			       atomic_load(&w.st_source_drops);
}

void gw_writer_test_stall(bool stall)
{
	atomic_store(&w.stall, stall);
}
