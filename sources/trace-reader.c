/* SPDX-License-Identifier: MIT */
/* Streaming reader of gpuwhy traces: frame by frame, bounded memory, any bytes accepted. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_forceIgnoreChecksum */
#include <zstd.h>
#include <zstd_errors.h>

#include "gpuwhy/trace-codec.h"
#include "trace-reader.h"

#define GW_READ_CHUNK	   (1u << 20)
#define GW_FIRST_OUT	   (256u << 10)
#define GW_WINDOW_LOG_MAX  26 /* 64 MiB, as GW_READER_MAX_FRAME */
#define GW_HEADER_MAX	   (GW_FILE_MAGIC_LEN + 4u + GW_RECORD_OVERHEAD + GW_MAX_RECORD_PAYLOAD)
#define GW_SKIP_HEADER_LEN 8u
#define GW_THREAD_MIN_SIZE (64u << 10) /* smaller inputs decompress inline in auto mode */

/*
 * One decompressed frame, or how the file ended where the next frame should have been.
 * bytes_read is the compressed position after it, as the single-threaded reader reports it.
 */
struct gw_slot {
	uint8_t *buf;
	size_t cap, len;
	int status; /* 1: a frame; GW_SKIPPED: a corrupt one; 0: the end; < 0: an error */
	bool partial_frame;
	bool has_checksum; /* still to check: checksum, the frame's last 4 bytes */
	uint32_t checksum;
	uint64_t bytes_read;
	char reason[128]; /* badmsg_reason for an -EBADMSG or GW_SKIPPED status */
};

/* Where frames come from: owned by the decompression thread when there is one. */
struct gw_frame_input {
	int fd; /* -1 for a memory reader */
	const uint8_t *mem;
	size_t mem_size;
	uint8_t *in;
	ZSTD_inBuffer zin;
	bool eof; /* a read returned less than asked */
	/* the last bytes of the chunks read before in, for a checksum split by a read */
	uint8_t tail[4];
	uint64_t bytes_read;
	ZSTD_DStream *ds;
	bool own_checksum; /* zstd skips the checksum: produce or advance checks it */
};

struct gw_reader {
	struct gw_frame_input src;
	uint64_t bytes_read, file_size;

	/* the frame being decoded: a slot's buffer */
	const uint8_t *out;
	size_t out_len, out_pos;
	struct gw_codec_state codec;

	/* Slots form a ring: slot k % n holds frame k. The caller holds frame taken - 1 (its BYTES
	 * point into it); the thread fills frame produced while produced - released < n. */
	struct gw_slot slots[GW_READER_SLOTS];
	unsigned nslots;
	bool threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t produced, taken, released;
	bool stop; /* atomic; set under lock, read without it only to stop early */

	uint8_t *header_buf;
	struct gw_rec_header header;

	bool done, partial_frame, footer;
	int err;
	uint64_t skipped;      /* corrupt frames passed over */
	char skip_reason[128]; /* why the first of them was */
};

/* A frame's status: its bytes were corrupt, and the reader passed over them to the next frame
 * (zstd frames are independent; a trace's frames restart every delta). */
#define GW_SKIPPED 2

static _Thread_local uint64_t newer_version;
static _Thread_local char strerror_buf[160];
/* Why the last -EBADMSG on this thread was returned, for gw_reader_strerror. */
static _Thread_local char badmsg_reason[128];

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(badmsg_reason, sizeof(badmsg_reason), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static int not_a_trace(void)
{
	snprintf(badmsg_reason, sizeof(badmsg_reason), "not a gpuwhy trace");
	return -EBADMSG;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads exactly n bytes unless the file ends; returns the count read or -errno. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The first n bytes after the position in the file or buffer; fewer at the end. */
static ssize_t take(struct gw_frame_input *src, uint8_t *dst, size_t n)
{
	ssize_t got;

	if (src->fd < 0) {
		size_t left = src->mem_size - (size_t)src->bytes_read;

		got = (ssize_t)(n < left ? n : left);
		if (got) /* an empty buffer may be NULL */
			memcpy(dst, src->mem + src->bytes_read, (size_t)got);
	} else {
		got = read_full(src->fd, dst, n);
		if (got < 0)
			return got;
	}
	src->bytes_read += (uint64_t)got;
	return got;
}

static int read_file_header(struct gw_reader *r)
{
	uint8_t skip[GW_SKIP_HEADER_LEN];
	struct gw_codec_state *cs = &r->codec;
	struct gw_record rec;
	uint32_t content, version;
	size_t consumed;
	ssize_t got;
	int k;

	got = take(&r->src, skip, sizeof(skip));
	if (got < 0)
		return (int)got;
	if ((size_t)got < sizeof(skip) || get_le32(skip) != GW_SKIPPABLE_MAGIC)
		return not_a_trace();
	content = get_le32(skip + 4);
	if (content < GW_FILE_MAGIC_LEN + 4 + 3 || content > GW_HEADER_MAX)
		return not_a_trace();
	r->header_buf = malloc(content);
	if (!r->header_buf)
		return -ENOMEM;
	got = take(&r->src, r->header_buf, content);
	if (got < 0)
		return (int)got;
	if ((size_t)got < content || memcmp(r->header_buf, GW_FILE_MAGIC, GW_FILE_MAGIC_LEN))
		return not_a_trace();
	version = get_le32(r->header_buf + GW_FILE_MAGIC_LEN);
	if (version > GW_FORMAT_VERSION) {
		newer_version = version;
		return -EPROTONOSUPPORT;
	}
	if (version == 0)
		return not_a_trace();
	gw_codec_reset(cs);
	k = gw_decode_record(cs, r->header_buf + GW_FILE_MAGIC_LEN + 4,
			     content - GW_FILE_MAGIC_LEN - 4, &rec, &consumed);
	if (k != 1 || rec.type != GW_REC_HEADER)
		return bad("corrupt gpuwhy trace: bad file header record");
	if (rec.header.format_version > GW_FORMAT_VERSION) {
		newer_version = rec.header.format_version;
		return -EPROTONOSUPPORT;
	}
	r->header = rec.header;
	return 0;
}

/* CPUs this process may run on: a second thread only helps with two or more. */
static int usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

bool gw_reader_thread_helps(uint64_t file_size)
{
	return file_size >= GW_THREAD_MIN_SIZE && usable_cpus() >= 2;
}

static bool want_thread(const struct gw_reader *r, enum gw_reader_mode mode)
{
	switch (mode) {
	case GW_READER_INLINE:
		return false;
	case GW_READER_THREADED:
		return true;
	default:
		return gw_reader_thread_helps(r->file_size);
	}
}

static void *decompress_thread(void *arg);

/* Starts the decompression thread with every signal blocked: signals stay the caller's. */
static int start_thread(struct gw_reader *r)
{
	sigset_t all, old;
	int err;

	err = pthread_mutex_init(&r->lock, NULL);
	if (err)
		return -err;
	err = pthread_cond_init(&r->cond, NULL);
	if (err) {
		pthread_mutex_destroy(&r->lock);
		return -err;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r->threaded = true; /* before the thread reads it */
	err = pthread_create(&r->thread, NULL, decompress_thread, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		r->threaded = false;
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		return -err;
	}
	return 0;
}

static int reader_init(struct gw_reader *r, enum gw_reader_mode mode)
{
	struct gw_frame_input *src = &r->src;
	int err;

	err = read_file_header(r);
	if (err < 0)
		return err;
	r->bytes_read = src->bytes_read;
	src->ds = ZSTD_createDStream();
	if (!src->ds)
		return -ENOMEM;
	ZSTD_DCtx_setParameter(src->ds, ZSTD_d_windowLogMax, GW_WINDOW_LOG_MAX);
	/* The checksum (an XXH64 of the frame's content) is checked by whichever thread has time
	 * to spare: the caller when it only decodes, this one when the caller also analyses. */
	src->own_checksum = !ZSTD_isError(
		ZSTD_DCtx_setParameter(src->ds, ZSTD_d_forceIgnoreChecksum, ZSTD_d_ignoreChecksum));
	if (src->fd < 0) {
		src->zin.src = src->mem + src->bytes_read;
		src->zin.size = src->mem_size - (size_t)src->bytes_read;
		src->zin.pos = 0;
	} else {
		src->in = malloc(GW_READ_CHUNK);
		if (!src->in)
			return -ENOMEM;
		src->zin.src = src->in;
	}
	r->nslots = want_thread(r, mode) ? GW_READER_SLOTS : 1;
	for (unsigned i = 0; i < r->nslots; i++) {
		r->slots[i].cap = GW_FIRST_OUT;
		r->slots[i].buf = malloc(GW_FIRST_OUT);
		if (!r->slots[i].buf)
			return -ENOMEM;
	}
	if (r->nslots > 1) {
		err = start_thread(r);
		if (err < 0 && mode == GW_READER_THREADED)
			return err;
		if (err < 0)
			r->nslots = 1; /* inline gives the same records, only slower */
	}
	return 0;
}

int gw_reader_open_mode(const char *path, enum gw_reader_mode mode, struct gw_reader **ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return gw_reader_open_fd(fd, mode, ret);
}

int gw_reader_open_fd(int fd, enum gw_reader_mode mode, struct gw_reader **ret)
{
	struct gw_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int err;

	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->src.fd = fd;
	if (fstat(r->src.fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	err = reader_init(r, mode);
	if (err < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	gw_reader_free(r);
	return err;
}

int gw_reader_open(const char *path, struct gw_reader **ret)
{
	return gw_reader_open_mode(path, GW_READER_AUTO, ret);
}

int gw_reader_open_memory_mode(const void *data, size_t size, enum gw_reader_mode mode,
			       struct gw_reader **ret)
{
	struct gw_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->src.fd = -1;
	r->src.mem = data;
	r->src.mem_size = data ? size : 0;
	r->file_size = r->src.mem_size;
	err = reader_init(r, mode);
	if (err < 0) {
		gw_reader_free(r);
		return err;
	}
	*ret = r;
	return 0;
}

int gw_reader_open_memory(const void *data, size_t size, struct gw_reader **ret)
{
	return gw_reader_open_memory_mode(data, size, GW_READER_AUTO, ret);
}

/* More compressed input; false at the end of the file. */
static int refill(struct gw_frame_input *src)
{
	ssize_t got;

	if (src->fd < 0)
		return 0;
	for (size_t i = src->zin.size < 4 ? 0 : src->zin.size - 4; i < src->zin.size; i++) {
		memmove(src->tail, src->tail + 1, 3);
		src->tail[3] = src->in[i];
	}
	got = read_full(src->fd, src->in, GW_READ_CHUNK);
	if (got < 0)
		return (int)got;
	src->eof = (size_t)got < GW_READ_CHUNK;
	src->zin.size = (size_t)got;
	src->zin.pos = 0;
	return got > 0;
}

/*
 * Before a frame: when the frame is not whole in the input, moves the rest to the front and
 * reads on, and makes the slot as large as the frame header says; then zstd decodes the frame
 * in one pass straight into the slot, without its window buffer and the copy out of it.
 */
static int prepare(struct gw_frame_input *src, struct gw_slot *s)
{
	size_t left = src->zin.size - src->zin.pos, z;
	unsigned long long content;
	ssize_t got;

	if (src->fd >= 0 && !src->eof && left < GW_READ_CHUNK) {
		z = ZSTD_findFrameCompressedSize(src->in + src->zin.pos, left);
		if (ZSTD_isError(z) || z > left) {
			memmove(src->in, src->in + src->zin.pos, left);
			got = read_full(src->fd, src->in + left, GW_READ_CHUNK - left);
			if (got < 0)
				return (int)got;
			src->eof = (size_t)got < GW_READ_CHUNK - left;
			src->zin.size = left + (size_t)got;
			src->zin.pos = 0;
			left = src->zin.size;
		}
	}
	content = ZSTD_getFrameContentSize((const uint8_t *)src->zin.src + src->zin.pos, left);
	if (content <= GW_READER_MAX_FRAME && content > s->cap) {
		size_t cap = s->cap;

		while (cap < content)
			cap *= 2;
		free(s->buf);
		s->buf = malloc(cap);
		s->cap = s->buf ? cap : 0;
		if (!s->buf)
			return -ENOMEM;
	}
	return 0;
}

/* The 4 bytes before the input position, part of them from before the last read. */
static uint32_t last_le32(const struct gw_frame_input *src)
{
	const uint8_t *p = (const uint8_t *)src->zin.src;
	uint8_t b[4];
	size_t pos = src->zin.pos;

	if (pos >= 4)
		return get_le32(p + pos - 4);
	memcpy(b, src->tail + pos, 4 - pos);
	memcpy(b + 4 - pos, p, pos);
	return get_le32(b);
}

static bool stopping(struct gw_reader *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

/*
 * After corrupt bytes: the next frame starts at the next zstd magic number, so the decoder
 * starts afresh there (a false one in the damaged bytes fails in turn and is passed over too).
 * Returns GW_SKIPPED, with the input at that magic or at the end, or -errno.
 */
static int resync(struct gw_reader *r)
{
	struct gw_frame_input *src = &r->src;
	const uint8_t magic[4] = {ZSTD_MAGICNUMBER & 0xff, ZSTD_MAGICNUMBER >> 8 & 0xff,
				  ZSTD_MAGICNUMBER >> 16 & 0xff, ZSTD_MAGICNUMBER >> 24};

	ZSTD_DCtx_reset(src->ds, ZSTD_reset_session_only);
	/* past at least one byte: zstd may refuse a frame without consuming its magic */
	if (src->zin.pos < src->zin.size) {
		src->zin.pos++;
		src->bytes_read++;
	}
	for (;;) {
		const uint8_t *p = (const uint8_t *)src->zin.src;
		size_t left = src->zin.size - src->zin.pos;
		const uint8_t *hit = left >= 4 ? memmem(p + src->zin.pos, left, magic, 4) : NULL;
		size_t keep;
		ssize_t got;

		if (hit) {
			src->bytes_read += (size_t)(hit - p) - src->zin.pos;
			src->zin.pos = (size_t)(hit - p);
			return GW_SKIPPED;
		}
		/* a magic may straddle the next read: keep the last 3 bytes */
		keep = left < 3 ? left : 3;
		src->bytes_read += left - keep;
		if (src->fd < 0 || src->eof) {
			src->bytes_read += keep;
			src->zin.pos = src->zin.size;
			return GW_SKIPPED;
		}
		memmove(src->in, p + src->zin.size - keep, keep);
		got = read_full(src->fd, src->in + keep, GW_READ_CHUNK - keep);
		if (got < 0)
			return (int)got;
		src->eof = (size_t)got < GW_READ_CHUNK - keep;
		src->zin.size = keep + (size_t)got;
		src->zin.pos = 0;
	}
}

/* Decompresses the next whole frame into s->buf: 1, GW_SKIPPED for a corrupt one passed over,
 * 0 at the end, or -errno. */
static int fill_frame(struct gw_reader *r, struct gw_slot *s)
{
	struct gw_frame_input *src = &r->src;
	bool started = false;
	int err;

	s->len = 0;
	err = prepare(src, s);
	if (err < 0)
		return err;
	for (;;) {
		ZSTD_outBuffer o;
		size_t before, z;

		if (src->zin.pos == src->zin.size) {
			int k;

			if (r->threaded && stopping(r))
				return -ECANCELED; /* gw_reader_free is waiting; nobody reads this */
			k = refill(src);
			if (k < 0)
				return k;
			if (k == 0) {
				s->partial_frame = started;
				return 0;
			}
		}
		if (!started) {
			const uint8_t *h = (const uint8_t *)src->zin.src + src->zin.pos;

			/* a frame header's descriptor byte says whether a checksum ends the frame */
			s->has_checksum = src->own_checksum && src->zin.size - src->zin.pos > 4 &&
					  get_le32(h) == ZSTD_MAGICNUMBER && (h[4] & 4);
		}
		started = true;
		o.dst = s->buf;
		o.size = s->cap;
		o.pos = s->len;
		before = src->zin.pos;
		z = ZSTD_decompressStream(src->ds, &o, &src->zin);
		src->bytes_read += src->zin.pos - before;
		if (ZSTD_isError(z)) {
			bad("corrupt gpuwhy trace: bad frame near byte %llu (%s)",
			    (unsigned long long)src->bytes_read, ZSTD_getErrorName(z));
			return resync(r);
		}
		s->len = o.pos;
		if (z == 0) {
			if (s->has_checksum)
				s->checksum = last_le32(src);
			return 1;
		}
		if (o.pos == o.size) {
			uint8_t *bigger;

			if (s->cap >= GW_READER_MAX_FRAME) {
				bad("corrupt gpuwhy trace: a frame near byte %llu decompresses "
				    "to more than 64 MiB",
				    (unsigned long long)src->bytes_read);
				return resync(r);
			}
			bigger = realloc(s->buf, s->cap * 2);
			if (!bigger)
				return -ENOMEM;
			s->buf = bigger;
			s->cap *= 2;
		}
	}
}

/* A frame's checksum against its content: 0, or the error zstd would have returned there. */
static int verify(const struct gw_slot *s)
{
	if ((uint32_t)XXH64(s->buf, s->len, 0) == s->checksum)
		return 0;
	return bad("corrupt gpuwhy trace: bad frame near byte %llu (%s)",
		   (unsigned long long)s->bytes_read,
		   ZSTD_getErrorName((size_t)-ZSTD_error_checksum_wrong));
}

/*
 * Fills s with the next frame or with how the input ended, error text included. The checksum
 * is checked here when spare_ns, the time this thread last waited for the caller, is at least
 * twice what it takes (XXH64 runs at about 8 bytes/ns); otherwise the caller checks it.
 */
static void produce(struct gw_reader *r, struct gw_slot *s, uint64_t spare_ns)
{
	s->partial_frame = false;
	s->has_checksum = false;
	s->status = fill_frame(r, s);
	s->bytes_read = r->src.bytes_read;
	if (s->status == 1 && s->has_checksum && spare_ns >= s->len / 4) {
		s->has_checksum = false;
		if (verify(s) < 0)
			s->status = GW_SKIPPED; /* its boundary is sound: the next frame follows */
	}
	if (s->status == -EBADMSG || s->status == GW_SKIPPED)
		memcpy(s->reason, badmsg_reason, sizeof(s->reason));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fills the ring ahead of the caller; ends after the slot that ends the input. */
static void *decompress_thread(void *arg)
{
	struct gw_reader *r = arg;

	for (;;) {
		uint64_t seq, t0 = 0, spare_ns = 0;
		struct gw_slot *s;
		int status;

		pthread_mutex_lock(&r->lock);
		if (r->produced - r->released >= r->nslots)
			t0 = now_ns();
		while (!stopping(r) && r->produced - r->released >= r->nslots)
			pthread_cond_wait(&r->cond, &r->lock);
		if (t0)
			spare_ns = now_ns() - t0;
		seq = r->produced;
		pthread_mutex_unlock(&r->lock);
		if (stopping(r))
			break;
		s = &r->slots[seq % r->nslots];
		/* waiting on a full ring: the caller is the slower, this thread has time to spare */
		produce(r, s, spare_ns);
		status = s->status; /* the slot is the caller's once published */
		pthread_mutex_lock(&r->lock);
		r->produced++;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (status <= 0)
			break;
	}
	return NULL;
}

/* Moves to the next frame: gives back the one decoded so far, takes the next in file order. */
static __attribute__((noinline)) int advance(struct gw_reader *r)
{
	struct gw_slot *s;
	int status;

	if (r->threaded) {
		pthread_mutex_lock(&r->lock);
		r->released = r->taken;
		pthread_cond_broadcast(&r->cond);
		while (r->produced == r->taken)
			pthread_cond_wait(&r->cond, &r->lock);
		pthread_mutex_unlock(&r->lock);
		s = &r->slots[r->taken % r->nslots];
	} else {
		s = &r->slots[0];
		produce(r, s, UINT64_MAX);
	}
	r->taken++;
	status = s->status;
	if (status == -EBADMSG || status == GW_SKIPPED)
		memcpy(badmsg_reason, s->reason, sizeof(badmsg_reason));
	if (status == 1 && s->has_checksum && verify(s) < 0)
		status = GW_SKIPPED;
	r->bytes_read = s->bytes_read;
	r->partial_frame = s->partial_frame;
	r->out = s->buf;
	r->out_len = status == 1 ? s->len : 0;
	r->out_pos = 0;
	return status;
}

/* A corrupt frame passed over; badmsg_reason says why. */
static __attribute__((noinline, cold)) void skipped(struct gw_reader *r)
{
	if (!r->skipped++)
		memcpy(r->skip_reason, badmsg_reason, sizeof(r->skip_reason));
}

/* flatten: the record decoders inline into this loop (gcc leaves them as calls otherwise). */
__attribute__((flatten)) int gw_reader_next(struct gw_reader *r, struct gw_record *ret)
{
	for (;;) {
		size_t consumed;
		int k;

		/* the common case first: an error or the end leaves out_pos == out_len */
		if (r->out_pos < r->out_len) {
			k = gw_decode_record(&r->codec, r->out + r->out_pos,
					     r->out_len - r->out_pos, ret, &consumed);
			if (k < 0) {
				/* the rest of this frame is lost; the next frame decodes alone */
				bad("corrupt gpuwhy trace: bad record in the frame ending at byte "
				    "%llu",
				    (unsigned long long)r->bytes_read);
				skipped(r);
				r->out_len = r->out_pos;
				continue;
			}
			r->out_pos += consumed;
			if (k == 0)
				continue;
			if (ret->type == GW_REC_FOOTER)
				r->footer = true;
			return 1;
		}
		if (r->err)
			return r->err;
		if (r->done)
			return 0;
		k = advance(r);
		if (k < 0)
			r->err = k;
		else if (k == 0)
			r->done = true;
		else if (k == GW_SKIPPED)
			skipped(r);
		gw_codec_reset(&r->codec);
	}
}

const struct gw_rec_header *gw_reader_header(const struct gw_reader *r)
{
	return &r->header;
}

bool gw_reader_truncated(const struct gw_reader *r)
{
	return r->partial_frame || !r->footer;
}

bool gw_reader_clean_exit(const struct gw_reader *r)
{
	return r->footer;
}

uint64_t gw_reader_skipped(const struct gw_reader *r, const char **ret_reason)
{
	if (ret_reason)
		*ret_reason = r->skip_reason;
	return r->skipped;
}

uint64_t gw_reader_bytes_read(const struct gw_reader *r)
{
	return r->bytes_read;
}

uint64_t gw_reader_file_size(const struct gw_reader *r)
{
	return r->file_size;
}

void gw_reader_free(struct gw_reader *r)
{
	if (!r)
		return;
	if (r->threaded) {
		pthread_mutex_lock(&r->lock);
		__atomic_store_n(&r->stop, true, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
	}
	if (r->src.fd >= 0)
		close(r->src.fd);
	ZSTD_freeDStream(r->src.ds);
	free(r->src.in);
	for (unsigned i = 0; i < GW_READER_SLOTS; i++)
		free(r->slots[i].buf);
	free(r->header_buf);
	free(r);
}

const char *gw_reader_strerror(int err)
{
	switch (err) {
	case -EBADMSG:
		return badmsg_reason[0] ? badmsg_reason : "not a gpuwhy trace, or a corrupt one";
	case -EPROTONOSUPPORT:
		snprintf(strerror_buf, sizeof(strerror_buf),
			 "written by a newer gpuwhy (format %llu; this one reads %u)",
			 (unsigned long long)newer_version, GW_FORMAT_VERSION);
		return strerror_buf;
	default:
		return strerror(err < 0 ? -err : err);
	}
}
