// SPDX-License-Identifier: MIT
// A CUDA program that starts Python only after its first CUDA calls, as a program that embeds
// it might: gpuwhy has started capturing before the interpreter is even loaded, and must find
// it when it is (dlopen), not only among the objects loaded at start.
//
// usage: py_late LIBPYTHON SCRIPT LIBPYSIM STEPS
//   runs SCRIPT (train_loop.py) as __main__ with argv [SCRIPT, LIBPYSIM, STEPS]
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *buf = nullptr, *py;
	char code[8192];

	if (argc != 5) {
		fprintf(stderr, "usage: py_late LIBPYTHON SCRIPT LIBPYSIM STEPS\n");
		return 2;
	}
	// capture starts here, in a process without Python
	if (cudaMalloc(&buf, 1 << 20) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	py = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!py) {
		fprintf(stderr, "py_late: %s\n", dlerror());
		return 1;
	}
	auto init = (void (*)(int))dlsym(py, "Py_InitializeEx");
	auto run = (int (*)(const char *))dlsym(py, "PyRun_SimpleString");
	auto finalize = (int (*)(void))dlsym(py, "Py_FinalizeEx");
	if (!init || !run || !finalize)
		return 1;
	init(0);
	// the test passes plain paths: no quote to escape
	snprintf(code, sizeof(code),
		 "import sys\n"
		 "sys.argv = ['%s', '%s', '%s']\n"
		 "exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'), "
		 "{'__name__': '__main__'})\n",
		 argv[2], argv[3], argv[4]);
	if (run(code) != 0)
		return 1;
	if (finalize() != 0)
		return 1;
	return cudaFree(buf) == cudaSuccess ? 0 : 1;
}
