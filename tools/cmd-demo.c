/* SPDX-License-Identifier: MIT */
/* `gpuwhy demo`: profiles a bundled workload, on the GPU when there is one, else on the
 * simulated GPU, and shows the report and the page. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "commands.h"

/* Bundled workloads `gpuwhy demo` may profile, in order of preference (build tree only). */
static const char *const gw_demo_workloads[] = {
	"mixed_training",
	"mixed",
	"healthy",
};

int gw_cmd_demo(struct gw_run_opts *o)
{
	char dir[PATH_MAX], workload[PATH_MAX], rel[PATH_MAX];
	char tmpdir[] = "/tmp/gpuwhy-demo.XXXXXX";
	char outdir[sizeof(tmpdir) + 1];
	char page[sizeof(tmpdir) + sizeof("/report.html")];
	bool with_page;
	char *cmd[2];
	bool found = false;
	int code;

	if (gw_run_check_report_outputs(o, NULL) < 0)
		return 2;
	if (gw_self_dir(dir, sizeof(dir)) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(gw_demo_workloads) / sizeof(gw_demo_workloads[0]); i++) {
		snprintf(rel, sizeof(rel), "../tests/workloads/%s", gw_demo_workloads[i]);
		if (gw_resolve(dir, rel, workload) == 0 && access(workload, X_OK) == 0) {
			found = true;
			break;
		}
	}
	if (!found) {
		fprintf(stderr, "gpuwhy: demo: no bundled workload next to this gpuwhy (the demo "
				"runs from a build tree with the CUDA workloads built by nvcc)\n");
		return 1;
	}
	if (!o->sim && !gw_have_real_gpu())
		o->sim = true;
	/* The workloads use the shared CUDA runtime: on a real GPU, let the loader fall back to
	 * the toolkit's copy when the system paths have none. */
	if (!o->sim) {
		const char *old = secure_getenv("LD_LIBRARY_PATH");
		char *paths;

		if (asprintf(&paths, "%s%s" GW_CUDA_ROOT "/lib64", old ? old : "",
			     old && old[0] ? ":" : "") < 0)
			return 1;
		setenv("LD_LIBRARY_PATH", paths, 1);
		free(paths);
	}
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "gpuwhy: demo: %s: %s\n", tmpdir, strerror(errno));
		return 1;
	}
	snprintf(outdir, sizeof(outdir), "%s/", tmpdir);
	snprintf(page, sizeof(page), "%s/report.html", tmpdir);
	o->output = outdir;
	/* People would rather look than read: the demo also writes the HTML page. */
	with_page = o->n_report_args == 0;
	if (with_page && gw_run_add_report_arg(o, "--html", page) < 0)
		return 1;

	if (o->sim)
		printf("== gpuwhy demo on the SIMULATED GPU (tests/gpusim) ==\n"
		       "No GPU was found, so the workload runs on gpusim, a test double that "
		       "models\n"
		       "a GPU's timeline on the CPU. The numbers below are simulated, not a GPU\n"
		       "measurement; they show what gpuwhy reports, not how a real GPU "
		       "performs.\n\n");
	else
		printf("== gpuwhy demo on this machine's GPU ==\n\n");
	printf("$ gpuwhy run%s -o %s%s%s -- %s\n\n", o->sim ? " --sim" : "", outdir,
	       with_page ? " --html " : "", with_page ? page : "", workload);
	fflush(stdout);

	cmd[0] = workload;
	cmd[1] = NULL;
	code = gw_run_command(o, cmd);
	if (with_page)
		printf("\nThe HTML report (open it in a browser): %s\n", page);
	printf("The trace: %s\n", tmpdir);
	return code;
}
