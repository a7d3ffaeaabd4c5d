/* SPDX-License-Identifier: MIT */
/*
 * A gzip file's bytes, decompressed ahead of the reader. Inflating a torch.profiler trace
 * takes about a third of what walking its JSON does (zlib's inflate and CRC against yajl):
 * on a thread of its own it overlaps the walk instead of adding to it. The thread fills a
 * ring of a few chunks and waits when the reader is behind, so memory stays at the ring.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gunzip.h"

#define GW_GUNZIP_CHUNK (256 * 1024)
#define GW_GUNZIP_SLOTS 4

struct gw_gunzip_slot {
	uint8_t *buf;
	struct gw_gunzip_chunk chunk;
};

struct gw_gunzip {
	/* the decompressor's own state: the thread's alone while it runs */
	int fd;
	z_stream z;
	bool z_live, member_done, in_eof;
	uint8_t *inbuf;
	uint64_t file_read;
	bool ended;	   /* the chunk that ends the stream is made (under lock when threaded) */
	uint64_t end_read; /* and file_read then */
	/* the ring: slots [taken, filled) hold chunks the reader has not had yet */
	struct gw_gunzip_slot slots[GW_GUNZIP_SLOTS];
	unsigned filled, taken; /* counts, slot = count % GW_GUNZIP_SLOTS */
	bool holding;		/* the reader holds slot taken - 1 until its next call */
	bool stop, threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t room, ready;
};

/* Decompresses into one chunk: up to a chunk of bytes, or the end of the stream. */
static void produce(struct gw_gunzip *g, struct gw_gunzip_slot *s)
{
	struct gw_gunzip_chunk *c = &s->chunk;

	c->data = s->buf;
	c->len = 0;
	c->state = GW_GUNZIP_MORE;
	c->err = 0;
	c->what[0] = '\0';
	while (c->len < GW_GUNZIP_CHUNK) {
		size_t before = c->len;
		int zr;

		if (!g->z.avail_in && !g->in_eof) {
			ssize_t n;

			do
				n = read(g->fd, g->inbuf, GW_GUNZIP_CHUNK);
			while (n < 0 && errno == EINTR);
			if (n < 0) {
				c->state = GW_GUNZIP_FAILED;
				c->err = -errno;
				break;
			}
			g->file_read += (uint64_t)n;
			g->z.next_in = g->inbuf;
			g->z.avail_in = (uInt)n;
			g->in_eof = n == 0;
		}
		if (g->member_done) {
			/* gzip allows members back to back; anything else after the end is ignored */
			if (!g->z.avail_in || g->z.next_in[0] != 0x1f) {
				c->state = GW_GUNZIP_END;
				break;
			}
			if (inflateReset(&g->z) != Z_OK) {
				c->state = GW_GUNZIP_CORRUPT;
				c->err = -ENOMEM;
				snprintf(c->what, sizeof(c->what), "byte %llu: zlib: reset failed",
					 (unsigned long long)g->file_read);
				break;
			}
			g->member_done = false;
		}
		g->z.next_out = s->buf + c->len;
		g->z.avail_out = (uInt)(GW_GUNZIP_CHUNK - c->len);
		zr = inflate(&g->z, Z_NO_FLUSH);
		c->len = GW_GUNZIP_CHUNK - g->z.avail_out;
		if (zr == Z_STREAM_END) {
			g->member_done = true;
		} else if (zr == Z_BUF_ERROR && g->in_eof && c->len == before) {
			c->state = GW_GUNZIP_CUT;
			snprintf(c->what, sizeof(c->what),
				 "byte %llu: the gzip data ends early (a cut file)",
				 (unsigned long long)g->file_read);
			break;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			c->state = GW_GUNZIP_CORRUPT;
			c->err = zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
			snprintf(c->what, sizeof(c->what), "byte %llu: corrupt gzip data (%s)",
				 (unsigned long long)(g->file_read - g->z.avail_in),
				 g->z.msg ? g->z.msg : "zlib error");
			break;
		}
	}
	c->file_read = g->file_read;
}

/* After produce: the stream's end is known to the reader (under the lock when threaded). */
static void note_end(struct gw_gunzip *g, const struct gw_gunzip_chunk *c)
{
	if (c->state != GW_GUNZIP_MORE) {
		g->ended = true;
		g->end_read = c->file_read;
	}
}

static void *decompress_ahead(void *arg)
{
	struct gw_gunzip *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop && !g->ended) {
		/* a slot is free when neither unread nor held by the reader */
		unsigned busy = g->filled - g->taken + (g->holding ? 1 : 0);
		struct gw_gunzip_slot *s;

		if (busy >= GW_GUNZIP_SLOTS) {
			pthread_cond_wait(&g->room, &g->lock);
			continue;
		}
		s = &g->slots[g->filled % GW_GUNZIP_SLOTS];
		/* inflate outside the lock: only this thread touches the slot until it is filled */
		pthread_mutex_unlock(&g->lock);
		produce(g, s);
		pthread_mutex_lock(&g->lock);
		note_end(g, &s->chunk);
		g->filled++;
		pthread_cond_signal(&g->ready);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int gw_gunzip_open(int fd, bool ahead, struct gw_gunzip **ret)
{
	struct gw_gunzip *g = calloc(1, sizeof(*g));
	sigset_t all, old;

	*ret = g;
	if (!g)
		return -ENOMEM;
	g->fd = fd;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->room, NULL);
	pthread_cond_init(&g->ready, NULL);
	g->inbuf = malloc(GW_GUNZIP_CHUNK);
	for (int i = 0; i < GW_GUNZIP_SLOTS; i++)
		if (!(g->slots[i].buf = malloc(GW_GUNZIP_CHUNK)))
			return -ENOMEM;
	if (!g->inbuf)
		return -ENOMEM;
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	g->z_live = true;
	if (!ahead)
		return 0;
	/* the thread takes no signal of the caller's (gpuwhy-report's SIGINT handling) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	g->threaded = pthread_create(&g->thread, NULL, decompress_ahead, g) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

void gw_gunzip_next(struct gw_gunzip *g, struct gw_gunzip_chunk *ret)
{
	if (!g->threaded) {
		if (g->ended) {
			*ret = (struct gw_gunzip_chunk){.state = GW_GUNZIP_END,
							.file_read = g->end_read};
			return;
		}
		produce(g, &g->slots[0]);
		note_end(g, &g->slots[0].chunk);
		*ret = g->slots[0].chunk;
		return;
	}
	pthread_mutex_lock(&g->lock);
	if (g->holding) {
		g->holding = false;
		pthread_cond_signal(&g->room);
	}
	while (g->filled == g->taken && !g->ended)
		pthread_cond_wait(&g->ready, &g->lock);
	if (g->filled == g->taken) {
		/* the stream ended, and its last chunk was taken already */
		*ret = (struct gw_gunzip_chunk){.state = GW_GUNZIP_END, .file_read = g->end_read};
	} else {
		*ret = g->slots[g->taken++ % GW_GUNZIP_SLOTS].chunk;
		g->holding = true;
	}
	pthread_mutex_unlock(&g->lock);
}

void gw_gunzip_free(struct gw_gunzip *g)
{
	if (!g)
		return;
	if (g->threaded) {
		pthread_mutex_lock(&g->lock);
		g->stop = true;
		pthread_cond_signal(&g->room);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->thread, NULL);
	}
	if (g->z_live)
		inflateEnd(&g->z);
	for (int i = 0; i < GW_GUNZIP_SLOTS; i++)
		free(g->slots[i].buf);
	free(g->inbuf);
	pthread_cond_destroy(&g->room);
	pthread_cond_destroy(&g->ready);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
