/* SPDX-License-Identifier: MIT */
/* Lifecycle test program: launches some kernels, then ends in the way its --mode names. */

/*
 * For capture's lifecycle tests (clean exit, fast exit, crash, termination signal); it shows
 * no cause. It allocates one buffer, launches --kernels small kernels, optionally waits for
 * them (--sync 1), prints "exit_modes: ending by MODE" on stdout (flushed), then ends:
 *   return   return --status from main (atexit handlers and static destructors run)
 *   exit     exit(--status)             (atexit handlers run)
 *   _exit    _exit(--status)            (nothing runs: no atexit, no stdio flush)
 *   abort    abort()                    (SIGABRT: exit status 128+6 from a shell)
 *   sigterm  raise(SIGTERM)             (default action: killed by SIGTERM, 128+15)
 *   sigkill  raise(SIGKILL)             (nothing can run; for crash-safety tests)
 * The buffer is never freed.
 *
 * Parameters: --kernels N (default 8), --sync 0|1 (default 1), --mode (default return),
 * --status S (exit status for return/exit/_exit, default 0).
 *
 * Counts (exact, when the trace holds everything, i.e. modes return and exit):
 *   launches = kernels = kernels
 *   allocations = 1, frees = 0
 *   host_syncs = sync (explicit: cudaDeviceSynchronize)
 *   memcpy = 0, memset = 0
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

__global__ void step_counter_kernel(int *x, int step)
{
	x[threadIdx.x] += step;
}

int main(int argc, char **argv)
{
	long kernels = 8, sync = 1, status = 0;
	const char *mode = "return";
	const struct wl_opt opts[] = {
		{"kernels", &kernels, NULL, 0, 1000000, NULL, "kernels to launch"},
		{"sync", &sync, NULL, 0, 1, NULL, "cudaDeviceSynchronize before ending"},
		{"mode", NULL, &mode, 0, 0, "return|exit|_exit|abort|sigterm|sigkill",
		 "how the process ends"},
		{"status", &status, NULL, 0, 255, NULL, "exit status for return, exit, _exit"},
	};
	int *x;

	wl_parse(argc, argv, "launch kernels, then end in a chosen way (lifecycle tests)", opts,
		 WL_ARRAY_SIZE(opts));
	WL_CHECK(cudaMalloc(&x, 32 * sizeof(int)));
	for (long i = 0; i < kernels; i++) {
		step_counter_kernel<<<1, 32>>>(x, (int)i);
		WL_CHECK_LAUNCH();
	}
	if (sync)
		WL_CHECK(cudaDeviceSynchronize());
	printf("exit_modes: ending by %s\n", mode);
	fflush(stdout);
	if (!strcmp(mode, "exit"))
		exit((int)status);
	if (!strcmp(mode, "_exit"))
		_exit((int)status);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "sigterm"))
		raise(SIGTERM);
	if (!strcmp(mode, "sigkill"))
		raise(SIGKILL);
	/* a handler that returns from SIGTERM lands here: say so rather than exit 0 */
	if (strcmp(mode, "return")) {
		fprintf(stderr, "exit_modes: still alive after %s\n", mode);
		return 3;
	}
	return (int)status;
}
