#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Capture overhead on the simulated GPU (a test double, not a GPU measurement): wall time of
# the tiny-kernel workload with libgpuwhy.so divided by without, runs alternated, median.
# Usage: bench-capture.sh BUILD_DIR [RUNS] [ITERS]
set -euo pipefail
build=$(cd "${1:?usage: bench-capture.sh BUILD_DIR [RUNS] [ITERS]}" && pwd)
runs=${2:-11}
iters=${3:-20000}
app=$build/tests/workloads/tiny_kernels
lib=$build/lib/libgpuwhy.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH=$build/tests/gpusim GPUSIM_KERNEL_US=tiny_=1 GPUWHY_QUIET=1

wall() { # prints the wall time of one run in ns
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

with=() without=()
for ((i = 0; i < runs; i++)); do
	without+=("$(wall "$app" --iters "$iters")")
	with+=("$(GPUWHY_OUTPUT="$tmp/t-%p.zst" LD_PRELOAD=$lib wall "$app" --iters "$iters")")
done
bytes=$(cat "$tmp"/t-*.zst | wc -c)
python3 - "$iters" "$runs" "$bytes" "${without[@]}" "${with[@]}" <<'PY'
import statistics, sys
iters, runs, total_bytes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
v = [int(x) for x in sys.argv[4:]]
without, with_ = v[:runs], v[runs:]
ratios = [w / o for w, o in zip(with_, without)]
launches = 3 * iters + 1
print(f'tiny_kernels --iters {iters} on gpusim, {runs} alternated runs each')
print(f'  median wall without gpuwhy: {statistics.median(without) / 1e6:.1f} ms')
print(f'  median wall with gpuwhy:    {statistics.median(with_) / 1e6:.1f} ms')
print(f'  median of per-pair ratios:  {statistics.median(ratios):.3f} (target <= 1.05)')
print(f'  ratio of medians:           {statistics.median(with_) / statistics.median(without):.3f}')
print(f'  trace bytes per launch:     {total_bytes / runs / launches:.2f}')
PY
