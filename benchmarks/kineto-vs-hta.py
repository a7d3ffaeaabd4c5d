#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report against Holistic Trace Analysis on the same torch.profiler traces, side by side.

For each trace (each file of --traces alone, and the DLRM ranks together as one job) this runs,
alternating, --runs times each: `gpuwhy-report --json TRACE` and HTA's load + temporal
breakdown + idle time breakdown (TraceAnalysis, get_temporal_breakdown,
get_idle_time_breakdown; HTA installed from PyPI into a venv by this script, never a CI
dependency). Each is a process of its own: wall time to the finished report, CPU time (user +
system) and peak RSS (GNU time), medians over the runs; then the ratios. Next: the kineto
source's JSON throughput on one core (bench-kineto, uncompressed JSON), and a synthetic trace
of about --big-gb GB (a real one repeated with shifted times and ids, written here) reported
with its peak RSS, against the same trace once.
usage: benchmarks/kineto-vs-hta.py [--build build] [--runs 3] [--big-gb 1] [--hta-big]
writes benchmarks/results/<date>-<host>-kineto.md (or --out) and prints it.
"""
import argparse
import datetime
import glob
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HTA_VERSION = '0.5.0'
TIME = '/usr/bin/time'  # GNU time (Debian package "time")
HTA_RUNNER = r'''
import sys, time, resource
t0 = time.time()
from hta.trace_analysis import TraceAnalysis
t1 = time.time()
a = TraceAnalysis(trace_dir=sys.argv[1])
t2 = time.time()
a.get_temporal_breakdown(visualize=False)
a.get_idle_time_breakdown(visualize=False)
t3 = time.time()
print("HTA-PHASES import=%.3f load=%.3f analyses=%.3f" % (t1 - t0, t2 - t1, t3 - t2))
'''


def run(argv, env=None, timeout=None):
    """Runs argv under GNU time; returns (exit status, wall s, cpu s, peak RSS MiB, output).
    GNU time, not wait4 here: a child forked from this Python process would count this
    process's resident set (copied or shared before its exec) as its own peak."""
    with tempfile.NamedTemporaryFile('r') as t:
        t0 = time.monotonic()
        try:
            p = subprocess.run([TIME, '-f', '%e %U %S %M', '-o', t.name] + argv, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout)
            code, out = p.returncode, p.stdout.decode(errors='replace')
        except subprocess.TimeoutExpired:
            return -1, timeout, timeout, 0, ''
        wall = time.monotonic() - t0
        _, user, system, rss = t.read().split()[-4:]
    # GNU time counts CPU in hundredths: a run under that is given half of one
    return code, wall, max(float(user) + float(system), 0.005), int(rss) / 1024, out


def ensure_hta(venv):
    py = os.path.join(venv, 'bin', 'python')
    if os.path.exists(py) and subprocess.run(
            [py, '-c', 'import hta'], capture_output=True).returncode == 0:
        return py
    print(f'installing HolisticTraceAnalysis=={HTA_VERSION} into {venv}', file=sys.stderr)
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    subprocess.run([py, '-m', 'pip', 'install', '-q', f'HolisticTraceAnalysis=={HTA_VERSION}'],
                   check=True)
    return py


def generate_big(src, dst, target_bytes):
    """A trace of about target_bytes: src's events repeated, each copy after the previous one
    (ts + k * (span + 1 ms)), with correlation and External ids moved past the previous copy's,
    so the copies never overlap or join each other's calls."""
    with gzip.open(src, 'rb') if src.endswith('.gz') else open(src, 'rb') as f:
        doc = json.load(f)
    events = doc['traceEvents']
    times = [e['ts'] for e in events if isinstance(e.get('ts'), (int, float))]
    t0, t1 = min(times), max(e['ts'] + e.get('dur', 0) for e in events
                             if isinstance(e.get('ts'), (int, float)))
    shift_t = int(t1 - t0) + 1000
    corrs = [e.get('args', {}).get('correlation', 0) for e in events]
    shift_c = max(c for c in corrs if isinstance(c, int)) + 1
    one = sum(len(json.dumps(e)) + 2 for e in events)
    copies = max(1, round(target_bytes / one))
    top = {k: v for k, v in doc.items() if k != 'traceEvents'}
    with open(dst, 'w') as out:
        out.write(json.dumps(top)[:-1] + ', "traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in events:
                e2 = dict(e)
                if isinstance(e2.get('ts'), (int, float)):
                    e2['ts'] = e2['ts'] + k * shift_t
                a = e2.get('args')
                if isinstance(a, dict) and ('correlation' in a or 'External id' in a):
                    a = dict(a)
                    for key in ('correlation', 'External id', 'external id'):
                        if isinstance(a.get(key), int) and a[key] > 0:
                            a[key] += k * shift_c
                    e2['args'] = a
                if e2.get('ph') in ('s', 'f') and isinstance(e2.get('id'), int):
                    e2['id'] += k * shift_c
                out.write(('' if first else ',\n') + json.dumps(e2))
                first = False
        out.write('\n]}\n')
    return copies, len(events) * copies


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--traces', default=os.path.join(ROOT, 'tests', 'data', 'real', 'kineto'))
    ap.add_argument('--venv', help='where HTA goes (default BUILD/hta-venv)')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--big-gb', type=float, default=1.0)
    ap.add_argument('--big-source', default='kineto_v100dgxs_resnet50_nw0.json.gz')
    ap.add_argument('--hta-big', action='store_true', help='run HTA on the big trace too')
    ap.add_argument('--hta-timeout', type=float, default=1800)
    ap.add_argument('--out')
    a = ap.parse_args()
    if not os.access(TIME, os.X_OK):
        sys.exit(f'kineto-vs-hta: needs GNU time at {TIME} (apt-get install time)')
    report = os.path.join(a.build, 'tools', 'gpuwhy-report')
    bench = os.path.join(a.build, 'benchmarks', 'bench-kineto')
    hta_py = ensure_hta(a.venv or os.path.join(a.build, 'hta-venv'))
    env = dict(os.environ, PYTHONWARNINGS='ignore')
    lines = []

    def say(s=''):
        print(s, flush=True)
        lines.append(s)

    host = platform.node()
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo')
                if l.startswith('model name')), platform.processor())
    mem_gb = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30
    say(f'# gpuwhy-report against HTA {HTA_VERSION} on torch.profiler traces')
    say()
    load = ' '.join(f'{x:.1f}' for x in os.getloadavg())
    say(f'{datetime.date.today()} on {host}: {cpu}, {os.cpu_count()} CPUs, {mem_gb:.0f} GiB, '
        f'{platform.system()} {platform.release()}, load average {load} at the start. `benchmarks/kineto-vs-hta.py --runs '
        f'{a.runs}`: each side a process of its own, alternating, medians of {a.runs} runs; '
        f'CPU = user + system time; RSS = peak resident set (GNU time). HTA = TraceAnalysis '
        f'load + get_temporal_breakdown + get_idle_time_breakdown, Python start-up included '
        f'(its own phases in the last column).')
    say()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(os.path.basename(p), [p]) for p in sorted(glob.glob(os.path.join(a.traces,
                                                                                '*.json.gz')))]
        ranks = sorted(glob.glob(os.path.join(a.traces, 'dlrm-8rank', '*.json.gz')))
        if ranks:
            jobs.append((f'dlrm-8rank ({len(ranks)} files)', ranks))
        say('| trace | MB (gz) | gpuwhy wall s | HTA wall s | wall ratio | gpuwhy CPU s | '
            'HTA CPU s | CPU ratio | gpuwhy RSS MiB | HTA RSS MiB | RSS ratio | HTA phases |')
        say('|---|---|---|---|---|---|---|---|---|---|---|---|')
        for name, paths in jobs:
            d = os.path.join(tmp, 'job')
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            for p in paths:
                os.symlink(os.path.abspath(p), os.path.join(d, os.path.basename(p)))
            mb = sum(os.path.getsize(p) for p in paths) / 1e6
            g_rows, h_rows = [], []
            for _ in range(a.runs):
                g_rows.append(run([report, '--json'] + paths))
                h_rows.append(run([hta_py, '-c', HTA_RUNNER, d], env=env,
                                  timeout=a.hta_timeout))
            g = [statistics.median(r[i] for r in g_rows) for i in (1, 2)] + [
                max(r[3] for r in g_rows)]
            h = [statistics.median(r[i] for r in h_rows) for i in (1, 2)] + [
                max(r[3] for r in h_rows)]
            phases = next((l.split(' ', 1)[1] for l in h_rows[-1][4].splitlines()
                           if l.startswith('HTA-PHASES')), 'failed')
            if any(r[0] for r in g_rows) or any(r[0] for r in h_rows):
                phases += ' (a run failed: ' + ','.join(
                    str(r[0]) for r in g_rows + h_rows) + ')'
            say(f'| {name} | {mb:.2f} | {g[0]:.3f} | {h[0]:.2f} | {h[0] / g[0]:.0f}x | '
                f'{g[1]:.3f} | {h[1]:.2f} | {h[1] / max(g[1], 1e-3):.0f}x | {g[2]:.1f} | '
                f'{h[2]:.0f} | {h[2] / g[2]:.0f}x | {phases} |')
        say()

        # JSON throughput of the source on one core: the larger traces, uncompressed.
        plain = []
        for name, paths in jobs:
            if len(paths) == 1 and os.path.getsize(paths[0]) > 500000:
                out = os.path.join(tmp, name[:-3])
                with gzip.open(paths[0], 'rb') as src, open(out, 'wb') as dst:
                    shutil.copyfileobj(src, dst)
                plain.append(out)
        say('JSON throughput on one core (`bench-kineto`, uncompressed JSON, thread CPU time, '
            'best of 7): yajl tokenizing the file with empty callbacks, and the kineto source '
            'yielding every record (the analysis not included).')
        say()
        p = subprocess.run([bench] + plain, capture_output=True, text=True)
        say('```')
        for l in p.stdout.strip().splitlines():
            say(l)
        say('```')
        say()

        if a.big_gb > 0:
            src = os.path.join(a.traces, a.big_source)
            big = os.path.join(tmp, 'big.json')
            copies, events = generate_big(src, big, a.big_gb * 1e9)
            once = os.path.join(tmp, 'once.json')
            generate_big(src, once, 1)
            size = os.path.getsize(big)
            say(f'Synthetic trace: {a.big_source} repeated {copies} times with shifted times '
                f'and ids, {size / 1e9:.2f} GB of JSON, {events} events.')
            say()
            say('| input | GB | wall s | CPU s | MB/s (CPU) | peak RSS MiB | RSS per GB of JSON |')
            say('|---|---|---|---|---|---|---|')
            for label, path in (('the trace once', once), ('the synthetic trace', big)):
                code, wall, cpu_s, rss, out = run([report, '--json', path])
                gb = os.path.getsize(path) / 1e9
                say(f'| {label} (gpuwhy-report --json){"" if code == 0 else " FAILED"} | '
                    f'{gb:.3f} | {wall:.2f} | {cpu_s:.2f} | {gb * 1e3 / cpu_s:.0f} | '
                    f'{rss:.0f} | {rss / gb:.0f} MiB |')
            if a.hta_big:
                d = os.path.join(tmp, 'bigdir')
                os.makedirs(d)
                os.symlink(big, os.path.join(d, 'big.json'))
                code, wall, cpu_s, rss, out = run([hta_py, '-c', HTA_RUNNER, d], env=env,
                                                  timeout=a.hta_timeout)
                phases = next((l.split(' ', 1)[1] for l in out.splitlines()
                               if l.startswith('HTA-PHASES')), f'did not finish (exit {code})')
                say(f'| the synthetic trace (HTA) | {size / 1e9:.3f} | {wall:.2f} | {cpu_s:.2f} | '
                    f'{size / 1e6 / cpu_s:.0f} | {rss:.0f} | {rss / (size / 1e9):.0f} MiB '
                    f'({phases}) |')
            say()
    say('Load average at the end: ' + ' '.join(f'{x:.1f}' for x in os.getloadavg()) + '.')
    out = a.out or os.path.join(ROOT, 'benchmarks', 'results',
                                f'{datetime.date.today()}-{host}-kineto.md')
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print(f'written: {out}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
