#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on bad input, options and several traces.

Bad input (empty, random bytes, a zstd frame that is not a trace, a newer format version, a
missing file) must exit 1 with exactly one line `gpuwhy-report: FILE: reason`; a trace cut
mid-frame is analysed up to its last good frame, with a warning and "truncated": true; usage
errors exit 2. Several traces give a row per trace and a merged breakdown that is the
SM-weighted mean of theirs. --tiny-us and --starve-us move kernels and gaps between buckets as
the rules say. The traces come from workloads run on gpusim (a test double).
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

from checks import FAILS, expect

A = None



def report(*args):
    return subprocess.run([A.report] + list(args), capture_output=True, text=True, timeout=120)


def capture(tmp, name, *args, env_extra=None):
    out = os.path.join(tmp, name + '.trace.zst')
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(A.build, 'tests/gpusim'),
               LD_PRELOAD=os.path.join(A.build, 'lib/libgpuwhy.so'), GPUWHY_OUTPUT=out,
               GPUWHY_QUIET='1')
    env.update(env_extra or {})
    subprocess.run([os.path.join(A.build, 'tests/workloads', name.split('.')[0])] + list(args),
                   env=env, check=True, stdout=subprocess.DEVNULL, timeout=120)
    return out


def bad(path, what):
    p = report('--json', path)
    lines = p.stderr.splitlines()
    expect(p.returncode == 1 and len(lines) == 1 and lines[0].startswith(
        f'gpuwhy-report: {path}: ') and len(lines[0]) > len(f'gpuwhy-report: {path}: ') and
           p.stdout == '', f'{what}: exit 1, one line (got {p.returncode}, {lines})')


def zstd_raw_frame(payload):
    """A valid zstd frame holding payload in one raw block (RFC 8878: single segment, 1-byte
    frame content size)."""
    assert len(payload) < 256
    return (struct.pack('<I', 0xFD2FB528) + bytes([0x20, len(payload)]) +
            struct.pack('<I', (len(payload) << 3) | 1)[:3] + payload)


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    A = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, data):
            p = os.path.join(tmp, name)
            with open(p, 'wb') as f:
                f.write(data)
            return p

        bad(write('empty.trace.zst', b''), 'empty file')
        bad(write('random.trace.zst', random.Random(5).randbytes(1 << 16)), 'random bytes')
        bad(write('plain.zst', zstd_raw_frame(b'hello, not a trace\n' * 4)),
            'a zstd file that is not a trace')
        bad(os.path.join(tmp, 'missing.trace.zst'), 'a missing file')

        good = capture(tmp, 'tiny_kernels', '--iters', '3000',
                       env_extra={'GPUSIM_KERNEL_US': 'tiny_=1'})
        data = open(good, 'rb').read()
        # File header: skippable-frame magic and size (8 bytes), GW_FILE_MAGIC (8), version.
        expect(data[8:16] == b'GPUWHY\x00\x01', 'the capture wrote a gpuwhy file header')
        bad(write('future.trace.zst', data[:16] + struct.pack('<I', 99) + data[20:]),
            'a trace from a future format version')

        full = json.loads(report('--json', good).stdout)
        cut = write('cut.trace.zst', data[:len(data) * 2 // 3])
        p = report('--json', cut)
        expect(p.returncode == 0, f'a truncated trace exits 0 (got {p.returncode}: {p.stderr})')
        if p.returncode == 0:
            r = json.loads(p.stdout)
            expect(r['trace']['truncated'] is True and not r['trace']['clean_exit'],
                   'a truncated trace says "truncated": true and no clean exit')
            expect(any('truncated' in w for w in r['warnings']), 'with a warning')
            expect(r['counts']['kernels'] <= full['counts']['kernels'],
                   'and holds at most the full trace\'s kernels')
        p = report(cut)
        expect(p.returncode == 0 and 'warning:' in p.stdout, 'the text report warns too')

        p = report()
        expect(p.returncode == 2, 'no trace: usage error, exit 2')
        p = report('--tiny-us', 'abc', good)
        expect(p.returncode == 2, '--tiny-us abc: usage error, exit 2')
        p = report('--bogus', good)
        expect(p.returncode == 2, 'an unknown option: exit 2')

        # --tiny-us: the loop's kernels last 1 us on gpusim (GPUSIM_KERNEL_US tiny_=1) and the
        # first fill kernel 5 us: under 1 us nothing is tiny, under 2 us the loop is.
        iters = 3000
        r0 = json.loads(report('--json', '--tiny-us', '1', good).stdout)
        r2 = json.loads(report('--json', '--tiny-us', '2', good).stdout)
        expect(r0['counts']['tiny_kernels'] == 0, '--tiny-us 1: no kernel is shorter than 1 us')
        expect(r2['counts']['tiny_kernels'] == 3 * iters,
               f"--tiny-us 2: the loop's 3*iters kernels are tiny "
               f"(got {r2['counts']['tiny_kernels']})")

        # --starve-us: host_work's gaps (load-us = 2000 of CPU work) are host_work at the
        # default 100 us, launch_overhead when the threshold is above them.
        hw = capture(tmp, 'host_work', '--iters', '10', '--load-us', '2000',
                     env_extra={'GPUSIM_KERNEL_US': 'conv=20'})
        d = json.loads(report('--json', hw).stdout)
        s = json.loads(report('--json', '--starve-us', '1000000', hw).stdout)
        expect(d['top_idle_cause'] == 'host_work' and s['breakdown']['host_work'] == 0 and
               s['top_idle_cause'] == 'launch_overhead',
               '--starve-us 1000000 turns host_work gaps into launch_overhead')
        expect(abs(d['breakdown']['host_work'] + d['breakdown']['launch_overhead'] -
                   s['breakdown']['launch_overhead']) < 1e-9,
               'and moves exactly the host_work share')

        # Several traces: rows, and a merged view weighted by each trace's SM-time budget.
        p = report('--json', good, hw)
        m = json.loads(p.stdout)
        expect(p.returncode == 0 and len(m['traces']) == 2 and len(m['per_device']) == 2,
               'two traces: two rows and two devices')
        budgets = [(t['end_ns'] - t['start_ns']) * m['devices'][i]['sm_count']
                   for i, t in enumerate(m['traces'])]
        ok = True
        for k, v in m['breakdown'].items():
            want = sum(b * t['breakdown'][k] for b, t in zip(budgets, m['traces'])) / sum(budgets)
            ok &= abs(v - want) < 1e-9
        expect(ok, 'the merged breakdown is the SM-weighted mean of the rows')
        expect(abs(sum(m['breakdown'].values()) - 1) < 1e-9, 'and sums to 1')
        expect(m['counts']['kernels'] == sum(t['counts']['kernels'] for t in m['traces']),
               'merged counts are the sums')
        p = report('--json', good, os.path.join(tmp, 'empty.trace.zst'))
        expect(p.returncode == 1 and p.stderr.count('\n') == 1 and 'empty.trace.zst' in p.stderr,
               'one bad trace among several: exit 1 naming it')

        # The text report: verdict, quadrant, bars, top causes; no colour when piped.
        t = report(good).stdout
        expect('Verdict:' in t and 'Quadrant:' in t and 'Top causes' in t and '\033[' not in t,
               'text report: first screen, no colour on a pipe')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
