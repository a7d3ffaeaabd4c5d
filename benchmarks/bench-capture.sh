#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Capture overhead on the simulated GPU (a test double, not a GPU measurement): wall time and
# CPU time (user + system, all threads) of the tiny-kernel workload with libgpuwhy.so divided
# by without, runs alternated, medians. CPU time is the steadier figure on a shared machine.
# Usage: bench-capture.sh BUILD_DIR [RUNS] [ITERS]
set -euo pipefail
build=$(cd "${1:?usage: bench-capture.sh BUILD_DIR [RUNS] [ITERS]}" && pwd)
exec python3 - "$build" "${2:-11}" "${3:-20000}" <<'PY'
import glob, os, resource, statistics, subprocess, sys, tempfile, time

build, runs, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
app = [os.path.join(build, 'tests/workloads/tiny_kernels'), '--iters', str(iters)]
tmp = tempfile.mkdtemp(prefix='gw-bench-')
base = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, 'tests/gpusim'),
            GPUSIM_KERNEL_US='tiny_=1', GPUWHY_QUIET='1',
            GPUWHY_OUTPUT=os.path.join(tmp, 't-%p.zst'))
base.pop('LD_PRELOAD', None)
traced = dict(base, LD_PRELOAD=os.path.join(build, 'lib/libgpuwhy.so'))

def once(env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(app, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

off, on = [], []
for _ in range(runs):
    off.append(once(base))
    on.append(once(traced))
size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(tmp, 't-*.zst')))
launches = 3 * iters + 1
med = statistics.median
print(f'tiny_kernels --iters {iters} on gpusim (simulated GPU), {runs} alternated runs each')
for i, what in ((0, 'wall'), (1, 'CPU ')):
    a, b = [x[i] for x in off], [x[i] for x in on]
    print(f'  {what} without / with gpuwhy: {med(a) * 1e3:7.1f} / {med(b) * 1e3:7.1f} ms;'
          f' median of pair ratios {med([y / x for x, y in zip(a, b)]):.3f},'
          f' ratio of medians {med(b) / med(a):.3f}  (target <= 1.05)')
print(f'  added CPU per launch: {(med([x[1] for x in on]) - med([x[1] for x in off])) / launches * 1e9:.0f} ns')
print(f'  trace bytes per launch (API + KERNEL records): {size / runs / launches:.2f}')
print(f'  load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
for p in glob.glob(os.path.join(tmp, '*')):
    os.unlink(p)
os.rmdir(tmp)
PY
