#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the launching thread's added cost goes, in instructions (callgrind: repeatable on a
# shared machine): the tiny-kernel workload on the simulated GPU (a test double) with no launch
# latency, with and without libgpuwhy.so, per launch: the whole thread, gpuwhy's CUPTI callback
# (inclusive), and the rest, which is the simulated CUPTI's callback dispatch and activity
# records. Usage: benchmarks/capture-split.sh BUILD_DIR [ITERS]; GW_SPLIT_KEEP=1 keeps the
# callgrind files (one per thread) for callgrind_annotate and says where. --fair-sched lets
# the writer thread keep up under valgrind, so no record is dropped (the last line says).
set -euo pipefail
build=$(cd "${1:?usage: capture-split.sh BUILD_DIR [ITERS]}" && pwd)
iters=${2:-5000}
command -v valgrind >/dev/null || { echo "capture-split: valgrind not found" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gw-split.XXXXXX")
if [ -n "${GW_SPLIT_KEEP:-}" ]; then
	trap 'echo "capture-split: callgrind files kept in $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
run() { # OUT [PRELOAD]
	env LD_LIBRARY_PATH="$build/tests/gpusim" GPUSIM_KERNEL_US=tiny_=0 GPUSIM_QUEUE_US=0 \
		GPUSIM_LAUNCH_US=0 GPUWHY_QUIET=1 GPUWHY_OUTPUT="$tmp/t-%p.zst" \
		${2:+LD_PRELOAD=$2} valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes \
		--callgrind-out-file="$1" "$build/tests/workloads/tiny_kernels" --iters "$iters" \
		>/dev/null 2>&1
}
run "$tmp/without"
run "$tmp/with" "$build/lib/libgpuwhy.so"
python3 - "$tmp" "$iters" "$build/tools/gpuwhy-report" <<'PY'
import glob, re, subprocess, sys
tmp, iters = sys.argv[1], int(sys.argv[2])
launches = 3 * iters + 1

def total(path):  # the thread's instruction total
    for line in open(path):
        if line.startswith('summary:') or line.startswith('totals:'):
            return int(line.split()[1])
    return 0

def inclusive(path, fn):
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if fn in line:
            return int(line.split()[0].replace(',', ''))
    return 0

def main_thread(prefix):  # the launching thread is the first one, -01
    return prefix + '-01'

base = total(main_thread(tmp + '/without'))
with_ = total(main_thread(tmp + '/with'))
cb = inclusive(main_thread(tmp + '/with'), 'gw_cupti_on_callback')
others = sorted(glob.glob(tmp + '/with-0[2-9]'))
bg = sum(total(p) for p in others)
print(f'tiny_kernels --iters {iters} on gpusim (simulated GPU), no launch latency; '
      f'instructions per launch ({launches} launches), callgrind')
print(f'  launching thread without gpuwhy   {base / launches:8.0f}')
print(f'  launching thread with gpuwhy      {with_ / launches:8.0f}  (+{(with_ - base) / launches:.0f})')
print(f'    gpuwhy callback, inclusive      {cb / launches:8.0f}')
print(f'    simulated CUPTI and the rest    {(with_ - base - cb) / launches:8.0f}')
print(f'  other threads (writer, CUPTI)     {bg / launches:8.0f}')
# valgrind runs one thread at a time; without --fair-sched the writer starves and records are
# dropped, which would leave the copy into the ring out of these figures
dropped = 0
for trace in glob.glob(tmp + '/t-*.zst'):
    out = subprocess.run([sys.argv[3], '--dump', trace], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith('FOOTER '):
            dropped += int(dict(f.split('=', 1) for f in line.split()[1:] if '=' in f)['dropped'])
print(f'  records dropped during the run      {dropped:8d}' +
      ('' if not dropped else '  (the figures miss their cost)'))
PY
