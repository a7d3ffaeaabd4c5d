/* SPDX-License-Identifier: MIT */
/* The bucket table, kernel-name classes and the occupancy / SM-fill estimate. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "analysis.h"

const struct gw_bucket_info gw_buckets[GW_BUCKET_COUNT] = {
#define B(NAME, key, label, cause, remedy) [GW_BUCKET_##NAME] = {#key, label, cause, remedy},
#include "buckets.def"
#undef B
};

int gw_bucket_from_key(const char *key)
{
	for (int i = 0; i < GW_BUCKET_COUNT; i++)
		if (key && strcmp(key, gw_buckets[i].key) == 0)
			return i;
	return -EINVAL;
}

static const struct {
	enum gw_bucket bucket;
	const char *needle;
} kernel_classes[] = {
#define K(bucket, needle) {GW_BUCKET_##bucket, needle},
#include "kernel-classes.def"
#undef K
};

enum gw_bucket gw_kernel_class(const char *name, bool *ret_classified)
{
	static const char anon[] = "(anonymous namespace)";
	char low[256];
	size_t n = 0;
	unsigned angle = 0, paren = 0;

	/*
	 * The base name only: the parameter list ("(float*, int)") would match "at" and friends.
	 * It is the first '(' outside template arguments; "(anonymous namespace)" and the
	 * parentheses inside template arguments (a functor's signature, a lambda's) belong to
	 * the name, so that at::native::(anonymous namespace)::layer_norm_kernel<...> is seen whole.
	 */
	for (const char *p = name ? name : ""; *p && n < sizeof(low) - 1; p++) {
		if (strncmp(p, anon, sizeof(anon) - 1) == 0) {
			p += sizeof(anon) - 2;
			continue;
		}
		if (*p == '(') {
			if (!angle && !paren)
				break;
			paren++;
		} else if (*p == ')' && paren) {
			paren--;
		} else if (*p == '<' && !paren) {
			angle++;
		} else if (*p == '>' && !paren && angle) {
			angle--;
		}
		low[n++] = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
	}
	low[n] = '\0';
	for (size_t i = 0; i < sizeof(kernel_classes) / sizeof(kernel_classes[0]); i++) {
		if (strstr(low, kernel_classes[i].needle)) {
			if (ret_classified)
				*ret_classified = true;
			return kernel_classes[i].bucket;
		}
	}
	if (ret_classified)
		*ret_classified = false;
	return GW_BUCKET_COMPUTE;
}

static uint64_t limit_by(uint64_t have, uint64_t need)
{
	return need ? have / need : UINT64_MAX;
}

uint64_t gw_blocks_per_sm(const struct gw_device_limits *d, uint64_t threads_per_block,
			  uint64_t regs_per_thread, uint64_t smem_per_block_bytes)
{
	uint64_t warp = d->warp_size ? d->warp_size : 32;
	uint64_t threads = (threads_per_block + warp - 1) / warp * warp;
	uint64_t n = d->max_blocks_per_sm ? d->max_blocks_per_sm : UINT64_MAX;
	uint64_t v;

	if (d->max_threads_per_sm && (v = limit_by(d->max_threads_per_sm, threads)) < n)
		n = v;
	if (d->regs_per_sm && (v = limit_by(d->regs_per_sm, regs_per_thread * threads)) < n)
		n = v;
	if (d->smem_per_sm_bytes && (v = limit_by(d->smem_per_sm_bytes, smem_per_block_bytes)) < n)
		n = v;
	if (n == UINT64_MAX)
		n = 1;
	return n ? n : 1;
}

double gw_kernel_fill(const struct gw_device_limits *d, uint64_t blocks, uint64_t threads_per_block,
		      uint64_t regs_per_thread, uint64_t smem_per_block_bytes)
{
	uint64_t per_sm =
		gw_blocks_per_sm(d, threads_per_block, regs_per_thread, smem_per_block_bytes);
	double capacity = (double)(d->sm_count ? d->sm_count : 1) * (double)per_sm;
	double waves = (double)blocks / capacity;

	if (blocks == 0)
		return 0.0;
	if (waves < 1.0)
		return waves;
	return waves / ceil(waves);
}
