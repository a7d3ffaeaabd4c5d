#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one-shot real-GPU validation (issue 7), or the same checks on the simulated GPU.
#
# usage: benchmarks/gpu/validate.sh [--sim] [--build DIR] [--rebuild] [--out DIR]
#                                   [--budget SECONDS] [--torch-steps N] [--keep]
#        benchmarks/gpu/validate.sh --prepare-device
#
# Runs every workload of tests/workloads under gpuwhy and checks its counts against
# workloads.json and its cause; then, on a real GPU only, a cuBLAS GEMM loop, a replayed CUDA
# Graph, a PyTorch training loop under gpuwhy and under torch.profiler (kernel counts,
# overhead against plain runs, alternated, medians), Nsight Compute on one kernel per class
# and the measured counters (NVML GPM: each kernel's DRAM and SM use against its class by
# name, the sampler's cost). Progress goes to stderr; validate.json, validate.md, validate.log and
# details.tar.gz go to --out (default $OUT, else ./validate-out). Exit 0 when no check failed.
# --sim runs on gpusim and skips, saying so, what needs a GPU; CI runs it.
# Without --build, a GPU run uses .device/build when present (see --prepare-device), else
# builds with meson in a temporary folder.
#
# --prepare-device (on a machine with the build dependencies): builds .device/build with the
# static-cudart workloads and copies the shared libraries gpuwhy needs beyond glibc into
# .device/lib, for a GPU machine that lacks zstd, libunwind or elfutils (carry .device).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ "${1:-}" = "--prepare-device" ]; then
	dev="$root/.device"
	mkdir -p "$dev/lib"
	[ -f "$dev/build/build.ninja" ] ||
		meson setup "$dev/build" "$root" -Dworkloads=enabled -Dworkloads_static=true \
			-Dbuildtype=debugoptimized >/dev/null
	meson compile -C "$dev/build" >/dev/null
	# the libraries the capture library and the tools load beyond glibc and the C++ and zlib
	# runtimes every machine has (an older copy of those would shadow PyTorch's needs)
	for bin in "$dev"/build/lib/libgpuwhy.so "$dev"/build/tools/gpuwhy-report \
		"$dev"/build/tools/gpuwhy; do
		ldd "$bin" | awk '$3 ~ /^\// {print $3}'
	done | sort -u |
		grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libz|ld-linux[^/]*)\.so' |
		while read -r lib; do cp -L "$lib" "$dev/lib/"; done
	echo "validate.sh: .device/build and .device/lib ready ($(du -sh "$dev" | cut -f1));" \
		"carry .device to the GPU machine" >&2
	exit 0
fi

python=$(command -v python3 || command -v python)
exec "$python" "$here/validate.py" "$@"
