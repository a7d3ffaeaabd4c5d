#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Capture overhead on the simulated GPU (a test double, not a GPU measurement): wall time and
# CPU time (user + system, all threads) of the tiny-kernel workload with libgpuwhy.so divided
# by without, runs alternated, medians. CPU time is the steadier figure on a shared machine.
# A third series runs under libcupti-floor.so (cupti-floor.c: CUPTI configured as gpuwhy
# configures it, with empty handlers), which splits the cost into CUPTI's floor (here the
# simulated CUPTI's) and gpuwhy's own share. The NVML sampler's cost: gpuwhy with the
# sampler off (GPUWHY_SAMPLE_MS=0) against gpuwhy sampling gpusim's NVML (GPUSIM_NVML=gpm)
# every 100 ms (the default) and every 10 ms, side by side, and the sampler thread's own CPU a
# tick (its INFO note; on gpusim most of it is the NVML stand-in scanning its timeline).
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
gw_env = dict(base, LD_PRELOAD=os.path.join(build, 'lib/libgpuwhy.so'))
configs = {'plain': base,
           'floor': dict(base, LD_PRELOAD=floor_lib) if os.path.exists(floor_lib) else None,
           'gpuwhy': gw_env,
           'nosampler': dict(gw_env, GPUWHY_SAMPLE_MS='0'),
           'sampler': dict(gw_env, GPUSIM_NVML='gpm', GPUWHY_SAMPLE_MS='100',
                           GPUWHY_OUTPUT=os.path.join(tmp, 's-%p.zst')),
           'sampler10': dict(gw_env, GPUSIM_NVML='gpm', GPUWHY_SAMPLE_MS='10',
                             GPUWHY_OUTPUT=os.path.join(tmp, 's-%p.zst'))}
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
# t-*: the 'gpuwhy' and 'nosampler' runs, the same records
size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(tmp, 't-*.zst'))) / 2
# the sampler's own note: its CPU a tick (gpuwhy-report --dump of the sampled traces)
tick_us = []
for p in glob.glob(os.path.join(tmp, 's-*.zst')):
    d = subprocess.run([os.path.join(build, 'tools/gpuwhy-report'), '--dump', p],
                       capture_output=True, text=True).stdout
    m = __import__('re').search(r'NVML sampler: (\d+) us .*?then (\d+) ticks .*?\(([\d.]+) us a tick', d)
    if m:
        tick_us.append((float(m.group(1)), int(m.group(2)), float(m.group(3))))
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
for i, what in ((0, 'wall'), (1, 'CPU ')):
    line = f'  {what} gpuwhy with the NVML sampler / without it:'
    for k, label in (('sampler', 'every 100 ms'), ('sampler10', 'every 10 ms')):
        pair, meds = ratio(i, k, 'nosampler')
        line += f'  {label} {pair:.3f} (ratio of medians {meds:.3f});'
    print(line.rstrip(';') + '  (medians of pair ratios)')
if tick_us:
    print(f'  the sampler thread: {med([t[0] for t in tick_us]):.0f} us to load and start NVML,'
          f' then {med([t[2] for t in tick_us]):.1f} us a tick (medians over {len(tick_us)}'
          f' sampled runs; on gpusim a tick is mostly the NVML stand-in scanning its timeline)')
print(f'  trace bytes per launch (API + KERNEL records): {size / runs / launches:.2f}')
print(f'  load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
for p in glob.glob(os.path.join(tmp, '*')):
    os.unlink(p)
os.rmdir(tmp)
PY
