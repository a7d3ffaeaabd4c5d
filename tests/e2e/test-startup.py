#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up costs and clock skew on the simulated GPU (a test double).

1. tests/e2e/audit/startup.cu under GPUSIM_INIT_MS (context creation in the first call) and
   GPUSIM_MODULE_LOAD_US (lazy loading at a kernel's first launch): the report's start-up
   totals count what gpusim was told to cost, the start-up bucket holds step_b's load (the
   one inside the window, in the gap before its first run), and no advice names the
   cudaFree(0) that created the context. Bounds come from the knobs: a load lasts at least
   MODULE_LOAD_US, and step_b's cannot last longer than all loads less step_a's.
2. The tiny-kernel and sync workloads keep their top cause when GPU times are off the host
   clock by a skew of +-5 us with a drift of +-2 us (GPUSIM_GPU_SKEW_NS, GPUSIM_GPU_JITTER_NS:
   what CUPTI's interpolation was seen to err by), their arguments and gpusim settings those
   of tests/workloads/workloads.json.
"""
import argparse
import json
import os
import sys
import tempfile

from checks import FAILS, expect, profile

INIT_MS, LOAD_US, STEP_US, ITERS = 200, 2000, 100, 20


def startup(a, tmp):
    env = {'GPUSIM_INIT_MS': str(INIT_MS), 'GPUSIM_MODULE_LOAD_US': str(LOAD_US),
           'GPUSIM_KERNEL_US': f'step_={STEP_US}'}
    why, r, text = profile(a.build, a.report, [os.path.join(a.programs, 'audit-startup')],
                           os.path.join(tmp, 'startup.trace.zst'), env)
    if not expect(why is None, f'the start-up program runs under gpuwhy ({why})'):
        return
    c, su = r['counts'], r['startup']
    expect((c['kernels'], c['launches'], c['host_syncs']) == (2 * ITERS, 2 * ITERS, ITERS + 2),
           f"{2 * ITERS} kernels and launches, {ITERS + 2} synchronizing calls "
           f"({c['kernels']}, {c['launches']}, {c['host_syncs']})")
    expect(su['contexts'] == 1 and su['context_creation_ns'] >= INIT_MS * 1e6,
           f"one context created, in at least {INIT_MS} ms ({su['contexts']}, "
           f"{su['context_creation_ns'] / 1e6:.1f} ms)")
    expect(su['loadings'] == 2 and su['loading_ns'] >= 2 * LOAD_US * 1e3,
           f"two kernels loaded lazily, each in at least {LOAD_US} us ({su['loadings']}, "
           f"{su['loading_ns'] / 1e3:.0f} us)")
    window_us = r['window']['duration_ns'] / 1e3
    got = r['breakdown']['startup'] * window_us
    # step_b's load began right after step_a's launch and step_a ran STEP_US: the load covers
    # the gap from step_a's end to step_b's launch returning, all but step_a's STEP_US and
    # the two calls' host costs (a few us each on gpusim)
    lo, hi = LOAD_US - STEP_US - 50, su['loading_ns'] / 1e3 - LOAD_US
    expect(lo <= got <= hi,
           f'startup holds step_b\'s load inside the window: {got:.0f} us in [{lo}, {hi:.0f}]')
    named = [x['text'] for x in r['recommendations'] if 'cudaFree' in x['text']]
    expect(not named, f'no advice names the warm-up cudaFree(0) ({named})')
    expect('Start-up (host time' in text, 'the text report has the start-up line')


def skewed(a, tmp):
    with open(a.workloads_json) as f:
        workloads = {w['name']: w for w in json.load(f)['workloads']}
    for name in ('tiny_kernels', 'sync_per_iteration'):
        w = workloads[name]
        argv = [os.path.join(a.workloads, name)]
        for k, v in w['args'].items():
            argv += ['--' + k.replace('_', '-'), str(v)]
        for skew in (5000, -5000):
            env = dict(w.get('env', {}), GPUSIM_GPU_SKEW_NS=str(skew),
                       GPUSIM_GPU_JITTER_NS='2000')
            why, r, _ = profile(a.build, a.report, argv,
                                os.path.join(tmp, f'{name}{skew}.trace.zst'), env)
            if not expect(why is None, f'{name} runs with GPU times {skew:+d} ns off ({why})'):
                continue
            got = r[w['cause_field']]
            expect(got == w['cause'],
                   f"{name}, GPU times {skew:+d} +- 2000 ns off the host clock: "
                   f"{w['cause_field']} {w['cause']} (report: {got})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--programs', required=True, help='the audit programs')
    ap.add_argument('--workloads', required=True, help='the built workloads')
    ap.add_argument('--workloads-json', required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        startup(a, tmp)
        skewed(a, tmp)
    print(f'{len(FAILS)} failures')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
