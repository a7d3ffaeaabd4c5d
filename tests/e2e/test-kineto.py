#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on real torch.profiler (Kineto) traces, checked against the traces themselves.

Every trace of tests/data/real/kineto (recorded by others on V100, A100, H100 and B200 GPUs) is
read here by a short JSON reader of its own, which knows only the trace format: GPU work is a
complete ("X") event of category kernel, gpu_memcpy or gpu_memset (Kernel, Memcpy, Memset in
the 2020 format) on device args.device (else pid); ts and dur are microseconds written with up
to three decimals (here Decimal, never a float), relative to baseTimeNanoseconds when the file
gives it before its events; runtime calls are cuda_runtime / cuda_driver events. From that
alone it computes each trace's counts, its window (first GPU operation's start to the last
one's end) and the exact shares of the window with a kernel running, with only copies or
memsets running, and with nothing running. gpuwhy-report --json must give the same: counts,
window.start_ns / end_ns, utilization.kernel_active, breakdown.data_transfer, and the gap
buckets (launch_overhead + host_sync + host_work, and blocked when the report has it) summing
to the idle share. Then: several ranks make one report; the format is found from the content
(.json, .json.gz, any name) or forced with --format kineto; every output mode runs; the top
idle cause reasoned out from each trace (TOP_IDLE below, with the reason) and the ResNet-50
pair (0 and 4 data-loader workers); the caching allocator's curves from the [memory] events
(recorded or not, allocated and reserved peaks); each synchronizing call's site, the innermost
user frame of the python_function spans around it. Bad input: one line naming the file, exit 1; a cut file
is read up to where it ends, with a warning.
"""
import argparse
import decimal
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zlib

from checks import FAILS, expect

A = None
TOL = 1e-9

GPU_CATS = {'kernel': 'kernel', 'gpu_memcpy': 'memcpy', 'memcpy': 'memcpy',
            'gpu_memset': 'memset', 'memset': 'memset'}
API_CATS = {'cuda_runtime', 'runtime', 'cuda_driver', 'driver'}
# CUDA's calls by what they do (CUDA Runtime and Driver API references).
LAUNCHES = {'cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaLaunchCooperativeKernel',
            'cuLaunchKernel', 'cuLaunchKernelEx', 'cuLaunchCooperativeKernel',
            'cudaGraphLaunch', 'cuGraphLaunch'}
WAITS = {'cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventSynchronize',
         'cuCtxSynchronize', 'cuStreamSynchronize', 'cuEventSynchronize'}
SYNC_COPIES = {'cudaMemcpy', 'cudaMemcpy2D', 'cudaMemcpy3D', 'cudaMemcpyToSymbol',
               'cudaMemcpyFromSymbol', 'cudaMemset', 'cuMemcpy', 'cuMemcpyHtoD', 'cuMemcpyDtoH',
               'cuMemcpyDtoD', 'cuMemsetD8', 'cuMemsetD32'}
ASYNC_COPIES = {'cudaMemcpyAsync', 'cudaMemcpy2DAsync', 'cudaMemcpy3DAsync',
                'cuMemcpyAsync', 'cuMemcpyHtoDAsync', 'cuMemcpyDtoHAsync', 'cuMemcpyDtoDAsync'}
FREES = {'cudaFree', 'cudaFreeHost', 'cuMemFree', 'cuMemFreeHost'}
GAP_BUCKETS = ('launch_overhead', 'host_sync', 'host_work', 'blocked')
KERNEL_BUCKETS = ('compute', 'bandwidth_bound', 'low_intensity', 'small_batch',
                  'dependency_chain', 'communication')

# The top idle cause each trace shows, reasoned out from the trace itself ("kernels": one of
# the causes inside kernels), with the reason.
TOP_IDLE = {
    'hta_a100_event_sync.json.gz': ('now', 'launch_overhead',
        'the host issues each of its 4 kernels and its copy only after the previous one ended '
        '(nothing is ever queued) and every gap is 30-100 us of ATen and Python between '
        'launches: starved gaps under --starve-us'),
    'hta_a100_event_sync_multistream.json.gz': ('now', 'host_work',
        'between the second and the third matmul the host makes no CUDA call for 18.8 ms '
        'while the GPU has nothing queued: 98% of the window is that one host gap'),
    'kineto_v100dgxs_resnet50_nw0.json.gz': ('now', 'host_work',
        'ResNet-50 training with 0 DataLoader workers: every step waits while the main '
        'thread decodes and augments the next batch, with nothing queued'),
    'kineto_2020_legacy_resnet50_nw0.json.gz': ('now', 'host_work',
        'the same job (0 workers) recorded with the 2020 profiler'),
    'tracelens_h100_bert-small.json.gz': ('now', 'launch_overhead',
        'BERT-small inference: 58 of 60 kernels run under 10 us and the host, launching one '
        'at a time, leaves mostly sub-100-us gaps between them'),
    'tracelens_b200_eager_trace.json.gz': ('now', 'host_work',
        'eager-mode serving: the GPU waits for the Python scheduler, gaps of more than '
        '100 us with nothing queued hold more of the window than the short ones'),
    'hta_v100_ns_resolution.json.gz': ('kernels', None,
        'a GPU-bound run (97% of the window has a kernel running): the largest idle share is '
        'inside kernels (unfilled SMs or their class), not between them'),
    'hta_a100_80g_cudagraph_rank0.json.gz': ('now', 'blocked',
        'CUDA-graph work sat queued for ~64 ms at a time with the GPU idle (its launches had '
        'returned long before): held by a wait, not per-launch latency'),
    'kineto_v100dgxs_resnet50_nw4.json.gz': ('kernels', None,
        'with 4 DataLoader workers the host gap shrinks below what the kernels leave idle'),
}
# DLRM, one step on 8 ranks: NCCL kernels (send/recv all-to-all, all-reduce) are 40-85% of
# each rank's kernel time, and for 14-59% of a rank's window they run alone on few SMs. Where
# that share is larger than the host's sub-100-us gaps between launches (ranks 0, 1, 3), the
# top cause is communication (the unfilled share while only NCCL kernels run is the
# collective's); where it is smaller (ranks 2, 6, 7: 28%, 29%, 14% against 40-47% of launch
# gaps), launch overhead stays on top; ranks 4 and 5 are within two points of a tie.
DLRM_TOP_IDLE = {
    0: ('now', 'communication', 'NCCL alone 43% of the window, launch gaps 32%'),
    1: ('now', 'communication', 'NCCL alone 59% of the window, launch gaps 23%'),
    2: ('now', 'launch_overhead', 'launch gaps 40% of the window, NCCL alone 28%'),
    3: ('now', 'communication', 'NCCL alone 50% of the window, launch gaps 24%'),
    6: ('now', 'launch_overhead', 'launch gaps 40% of the window, NCCL alone 29%'),
    7: ('now', 'launch_overhead', 'launch gaps 47% of the window, NCCL alone 14%'),
}


def report(*args, timeout=300):
    return subprocess.run([A.report] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def report_json(*args):
    p = report('--json', *args)
    if p.returncode:
        return None, p
    return json.loads(p.stdout, parse_constant=lambda c: {}['not JSON: ' + c]), p


def ns(v):
    """Microseconds as written in the JSON to integer nanoseconds, half away from zero."""
    return int((decimal.Decimal(v) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    if isinstance(doc, list):
        return doc, 0, {}
    keys = list(doc)
    base = 0
    if 'baseTimeNanoseconds' in doc and keys.index('baseTimeNanoseconds') < keys.index(
            'traceEvents'):
        base = int(doc['baseTimeNanoseconds'])
    return doc['traceEvents'], base, doc


def union(iv):
    """Total length of the union of intervals."""
    total, end = 0, None
    for s, e in sorted(iv):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def facts(path):
    """What the trace says, by this reader."""
    events, base, doc = load(path)
    f = {'kernel': 0, 'memcpy': 0, 'memset': 0, 'launches': 0, 'explicit': 0, 'copy': 0,
         'implicit': 0, 'devices': {}, 'rank': -1}
    pageable = set()
    asyncs = []
    f['mem'] = []     # (ts ns, args) of the CUDA caching allocator's [memory] events
    f['py'] = {}      # tid -> [(start, end, "file(line): function")] of python_function spans
    f['waits'] = []   # (name, tid, start, end) of the calls that wait for the GPU
    for e in events:
        if e.get('name') == '[memory]' and (e.get('args') or {}).get('Device Type') == 1:
            f['mem'].append((ns(e['ts']) + base, e['args']))
            continue
        if e.get('ph') != 'X':
            continue
        if (e.get('cat') or '').lower() == 'python_function':
            start = ns(e['ts']) + base
            f['py'].setdefault(e.get('tid'), []).append((start, start + ns(e['dur']), e['name']))
            continue
        cat = (e.get('cat') or '').lower()
        args = e.get('args') or {}
        if cat in GPU_CATS:
            kind = GPU_CATS[cat]
            f[kind] += 1
            start = ns(e['ts']) + base
            end = start + ns(e['dur'])
            d = f['devices'].setdefault(args.get('device', e.get('pid')), {'ops': []})
            d['ops'].append((start, max(start, end), kind))
            if kind == 'memcpy' and 'Pageable' in e['name']:
                pageable.add(args.get('correlation'))
        elif cat in API_CATS:
            name = e['name']
            f['launches'] += name in LAUNCHES
            f['explicit'] += name in WAITS
            f['copy'] += name in SYNC_COPIES
            f['implicit'] += name in FREES
            if name in WAITS or name in SYNC_COPIES:
                start = ns(e['ts']) + base
                f['waits'].append((name, e.get('tid'), start, start + ns(e['dur'])))
            if name in ASYNC_COPIES:
                asyncs.append(args.get('correlation'))
    # An asynchronous copy that touches pageable host memory waits for its staging.
    f['copy'] += sum(1 for c in asyncs if c in pageable)
    for d in f['devices'].values():
        ops = d['ops']
        d['start'] = min(s for s, _, _ in ops)
        d['end'] = max(e for _, e, _ in ops)
        window = d['end'] - d['start']
        kernels = union([(s, e) for s, e, k in ops if k == 'kernel'])
        busy = union([(s, e) for s, e, _ in ops])
        d['window'] = window
        d['kernel'] = kernels / window
        d['copy_only'] = (busy - kernels) / window
        d['idle'] = (window - busy) / window
    f['props'] = {p.get('id') for p in doc.get('deviceProperties', [])}
    dist = doc.get('distributedInfo') if isinstance(doc, dict) else None
    if isinstance(dist, dict) and 'rank' in dist and list(doc).index('distributedInfo') < list(
            doc).index('traceEvents'):
        f['rank'] = dist['rank']
    return f


def close(a, b):
    return abs(a - b) < TOL


def check_trace(name, f, r):
    """One trace's report against its facts."""
    (dev,) = f['devices'].values()
    c = r['counts']
    expect(c['kernels'] == f['kernel'] and c['memcpy'] == f['memcpy'] and
           c['memset'] == f['memset'],
           f"{name}: {f['kernel']} kernels, {f['memcpy']} copies, {f['memset']} memsets "
           f"(report: {c['kernels']}, {c['memcpy']}, {c['memset']})")
    expect(c['launches'] == f['launches'],
           f"{name}: {f['launches']} launch calls (report: {c['launches']})")
    expect((c['syncs_explicit'], c['syncs_copy'], c['syncs_implicit']) ==
           (f['explicit'], f['copy'], f['implicit']),
           f"{name}: synchronizing calls explicit/copy/implicit {f['explicit']}/{f['copy']}/"
           f"{f['implicit']} (report: {c['syncs_explicit']}/{c['syncs_copy']}/"
           f"{c['syncs_implicit']})")
    w = r['window']
    expect((w['start_ns'], w['end_ns']) == (dev['start'], dev['end']),
           f"{name}: window {dev['start']}..{dev['end']} ns (report: {w['start_ns']}.."
           f"{w['end_ns']})")
    b = r['breakdown']
    ka = r['utilization']['kernel_active']
    idle = sum(b.get(k, 0) for k in GAP_BUCKETS)
    expect(close(ka, dev['kernel']),
           f"{name}: a kernel runs {dev['kernel']:.6%} of the window (report: {ka:.6%})")
    expect(close(sum(b[k] for k in KERNEL_BUCKETS), dev['kernel']),
           f"{name}: the kernel buckets hold that share")
    expect(close(b['data_transfer'], dev['copy_only']),
           f"{name}: only copies run {dev['copy_only']:.6%} (report: {b['data_transfer']:.6%})")
    expect(close(idle, dev['idle']),
           f"{name}: nothing runs {dev['idle']:.6%} (report's gap buckets: {idle:.6%})")
    if f['rank'] >= 0:
        expect(r['traces'][0]['rank'] == f['rank'], f"{name}: rank {f['rank']}")


def check_memory(name, f, r):
    """The allocator's curves: recorded or not, and their peaks, from the [memory] events.

    A 2022+ event carries the allocator's own totals (Total Allocated, Total Reserved); a 2021
    one only the block's signed size, whose running sum from the first event is the allocated
    curve (a lower bound: what was allocated before the trace began is not in it). The
    device's memory is the largest of what it allocated, reserved and cudaMalloc'ed (none of
    the last in these traces)."""
    m = r['memory']
    recorded = bool(f['mem'])
    expect(m['recorded'] == recorded,
           f"{name}: memory {'recorded' if recorded else 'not recorded'} "
           f"(report: recorded {m['recorded']})")
    expect((r['quadrant']['memory'] == 'unknown') == (not recorded),
           f"{name}: the memory quadrant is unknown only when memory was not recorded "
           f"(report: {r['quadrant']['memory']})")
    if not recorded:
        # a peak of 0 there means nothing was recorded, not an empty GPU: no advice may
        # promise room for a larger batch
        room = [t for t in r.get('recommendations', []) if 'larger fits' in json.dumps(t)]
        expect(not room, f"{name}: no advice claims memory room without memory events "
                         f"(report: {room})")
        return
    if all('Total Allocated' in a for _, a in f['mem']):
        allocated = max(a['Total Allocated'] for _, a in f['mem'])
        reserved = max(a.get('Total Reserved', 0) for _, a in f['mem'])
    else:
        run = allocated = reserved = 0
        for _, a in sorted(f['mem'], key=lambda x: x[0]):
            run += a['Bytes']
            allocated = max(allocated, run)
    expect((m['allocator_allocated_peak_bytes'], m['allocator_reserved_peak_bytes']) ==
           (allocated, reserved),
           f"{name}: allocator peaks allocated {allocated} B, reserved {reserved} B (report: "
           f"{m['allocator_allocated_peak_bytes']}, {m['allocator_reserved_peak_bytes']})")
    expect(m['peak_bytes'] == max(allocated, reserved),
           f"{name}: memory peak {max(allocated, reserved)} B (report: {m['peak_bytes']})")


# Named frames that are the framework's or the runtime's (doc/design.md, Sites).
FRAMEWORK_FILES = ('site-packages/', 'dist-packages/', '/lib/python3', '<frozen ', '<string>',
                   '/torch/')


def user_frame(frame):
    """(function, line) of a python_function name 'file(line): function' that is the user's,
    else None."""
    head, _, function = frame.partition('): ')
    file, _, line = head.rpartition('(')
    if (not function or function.startswith('<built-in') or file.startswith('torch/') or
            any(x in file for x in FRAMEWORK_FILES)):
        return None
    return function, int(line) if line.isdigit() else 0


def check_sync_sites(name, f, r):
    """Each synchronizing call's site is the innermost user frame among the Python functions
    around it on its thread."""
    if not f['py']:
        return
    want = {}
    for api, tid, start, end in f['waits']:
        around = sorted((s for s in f['py'].get(tid, []) if s[0] <= start and end <= s[1]),
                        key=lambda s: (-s[0], s[1]))
        site = next((u for u in map(user_frame, (s[2] for s in around)) if u), None)
        if site:
            want.setdefault(api, set()).add(site)
    if not want:
        return
    got = [(s['api'], s['function'], s['line']) for s in r['sync_sites']
           if s['api'] in want]
    expect(bool(got) and all((fn, line) in want[api] for api, fn, line in got),
           f"{name}: synchronizing calls sit at their innermost user Python frame "
           f"{sorted(want.items())} (report: {got})")


def check_top_idle(name, r):
    rank = int(name[6]) if name.startswith('worker') else -1
    when, cause, why = TOP_IDLE.get(name, DLRM_TOP_IDLE.get(rank, (None, None, None)))
    if when == 'now':
        expect(r['top_idle_cause'] == cause,
               f"{name}: top idle cause {cause}: {why} (report: {r['top_idle_cause']})")
    elif when == 'kernels':
        expect(r['top_idle_cause'] in KERNEL_BUCKETS,
               f"{name}: the top idle cause is inside kernels: {why} "
               f"(report: {r['top_idle_cause']})")


def check_ranks(paths, facts_of):
    """Several ranks of one job make one report, a row per rank."""
    r, p = report_json(*paths)
    if not expect(r is not None, f'{len(paths)} DLRM ranks in one report (exit {p.returncode})'):
        return
    expect(len(r['traces']) == len(paths) and len(r['per_device']) == len(paths),
           f'a row and a device per rank ({len(r["traces"])}, {len(r["per_device"])})')
    ok = True
    for t, path in zip(r['traces'], paths):
        f = facts_of[path]
        (dev,) = f['devices'].values()
        b = t['breakdown']
        ok &= t['rank'] == f['rank'] and t['counts']['kernels'] == f['kernel']
        ok &= (t['start_ns'], t['end_ns']) == (dev['start'], dev['end'])
        ok &= close(b['data_transfer'], dev['copy_only'])
        ok &= close(sum(b.get(k, 0) for k in GAP_BUCKETS), dev['idle'])
        ok &= close(sum(b[k] for k in KERNEL_BUCKETS), dev['kernel'])
    expect(ok, 'each rank\'s row: its rank, kernels, window and shares, from its own file')
    budgets = [(t['end_ns'] - t['start_ns']) * d['sm_count']
               for t, d in zip(r['traces'], r['devices'])]
    ok = all(close(v, sum(bu * t['breakdown'][k] for bu, t in zip(budgets, r['traces'])) /
                   sum(budgets)) for k, v in r['breakdown'].items())
    expect(ok, 'the merged breakdown is the SM-weighted mean of the ranks')


def check_formats(tmp, gz, f):
    """The format from the content, whatever the name; --format kineto; every output."""
    plain = os.path.join(tmp, 'trace.json')
    with gzip.open(gz, 'rb') as src, open(plain, 'wb') as dst:
        dst.write(src.read())
    other = os.path.join(tmp, 'renamed.data')
    with open(plain, 'rb') as src, open(other, 'wb') as dst:
        dst.write(src.read())
    ref, _ = report_json(gz)
    for what, args in (('.json', [plain]), ('a name without .json', [other]),
                       ('--format kineto', ['--format', 'kineto', other]),
                       ('--format kineto on .json.gz', ['--format', 'kineto', gz])):
        r, p = report_json(*args)
        expect(r is not None and r['breakdown'] == ref['breakdown'] and
               r['counts'] == ref['counts'] and r['window'] == ref['window'],
               f'{what}: the same report as the .json.gz (exit {p.returncode} {p.stderr.strip()})')
    p = report('--format', 'gpuwhy', plain)
    expect(p.returncode == 1 and p.stderr.count('\n') == 1 and plain in p.stderr,
           f'--format gpuwhy on a Kineto trace: exit 1, one line ({p.stderr.strip()})')
    t = report(gz)
    expect(t.returncode == 0 and 'Where the SM-time went' in t.stdout,
           f'text report (exit {t.returncode})')
    html = os.path.join(tmp, 'page.html')
    p = report('--html', html, gz)
    expect(p.returncode == 0 and os.path.getsize(html) > 1000 and
           b'<html' in open(html, 'rb').read(4096).lower(),
           f'--html writes the page (exit {p.returncode} {p.stderr.strip()})')


def check_bad_input(tmp, gz):
    def write(name, data):
        path = os.path.join(tmp, name)
        with open(path, 'wb') as out:
            out.write(data)
        return path

    def bad(path, what, needle=''):
        p = report('--json', path, timeout=60)
        lines = p.stderr.splitlines()
        expect(p.returncode == 1 and len(lines) == 1 and
               lines[0].startswith(f'gpuwhy-report: {path}: ') and needle in lines[0] and
               p.stdout == '', f'{what}: exit 1, one line (got {p.returncode}, {lines})')

    ok_event = (b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
                b'"ts": 100, "dur": 5, "args": {"device": 0, "stream": 7}}')

    def trace(*events):
        return b'{"traceEvents": [' + b', '.join(events) + b']}'

    bad(write('hello.json', b'hello, not JSON\n'), 'not JSON')
    bad(write('empty.json', b''), 'an empty file')
    bad(write('object.json', b'{"answer": 42}'), 'JSON without traceEvents', 'traceEvents')
    bad(write('ts-string.json', trace(ok_event.replace(b'"ts": 100', b'"ts": "100"'))),
        'a kernel whose ts is a string', '"ts"')
    bad(write('dur-huge.json', trace(ok_event.replace(b'"dur": 5', b'"dur": 1e400'))),
        'a duration of 1e400 us', 'out of range')
    bad(write('ts-long.json', trace(ok_event.replace(b'"ts": 100', b'"ts": ' + b'9' * 40))),
        'a 40-digit timestamp', 'out of range')
    bad(write('no-ts.json', trace(ok_event.replace(b'"ts": 100, ', b''))),
        'a kernel without ts', 'ts')
    bad(write('grid.json', trace(ok_event.replace(b'"stream": 7', b'"stream": 7, "grid": 5'))),
        'a grid that is not a list', 'grid')
    bad(write('deep.json', b'{"traceEvents": [' + b'[' * 100000 + b']' * 100000 + b']}'),
        'JSON nested 100000 deep', 'nested')
    bad(write('neg.json', trace(ok_event.replace(b'"ts": 100', b'"ts": -3'))),
        'a negative timestamp', 'negative')

    data = open(gz, 'rb').read()
    text = gzip.decompress(data)
    bad(write('head.json.gz', data[:20]), 'a .gz cut in its first bytes')
    full, _ = report_json(gz)
    # Cut where half of the trace's kernels have been written: in the text, and in the
    # compressed bytes the shortest prefix that inflates past that point.
    at = 0
    for _ in range(full['counts']['kernels'] // 2):
        at = text.index(b'"cat": "kernel"', at) + 1
    z = zlib.decompressobj(16 + zlib.MAX_WBITS)
    inflated, gz_at = b'', 0
    while len(inflated) <= at + 2000:
        inflated += z.decompress(data[gz_at:gz_at + 256])
        gz_at += 256
    for what, name, content in (('a .gz cut half way through its kernels', 'cut.json.gz',
                                 data[:gz_at]),
                                ('a .json cut half way through its kernels', 'cut.json',
                                 text[:at + 2000])):
        r, p = report_json(write(name, content))
        if expect(r is not None, f'{what}: read up to where it ends (exit {p.returncode} '
                                 f'{p.stderr.strip()})'):
            expect(r['trace']['truncated'] and any('cut file' in w for w in r['warnings']),
                   f'{what}: "truncated": true, with a warning')
            expect(0 < r['counts']['kernels'] < full['counts']['kernels'],
                   f"{what}: some but not all kernels ({r['counts']['kernels']} of "
                   f"{full['counts']['kernels']})")


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('--report', required=True)
    ap.add_argument('--data', required=True, help='tests/data/real/kineto')
    A = ap.parse_args()
    singles = sorted(glob.glob(os.path.join(A.data, '*.json.gz')))
    ranks = sorted(glob.glob(os.path.join(A.data, 'dlrm-8rank', '*.json.gz')))
    if not expect(len(singles) >= 9 and len(ranks) == 8, f'the real traces are in {A.data}'):
        return 1
    facts_of = {}
    for path in singles + ranks:
        name = os.path.basename(path)
        f = facts_of[path] = facts(path)
        r, p = report_json(path)
        if not expect(r is not None, f'{name}: report (exit {p.returncode} {p.stderr.strip()})'):
            continue
        check_trace(name, f, r)
        check_top_idle(name, r)
        check_memory(name, f, r)
        check_sync_sites(name, f, r)
        u = r['unclassified_kernel_share']
        expect(u <= 0.05, f'{name}: {u:.1%} of kernel time matches no class rule (<= 5%)')
        props = all(d in f['props'] for d in f['devices'])
        expect(not r['trace']['truncated'] and
               all(d['described'] for d in r['devices']) == props,
               f'{name}: not truncated; the device described '
               f'{"by deviceProperties" if props else "by assumed limits: the file has none"}')
    nw0 = report_json(os.path.join(A.data, 'kineto_v100dgxs_resnet50_nw0.json.gz'))[0]
    nw4 = report_json(os.path.join(A.data, 'kineto_v100dgxs_resnet50_nw4.json.gz'))[0]
    if nw0 and nw4:
        h0, h4 = nw0['breakdown']['host_work'], nw4['breakdown']['host_work']
        expect(h0 > 2 * h4, f'ResNet-50: host_work with 0 DataLoader workers ({h0:.1%}) is more '
                            f'than twice that with 4 ({h4:.1%})')
    check_ranks(ranks, facts_of)
    with tempfile.TemporaryDirectory() as tmp:
        small = os.path.join(A.data, 'tracelens_h100_bert-small.json.gz')
        check_formats(tmp, small, facts_of[small])
        check_bad_input(tmp, small)
    print(f'{len(FAILS)} failures')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
