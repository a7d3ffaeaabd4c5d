#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The body of benchmarks/run.sh: measures each figure side by side in one run, prints the
# table and writes it to benchmarks/results/<date>-<machine>.md.
"""usage: run-table.py --build DIR [--reps N] [--quick] [--out FILE]

Figures (all on this machine's CPUs; capture runs on the simulated GPU, a test double, so
its overhead ratios say what gpuwhy's own code costs, not what a GPU run would show):
  capture overhead   wall time with LD_PRELOAD=libgpuwhy.so / without, runs alternated,
                     median of --reps (>= 5), on a launch-bound, a sync-heavy and an
                     allocation-heavy workload;
  writer             bench-trace's records/s and bytes per launch (synthetic records);
  trace              bytes per launch of a real capture of the tiny-kernel loop;
  report             gpuwhy-report --json on that trace: launches/s and peak RSS;
  vs Chrome JSON     the same trace's events written as a Kineto-style Chrome trace (the
                     format torch.profiler exports), bytes against gpuwhy's.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import re
import statistics
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_timed(cmd, env):
    """Wall seconds and peak RSS (KiB) of one child process; raises on a non-zero exit."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    out, err = p.stdout.read(), p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError('%s: exit %d: %s' % (cmd[0], p.returncode, err.decode()[-300:]))
    return secs, usage.ru_maxrss, out


def overhead(build, tmp, name, args, env_extra, reps):
    app = os.path.join(build, 'tests', 'workloads', name)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, 'tests', 'gpusim'),
               GPUWHY_QUIET='1', **env_extra)
    env.pop('LD_PRELOAD', None)
    traced = dict(env, LD_PRELOAD=os.path.join(build, 'lib', 'libgpuwhy.so'),
                  GPUWHY_OUTPUT=os.path.join(tmp, name + '-%p.trace.zst'))
    # CUPTI as gpuwhy configures it, with empty handlers: the simulated CUPTI's own cost
    floor = dict(env, LD_PRELOAD=os.path.join(build, 'benchmarks', 'libcupti-floor.so'))
    plain_s, with_s, floor_s = [], [], []
    for _ in range(reps):
        plain_s.append(run_timed([app] + args, env)[0])
        floor_s.append(run_timed([app] + args, floor)[0])
        with_s.append(run_timed([app] + args, traced)[0])
    for f in os.listdir(tmp):
        if f.startswith(name + '-'):
            os.unlink(os.path.join(tmp, f))
    p, w, c = (statistics.median(x) for x in (plain_s, with_s, floor_s))
    return {'workload': name, 'args': ' '.join(args), 'env': env_extra, 'plain_s': p,
            'gpuwhy_s': w, 'ratio': w / p, 'floor_s': c, 'runs': reps}


def parse_dump(path):
    """Yields (kind, fields, strings) from gpuwhy-report --dump output."""
    strings = {}
    with open(path, errors='replace') as f:
        for line in f:
            kind, _, rest = line.rstrip('\n').partition(' ')
            if kind == 'STRING':
                m = re.match(r'id=(\d+) kind=(\d+) text=(.*)$', rest)
                if m:
                    strings[int(m.group(1))] = m.group(3).strip('"')
                continue
            if kind in ('API', 'KERNEL'):
                yield kind, dict(re.findall(r'(\w+)=(\S+)', rest)), strings


def chrome_json(dump, out):
    """Writes the API and kernel records as torch.profiler's Chrome trace writes them: one
    event object per line, a runtime event per API call, a kernel event per kernel, and the
    ac2g flow pair linking them. Returns the number of events."""
    n = 0
    with open(out, 'w') as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [],\n  "traceEvents": [\n')
        first = True
        for kind, r, strings in parse_dump(dump):
            start, end = int(r['start_ns']), int(r['end_ns'])
            corr = int(r['correlation'])
            if kind == 'API':
                ev = {'ph': 'X', 'cat': 'cuda_runtime',
                      'name': strings.get(int(r.get('name_id', 0)), 'cudaLaunchKernel'),
                      'pid': 1, 'tid': int(r['tid']), 'ts': start / 1e3,
                      'dur': (end - start) / 1e3,
                      'args': {'External id': corr, 'cbid': int(r['cbid']),
                               'correlation': corr}}
                flow = {'ph': 's', 'id': corr, 'pid': 1, 'tid': int(r['tid']),
                        'ts': start / 1e3, 'cat': 'ac2g', 'name': 'ac2g'}
            else:
                grid = [int(r['grid_x']), int(r['grid_y']), int(r['grid_z'])]
                block = [int(r['block_x']), int(r['block_y']), int(r['block_z'])]
                ev = {'ph': 'X', 'cat': 'kernel',
                      'name': strings.get(int(r['name_id']), 'kernel'), 'pid': 0,
                      'tid': int(r['stream']), 'ts': start / 1e3, 'dur': (end - start) / 1e3,
                      'args': {'External id': corr, 'queued': 0, 'device': 0, 'context': 1,
                               'stream': int(r['stream']), 'correlation': corr,
                               'registers per thread': int(r['registers_per_thread']),
                               'shared memory': int(r['static_smem_bytes']) +
                               int(r['dynamic_smem_bytes']),
                               'blocks per SM': grid[0] * grid[1] * grid[2] / 132.0,
                               'warps per SM': grid[0] * grid[1] * grid[2] *
                               (block[0] * block[1] * block[2] // 32) / 132.0,
                               'grid': grid, 'block': block,
                               'est. achieved occupancy %': 0}}
                flow = {'ph': 'f', 'id': corr, 'pid': 0, 'tid': int(r['stream']),
                        'ts': start / 1e3, 'cat': 'ac2g', 'name': 'ac2g', 'bp': 'e'}
            for e in (ev, flow):
                f.write(('' if first else ',\n') + '  ' + json.dumps(e))
                first = False
                n += 1
        f.write('\n  ],\n  "traceName": "%s"\n}\n' % out)
    return n


def machine():
    model = ''
    try:
        with open('/proc/cpuinfo') as f:
            m = re.search(r'model name\s*:\s*(.*)', f.read())
            model = m.group(1) if m else ''
    except OSError:
        pass
    return {'host': platform.node(), 'cpu': model, 'cpus': os.cpu_count(),
            'kernel': platform.release(), 'python': platform.python_version()}


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--quick', action='store_true', help='smaller workloads, same method')
    ap.add_argument('--out')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    scale = 1 if not a.quick else 4
    tmp = tempfile.mkdtemp(prefix='gpuwhy-bench-')
    mach = machine()
    date = datetime.datetime.utcnow().strftime('%Y-%m-%d')
    lines = ['# gpuwhy benchmarks, %s, %s' % (date, mach['host']), '',
             'Machine: %s, %d CPUs, Linux %s. GPU: none; capture runs on gpusim, the simulated '
             'GPU (a test double): overhead ratios measure gpuwhy\'s own host-side cost, not a '
             'GPU run.' % (mach['cpu'], mach['cpus'], mach['kernel']), '']

    # capture overhead
    print('capture overhead (%d alternated runs each) ...' % a.reps, file=sys.stderr)
    rows = [
        overhead(build, tmp, 'tiny_kernels', ['--iters', str(20000 // scale)],
                 {'GPUSIM_KERNEL_US': 'tiny_=1'}, a.reps),
        overhead(build, tmp, 'sync_per_iteration',
                 ['--iters', str(2000 // scale), '--kernels', '2', '--decide-us', '0'], {},
                 a.reps),
        overhead(build, tmp, 'kv_cache_growth', ['--steps', str(4000 // scale), '--vocab', '16'],
                 {}, a.reps),
    ]
    lines += ['## Capture overhead (gpusim)', '',
              '| workload | args | without (s) | CUPTI alone (s) | with gpuwhy (s) | ratio '
              '| CUPTI alone / without | gpuwhy / CUPTI alone |',
              '| --- | --- | --- | --- | --- | --- | --- | --- |']
    for r in rows:
        lines.append('| %s | `%s` | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |' % (
            r['workload'], r['args'], r['plain_s'], r['floor_s'], r['gpuwhy_s'], r['ratio'],
            r['floor_s'] / r['plain_s'], r['gpuwhy_s'] / r['floor_s']))
    lines += ['', 'Wall time of the whole process, median of %d runs each, without, under '
              'libcupti-floor.so and with gpuwhy alternated. "CUPTI alone" is the simulated '
              'CUPTI configured as gpuwhy configures it, with empty handlers '
              '(benchmarks/cupti-floor.c): the ratio splits into its cost and gpuwhy\'s own. '
              'tiny_kernels is launch-bound (3 one-block kernels an iteration); '
              'sync_per_iteration (2 kernels, a reduction and a 4-byte read-back a step) is '
              'sync-heavy; kv_cache_growth (a cudaMalloc and 3 kernels a step) is '
              'allocation-heavy.' % a.reps, '']

    # writer micro-benchmark
    bt = os.path.join(build, 'benchmarks', 'bench-trace')
    if os.path.exists(bt):
        print('bench-trace --quick ...', file=sys.stderr)
        _, _, out = run_timed([bt, '--quick'], dict(os.environ))
        lines += ['## Trace writer and reader (bench-trace --quick, synthetic records)', '',
                  '```', out.decode().rstrip(), '```', '']

    # the other micro-benchmarks, each printed as it reports itself
    micro = [
        ('Report: launches analysed per second on one core, memory per event '
         '(bench-report, synthetic trace)', ['benchmarks', 'bench-report'],
         ['--quick'] if a.quick else []),
        ('Capture: one callback pair and one stack capture (bench-capture-cost)',
         ['benchmarks', 'bench-capture-cost'], []),
        ('The simulated GPU itself: launches per second at GPUSIM_LAUNCH_US=0 '
         '(bench-gpusim-launch)', ['tests', 'gpusim', 'bench', 'bench-gpusim-launch'], []),
    ]
    for title, rel, args in micro:
        exe = os.path.join(build, *rel)
        if not os.path.exists(exe):
            continue
        print('%s ...' % rel[-1], file=sys.stderr)
        menv = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, 'tests', 'gpusim'))
        menv.pop('LD_PRELOAD', None)
        _, _, out = run_timed([exe] + args, menv)
        lines += ['## ' + title, '', '```', out.decode().rstrip(), '```', '']

    # where the launching thread's capture cost goes, in instructions (needs valgrind)
    split = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'capture-split.sh')
    if shutil.which('valgrind'):
        print('capture-split.sh ...', file=sys.stderr)
        _, _, out = run_timed([split, build, '2000' if a.quick else '5000'], dict(os.environ))
        lines += ['## Capture: the launching thread\'s added instructions per launch '
                  '(capture-split.sh, callgrind)', '', '```', out.decode().rstrip(), '```', '']

    # a real trace: bytes per launch, report speed and memory, Chrome JSON size
    print('capturing a tiny-kernel trace ...', file=sys.stderr)
    iters = 100000 // scale
    trace = os.path.join(tmp, 'big.trace.zst')
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, 'tests', 'gpusim'),
               GPUSIM_KERNEL_US='tiny_=1', GPUWHY_QUIET='1', GPUWHY_OUTPUT=trace,
               LD_PRELOAD=os.path.join(build, 'lib', 'libgpuwhy.so'))
    run_timed([os.path.join(build, 'tests', 'workloads', 'tiny_kernels'), '--iters',
               str(iters)], env)
    launches = 1 + 3 * iters
    tbytes = os.path.getsize(trace)
    report = os.path.join(build, 'tools', 'gpuwhy-report')
    renv = dict(os.environ)
    renv.pop('LD_PRELOAD', None)
    rep_s, rep_rss = [], []
    for _ in range(3):
        s, rss, out = run_timed([report, '--json', trace], renv)
        rep_s.append(s)
        rep_rss.append(rss)
    rj = json.loads(out)
    counted = rj.get('counts', {}).get('launches')
    dropped = rj.get('trace', {}).get('dropped_records')
    dump = os.path.join(tmp, 'big.dump')
    with open(dump, 'w') as f:
        subprocess.check_call([report, '--dump', trace], stdout=f, env=renv)
    cj = os.path.join(tmp, 'big.chrome.json')
    events = chrome_json(dump, cj)
    cbytes = os.path.getsize(cj)
    with open(cj, 'rb') as f:
        gz = len(gzip.compress(f.read(), 6))
    med = statistics.median(rep_s)
    # the trace reader and the decoder on this capture's records (real thread ids, interned
    # ids and API ids take more bytes than the synthetic loop's)
    bt = os.path.join(build, 'benchmarks', 'bench-trace')
    read_line = decode_line = '(bench-trace not built)'
    if os.path.exists(bt):
        _, _, o = run_timed([bt, '--read', trace], renv)
        read_line = o.decode().strip()
        _, _, o = run_timed([bt, '--decode', trace], renv)
        decode_line = o.decode().strip()
    lines += ['## A real capture: tiny_kernels --iters %d on gpusim (%d launches)' % (
        iters, launches), '',
        '| figure | value |', '| --- | --- |',
        '| trace bytes | %d |' % tbytes,
        '| bytes per launch (whole file: header, modules, stacks included) | %.2f |' % (
            tbytes / launches),
        '| gpuwhy-report --json, median of 3 | %.3f s |' % med,
        '| report launches/s | %.2f M |' % (launches / med / 1e6),
        '| report peak RSS | %.1f MiB |' % (max(rep_rss) / 1024),
        '| launches the report counted (of %d) | %s |' % (launches, counted),
        '| records capture dropped (counted in the trace) | %s |' % dropped,
        '| Chrome trace JSON, Kineto layout (%d events) | %d bytes |' % (events, cbytes),
        '| Chrome trace JSON gzip -6 | %d bytes |' % gz,
        '| Chrome JSON / gpuwhy trace | %.0fx (gzip: %.0fx) |' % (cbytes / tbytes, gz / tbytes),
        '', 'The Chrome trace holds the same API and kernel records, written the way '
        'torch.profiler exports them: one runtime event per call, one kernel event per '
        'kernel with its launch arguments, and the ac2g flow pair per correlation id.', '',
        'The trace reader and the decoder alone on this capture (bench-trace --read / '
        '--decode):', '', '```', read_line, decode_line, '```', '']

    text = '\n'.join(lines) + '\n'
    out = a.out or os.path.join(ROOT, 'benchmarks', 'results', '%s-%s.md' % (
        date, re.sub(r'[^A-Za-z0-9_.-]', '_', mach['host'])))
    with open(out, 'w') as f:
        f.write(text)
    print(text)
    print('written to %s' % out, file=sys.stderr)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return 0


if __name__ == '__main__':
    sys.exit(main())
