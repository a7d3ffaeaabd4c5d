#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on Nsight Systems SQLite exports: time and peak RSS.

For each real export in tests/data/real/nsys, and for a synthetic export of N kernels (10
million by default) that this script writes with Python's sqlite3 in the shape of a real
export (the CREATE TABLE statements of the 2024 one; a launch-bound loop on one stream: a
cudaLaunchKernel per kernel, a cudaStreamSynchronize every 1000, an async copy every 10000):
the report's wall and CPU time (one thread, pinned to one core), kernels per second to the
finished report, and peak RSS. Side by side, in the same run, SQLite alone reading the same
columns (the sqlite3 shell, one core): the floor any reader of the file pays, and the ratio.

  benchmarks/bench-nsys.py [--build DIR] [--kernels N] [--keep FILE] [--out results.md]
"""
import argparse
import datetime
import lzma
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, 'tests', 'data', 'real', 'nsys')


def run(argv, pin=True):
    """Runs argv on one core; (wall s, user+sys s, peak RSS KiB, returncode)."""
    if pin and shutil.which('taskset'):
        argv = ['taskset', '-c', '0'] + argv
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors='replace')
    p.stderr.close()
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        sys.exit(f'{argv}: exit {rc}: {err.strip()}')
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, rc


def synthetic(path, schema, n):
    """An export of n kernels in the tables of a real one, written by SQLite itself."""
    src = sqlite3.connect(f'file:{schema}?immutable=1', uri=True)
    create = dict(src.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    gpu = src.execute('SELECT * FROM TARGET_INFO_GPU WHERE id = 0').fetchone()
    src.close()
    db = sqlite3.connect(path)
    db.execute('PRAGMA journal_mode = OFF')
    db.execute('PRAGMA synchronous = OFF')
    for t in ('StringIds', 'TARGET_INFO_GPU', 'TARGET_INFO_CUDA_CONTEXT_INFO', 'ThreadNames',
              'CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_RUNTIME',
              'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION'):
        db.execute(create[t])
    db.execute(f'INSERT INTO TARGET_INFO_GPU VALUES ({",".join("?" * len(gpu))})', gpu)
    pid = 4242
    gpid = (1 << 48) | (pid << 24)
    names = ['cudaLaunchKernel_v7000', 'cudaStreamSynchronize_v3020', 'cudaMemcpyAsync_v3020',
             'trainer', '_Z15layer_norm_fwdPfS_i', '_Z20vectorized_add_kernelPfS_S_i',
             '_Z11gemm_kernelPKfS0_Pfiii', '_Z13softmax_kernelPfi']
    db.executemany('INSERT INTO StringIds (id, value) VALUES (?, ?)',
                   list(enumerate(names, 1)))
    db.execute('INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, vmId, processId, '
               'deviceId, contextId) VALUES (7, 0, 1, ?, 0, 1)', (pid,))
    db.execute('INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (4, 0, ?)',
               (gpid | pid,))
    # kernel i: 5 us every 7 us from 1 s; correlation 2i + 1; four names, three grid shapes
    db.execute(f'''
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,
            correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread,
            gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,
            dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
        WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < {n})
        SELECT 1000000000 + i * 7000, 1000000000 + i * 7000 + 5000, 0, 1, 7, 2 * i + 1, {gpid},
            5 + i % 4, 5 + i % 4, 5 + i % 4, 32, 108 * (1 + i % 3), 1, 1, 256, 1, 1, 0, 0, 0,
            0, i FROM c''')
    # runtime rows in start order: per 1000 kernels, 1000 launches then one stream sync
    rows = n + n // 1000
    db.execute(f'''
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid,
            correlationId, nameId, returnValue)
        WITH RECURSIVE c(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM c WHERE j + 1 < {rows}),
            r(i, sync) AS (SELECT (j / 1001) * 1000 + min(j % 1001, 999), j % 1001 = 1000
                FROM c)
        SELECT CASE WHEN sync THEN 1000000000 + i * 7000 + 1000
                    ELSE 1000000000 + i * 7000 - 4000 END,
               CASE WHEN sync THEN 1000000000 + i * 7000 + 5500
                    ELSE 1000000000 + i * 7000 - 1000 END,
               0, {gpid | pid}, 2 * i + 1 + sync, 1 + sync, 0 FROM r''')
    db.execute(f'''
        INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId,
            streamId, correlationId, globalPid, syncType, eventId)
        SELECT start, end, 0, 1, 7, correlationId, {gpid}, 3, 0
        FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId = 2''')
    db.commit()
    db.close()


def floor_sql():
    """The columns the report reads, summed by SQLite so that every value is decoded."""
    k = ('start', 'end', 'deviceId', 'streamId', 'correlationId', 'globalPid',
         'COALESCE(mangledName, demangledName, shortName)', 'gridX', 'gridY', 'gridZ',
         'blockX', 'blockY', 'blockZ', 'registersPerThread', 'staticSharedMemory',
         'dynamicSharedMemory', 'graphNodeId')
    r = ('start', 'end', 'globalTid', 'correlationId', 'nameId', 'returnValue', 'callchainId')
    return (f'SELECT total({" + ".join("ifnull(" + c + ", 0)" for c in k)}) '
            f'FROM CUPTI_ACTIVITY_KIND_KERNEL; '
            f'SELECT total({" + ".join("ifnull(" + c + ", 0)" for c in r)}) '
            f'FROM CUPTI_ACTIVITY_KIND_RUNTIME;')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--kernels', type=int, default=10_000_000)
    ap.add_argument('--keep', help='write the synthetic export here and keep it (reused if '
                    'it exists)')
    ap.add_argument('--out', help='also write the table to this Markdown file')
    a = ap.parse_args()
    report = os.path.join(a.build, 'tools', 'gpuwhy-report')
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exports = []
        for name in sorted(os.listdir(DATA)):
            if name.endswith('.sqlite.xz'):
                path = os.path.join(tmp, name[:-3])
                with lzma.open(os.path.join(DATA, name)) as s, open(path, 'wb') as d:
                    shutil.copyfileobj(s, d)
                exports.append((name[:-10], path))
        synth = a.keep or os.path.join(tmp, 'synthetic.sqlite')
        if not os.path.exists(synth):
            t0 = time.perf_counter()
            synthetic(synth, dict(exports)['nsys_a100_cloverleaf'], a.kernels)
            print(f'wrote {synth} ({os.path.getsize(synth) >> 20} MiB) in '
                  f'{time.perf_counter() - t0:.1f} s', file=sys.stderr)
        exports.append((f'synthetic, {a.kernels / 1e6:g} M kernels', synth))
        for name, path in exports:
            db = sqlite3.connect(f'file:{path}?immutable=1', uri=True)
            kernels = db.execute('SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]
            calls = db.execute('SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME').fetchone()[0]
            db.close()
            # warm the page cache, then the report and the floor, each the best of three
            run([report, '--json', path])
            best = min((run([report, '--json', path]) for _ in range(3)), key=lambda x: x[1])
            floor = min((run(['sqlite3', f'file:{path}?immutable=1', floor_sql()])
                         for _ in range(3)), key=lambda x: x[1])
            rows.append((name, os.path.getsize(path), kernels, calls, best, floor))
    lines = [
        '| export | size | kernels | API rows | report wall | report CPU | kernels/s (CPU) '
        '| peak RSS | RSS per kernel | SQLite alone (CPU) | report / SQLite |',
        '|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    for name, size, k, c, (wall, cpu, rss, _), (_, fcpu, _, _) in rows:
        lines.append(f'| {name} | {size / 2**20:.1f} MiB | {k:,} | {c:,} | {wall:.3f} s '
                     f'| {cpu:.3f} s | {k / cpu / 1e6:.2f} M | {rss / 1024:.1f} MiB '
                     f'| {rss * 1024 / max(k, 1):.0f} B | {fcpu:.3f} s | {cpu / fcpu:.2f}x |')
    cpu = platform.machine()
    try:
        with open('/proc/cpuinfo') as f:
            cpu = next(l.split(':', 1)[1].strip() for l in f if l.startswith('model name'))
    except (OSError, StopIteration):
        pass
    head = (f'gpuwhy-report on Nsight Systems exports, {datetime.date.today()}, {cpu} '
            f'({os.cpu_count()} CPUs), SQLite {sqlite3.sqlite_version}; one core (taskset), '
            f'best of 3 by CPU time after a warm-up run; load average at the end '
            f'{os.getloadavg()[0]:.1f}')
    print(head)
    print('\n'.join(lines))
    if a.out:
        with open(a.out, 'w') as f:
            f.write(f'# {head}\n\n' + '\n'.join(lines) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
