#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on every real trace of tests/data/real: the reports and a table.

For each torch.profiler (Kineto) JSON and Nsight Systems SQLite export recorded by others on
real GPUs (tests/data/real/*/SOURCES.md: origin, license, what each shows), writes the text
and JSON reports to OUT and prints a Markdown table: trace, GPU, top idle cause, the share of
the window with nothing running (the gap buckets), the unclassified kernel share and the
counts. For the SQLite exports the counts stand next to plain SQL counts of the same tables.

    benchmarks/real-traces.py --report build/tools/gpuwhy-report --out results/real-traces
"""
import argparse
import glob
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'tests', 'data', 'real')
# The buckets of state C (nothing runs): their sum is the idle share.
GAP_BUCKETS = ('launch_overhead', 'host_sync', 'host_work', 'blocked', 'startup')


def run(report, path, out, name):
    text = subprocess.run([report, path], capture_output=True, text=True, timeout=600)
    js = subprocess.run([report, '--json', path], capture_output=True, text=True, timeout=600)
    if text.returncode or js.returncode:
        sys.exit(f'{name}: gpuwhy-report failed: {text.stderr}{js.stderr}')
    with open(os.path.join(out, name + '.txt'), 'w') as f:
        f.write(text.stdout)
    with open(os.path.join(out, name + '.json'), 'w') as f:
        f.write(js.stdout)
    return json.loads(js.stdout)


def gpu(r):
    names = sorted({d.get('name') or '(assumed)' for d in r['devices']})
    return ', '.join(names) if len(names) > 1 or len(r['devices']) == 1 else \
        f"{len(r['devices'])}x {names[0]}"


def row(name, r, extra=''):
    idle = sum(r['breakdown'].get(k, 0) for k in GAP_BUCKETS)
    c = r['counts']
    return (f"| {name} | {gpu(r)} | {r['top_idle_cause']} | {idle:.1%} | "
            f"{r['unclassified_kernel_share']:.1%} | {c['kernels']} | {c['memcpy']} | "
            f"{c['host_syncs']}{extra} |")


def sql_counts(path):
    db = sqlite3.connect(f'file:{path}?immutable=1', uri=True)
    have = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def count(table):
        return db.execute(f'SELECT COUNT(*) FROM {table}').fetchone()[0] if table in have else 0
    k, m = count('CUPTI_ACTIVITY_KIND_KERNEL'), count('CUPTI_ACTIVITY_KIND_MEMCPY')
    db.close()
    return k, m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--report', required=True)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print('| trace | GPU | top idle cause | nothing running | unclassified kernel time | '
          'kernels | copies | synchronizing calls |')
    print('|---|---|---|---|---|---|---|---|')
    kineto = sorted(glob.glob(os.path.join(DATA, 'kineto', '*.json.gz')))
    for path in kineto:
        name = os.path.basename(path).removesuffix('.json.gz')
        print(row(name, run(a.report, path, a.out, name)))
    ranks = sorted(glob.glob(os.path.join(DATA, 'kineto', 'dlrm-8rank', '*.json.gz')))
    for i, path in enumerate(ranks):
        name = f'dlrm_rank{i}'
        print(row(name, run(a.report, path, a.out, name)))
    if ranks:
        subprocess.run([a.report, '--json'] + ranks, check=True, timeout=600,
                       stdout=open(os.path.join(a.out, 'dlrm_8ranks.json'), 'w'))
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(DATA, 'nsys', '*.sqlite.xz'))):
            name = os.path.basename(path).removesuffix('.sqlite.xz')
            db = os.path.join(tmp, name + '.sqlite')
            with lzma.open(path) as src, open(db, 'wb') as dst:
                shutil.copyfileobj(src, dst)
            k, m = sql_counts(db)
            print(row(name, run(a.report, db, a.out, name),
                      f' (SQL: {k} kernels, {m} copies)'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
