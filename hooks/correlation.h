/* SPDX-License-Identifier: MIT */
/* Correlation ids of calls made inside a recorded call, mapped to the recorded call's id. */
#pragma once

#include <stdint.h>

/*
 * Every CUDA API call has a correlation id of its own, a driver call made inside a runtime
 * call too; a GPU record carries the id of "the driver or runtime API activity record that
 * launched" it, which for a copy the header calls the driver one's. gpuwhy records one API
 * record per application call (the outermost), so whichever of the two ids CUPTI puts in the
 * GPU record, it must join that record: the inner ids are aliased to the outer one here.
 *
 * A direct-mapped table of 2^18 entries (2 MiB of address space, touched as used): an alias
 * lives until 2^18 newer ids have come, far more than CUPTI's buffers hold in flight.
 */

/* Maps the table. 0 or -ENOMEM (then aliases are not kept and ids pass unchanged). */
int gw_corr_init(void);

/* Hot path, any thread: inner (a call inside a recorded call) stands for outer. */
void gw_corr_alias(uint32_t inner, uint32_t outer);

/* The recorded call's id for a GPU record's id: outer if id was aliased, else id itself. */
uint32_t gw_corr_resolve(uint32_t id);
