/* SPDX-License-Identifier: MIT */
/* JSON number text to an integer without going through a double. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The number written s[0, len) (JSON grammar: sign, digits, fraction, exponent) times
 * 10^scale, as an integer: "1707417525512145.123" with scale 3 is 1707417525512145123 exactly,
 * which a double cannot hold. Rounds half away from zero. Returns 0; -EINVAL when the text is
 * not a number; -ERANGE when the value is outside int64_t; -EDOM when exact is set and the
 * value is not a whole number after scaling.
 */
int gw_decimal_parse(const char *s, size_t len, unsigned scale, bool exact, int64_t *ret);
