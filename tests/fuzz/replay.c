/* SPDX-License-Identifier: MIT */
/* main() of a fuzz target built without libFuzzer: replays files and directories of inputs. */
#include <dirent.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;
	int ret = -1;

	if (!f)
		goto out;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		goto out;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto out;
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	ret = 0;
out:
	if (ret < 0)
		fprintf(stderr, "fuzz replay: cannot read %s\n", path);
	free(buf);
	if (f)
		fclose(f);
	return ret;
}

/* Replays every file named, and every file in every directory named; fails on none. */
int main(int argc, char **argv)
{
	int files = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			failed += replay_file(argv[i]) < 0;
			files++;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			failed++;
			continue;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			failed += replay_file(path) < 0;
			files++;
		}
		closedir(d);
	}
	printf("%s: replayed %d inputs\n", basename(argv[0]), files);
	return failed || !files ? 1 : 0;
}
