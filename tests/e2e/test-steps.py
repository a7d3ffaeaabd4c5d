#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Steps and `gpuwhy diff`: NVTX ranges captured, the step table, two runs compared.

  capture    steps_nvtx (tests/e2e/steps) on gpusim under libgpuwhy.so, as NVTX's injection
             library: every range of the program is a RANGE record (push/pop with its depth,
             start/end, a domain's registered name), on the thread that launched the kernels
  table      one step made slow on purpose (a device sync, then host work): the step table finds
             it and names host_work after cudaDeviceSynchronize at its line; every step's
             compute is exactly its K gemms
  diff       the same program with and without its per-step read-back (--sync 1 / 0): host_sync
             moves by the amount the parameters bound, the read-back site is gone; per run with
             --steps ''
  real       the ResNet-50 torch.profiler traces (0 and 4 data-loader workers): ProfilerStep#N
             ranges give the steps, checked against the JSON; host_work falls in the diff; the
             annotations of every real Kineto trace are RANGE records
  nsys       the NVTX_EVENTS of the real Nsight Systems export, against sqlite3
  cli        bad operands and patterns: one line, exit 2; a missing input: exit 1

gpusim is a test double: its durations come from a cost model and are never GPU measurements.
Host times are real and, on a loaded machine, long: every check below holds for any host delay
(a bound from the program's parameters, not a tolerance around a measured value).
"""
import argparse
import decimal
import glob
import gzip
import json
import lzma
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

from checks import FAILS, expect, favoured

ARGS = None
K = 4  # gemms a step (steps_nvtx --kernels)
GEMM_US = 1000  # GPUSIM_KERNEL_US="gemm=1000"
DECIDE_US = 1000  # steps_nvtx --decide-us


def run_workload(trace, args):
    env = dict(os.environ)
    env.update(LD_LIBRARY_PATH=os.path.join(ARGS.build, 'tests/gpusim'),
               LD_PRELOAD=os.path.join(ARGS.build, 'lib/libgpuwhy.so'), GPUWHY_QUIET='1',
               GPUWHY_OUTPUT=trace, GPUSIM_KERNEL_US='gemm=%d' % GEMM_US)
    env.pop('NVTX_INJECTION64_PATH', None)  # the constructor names the library itself
    p = subprocess.run([ARGS.workload, '--kernels', str(K), '--decide-us', str(DECIDE_US)] + args,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=300, preexec_fn=favoured)
    return expect(p.returncode == 0, 'steps_nvtx %s exits 0 (%s)' % (' '.join(args),
                                                                    p.stderr.strip()[-300:]))


def report_json(*argv):
    p = subprocess.run([ARGS.report, '--json', *argv], capture_output=True, text=True,
                       timeout=300)
    return json.loads(p.stdout) if p.returncode == 0 else None


def dump(path):
    """The records of --dump as (type, {field: value}); values stay strings."""
    p = subprocess.run([ARGS.report, '--dump', path], capture_output=True, text=True, timeout=300)
    out = []
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(' ')
        fields = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', rest))
        out.append((kind, {k: v[1:-1] if v.startswith('"') else v for k, v in fields.items()}))
    return out


def diff(*argv, as_json=True):
    """gpuwhy diff ARGV: (its JSON document or None, the process)."""
    p = subprocess.run([ARGS.gpuwhy, 'diff'] + (['--json'] if as_json else []) + list(argv),
                       capture_output=True, text=True, timeout=300)
    if as_json:
        return json.loads(p.stdout) if p.returncode == 0 else None, p
    return None, p


def source_line(pattern, after=None):
    """The line of the first match of pattern in steps_nvtx.cu (after a line matching after)."""
    seen = after is None
    with open(ARGS.workload_source) as f:
        for n, line in enumerate(f, 1):
            seen = seen or (after is not None and re.search(after, line))
            if seen and re.search(pattern, line):
                return n
    return None


def check_capture(tmp):
    trace = os.path.join(tmp, 'capture.trace.zst')
    steps = 5
    if not run_workload(trace, ['--steps', str(steps)]):
        return
    recs = dump(trace)
    strings = {(r['kind'], r['id']): r['text'] for t, r in recs if t == 'STRING'}
    ranges = [r for t, r in recs if t == 'RANGE']
    api_tids = {r['tid'] for t, r in recs if t == 'API'}
    named = lambda r: r['name'] or strings.get(('4', r['name_id']))
    by_name = {}
    for r in ranges:
        by_name.setdefault(named(r), []).append(r)
    expect(len(ranges) == 2 * steps + 2,
           'capture: %d RANGE records, want %d (steps, forwards, setup, allocate)'
           % (len(ranges), 2 * steps + 2))
    for i in range(steps):
        s = by_name.get('step %d' % i, [])
        expect(len(s) == 1 and s[0]['kind'] == '1' and s[0]['depth'] == '0',
               'capture: "step %d" is one push/pop range at depth 0' % i)
    fw = by_name.get('forward', [])
    expect(len(fw) == steps and all(r['depth'] == '1' and r['kind'] == '1' for r in fw),
           'capture: %d "forward" ranges at depth 1' % len(fw))
    inside = sum(any(int(s['start_ns']) <= int(f['start_ns']) and
                     int(f['end_ns']) <= int(s['end_ns'])
                     for n, rs in by_name.items() if n and n.startswith('step ') for s in rs)
                 for f in fw)
    expect(inside == len(fw), 'capture: each "forward" lies inside a step (%d)' % inside)
    setup = by_name.get('setup', [])
    expect(len(setup) == 1 and setup[0]['name'] == '' and
           strings.get(('5', setup[0]['domain_id'])) == 'gpuwhy-test',
           'capture: "setup" is a registered name (STRING kind 4) of domain gpuwhy-test (kind 5)')
    alloc = by_name.get('allocate', [])
    expect(len(alloc) == 1 and alloc[0]['kind'] == '2', 'capture: "allocate" is a start/end range')
    expect({r['tid'] for r in ranges} <= api_tids and len(api_tids) == 1,
           'capture: the ranges are on the thread that made the CUDA calls')


def check_table(tmp):
    trace = os.path.join(tmp, 'table.trace.zst')
    steps, slow, slow_us = 12, 7, 50000
    if not run_workload(trace, ['--steps', str(steps), '--slow-step', str(slow), '--slow-us',
                                str(slow_us)]):
        return
    d = report_json(trace)
    if not expect(d is not None, 'table: gpuwhy-report --json reads the trace'):
        return
    st, ss = d['steps'], d['step_summary']
    expect([s['name'] for s in st] == ['step %d' % i for i in range(steps)],
           'table: %d steps, named and ordered as the program made them' % len(st))
    # each step's compute is its K gemms (gpusim times kernels exactly), whatever the host did
    comp = [s['device_ns'] * s['breakdown']['compute'] for s in st]
    expect(all(abs(c - K * GEMM_US * 1e3) < 1e3 for c in comp),
           'table: every step\'s compute is %d us (%s)' % (K * GEMM_US,
                                                         [round(c / 1e3, 1) for c in comp]))
    expect(0.9 < ss['sm_share'] <= 1 + 1e-9,
           'table: the steps hold the window but the fills before them (%.4f)' % ss['sm_share'])
    w = ss['slowest'][0] if ss['slowest'] else {}
    line = source_line(r'cudaDeviceSynchronize\(\)', after=r's == slow_step')
    expect(w.get('name') == 'step %d' % slow, 'table: the slowest step is step %d (%s)'
           % (slow, w.get('name')))
    # it did slow_us of host work after its sync on top of a normal step: the median is a
    # normal step, so it is over the median by slow_us less what a busy host adds to the median
    expect(w.get('over_median_ns', 0) >= 0.5 * slow_us * 1e3,
           'table: %.1f ms over the median (>= %.1f)' % (w.get('over_median_ns', 0) / 1e6,
                                                          0.5 * slow_us / 1e3))
    expect(w.get('bucket') == 'host_work' and w.get('what') == 'cudaDeviceSynchronize' and
           'steps_nvtx.cu:%d' % line in (w.get('site') or ''),
           'table: what grew is host_work after cudaDeviceSynchronize at steps_nvtx.cu:%d (%s, '
           '%s, %s)' % (line, w.get('bucket'), w.get('what'), w.get('site')))
    text = subprocess.run([ARGS.report, trace], capture_output=True, text=True).stdout
    expect(re.search(r'step %d: .* host_work \+.* after cudaDeviceSynchronize at .*'
                     r'steps_nvtx\.cu:%d' % (slow, line), text) is not None,
           'table: the text report names step %d and its cause' % slow)
    print('\n'.join(l for l in text.splitlines() if l.startswith(('Steps', '  '))
                    and 'step' in l.lower())[:3000])


def check_diff(tmp):
    steps = 30
    before, after = os.path.join(tmp, 'sync1.trace.zst'), os.path.join(tmp, 'sync0.trace.zst')
    if not (run_workload(before, ['--steps', str(steps), '--sync', '1']) and
            run_workload(after, ['--steps', str(steps), '--sync', '0'])):
        return
    d, p = diff(before, after)
    if not expect(d is not None and d['schema'] == 'gpuwhy-diff/1',
                  'diff: gpuwhy-diff/1 (%s)' % p.stderr.strip()):
        return
    b, a = d['before'], d['after']
    expect(d['per'] == 'step' and b['steps'] == steps and a['steps'] == steps,
           'diff: per step, %d steps each' % steps)
    for side in (b, a):
        expect(abs(side['device_ns']['compute'] - K * GEMM_US * 1e3) < 1e3,
               'diff: compute is %d us a step on both sides' % (K * GEMM_US))
    # no synchronizing call inside any step without the read-back
    expect(a['breakdown']['host_sync'] == 0 and d['delta']['breakdown']['host_sync'] < 0,
           'diff: host_sync falls to 0 (%.3f -> %.3f)' % (b['breakdown']['host_sync'],
                                                           a['breakdown']['host_sync']))
    # with it, each read-back waited for the K ms queued before it (the debt), and the gap
    # after it lasts at least the host's decision: host_sync is min(gap, debt) there, so
    # between DECIDE_US and K ms for each of the steps after the first
    hs = b['device_ns']['host_sync']
    low, high = 0.95 * DECIDE_US * 1e3 * (steps - 1) / steps, K * GEMM_US * 1e3 * 1.01
    expect(low <= hs <= high, 'diff: host_sync was %.3f ms a step, in [%.3f, %.3f]'
           % (hs / 1e6, low / 1e6, high / 1e6))
    expect(abs(d['delta']['device_ns']['host_sync'] + hs) < 1,
           'diff: it moves by all of it (%.3f ms a step)' % (d['delta']['device_ns']['host_sync']
                                                            / 1e6))
    sync = [s for s in d['sites'] if s['kind'] == 'sync' and s['name'] == 'cudaMemcpy']
    expect(len(sync) == 1 and sync[0]['before_count'] == 1 and sync[0]['after_count'] == 0 and
           'steps_nvtx.cu' in (sync[0]['site'] or ''),
           'diff: the read-back site, once a step before, is gone (%s)' % sync)
    expect('host_sync' in d['verdict'], 'diff: the verdict names host_sync: %s' % d['verdict'])
    _, t = diff(before, after, as_json=False)
    expect(t.returncode == 0 and 'Verdict:' in t.stdout and 'cudaMemcpy' in t.stdout,
           'diff: the text names the verdict and the site')
    print(t.stdout)
    page = os.path.join(tmp, 'diff.html')
    _, h = diff('--html', page, before, after, as_json=False)
    ok = h.returncode == 0 and os.path.exists(page)
    if ok:
        html = open(page).read()
        m = re.search(r'<script id="gw-data" type="application/json">(.*?)</script>', html, re.S)
        data = json.loads(m.group(1)) if m else {}
        ok = data.get('diff', {}).get('verdict') == d['verdict']
    expect(ok, 'diff: --html embeds the same document')
    r, _ = diff('--steps', '', before, after)
    expect(r is not None and r['per'] == 'run' and r['after']['breakdown']['host_sync'] == 0 and
           r['before']['breakdown']['host_sync'] > 0,
           'diff: without steps (--steps \'\') the runs compare as wholes')


def kineto_events(path, exact=False):
    with gzip.open(path) as f:
        d = json.load(f, parse_float=decimal.Decimal) if exact else json.load(f)
    return d['traceEvents'] if isinstance(d, dict) else d


def check_real(tmp):
    data = ARGS.kineto
    nw0 = os.path.join(data, 'kineto_v100dgxs_resnet50_nw0.json.gz')
    nw4 = os.path.join(data, 'kineto_v100dgxs_resnet50_nw4.json.gz')
    for path in (nw0, nw4):
        # microseconds as the file writes them, exactly (no float): the steps' own times
        evs = kineto_events(path, exact=True)
        want = sorted((int(e['ts'] * 1000), e['name'], int(e['dur'] * 1000)) for e in evs
                      if e.get('ph') == 'X' and str(e.get('name', '')).startswith('ProfilerStep#'))
        r = report_json(path)
        got = [(s['start_ns'], s['name'], s['duration_ns']) for s in r['steps']] if r else []
        rel = lambda v: [(t - v[0][0], n, u) for t, n, u in v] if v else v
        expect(rel(got) == rel(want) and len(want) == 6,
               '%s: the steps are its %d ProfilerStep#N events (names, durations, spacing)'
               % (os.path.basename(path), len(want)))
    d, p = diff(nw0, nw4)
    if expect(d is not None, 'real: gpuwhy diff reads both (%s)' % p.stderr.strip()):
        expect(d['per'] == 'step' and d['before']['steps'] == 6 and d['after']['steps'] == 6,
               'real: compared per step, 6 and 6')
        expect(d['delta']['breakdown']['host_work'] < 0 and
               d['delta']['device_ns']['host_work'] < 0,
               'real: host_work falls with 4 loader workers (%+.1f points)'
               % (d['delta']['breakdown']['host_work'] * 100))
        _, t = diff(nw0, nw4, as_json=False)
        print(t.stdout)
    # every annotation of the real traces is a RANGE record: host ones of their thread, GPU
    # ones on the GPU's timeline
    for path in sorted(glob.glob(os.path.join(data, '*.json.gz'))):
        evs = kineto_events(path)
        host = sum(1 for e in evs if e.get('ph') == 'X' and (
            e.get('cat') == 'user_annotation' or
            (e.get('cat') in ('cpu_op', 'Operator') and
             str(e.get('name', '')).startswith('ProfilerStep#') and
             len(str(e.get('name'))) > 13)))
        gpu = sum(1 for e in evs if e.get('ph') == 'X' and e.get('cat') == 'gpu_user_annotation')
        recs = [r for t, r in dump(path) if t == 'RANGE']
        got = (sum(r['kind'] == '1' for r in recs), sum(r['kind'] == '4' for r in recs))
        expect(got == (host, gpu), '%s: RANGE records host %d, GPU %d (want %d, %d)'
               % (os.path.basename(path), got[0], got[1], host, gpu))


def check_nsys(tmp):
    src = os.path.join(ARGS.nsys, 'nsys_a100_saxpy_mpi.sqlite.xz')
    db = os.path.join(tmp, 'saxpy.sqlite')
    with lzma.open(src) as f, open(db, 'wb') as o:
        o.write(f.read())
    c = sqlite3.connect(db)
    want = dict(c.execute('SELECT eventType, count(*) FROM NVTX_EVENTS WHERE eventType IN '
                          '(34, 59, 60) AND (eventType = 34 OR end IS NOT NULL) '
                          'GROUP BY eventType').fetchall())
    saxpy = c.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND "
                      "text = 'saxpy'").fetchone()[0]
    domains = dict(c.execute('SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75'))
    c.close()
    recs = dump(db)
    ranges = [r for t, r in recs if t == 'RANGE']
    got = {59: sum(r['kind'] == '1' for r in ranges), 60: sum(r['kind'] == '2' for r in ranges),
           34: sum(r['kind'] == '3' for r in ranges)}
    expect(all(got[k] == want.get(k, 0) for k in got),
           'nsys: RANGE records by kind %s, NVTX_EVENTS %s' % (got, want))
    dom = {r['text'] for t, r in recs if t == 'STRING' and r['kind'] == '5'}
    expect(dom == set(domains.values()), 'nsys: the domains %s' % sorted(dom))
    r = report_json('--steps', '^saxpy$', db)
    expect(r is not None and r['step_summary']['count'] == saxpy,
           'nsys: --steps ^saxpy$ finds its %d ranges' % saxpy)


def check_cli(tmp):
    one = os.path.join(ARGS.kineto, 'hta_a100_event_sync.json.gz')
    for argv, code, what in [(['diff', one], 2, 'one run'),
                             (['diff', one, one, one], 2, 'three inputs, no --vs'),
                             (['diff', one, '--vs'], 2, 'nothing after --vs'),
                             (['diff', '--steps', '(', one, one], 2, 'a bad pattern'),
                             (['diff', one, os.path.join(tmp, 'missing')], 1, 'a missing input'),
                             (['diff', '--perfetto', 'x.json', one, one], 2, '--perfetto')]:
        p = subprocess.run([ARGS.gpuwhy] + argv, capture_output=True, text=True, timeout=120)
        expect(p.returncode == code and len(p.stderr.strip().splitlines()) == 1 and
               p.stderr.startswith('gpuwhy: '),
               'cli: %s: exit %d, one line (%r)' % (what, p.returncode, p.stderr.strip()))
    p = subprocess.run([ARGS.report, '--steps', '[', one], capture_output=True, text=True)
    expect(p.returncode == 2 and 'regular expression' in p.stderr,
           'cli: gpuwhy-report --steps with a bad pattern: exit 2 (%r)' % p.stderr.strip())


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--gpuwhy', required=True)
    ap.add_argument('--workload', required=True)
    ap.add_argument('--workload-source', required=True)
    ap.add_argument('--kineto', required=True)
    ap.add_argument('--nsys', required=True)
    ap.add_argument('only', nargs='*')
    ARGS = ap.parse_args()
    checks = {'capture': check_capture, 'table': check_table, 'diff': check_diff,
              'real': check_real, 'nsys': check_nsys, 'cli': check_cli}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in checks.items():
            if not ARGS.only or name in ARGS.only:
                fn(tmp)
    print('%d failed' % len(FAILS))
    return 1 if FAILS else 0


sys.exit(main())
