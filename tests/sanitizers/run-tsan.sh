#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gpuwhy with ThreadSanitizer and runs its threaded code: any TSan report fails the run.
# usage: tests/sanitizers/run-tsan.sh [BUILD_DIR] (default build-tsan). README.md says why
# the workloads are run the way they are and what is left out.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-tsan}
case $build in /*) ;; *) build=$root/$build ;; esac
out=$(mktemp -d "${TMPDIR:-/tmp}/gw-tsan.XXXXXX")
trap 'rm -rf "$out"' EXIT

# halt_on_error: the first report ends the process with exitcode; second_deadlock_stack
# makes lock-order reports complete.
TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=4"
export TSAN_OPTIONS

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$root" --werror -Db_sanitize=thread -Db_lundef=false -Dtests=enabled \
		-Dworkloads=enabled >/dev/null
fi
meson compile -C "$build" -j "${GW_JOBS:-2}" >/dev/null

echo "-- unit, fuzz-replay and gpusim tests (writer, 16 producers, reader thread, CUPTI thread)"
meson test -C "$build" --suite unit --suite fuzz --suite gpusim --num-processes 2 \
	--print-errorlogs >"$out/meson.txt" 2>&1 || {
	cat "$out/meson.txt"
	exit 1
}
grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/meson.txt"

# The workloads are plain nvcc programs; libgpuwhy.so and gpusim's libcudart/libcupti are
# TSan-built, so the TSan runtime has to be in the process before them.
libtsan=$(readlink -f "$(${CC:-cc} -print-file-name=libtsan.so)")
w=$build/tests/workloads
fails=0 runs=0

# run WANT_RC STACKS [inject] -- PROGRAM ARGS...: runs one workload under capture on gpusim,
# then reads its trace with the TSan-built gpuwhy-report.
run() {
	want=$1 stacks=$2
	shift 2
	mode=preload
	if [ "$1" = inject ]; then
		mode=inject
		shift
	fi
	shift # --
	runs=$((runs + 1))
	dir=$out/run$runs
	mkdir "$dir"
	if [ $mode = inject ]; then
		set -- env LD_PRELOAD="$libtsan" CUDA_INJECTION64_PATH="$build/lib/libgpuwhy.so" "$@"
	else
		set -- env LD_PRELOAD="$libtsan:$build/lib/libgpuwhy.so" "$@"
	fi
	rc=0
	LD_LIBRARY_PATH=$build/tests/gpusim GPUWHY_OUTPUT=$dir/trace-%p.zst GPUWHY_QUIET=1 \
		GPUWHY_STACKS=$stacks timeout 300 "$@" >"$dir/out" 2>"$dir/err" || rc=$?
	label="$mode stacks=$stacks: $(echo "$*" | sed 's|.*/||')"
	if grep -q ThreadSanitizer "$dir/err" || [ "$rc" != "$want" ]; then
		echo "FAIL $label: exit $rc (expected $want)"
		cat "$dir/err"
		fails=$((fails + 1))
		return
	fi
	for t in "$dir"/trace-*.zst; do
		if ! "$build/tools/gpuwhy-report" --json "$t" >"$dir/report" 2>"$dir/rerr"; then
			echo "FAIL $label: gpuwhy-report on its trace"
			cat "$dir/rerr"
			fails=$((fails + 1))
			return
		fi
	done
	echo "ok   $label"
}

echo "-- capture on gpusim: application threads, the writer thread, the CUPTI activity thread"
run 0 1 -- "$w/tiny_kernels" --iters 3000
run 0 1 -- "$w/sync_per_iteration" --iters 20
run 0 1 -- "$w/mixed_training" --iters 5
run 0 1 -- "$w/kv_cache_growth" --steps 32
run 0 1 -- "$w/data_transfer" --iters 2 --mb 4
run 0 1 inject -- "$w/dependency_chain" --steps 32 --seqs 2
# Threads that exit after taking a stack crash TSan inside libunwind's thread-exit destructor
# (README.md): the multi-threaded runs capture without stacks.
run 0 0 -- "$w/multi_stream" --threads 16 --iters 100
run 0 0 inject -- "$w/multi_stream" --threads 16 --iters 25
run 0 0 -- "$w/multi_stream" --threads 64 --iters 5
# the NVML sampler (gpusim's NVML) on its thread every 5 ms, beside 16 launching threads
GPUSIM_NVML=gpm GPUWHY_SAMPLE_MS=5 run 0 0 -- "$w/multi_stream" --threads 16 --iters 100
run 0 1 -- "$w/exit_modes" --mode return
run 9 1 -- "$w/exit_modes" --mode exit --status 9
run 143 1 -- "$w/exit_modes" --mode sigterm
run 134 1 -- "$w/exit_modes" --mode abort

echo "run-tsan: $runs capture runs, $fails failed; ThreadSanitizer reports: $(
	cat "$out"/run*/err | grep -c 'WARNING: ThreadSanitizer' || true)"
[ "$fails" = 0 ]
