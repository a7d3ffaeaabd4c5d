/* SPDX-License-Identifier: MIT */
/* JSON number text to an integer without going through a double. */
#include <errno.h>
#include <string.h>

#include "decimal.h"

/* Digits kept exactly: 19 always fit in a uint64_t. */
#define GW_DEC_DIGITS  19
/* Exponents are clamped here: far beyond anything that fits, far from overflowing an int. */
#define GW_DEC_EXP_MAX 100000

struct gw_dec {
	uint64_t m;  /* the first GW_DEC_DIGITS significant digits */
	int sig;     /* how many of them */
	long exp10;  /* value = m * 10^exp10 (+ the dropped digits below m) */
	int dropped; /* the first digit dropped beyond m, -1 none */
	bool sticky; /* a non-zero digit dropped after that one */
};

static void add_digit(struct gw_dec *d, int digit, bool fraction)
{
	if (d->sig == 0 && digit == 0) {
		if (fraction)
			d->exp10--; /* a leading zero of the fraction moves the point */
		return;
	}
	if (d->sig < GW_DEC_DIGITS) {
		d->m = d->m * 10 + (uint64_t)digit;
		d->sig++;
		if (fraction)
			d->exp10--;
		return;
	}
	if (!fraction)
		d->exp10++;
	if (d->dropped < 0)
		d->dropped = digit;
	else if (digit)
		d->sticky = true;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Eight ASCII digits at s as a number in *ret, or false if one is not a digit: a timestamp's
 * sixteen integer digits in two steps instead of sixteen. Each byte is a digit when its high
 * nibble is 3 and stays 3 with 6 added; then pairs, quads and the eight are combined by
 * multiplications that add each digit times its power of ten into the top half of a lane.
 */
static bool eight_digits(const char *s, uint64_t *ret)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w;

	memcpy(&w, s, 8);
	if (((w & 0xF0F0F0F0F0F0F0F0ull) |
	     (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) != 0x3333333333333333ull)
		return false;
	w -= 0x3030303030303030ull;
	w = (w * (10 * 256 + 1)) >> 8;				     /* two digits a lane */
	w = ((w & 0x00FF00FF00FF00FFull) * (100 * 65536 + 1)) >> 16; /* four */
	*ret = ((w & 0x0000FFFF0000FFFFull) * (10000 * 4294967296ull + 1)) >> 32;
	return true;
#else
	(void)s;
	(void)ret;
	return false;
#endif
}

/* The common case: "-?[0-9]+(\.[0-9]{1,scale})?" with scale <= 3 and at most 19 digits once
 * scaled, which a uint64_t always holds (10^19 - 1 < 2^64): epoch microseconds with
 * nanoseconds, "1712195495519689.047", are 19. Returns false for anything else (an exponent,
 * more decimals, a fraction to check, a value past int64_t): the general path decides. */
static bool parse_short(const char *s, size_t len, unsigned scale, bool exact, int64_t *ret)
{
	size_t i = s[0] == '-', digits = 0, frac_digits = 0;
	uint64_t v = 0, eight;

	if (scale > 3)
		return false;
	/* past 19 digits v wraps, harmlessly: the length check below refuses it */
	for (; i + 8 <= len && eight_digits(s + i, &eight); i += 8, digits += 8)
		v = v * 100000000 + eight;
	for (; i < len && is_digit(s[i]); i++, digits++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (!digits || digits + scale > 19)
		return false;
	if (i < len && s[i] == '.') {
		for (i++; i < len && is_digit(s[i]) && frac_digits < scale; i++, frac_digits++)
			v = v * 10 + (uint64_t)(s[i] - '0');
		if (!frac_digits || (i < len && is_digit(s[i])))
			return false;
	}
	if (i != len || (exact && frac_digits))
		return false;
	for (size_t k = frac_digits; k < scale; k++)
		v *= 10;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*ret = s[0] == '-' ? -(int64_t)v : (int64_t)v;
	return true;
}

/* Everything else: any length, exponents, rounding, range. Kept out of line so that the
 * common case pays for none of its state. */
__attribute__((noinline)) static int parse_long(const char *s, size_t len, unsigned scale,
						bool exact, int64_t *ret)
{
	struct gw_dec d = {.exp10 = scale, .dropped = -1};
	bool neg = false, inexact;
	uint64_t q;
	size_t i = 0;
	long e = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i >= len || !is_digit(s[i]))
		return -EINVAL;
	for (; i < len && is_digit(s[i]); i++)
		add_digit(&d, s[i] - '0', false);
	if (i < len && s[i] == '.') {
		if (++i >= len || !is_digit(s[i]))
			return -EINVAL;
		for (; i < len && is_digit(s[i]); i++)
			add_digit(&d, s[i] - '0', true);
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;

		if (++i < len && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		if (i >= len || !is_digit(s[i]))
			return -EINVAL;
		for (; i < len && is_digit(s[i]); i++)
			if ((e = e * 10 + (s[i] - '0')) > GW_DEC_EXP_MAX)
				e = GW_DEC_EXP_MAX;
		d.exp10 += eneg ? -e : e;
	}
	if (i != len)
		return -EINVAL;
	*ret = 0;
	if (d.m == 0)
		return 0;
	inexact = d.dropped > 0 || d.sticky;
	q = d.m;
	if (d.exp10 > 0) {
		/* Dropped digits mean 19 significant ones: times ten overflows anyway. */
		for (long k = 0; k < d.exp10; k++) {
			if (q > UINT64_MAX / 10)
				return -ERANGE;
			q *= 10;
		}
	} else if (d.exp10 == 0) {
		if (d.dropped >= 5 && ++q == 0)
			return -ERANGE;
	} else if (d.exp10 < -GW_DEC_DIGITS) {
		/* m < 10^19: the value is below 0.1 and rounds to 0 */
		q = 0;
		inexact = true;
	} else {
		uint64_t p = 1, r;

		for (long k = 0; k < -d.exp10; k++)
			p *= 10;
		r = q % p;
		q /= p;
		/* the dropped digits lie below r: they would only break a tie, which rounds up */
		if (r >= p - r)
			q++;
		inexact = inexact || r != 0;
	}
	if (exact && inexact)
		return -EDOM;
	if (neg) {
		if (q > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*ret = q == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)q;
	} else {
		if (q > (uint64_t)INT64_MAX)
			return -ERANGE;
		*ret = (int64_t)q;
	}
	return 0;
}

int gw_decimal_parse(const char *s, size_t len, unsigned scale, bool exact, int64_t *ret)
{
	if (len && parse_short(s, len, scale, exact, ret))
		return 0;
	return parse_long(s, len, scale, exact, ret);
}
