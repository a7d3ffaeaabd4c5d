/* SPDX-License-Identifier: MIT */
/* The bucket table and the kernel-name classes. */
#include <errno.h>
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
