#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Capture overhead on the simulated GPU (a test double, not a GPU measurement): wall time and
# CPU time (user + system, all threads) of the tiny-kernel workload with libgpuwhy.so divided
# by without, runs alternated, medians. CPU time is the steadier figure on a shared machine.
# A third series runs under libcupti-floor.so (cupti-floor.c: CUPTI configured as gpuwhy
# configures it, with empty handlers), which splits the cost into CUPTI's floor (here the
# simulated CUPTI's) and gpuwhy's own share.
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
base.pop('CUDA_INJECTION64_PATH', None)
floor_lib = os.path.join(build, 'benchmarks/libcupti-floor.so')
configs = {'plain': base,
           'floor': dict(base, LD_PRELOAD=floor_lib) if os.path.exists(floor_lib) else None,
           'gpuwhy': dict(base, LD_PRELOAD=os.path.join(build, 'lib/libgpuwhy.so'))}
configs = {k: v for k, v in configs.items() if v}

def once(env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(app, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

res = {k: [] for k in configs}
for _ in range(runs):
    for k, env in configs.items():
        res[k].append(once(env))
size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(tmp, 't-*.zst')))
launches = 3 * iters + 1
med = statistics.median

def ratio(i, over, under):  # median of pair ratios (runs side by side), ratio of medians
    a, b = [x[i] for x in res[under]], [x[i] for x in res[over]]
    return med([y / x for x, y in zip(a, b)]), med(b) / med(a)

print(f'tiny_kernels --iters {iters} on gpusim (simulated GPU), {runs} alternated runs each')
for i, what in ((0, 'wall'), (1, 'CPU ')):
    pair, meds = ratio(i, 'gpuwhy', 'plain')
    print(f'  {what} without / with gpuwhy: {med([x[i] for x in res["plain"]]) * 1e3:7.1f} /'
          f' {med([x[i] for x in res["gpuwhy"]]) * 1e3:7.1f} ms; median of pair ratios'
          f' {pair:.3f}, ratio of medians {meds:.3f}  (target <= 1.05)')
print(f'  added CPU per launch: {(med([x[1] for x in res["gpuwhy"]]) - med([x[1] for x in res["plain"]])) / launches * 1e9:.0f} ns')
if 'floor' in res:
    f_pair, _ = ratio(0, 'floor', 'plain')
    g_pair, _ = ratio(0, 'gpuwhy', 'floor')
    print(f'  wall, the simulated CUPTI alone (libcupti-floor.so) / without: {f_pair:.3f};'
          f' gpuwhy / CUPTI alone: {g_pair:.3f}  (medians of pair ratios)')
print(f'  trace bytes per launch (API + KERNEL records): {size / runs / launches:.2f}')
print(f'  load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
for p in glob.glob(os.path.join(tmp, '*')):
    os.unlink(p)
os.rmdir(tmp)
PY
