#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the test suite repeatedly on a loaded machine and prints which tests failed how often.

Tests on gpusim run in real host time: a test whose verdict depends on when the host thread
was scheduled passes on a quiet machine and fails on a busy one (CI runs on shared machines).
This script makes the busy machine on purpose — CPU hogs beyond the core count and a disk
writer — runs the suites RUNS times under it, and prints one row per test that failed at
least once:

    test                         failed  runs   retried
    report-audit                 2       5      7

"retried" counts the attempts a test threw away inside one run, for tests that retry a
workload and say so ("(runs: N)" on their ok line).

    scripts/load-test.py                       # whole suite, 5 runs, 2x cores hogs + disk
    scripts/load-test.py --runs 10 --suite report --suite capture
    scripts/load-test.py --hogs 0 --no-disk    # the same runs on a quiet machine
"""
import argparse
import collections
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def hog(stop):
    """One busy core: integer work until told to stop."""
    x = 0
    while not stop.is_set():
        for _ in range(100000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def disk_writer(stop, directory):
    """Writes and fsyncs 64 MiB files in turn: the page cache and the disk stay busy."""
    block = os.urandom(1 << 20)
    path = os.path.join(directory, 'load-test-disk')
    while not stop.is_set():
        with open(path, 'wb') as f:
            for _ in range(64):
                if stop.is_set():
                    break
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        os.unlink(path)


RUNS = re.compile(r'\(runs: (\d+)\)')


def one_run(build, suites, tests, jobs, logs, run):
    """One meson test run; returns {test: (failed, retries)}. A failed test's output goes to
    logs/run-RUN-NAME.txt."""
    cmd = ['meson', 'test', '-C', build, '--num-processes', str(jobs), '--print-errorlogs']
    for s in suites:
        cmd += ['--suite', s]
    cmd += tests
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    with open(os.path.join(build, 'meson-logs', 'testlog.json')) as log:
        for line in log:
            r = json.loads(line)
            failed = r['result'] not in ('OK', 'EXPECTEDFAIL', 'SKIP')
            retries = sum(int(n) - 1 for n in RUNS.findall(r.get('stdout') or ''))
            out[r['name']] = (failed, retries)
            if failed and logs:
                os.makedirs(logs, exist_ok=True)
                name = re.sub(r'[^A-Za-z0-9_.-]+', '_', r['name'])
                with open(os.path.join(logs, f'run-{run}-{name}.txt'), 'w') as f:
                    f.write((r.get('stdout') or '') + (r.get('stderr') or ''))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--hogs', type=int, default=2 * os.cpu_count(),
                    help='busy processes (default: twice the cores)')
    ap.add_argument('--no-disk', action='store_true', help='no disk writer')
    ap.add_argument('--jobs', type=int, default=os.cpu_count(), help='tests run at once')
    ap.add_argument('--suite', action='append', default=[], help='only this suite (repeatable)')
    ap.add_argument('--json', help='also write the table as JSON to this file')
    ap.add_argument('--logs', help="directory for the failed tests' output")
    ap.add_argument('tests', nargs='*', help='only these tests')
    args = ap.parse_args()

    # a SIGTERM ends the runs through the finally below, which stops the hogs
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=hog, args=(stop,), daemon=True)
               for _ in range(args.hogs)]
    tmp = tempfile.TemporaryDirectory(prefix='gpuwhy-load-')
    if not args.no_disk:
        workers.append(multiprocessing.Process(target=disk_writer, args=(stop, tmp.name),
                                               daemon=True))
    for w in workers:
        w.start()
    failed = collections.Counter()
    retried = collections.Counter()
    seen = collections.Counter()
    started = time.monotonic()
    try:
        for run in range(args.runs):
            res = one_run(args.build, args.suite, args.tests, args.jobs, args.logs, run + 1)
            for name, (f, r) in res.items():
                seen[name] += 1
                failed[name] += f
                retried[name] += r
            bad = sorted(n for n, (f, _) in res.items() if f)
            print(f'run {run + 1}/{args.runs}: {len(res)} tests, {len(bad)} failed'
                  + (': ' + ', '.join(bad) if bad else ''), flush=True)
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=10)
        tmp.cleanup()
    load = f'{args.hogs} CPU hogs' + ('' if args.no_disk else ' + a disk writer')
    print(f'\n{args.runs} runs of {len(seen)} tests under {load} on {os.cpu_count()} cores, '
          f'{time.monotonic() - started:.0f} s')
    rows = sorted((n for n in seen if failed[n] or retried[n]),
                  key=lambda n: (-failed[n], -retried[n], n))
    print(f"{'test':40s} {'failed':>6s} {'runs':>5s} {'retried':>8s}")
    for n in rows:
        print(f'{n:40s} {failed[n]:6d} {seen[n]:5d} {retried[n]:8d}')
    if not rows:
        print('(no test failed or retried)')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'runs': args.runs, 'load': load, 'cores': os.cpu_count(),
                       'tests': {n: {'failed': failed[n], 'runs': seen[n],
                                     'retried': retried[n]} for n in seen}}, f, indent=1)
    return 1 if any(failed.values()) else 0


if __name__ == '__main__':
    sys.exit(main())
