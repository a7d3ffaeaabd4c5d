#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on Nsight Systems SQLite exports (`nsys export --type sqlite`).

The real exports in tests/data/real/nsys (A100; see SOURCES.md there) are read with plain SQL
here, and the report must agree with them: kernel, copy, memset and synchronizing-call counts,
the window (first GPU operation's start to the last one's end), and the exact split of the
window into time with a kernel running, with only copies or memsets running, and with nothing
running; with one kernel at a time, the split of kernel time into filled and unfilled SM-time
follows from the launch configurations and TARGET_INFO_GPU's limits by the occupancy rule of
doc/causes.md. The top idle cause is reasoned out from each timeline (the reasons are below).
Every output reads them (text, --json, --html, --perfetto with a slice per kernel and copy),
both exports make one report, and `gpuwhy import` turns each into a gpuwhy trace that reports
the same.

More exports are built here with Python's sqlite3 from the real files' own CREATE TABLE
statements, for what the real ones lack: two rows per call, CUDA backtraces, memory usage
events, driver calls, a process on two GPUs, text that is not UTF-8, a missing column or table,
a report file (.nsys-rep) instead of its export, a corrupt, a locked and a compressed file.
"""
import argparse
import gzip
import hashlib
import json
import lzma
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from checks import FAILS, expect

A = None
KERNEL = 'CUPTI_ACTIVITY_KIND_KERNEL'
MEMCPY = 'CUPTI_ACTIVITY_KIND_MEMCPY'
MEMSET = 'CUPTI_ACTIVITY_KIND_MEMSET'
RUNTIME = 'CUPTI_ACTIVITY_KIND_RUNTIME'
SYNC = 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION'

# Synchronizing CUDA calls by kind (doc/causes.md, cause 6), by their names without the
# version suffix. Copies and memsets without "Async" wait for the GPU; async ones do when they
# touch pageable host memory (Nsight's memory kind 0).
EXPLICIT = {'cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaStreamSynchronize_ptsz',
            'cudaEventSynchronize', 'cuCtxSynchronize', 'cuCtxSynchronize_v2',
            'cuStreamSynchronize', 'cuEventSynchronize'}
COPY = {'cudaMemcpy', 'cudaMemcpy2D', 'cudaMemcpy3D', 'cudaMemcpyToSymbol', 'cudaMemcpyFromSymbol',
        'cudaMemset', 'cuMemcpy', 'cuMemcpyHtoD_v2', 'cuMemcpyDtoH_v2', 'cuMemcpyDtoD_v2',
        'cuMemsetD8_v2', 'cuMemsetD32_v2'}
IMPLICIT = {'cudaFree', 'cudaFreeHost', 'cuMemFree_v2', 'cuMemFreeHost'}
LAUNCH = {'cudaLaunchKernel', 'cudaLaunchKernel_ptsz', 'cudaLaunchCooperativeKernel',
          'cudaLaunchKernelExC', 'cuLaunchKernel', 'cuLaunchKernel_ptsz', 'cuLaunchKernelEx',
          'cudaGraphLaunch', 'cuGraphLaunch'}


def base(name):
    return re.sub(r'_v\d{4,}$', '', name)


def report(*args):
    p = subprocess.run([A.report] + [str(a) for a in args], capture_output=True, timeout=300)
    # what gpuwhy-report writes is UTF-8, whatever the input held
    try:
        p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
    except UnicodeDecodeError as e:
        p.stdout, p.stderr = p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        expect(False, f'gpuwhy-report {" ".join(map(str, args))}: output is not UTF-8 ({e})')
    return p


def report_json(*args):
    p = report('--json', *args)
    if p.returncode:
        return None, p
    return json.loads(p.stdout, parse_constant=lambda c: {}['not JSON: ' + c]), p


def one_line_error(p, path, needle, what):
    lines = p.stderr.splitlines()
    expect(p.returncode == 1 and len(lines) == 1 and lines[0].startswith(
        f'gpuwhy-report: {path}: ') and needle in lines[0] and p.stdout == '',
           f'{what}: exit 1, one line naming the file and "{needle}" '
           f'(got {p.returncode}: {lines})')


def dump(path):
    """--dump as a list of (record type, {field: value}) with strings unquoted."""
    p = report('--dump', path)
    out = []
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(' ')
        fields = {}
        for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', rest):
            fields[k] = v[1:-1] if v.startswith('"') else v
        out.append((kind, fields))
    return p.returncode, out


def union(intervals):
    """Total length of the union of [start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def subtract(a, b):
    """Length of union(a) minus union(b), as |a ∪ b| - |b|."""
    return union(a + b) - union(b)


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# The shared-memory sizes an SM's carveout takes, KiB, by compute capability (CUDA C
# Programming Guide, "Shared Memory" of each architecture).
CARVEOUTS_KIB = {(7, 0): [0, 8, 16, 32, 64, 96], (7, 5): [32, 64],
                 (8, 0): [0, 8, 16, 32, 64, 100, 132, 164], (8, 7): [0, 8, 16, 32, 64, 100, 132, 164],
                 (9, 0): [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]}


def blocks_per_sm(gpu, threads, regs, smem, carveout):
    """Blocks of a kernel one SM holds, by the CUDA occupancy calculator's rules (the Guide's
    "Occupancy Calculator"): warps; registers allocated per warp in units of 256, per SM
    sub-partition (4); shared memory plus the 1 KiB a block reserves from 8.0, in 128-byte
    units (256 B, no reservation before), against the carveout the kernel ran with, or the
    least size that holds one block when that is smaller; the SM's block slots."""
    cc = (gpu['computeMajor'], gpu['computeMinor'])
    warp = gpu['threadsPerWarp']
    warps = -(-threads // warp)
    limits = [gpu['maxBlocksPerSm'], gpu['maxWarpsPerSm'] // warps]
    if regs:
        per_warp = -(-regs * warp // 256) * 256
        limits.append((gpu['maxRegistersPerSm'] // 4 // per_warp) * 4 // warps)
    reserved, unit = (1024, 128) if cc >= (8, 0) else (0, 256)
    per_block = -(-(smem + reserved) // unit) * unit
    if per_block:
        sizes = [k * 1024 for k in CARVEOUTS_KIB[cc]]
        sm = carveout if carveout >= per_block else min(v for v in sizes if v >= per_block)
        limits.append(sm // per_block)
    return max(1, min(limits))


def fill(gpu, grid, block, regs, smem, carveout):
    """SM fill of one kernel (doc/causes.md): waves over the SMs, the tail wave's share when a
    grid needs more than one."""
    waves = grid / (gpu['smCount'] * blocks_per_sm(gpu, block, regs, smem, carveout))
    if waves < 1:
        return waves
    return waves / -(-waves // 1)


def sql_facts(path):
    """What the export says, in plain SQL: counts, window, busy/copies-only/idle split."""
    db = sqlite3.connect(f'file:{path}?immutable=1', uri=True)
    have = tables(db)
    f = {}
    k = db.execute(f'SELECT start, end FROM {KERNEL}').fetchall() if KERNEL in have else []
    c = db.execute(f'SELECT start, end FROM {MEMCPY}').fetchall() if MEMCPY in have else []
    s = db.execute(f'SELECT start, end FROM {MEMSET}').fetchall() if MEMSET in have else []
    f['kernels'], f['memcpy'], f['memset'] = len(k), len(c), len(s)
    ops = k + c + s
    f['start'] = min(o[0] for o in ops)
    f['end'] = max(o[1] for o in ops)
    window = f['end'] - f['start']
    f['kernel_active'] = union(k) / window
    f['copies_only'] = subtract(c + s, k) / window
    f['idle'] = 1 - union(ops) / window
    # one call per correlation id (some exports write two rows per call)
    calls = {}
    for corr, name, start, end in db.execute(
            f'SELECT r.correlationId, s.value, r.start, r.end FROM {RUNTIME} r '
            'JOIN StringIds s ON s.id = r.nameId'):
        calls.setdefault(corr, (base(name), start, end))
    pageable_async = {corr for (corr,) in db.execute(
        f"SELECT correlationId FROM {MEMCPY} WHERE srcKind = 0 OR dstKind = 0")
        if 'Async' in calls.get(corr, ('',))[0]}
    f['syncs_explicit'] = sum(n in EXPLICIT for n, _, _ in calls.values())
    f['syncs_copy'] = sum(n in COPY for n, _, _ in calls.values()) + len(pageable_async)
    f['syncs_implicit'] = sum(n in IMPLICIT for n, _, _ in calls.values())
    f['host_syncs'] = f['syncs_explicit'] + f['syncs_copy'] + f['syncs_implicit']
    f['launches'] = sum(n in LAUNCH for n, _, _ in calls.values())
    f['sync_rows'] = db.execute(f'SELECT COUNT(*) FROM {SYNC}').fetchone()[0] \
        if SYNC in have else 0
    # with one kernel at a time, filled and unfilled SM-time follow from each kernel's fill
    cols = [r[1] for r in db.execute('PRAGMA table_info(TARGET_INFO_GPU)')]
    gpus = {r[cols.index('id')]: dict(zip(cols, r))
            for r in db.execute('SELECT * FROM TARGET_INFO_GPU')}
    ks = db.execute(f'SELECT start, end, deviceId, gridX * gridY * gridZ, '
                    f'blockX * blockY * blockZ, registersPerThread, '
                    f'staticSharedMemory + dynamicSharedMemory, sharedMemoryExecuted '
                    f'FROM {KERNEL} ORDER BY start').fetchall()
    f['serial'] = all(a[1] <= b[0] for a, b in zip(ks, ks[1:]))
    filled = sum((e - st) * fill(gpus[d], g, b, r, m, x) for st, e, d, g, b, r, m, x in ks)
    f['filled'] = filled / window
    f['unfilled'] = f['kernel_active'] - f['filled']
    f['gpu'] = gpus[ks[0][2]]['name'] if ks else None
    f['ops'] = sorted(ops)
    f['calls'] = calls
    db.close()
    return f


def check_real(path, name):
    f = sql_facts(path)
    r, p = report_json(path)
    expect(r is not None, f'{name}: --json exits 0 ({p.stderr.strip()})')
    if r is None:
        return None
    forced, _ = report_json('--format', 'nsys', path)
    expect(forced == r, f'{name}: --format nsys gives the same report as content detection')
    c = r['counts']
    for key in ('kernels', 'memcpy', 'memset', 'launches', 'host_syncs', 'syncs_explicit',
                'syncs_copy', 'syncs_implicit'):
        expect(c[key] == f[key], f'{name}: {key} {c[key]} = SQL {f[key]}')
    if f['sync_rows']:
        expect(c['syncs_explicit'] == f['sync_rows'],
               f'{name}: every {SYNC} row is an explicit sync by its call '
               f'({c["syncs_explicit"]} = {f["sync_rows"]})')
    w = r['window']
    expect(w['start_ns'] == f['start'] and w['end_ns'] == f['end'],
           f'{name}: window {w["start_ns"]}..{w["end_ns"]} = SQL {f["start"]}..{f["end"]}')
    bd = r['breakdown']
    expect(abs(sum(bd.values()) - 1) < 1e-9, f'{name}: the breakdown sums to 1')
    expect(abs(r['utilization']['kernel_active'] - f['kernel_active']) < 1e-9,
           f'{name}: kernel running {r["utilization"]["kernel_active"]:.9f} = SQL '
           f'{f["kernel_active"]:.9f}')
    expect(abs(bd['data_transfer'] - f['copies_only']) < 1e-9,
           f'{name}: only copies running (data_transfer) {bd["data_transfer"]:.9f} = SQL '
           f'{f["copies_only"]:.9f}')
    idle = bd['launch_overhead'] + bd.get('blocked', 0) + bd['host_sync'] + bd['host_work']
    expect(abs(idle - f['idle']) < 1e-9,
           f'{name}: nothing running (launch_overhead + blocked + host_sync + host_work) '
           f'{idle:.9f} = SQL {f["idle"]:.9f}')
    expect(f['serial'], f'{name}: one kernel at a time (the fill check below relies on it)')
    filled = bd['compute'] + bd['bandwidth_bound'] + bd['low_intensity'] + bd['communication']
    unfilled = bd['small_batch'] + bd['dependency_chain']
    expect(abs(filled - f['filled']) < 1e-6 and abs(unfilled - f['unfilled']) < 1e-6,
           f'{name}: filled SM-time {filled:.6f} = occupancy rule {f["filled"]:.6f}, unfilled '
           f'{unfilled:.6f} = {f["unfilled"]:.6f}')
    dev = r['devices']
    expect(len(dev) == 1 and dev[0]['name'] == f['gpu'] and dev[0]['sm_count'] == 108,
           f'{name}: one device, {f["gpu"]} with 108 SMs (got {dev})')
    return r, f


def sync_waits(f, names):
    """Per gap between GPU operations: (gap, the wait of the last synchronizing call that
    started before it, while the GPU was busy), the debt that the gap pays first."""
    ops, out, end = f['ops'], [], None
    syncs = sorted((s, e) for n, s, e in f['calls'].values() if n in names)
    si, debt = 0, 0
    end = ops[0][1]
    for s, e in ops[1:]:
        if s > end:
            while si < len(syncs) and syncs[si][0] <= end:
                debt = max(0, min(syncs[si][1], end) - syncs[si][0])
                si += 1
            out.append((s - end, debt))
            debt -= min(debt, s - end)
        end = max(end, e)
    return out


def sync_bounds(f, names):
    """Per gap: (gap, an upper bound of the sync debt it pays: the longest synchronizing call
    that started since the previous gap began, or what is left of the bound before)."""
    ops, out = f['ops'], []
    syncs = sorted((s, e) for n, s, e in f['calls'].values() if n in names)
    si, debt, end = 0, 0, ops[0][1]
    for s, e in ops[1:]:
        if s > end:
            while si < len(syncs) and syncs[si][0] <= end:
                debt = max(debt, syncs[si][1] - syncs[si][0])
                si += 1
            out.append((s - end, debt))
            debt -= min(debt, s - end)
        end = max(end, e)
    return out


def check_import(tmp, name, path):
    """`gpuwhy import` writes the export as a gpuwhy trace that reports the same."""
    out = os.path.join(tmp, name + '.trace.zst')
    p = subprocess.run([A.gpuwhy, 'import', path, '-o', out], capture_output=True, text=True,
                       timeout=300)
    expect(p.returncode == 0 and os.path.exists(out),
           f'{name}: gpuwhy import ({p.returncode}: {p.stderr.strip()})')
    if p.returncode:
        return

    def body(r):
        r = dict(r)
        r.pop('trace', None)
        for t in r.get('traces', []):
            p = t.pop('path', None)
            # the recommendations name `gpuwhy diff TRACE NEXT`
            r['recommendations'] = [dict(x, text=x['text'].replace(p, 'TRACE'))
                                    for x in r.get('recommendations', [])]
        return r

    a, _ = report_json(path)
    b, _ = report_json(out)
    expect(a is not None and b is not None and body(a) == body(b),
           f'{name}: the imported trace reports as the export')


def check_real_exports(tmp):
    paths = {}
    for name in sorted(os.listdir(A.data)):
        if not name.endswith('.sqlite.xz'):
            continue
        path = os.path.join(tmp, name[:-3])
        with lzma.open(os.path.join(A.data, name)) as src, open(path, 'wb') as dst:
            shutil.copyfileobj(src, dst)
        paths[name[:-10]] = path
    expect(set(paths) == {'nsys_a100_cloverleaf', 'nsys_a100_saxpy_mpi'},
           f'the real exports are there ({sorted(paths)})')

    # CloverLeaf: every kernel (median 5 us) is followed by cudaDeviceSynchronize, which waits
    # while it runs; the host then needs a few microseconds to return and launch the next one.
    # So most gaps are shorter than the wait just before them and are paid by that sync's
    # debt: host_sync is the largest idle cause. The test measures it: the debt covers more
    # than half of the idle time, so no other idle bucket can be larger, and the kernel-state
    # losses (unfilled SMs) and copies-only time, exact from SQL above, are smaller too.
    path = paths.get('nsys_a100_cloverleaf')
    if path:
        got = check_real(path, 'cloverleaf')
        if got:
            r, f = got
            gaps = sync_waits(f, EXPLICIT | COPY | IMPLICIT)
            window = f['end'] - f['start']
            paid = sum(min(g, d) for g, d in gaps) / window
            expect(paid > f['idle'] / 2,
                   f'cloverleaf: sync waits cover {paid:.4f} of {f["idle"]:.4f} idle')
            expect(paid > f['unfilled'] and paid > f['copies_only'],
                   f'cloverleaf: more than unfilled SMs ({f["unfilled"]:.4f}) and copies '
                   f'({f["copies_only"]:.4f})')
            expect(r['top_idle_cause'] == 'host_sync',
                   f'cloverleaf: top idle cause host_sync (got {r["top_idle_cause"]})')
            expect(abs(r['breakdown']['host_sync'] - paid) < 0.1 * paid,
                   f'cloverleaf: host_sync {r["breakdown"]["host_sync"]:.4f} within 10% of '
                   f'the debt the sync waits leave ({paid:.4f})')

    # saxpy: each iteration copies 2 x 262 MB in, runs one 17.7 ms kernel, copies the result
    # out, then the host spends ~190 ms (allocations, host registration) before the next
    # iteration. What a gap can owe to syncs is at most the longest synchronizing call made
    # since the previous gap (a call waits at most its own duration, and the debt is set by
    # one call, not summed), and launch overhead at most 100 us of it plus the time inside
    # launch calls; the rest of each long gap is the host's own work. That rest is larger than
    # the syncs' bound, the copies-only time and the kernels' time: host_work is the top idle
    # cause.
    path = paths.get('nsys_a100_saxpy_mpi')
    if path:
        got = check_real(path, 'saxpy')
        if got:
            r, f = got
            window = f['end'] - f['start']
            gaps = sync_bounds(f, EXPLICIT | COPY | IMPLICIT)
            owed = sum(min(g, d) for g, d in gaps) / window
            # launch overhead: gaps' first 100 us, and time inside launch calls
            short = (sum(min(g, 100000) for g, _ in gaps) + sum(
                e - s for n, s, e in f['calls'].values() if n in LAUNCH)) / window
            host_work_min = f['idle'] - owed - short
            expect(host_work_min > owed and host_work_min > f['copies_only'] and
                   host_work_min > f['kernel_active'],
                   f'saxpy: host work at least {host_work_min:.4f} > what syncs can owe '
                   f'{owed:.4f}, copies {f["copies_only"]:.4f}, kernels {f["kernel_active"]:.4f}')
            expect(r['top_idle_cause'] == 'host_work',
                   f'saxpy: top idle cause host_work (got {r["top_idle_cause"]})')

    # every output, and both files as one report
    for name, path in sorted(paths.items()):
        t = report(path)
        expect(t.returncode == 0 and 'Verdict:' in t.stdout and 'A100' in t.stdout,
               f'{name}: text report ({t.stderr.strip()})')
        html = os.path.join(tmp, name + '.html')
        p = report('--html', html, path)
        expect(p.returncode == 0 and os.path.getsize(html) > 10000 and
               b'</html>' in open(html, 'rb').read(), f'{name}: --html writes the page')
        perf = os.path.join(tmp, name + '.json')
        p = report('--perfetto', perf, path)
        expect(p.returncode == 0, f'{name}: --perfetto ({p.stderr.strip()})')
        if p.returncode == 0:
            events = json.load(open(perf))
            events = events['traceEvents'] if isinstance(events, dict) else events
            f = sql_facts(path)
            cats = {}
            for ev in events:
                if ev.get('ph') == 'X':
                    cats[ev.get('cat')] = cats.get(ev.get('cat'), 0) + 1
            expect(cats.get('kernel') == f['kernels'] and cats.get('memcpy', 0) == f['memcpy'],
                   f'{name}: --perfetto has a slice per kernel and copy ({cats})')
        if A.gpuwhy:
            check_import(tmp, name, path)
    if len(paths) == 2:
        both = [paths['nsys_a100_cloverleaf'], paths['nsys_a100_saxpy_mpi']]
        r, p = report_json(*both)
        expect(r is not None and len(r['traces']) == 2 and len(r['devices']) == 2,
               f'both exports: one report, two traces, two devices ({p.stderr.strip()})')
        if r:
            one = [report_json(x)[0] for x in both]
            expect(all(r['counts'][k] == sum(o['counts'][k] for o in one)
                       for k in ('kernels', 'memcpy', 'host_syncs', 'launches')),
                   'both exports: counts are the sums of each')
    return paths


# ---- exports built from the real files' schema ----

class Export:
    """An export with the tables of a real one (its CREATE statements), filled by the test."""

    def __init__(self, path, schema, tables_=None):
        self.path = path
        src = sqlite3.connect(f'file:{schema}?immutable=1', uri=True)
        self.db = sqlite3.connect(path)
        for name, sql in src.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"):
            if tables_ is None or name in tables_:
                self.db.execute(sql)
        self.create = {n: s for n, s in src.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table'")}
        src.close()
        self.strings = {}

    def table_like(self, name, like):
        self.db.execute(self.create[like].replace(like, name, 1))

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.db.execute('INSERT INTO StringIds (id, value) VALUES (?, ?)',
                            (self.strings[text], text))
        return self.strings[text]

    def add(self, table, **row):
        cols = ', '.join(f'"{k}"' for k in row)
        self.db.execute(f'INSERT INTO "{table}" ({cols}) VALUES ({", ".join("?" * len(row))})',
                        list(row.values()))

    def close(self):
        self.db.commit()
        self.db.close()
        return self.path


GPU = dict(vmId=1 << 48, name='NVIDIA A100-SXM4-80GB', totalMemory=85899345920,
           memoryBandwidth=2039040000000, smCount=108, maxWarpsPerSm=64, threadsPerWarp=32,
           maxBlocksPerSm=32, maxRegistersPerSm=65536, maxShmemPerSm=167936,
           maxThreadsPerBlock=1024, maxRegistersPerBlock=65536, maxShmemPerBlockOptin=166912,
           computeMajor=8, computeMinor=0, uuid='cf6b97c0-bf53-a39e-febd-9532190b5766')
PID = 4242
GPID = (1 << 48) | (PID << 24)
GTID = GPID | PID


def kernel(e, start, dur, corr, name, dev=0, stream=7, grid=216, block=256):
    e.add(KERNEL, start=start, end=start + dur, deviceId=dev, contextId=1, streamId=stream,
          correlationId=corr, globalPid=GPID, demangledName=e.s(name), shortName=e.s(name),
          mangledName=None, registersPerThread=32, gridX=grid, gridY=1, gridZ=1, blockX=block,
          blockY=1, blockZ=1, staticSharedMemory=0, dynamicSharedMemory=0,
          localMemoryPerThread=0, localMemoryTotal=0, gridId=corr)


def call(e, table, start, end, corr, name, chain=None, event_class=0, tid=GTID):
    e.add(table, start=start, end=end, eventClass=event_class, globalTid=tid,
          correlationId=corr, nameId=e.s(name), returnValue=0, callchainId=chain)


def check_twins_chains_memory(tmp, schema):
    """Nsight 2022 (schema 2.9): two rows per call (a 'CUDA backtrace' row without the version
    suffix and the runtime row), callchainId numbered from 0 and CUDA_CALLCHAINS from 1, and
    memory usage events."""
    e = Export(os.path.join(tmp, 'twins.sqlite'), schema)
    e.add('TARGET_INFO_GPU', id=0, **GPU)
    e.add('TARGET_INFO_CUDA_NULL_STREAM', streamId=7, hwId=0, vmId=1, processId=PID,
          deviceId=0, contextId=1)
    e.add('ThreadNames', nameId=e.s('trainer'), priority=0, globalTid=GTID)
    sites = {'cudaMalloc': ['cudaMalloc', 'alloc_buffers', 'main'],
             'cudaLaunchKernel': ['cudaLaunchKernel', 'step', 'main'],
             'cudaStreamSynchronize': ['cudaStreamSynchronize', 'read_loss', 'main'],
             'cudaFree': ['cudaFree', 'main']}
    versions = {'cudaMalloc': '_v3020', 'cudaLaunchKernel': '_v7000',
                'cudaStreamSynchronize': '_v3020', 'cudaFree': '_v3020'}
    chain, corr, t = 0, 100, 1_000_000
    seq = ['cudaMalloc'] * 3 + ['cudaLaunchKernel', 'cudaStreamSynchronize'] * 20 + \
        ['cudaFree'] * 2
    chains = {}  # CUDA_CALLCHAINS id -> frames
    allocs, live, peak = [], 0, 0
    for name in seq:
        corr += 1
        dur = 20_000 if name != 'cudaStreamSynchronize' else 60_000
        # the backtrace row encloses the runtime row, one after the other in the table
        call(e, RUNTIME, t, t + dur + 400, corr, name, chain=chain, event_class=67)
        call(e, RUNTIME, t + 200, t + dur + 200, corr, name + versions[name])
        chain += 1
        chains[chain] = sites[name]
        for depth, sym in enumerate(['0x7f00001234'] + sites[name]):
            e.add('CUDA_CALLCHAINS', id=chain, symbol=e.s(sym),
                  module=e.s('/usr/lib/libcudart.so.12' if depth <= 1 else '/opt/app/train'),
                  unresolved=depth == 0, originalIP=0x7f00001234 + depth, stackDepth=depth)
        if name == 'cudaLaunchKernel':
            kernel(e, t + dur, 50_000, corr, 'vectorized_elementwise_kernel')
        if name == 'cudaStreamSynchronize':
            e.add(SYNC, start=t, end=t + dur, deviceId=0, contextId=1, streamId=7,
                  correlationId=corr, globalPid=GPID, syncType=1, eventId=0)
        if name == 'cudaMalloc':
            size = (len(allocs) + 1) << 20
            allocs.append((0x7000_0000 + len(allocs) * 0x1000_0000, size))
            e.add('CUDA_GPU_MEMORY_USAGE_EVENTS', start=t + dur, globalPid=GPID, deviceId=0,
                  contextId=1, address=allocs[-1][0], pc=0, bytes=size, memKind=2,
                  memoryOperationType=0, correlationId=corr)
            live += size
            peak = max(peak, live)
        if name == 'cudaFree':
            addr, size = allocs.pop(0)
            e.add('CUDA_GPU_MEMORY_USAGE_EVENTS', start=t + 100, globalPid=GPID, deviceId=0,
                  contextId=1, address=addr, pc=0, bytes=size, memKind=2,
                  memoryOperationType=1, correlationId=corr)
            live -= size
        t += dur + 1000
    path = e.close()

    r, p = report_json(path)
    expect(r is not None, f'two rows per call: report ({p.stderr.strip()})')
    if r:
        c = r['counts']
        expect(c['launches'] == 20 and c['kernels'] == 20,
               f'two rows per call: 20 launches, not 40 (got {c["launches"]})')
        expect(c['syncs_explicit'] == 20 and c['syncs_implicit'] == 2,
               f'two rows per call: 20 stream syncs, 2 frees (got {c})')
        expect(c['allocations'] == 3 and c['frees'] == 2,
               f'memory usage events: 3 allocations, 2 frees (got {c})')
        expect(r['memory']['peak_bytes'] == peak,
               f'memory usage events: peak {r["memory"]["peak_bytes"]} = {peak}')
    rc, recs = dump(path)
    expect(rc == 0, 'two rows per call: --dump')
    strings = {f['id']: f['text'] for k, f in recs if k == 'STRING'}
    frames = {f['id']: strings.get(f['function_id']) for k, f in recs if k == 'FRAME'}
    stacks = {f['id']: [frames.get(str(int(x, 16))) for x in f['ips'].strip('[]').split(',')]
              for k, f in recs if k == 'STACK' and f['ips_kind'] == '1'}
    apis = [f for k, f in recs if k == 'API']
    expect(len(apis) == len(seq), f'one API record per call ({len(apis)} of {len(seq)})')
    expect(len(stacks) == len(sites),
           f'identical backtraces share a stack: {len(stacks)} stacks for {len(sites)} sites')
    ok = len(apis) == len(seq)
    for a, name in zip(apis, seq):
        ok &= strings.get(a['name_id']) == name
        ok &= stacks.get(a['stack_id']) == ['0x7f00001234'] + sites[name]
    expect(ok, 'each call: its name without the version suffix, and its backtrace\'s frames '
           '(CUDA_CALLCHAINS id = callchainId + 1 in this schema)')
    threads = [f for k, f in recs if k == 'THREAD']
    expect(len(threads) == 1 and threads[0]['name'] == 'trainer' and
           threads[0]['tid'] == str(PID), f'the thread, named from ThreadNames ({threads})')
    header = [f for k, f in recs if k == 'HEADER']
    expect(header and header[0]['capture_mode'] == '3' and header[0]['pid'] == str(PID),
           'HEADER: an Nsight Systems import of the process with the GPU work')
    mem = [f for k, f in recs if k == 'MEMORY']
    expect(len(mem) == 5 and all(m['stack_id'] != '0' for m in mem),
           'memory events carry the call site of their allocation or free')
    for flag, out in (('--html', 'twins.html'), ('--perfetto', 'twins.json')):
        p = report(flag, os.path.join(tmp, out), path)
        expect(p.returncode == 0, f'two rows per call: {flag} ({p.stderr.strip()})')


def check_driver_and_devices(tmp, schema):
    """Driver calls: one nested in a runtime call is part of it; a library's own cuLaunchKernel
    is a launch. A process with contexts on two GPUs: a sync's device is its GPU record's."""
    e = Export(os.path.join(tmp, 'driver.sqlite'), schema)
    e.table_like('CUPTI_ACTIVITY_KIND_DRIVER', RUNTIME)
    for dev in (0, 1):
        e.add('TARGET_INFO_GPU', id=dev, **GPU)
        e.add('TARGET_INFO_CUDA_CONTEXT_INFO', nullStreamId=7 + dev, hwId=0, vmId=1,
              processId=PID, deviceId=dev, contextId=1 + dev)
    t, corr = 1_000_000, 1
    for i in range(10):
        dev = i % 2
        # cudaLaunchKernel with the driver launch inside it (its own correlation id)
        call(e, RUNTIME, t, t + 10_000, corr, 'cudaLaunchKernel_v7000')
        call(e, 'CUPTI_ACTIVITY_KIND_DRIVER', t + 2000, t + 8000, corr + 1, 'cuLaunchKernel',
             event_class=1)
        kernel(e, t + 10_000, 40_000, corr, 'gemm_kernel', dev=dev, stream=7 + dev)
        # a library's launch through the driver API alone
        call(e, 'CUPTI_ACTIVITY_KIND_DRIVER', t + 12_000, t + 15_000, corr + 2,
             'cuLaunchKernel', event_class=1)
        kernel(e, t + 50_000, 10_000, corr + 2, 'cutlass_kernel', dev=dev, stream=7 + dev)
        # a stream sync on that GPU
        call(e, RUNTIME, t + 16_000, t + 60_000, corr + 3, 'cudaStreamSynchronize_v3020')
        e.add(SYNC, start=t + 16_000, end=t + 60_000, deviceId=dev, contextId=1 + dev,
              streamId=7 + dev, correlationId=corr + 3, globalPid=GPID, syncType=3, eventId=0)
        t += 200_000
        corr += 4
    # memory kinds numbered by the export's own ENUM table (here not in Nsight's usual order):
    # an async copy from pageable memory waits for the host, one from pinned memory does not
    kinds = ['DEVICE', 'MANAGED', 'PINNED', 'PAGEABLE', 'ARRAY', 'UNKNOWN']
    for i, k in enumerate(kinds):
        e.add('ENUM_CUDA_MEM_KIND', id=i, name='CUDA_MEMOPR_MEMORY_KIND_' + k, label=k)
    for src in ('PAGEABLE', 'PINNED'):
        call(e, RUNTIME, t, t + 5000, corr, 'cudaMemcpyAsync_v3020')
        e.add(MEMCPY, start=t + 6000, end=t + 9000, deviceId=0, contextId=1, streamId=7,
              correlationId=corr, globalPid=GPID, bytes=1 << 20, copyKind=1,
              srcKind=kinds.index(src), dstKind=kinds.index('DEVICE'))
        t += 20_000
        corr += 1
    path = e.close()
    r, p = report_json(path)
    expect(r is not None, f'driver calls: report ({p.stderr.strip()})')
    if r:
        expect(r['counts']['syncs_copy'] == 1 and r['counts']['memcpy'] == 2,
               f'the async copy from pageable memory (by the export\'s memory-kind names) is a '
               f'sync, the one from pinned memory is not (got {r["counts"]})')
    if r:
        expect(r['counts']['launches'] == 20 and r['counts']['kernels'] == 20,
               f'driver calls: 10 runtime + 10 library launches, the nested ones not again '
               f'(got {r["counts"]["launches"]})')
        expect(len(r['devices']) == 2, 'two GPUs, two devices')
    rc, recs = dump(path)
    syncs = [f for k, f in recs if k == 'API' and f['category'] == '7']
    expect(len(syncs) == 10 and all(int(s['device']) == (int(s['correlation']) - 4) // 4 % 2
                                    for s in syncs),
           'each sync of a two-GPU process is on the GPU its SYNCHRONIZATION row names')


def check_bad_input(tmp, schema):
    # a missing column
    e = Export(os.path.join(tmp, 'nogrid.sqlite'), schema, {'StringIds'})
    e.db.execute(f'CREATE TABLE {KERNEL} (start INTEGER, end INTEGER, deviceId INTEGER, '
                 'streamId INTEGER, correlationId INTEGER, shortName INTEGER)')
    path = e.close()
    one_line_error(report('--json', path), path, f'table {KERNEL} has no column gridX',
                   'a missing column')
    # no CUDA activity at all
    e = Export(os.path.join(tmp, 'nocuda.sqlite'), schema, {'StringIds', 'ThreadNames'})
    path = e.close()
    one_line_error(report(path), path, 'no CUDA activity', 'an export without CUDA tables')
    # some other SQLite database
    db = sqlite3.connect(os.path.join(tmp, 'other.db'))
    db.execute('CREATE TABLE notes (id INTEGER, text TEXT)')
    db.commit()
    db.close()
    path = os.path.join(tmp, 'other.db')
    one_line_error(report(path), path, 'not an Nsight Systems export', 'another SQLite file')
    p = report('--format', 'nsys', path)
    one_line_error(p, path, 'not an Nsight Systems export', 'another SQLite file, forced')
    # a report instead of its export; with --format nsys too
    path = os.path.join(tmp, 'run.nsys-rep')
    with open(path, 'wb') as f:
        f.write(bytes(range(256)) * 64)
    one_line_error(report(path), path, 'nsys export --type sqlite', 'a .nsys-rep')
    one_line_error(report('--format', 'nsys', path), path, 'nsys export --type sqlite',
                   'a .nsys-rep, forced')
    # not SQLite at all, forced
    path = os.path.join(tmp, 'plain.txt')
    with open(path, 'w') as f:
        f.write('hello\n' * 100)
    one_line_error(report('--format', 'nsys', path), path, 'not an SQLite database',
                   'a text file as nsys')
    # the SQLite header and then garbage
    path = os.path.join(tmp, 'garbage.sqlite')
    with open(path, 'wb') as f:
        f.write(b'SQLite format 3\0' + bytes((i * 7919) % 251 for i in range(8192)))
    one_line_error(report(path), path, 'SQLite', 'the SQLite magic, then garbage')
    # gzip-compressed
    src = check_twins_path
    path = os.path.join(tmp, 'twins.sqlite.gz')
    with open(src, 'rb') as f, gzip.open(path, 'wb') as g:
        g.write(f.read())
    one_line_error(report(path), path, 'gunzip', 'a gzip-compressed export')


def check_corrupt(tmp, schema):
    """A table's pages overwritten in the middle: one line, never a crash."""
    e = Export(os.path.join(tmp, 'corrupt.sqlite'), schema)
    for i in range(20000):
        kernel(e, 1000 + i * 100, 50, i + 1, 'k')
    path = e.close()
    data = bytearray(open(path, 'rb').read())
    page = int.from_bytes(data[16:18], 'big')
    page = 65536 if page == 1 else page
    # the middle of the file is the kernel table's leaves; zeroes are no valid b-tree page
    mid = len(data) // page // 2 * page
    data[mid:mid + 4 * page] = bytes(4 * page)
    with open(path, 'wb') as f:
        f.write(data)
    p = report('--json', path)
    one_line_error(p, path, 'malformed', 'a corrupt table')


def check_locked_and_untouched(tmp, src):
    """An exclusive lock held by a writer does not block the read-only, immutable reader, and
    the file is never written: same bytes, no journal or WAL beside it. A path with URI
    characters is taken literally."""
    d = os.path.join(tmp, 'odd dir #1')
    os.mkdir(d)
    path = os.path.join(d, 'run?v=1&x=%41#2.sqlite')
    shutil.copy(src, path)
    before = hashlib.sha256(open(path, 'rb').read()).hexdigest()
    mtime = os.stat(path).st_mtime_ns
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute('BEGIN EXCLUSIVE')
    r, p = report_json(path)
    holder.execute('ROLLBACK')
    holder.close()
    expect(r is not None and r['counts']['kernels'] > 0,
           f'a locked export with URI characters in its path is read ({p.stderr.strip()})')
    os.chmod(path, 0o444)
    r2, p = report_json(path)
    expect(r2 is not None, f'a read-only export is read ({p.stderr.strip()})')
    expect(hashlib.sha256(open(path, 'rb').read()).hexdigest() == before and
           os.stat(path).st_mtime_ns == mtime, 'the export is not written')
    expect(sorted(os.listdir(d)) == [os.path.basename(path)], 'nothing is written beside it')


def check_text_encoding_and_notes(tmp, schema):
    """Names that are not UTF-8 are read with U+FFFD in place of the bad bytes; an export
    without CUDA API calls says so; Windows memory usage becomes the reserved-bytes counter."""
    e = Export(os.path.join(tmp, 'latin1.sqlite'), schema,
               {'StringIds', KERNEL, 'TARGET_INFO_GPU', 'GPU_MEMORY_USAGE_EVENTS'})
    e.add('TARGET_INFO_GPU', id=0, **GPU)
    e.db.execute("INSERT INTO StringIds (id, value) VALUES (77, CAST(x'6d6f64e86c655f6b65726e656cff' AS TEXT))")
    for i in range(5):
        e.add(KERNEL, start=1000 + i * 10_000, end=6000 + i * 10_000, deviceId=0, contextId=1,
              streamId=7, correlationId=i + 1, globalPid=GPID, demangledName=77, shortName=77,
              registersPerThread=32, gridX=1, gridY=1, gridZ=1, blockX=128, blockY=1, blockZ=1,
              staticSharedMemory=0, dynamicSharedMemory=0, localMemoryPerThread=0,
              localMemoryTotal=0, gridId=i)
    for i, usage in enumerate((1 << 30, 3 << 30, 2 << 30)):
        e.add('GPU_MEMORY_USAGE_EVENTS', timestamp=1000 + i * 20_000, globalTid=GTID, gpu=0,
              newUsage=usage, segmentGroup=0)
    path = e.close()
    r, p = report_json(path)
    expect(r is not None, f'non-UTF-8 names: report ({p.stderr.strip()})')
    if r:
        names = json.dumps(r, ensure_ascii=False)
        expect('mod\ufffdle_kernel\ufffd' in names, 'non-UTF-8 bytes read as U+FFFD')
        expect(any('no CUDA API calls' in w for w in r['warnings']),
               f'no API table: a warning says so ({r["warnings"]})')
    p = report(path)
    expect(p.returncode == 0, 'non-UTF-8 names: text report')
    rc, recs = dump(path)
    counters = [f for k, f in recs if k == 'COUNTER']
    expect([int(c['value']) for c in counters] == [1 << 30, 3 << 30, 2 << 30],
           'Windows GPU memory usage: one counter sample per event')


def check_mutations(tmp, src):
    """Bytes changed anywhere in an export (its schema, its pages, its header): a report, or
    one line and exit 1; never a crash or a hang."""
    import random
    rnd = random.Random(19)
    data = open(src, 'rb').read()
    bad = []
    for i in range(40):
        m = bytearray(data)
        for _ in range(rnd.choice((1, 4, 32))):
            at = rnd.randrange(100 if i % 4 else 0, len(m))
            m[at] = rnd.randrange(256)
        path = os.path.join(tmp, f'mutant-{i}.sqlite')
        with open(path, 'wb') as f:
            f.write(m)
        p = report('--json', path)
        lines = p.stderr.splitlines()
        if not (p.returncode == 0 or (p.returncode == 1 and len(lines) == 1 and
                                      lines[0].startswith(f'gpuwhy-report: {path}: '))):
            bad.append((i, p.returncode, lines[:2]))
    expect(not bad, f'40 mutated exports: each a report or one line, exit 1 ({bad})')


check_twins_path = None


def main():
    global A, check_twins_path
    ap = argparse.ArgumentParser()
    ap.add_argument('--report', required=True)
    ap.add_argument('--data', required=True, help='tests/data/real/nsys')
    ap.add_argument('--gpuwhy', help='the gpuwhy program, for `gpuwhy import`')
    A = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = check_real_exports(tmp)
        schema29 = paths.get('nsys_a100_saxpy_mpi')
        schema313 = paths.get('nsys_a100_cloverleaf')
        if not schema29 or not schema313:
            return 1
        check_twins_chains_memory(tmp, schema29)
        check_twins_path = os.path.join(tmp, 'twins.sqlite')
        if A.gpuwhy:
            check_import(tmp, 'twins', check_twins_path)
        check_driver_and_devices(tmp, schema313)
        check_bad_input(tmp, schema313)
        check_corrupt(tmp, schema313)
        check_locked_and_untouched(tmp, check_twins_path)
        check_text_encoding_and_notes(tmp, schema29)
        check_mutations(tmp, check_twins_path)
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
