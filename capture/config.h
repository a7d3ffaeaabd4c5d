/* SPDX-License-Identifier: MIT */
/* libgpuwhy.so settings, read once from the environment (table: capture/settings.def). */
#pragma once

#include <stdbool.h>

struct gw_config {
#define GW_CTYPE_SETTING_BOOL			 bool
#define GW_CTYPE_SETTING_INT			 int
#define GW_CTYPE_SETTING_STRING			 const char *
#define GW_SETTING(NAME, kind, field, def, help) GW_CTYPE_SETTING_##kind field;
#include "settings.def"
#undef GW_SETTING
};

/* One setting, for documentation and tests: name is the full variable name. */
struct gw_setting_info {
	const char *name;
	const char *kind; /* "BOOL", "INT", "STRING" */
	const char *help;
};

extern const struct gw_setting_info gw_settings[];
extern const unsigned gw_settings_count;

/*
 * Fills *ret from the environment; unset or unparsable values take the table's default. An
 * unparsable value makes it return -EINVAL after filling everything, with the variable's name
 * in *ret_invalid (if not NULL) so the caller can warn. Strings point into the environment:
 * valid while it is not modified. Makes no allocation; safe in a constructor.
 */
int gw_config_from_env(struct gw_config *ret, const char **ret_invalid);

/* The names of every setting set to a value it cannot parse (at most max of them, into names);
 * returns how many. */
unsigned gw_config_invalid(const char **names, unsigned max);

/* Parses a boolean setting: 1/0, yes/no, true/false, on/off (any case). -EINVAL otherwise. */
int gw_parse_bool(const char *text, bool *ret);
