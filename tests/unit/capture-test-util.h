/* SPDX-License-Identifier: MIT */
/* Shared by the capture tests: a trace written by the real writer, capture switched on. */
#pragma once

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "capture-state.h"
#include "intern.h"
#include "trace-writer.h"

/* Starts the writer on /tmp/gw-test-NAME-PID.zst (its path in path) and turns capture on. */
static inline void gw_test_capture_start(char *path, size_t size, const char *name)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr = {.format_version = GW_FORMAT_VERSION};

	snprintf(path, size, "/tmp/gw-test-%s-%d.zst", name, (int)getpid());
	unlink(path);
	opt.fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(opt.fd >= 0);
	assert_int_equal(gw_intern_init(), 0);
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	atomic_store(&gw_capture_on, true);
}
