/* SPDX-License-Identifier: MIT */
/* Lifecycle test program: forks a child that uses CUDA and one that does not. */

/*
 * For capture's fork tests; it shows no cause. Before it makes any CUDA call (CUDA does not
 * survive fork in the child of a process that initialized it), the parent forks:
 *   child 1 (CUDA):     allocates a buffer, launches --child-kernels kernels, synchronizes,
 *                       frees, exits 0;
 *   child 2 (no CUDA):  does --cpu-us of CPU work, exits 0.
 * Then the parent, with --parent-kernels > 0, does the same CUDA work as child 1 with its own
 * count, and waits for both children. Exit status: 0 when both children exited 0, else 1.
 * Each process prints one line "forker: ROLE pid PID ..." on stdout.
 *
 * Parameters: --child-kernels N (default 6), --parent-kernels M (default 4, 0: the parent
 * never initializes CUDA), --cpu-us U (default 20000).
 *
 * Counts, per process (exact):
 *   child 1: launches = kernels = child_kernels, allocations = 1, frees = 1,
 *            host_syncs = 2 (explicit 1, implicit 1), memcpy = 0, memset = 0
 *   child 2: no CUDA call at all (gpuwhy should write no trace for it, or an empty one)
 *   parent:  when parent_kernels > 0, as child 1 with parent_kernels; else no CUDA call
 */
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

__global__ void step_counter_kernel(int *x, int step)
{
	x[threadIdx.x] += step;
}

static void cuda_work(const char *role, long kernels)
{
	int *x;

	WL_CHECK(cudaMalloc(&x, 32 * sizeof(int)));
	for (long i = 0; i < kernels; i++) {
		step_counter_kernel<<<1, 32>>>(x, (int)i);
		WL_CHECK_LAUNCH();
	}
	WL_CHECK(cudaDeviceSynchronize());
	WL_CHECK(cudaFree(x));
	printf("forker: %s pid %d launched %ld kernels\n", role, (int)getpid(), kernels);
	fflush(stdout);
}

static int wait_ok(pid_t pid, const char *role)
{
	int st;

	if (waitpid(pid, &st, 0) != pid) {
		perror("forker: waitpid");
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	fprintf(stderr, "forker: %s child %d ended with status 0x%x\n", role, (int)pid, st);
	return 0;
}

int main(int argc, char **argv)
{
	long child_kernels = 6, parent_kernels = 4, cpu_us = 20000;
	const struct wl_opt opts[] = {
		{"child-kernels", &child_kernels, NULL, 0, 1000000, NULL,
		 "kernels of the CUDA child"},
		{"parent-kernels", &parent_kernels, NULL, 0, 1000000, NULL,
		 "kernels of the parent, after forking (0: no CUDA)"},
		{"cpu-us", &cpu_us, NULL, 0, 10000000, NULL, "CPU work of the other child (us)"},
	};

	wl_parse(argc, argv, "fork a CUDA child and a CPU-only child (lifecycle tests)", opts,
		 WL_ARRAY_SIZE(opts));
	fflush(stdout);
	pid_t cuda_child = fork();
	if (cuda_child < 0)
		wl_die("fork failed");
	if (cuda_child == 0) {
		cuda_work("cuda-child", child_kernels);
		exit(EXIT_SUCCESS);
	}
	pid_t cpu_child = fork();
	if (cpu_child < 0)
		wl_die("fork failed");
	if (cpu_child == 0) {
		float out[1024];
		uint8_t scratch[1024];
		uint32_t check = wl_host_work_us(cpu_us, out, scratch, sizeof(scratch), 5);
		printf("forker: cpu-child pid %d done (check %08x)\n", (int)getpid(), check);
		exit(EXIT_SUCCESS);
	}
	if (parent_kernels > 0)
		cuda_work("parent", parent_kernels);
	int ok = wait_ok(cuda_child, "cuda");
	ok &= wait_ok(cpu_child, "cpu");
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
