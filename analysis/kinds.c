/* SPDX-License-Identifier: MIT */
/* The names of the trace format's kinds (kinds.def), by value. */
#include "analysis.h"

#define SYNC_KIND(NAME, key, label) [GW_SYNC_##NAME] = {#key, label},
#define MEM_KIND(NAME, key, label)
const struct gw_kind_name gw_sync_kind_names[] = {
#include "kinds.def"
};
#undef SYNC_KIND
#undef MEM_KIND

#define SYNC_KIND(NAME, key, label)
#define MEM_KIND(NAME, key, label) [GW_MEM_##NAME] = {#key, label},
/* index 0 is no kind: its key is NULL */
const struct gw_kind_name gw_mem_kind_names[] = {
#include "kinds.def"
};
#undef SYNC_KIND
#undef MEM_KIND

const unsigned gw_n_sync_kind_names = sizeof(gw_sync_kind_names) / sizeof(gw_sync_kind_names[0]);
const unsigned gw_n_mem_kind_names = sizeof(gw_mem_kind_names) / sizeof(gw_mem_kind_names[0]);

const struct gw_kind_name *gw_sync_kind_name(unsigned kind)
{
	return kind < gw_n_sync_kind_names ? &gw_sync_kind_names[kind] : &gw_sync_kind_names[0];
}

const struct gw_kind_name *gw_mem_kind_name(unsigned kind)
{
	static const struct gw_kind_name unknown = {"unknown", "unknown"};

	return kind < gw_n_mem_kind_names && gw_mem_kind_names[kind].key ? &gw_mem_kind_names[kind]
									 : &unknown;
}
