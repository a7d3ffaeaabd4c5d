/* SPDX-License-Identifier: MIT */
/* Reads the GPUWHY_* environment settings described by capture/settings.def. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output-path.h"

const struct gw_setting_info gw_settings[] = {
#define GW_SETTING(NAME, kind, field, def, help) {"GPUWHY_" #NAME, #kind, help},
#include "settings.def"
#undef GW_SETTING
};

const unsigned gw_settings_count = sizeof(gw_settings) / sizeof(gw_settings[0]);

int gw_parse_bool(const char *text, bool *ret)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(text, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcasecmp(text, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_int(const char *text, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > 1000000)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

static int parse_string(const char *text, const char **ret)
{
	if (!*text)
		return -EINVAL;
	*ret = text;
	return 0;
}

#define GW_PARSE_BOOL	parse_bool_setting
#define GW_PARSE_INT	parse_int
#define GW_PARSE_STRING parse_string

static int parse_bool_setting(const char *text, bool *ret)
{
	return gw_parse_bool(text, ret);
}

int gw_config_from_env(struct gw_config *ret, const char **ret_invalid)
{
	const char *v;
	int r = 0;

#define GW_SETTING(NAME, kind, field, def, help)                                                   \
	ret->field = def;                                                                          \
	v = secure_getenv("GPUWHY_" #NAME);                                                        \
	if (v && GW_PARSE_##kind(v, &ret->field) < 0) {                                            \
		ret->field = def;                                                                  \
		if (ret_invalid)                                                                   \
			*ret_invalid = "GPUWHY_" #NAME;                                            \
		r = -EINVAL;                                                                       \
	}
#include "settings.def"
#undef GW_SETTING
	return r;
}

unsigned gw_config_invalid(const char **names, unsigned max)
{
	struct gw_config scratch;
	const char *v;
	unsigned n = 0;

#define GW_SETTING(NAME, kind, field, def, help)                                                   \
	v = secure_getenv("GPUWHY_" #NAME);                                                        \
	if (v && GW_PARSE_##kind(v, &scratch.field) < 0 && n < max)                                \
		names[n++] = "GPUWHY_" #NAME;
#include "settings.def"
#undef GW_SETTING
	return n;
}
