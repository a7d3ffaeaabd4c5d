#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measured counters: the NVML sampler on gpusim, end to end.

  gpm       two_phases (tests/e2e/counters) with each kernel's DRAM and SM use set by the
            GPUSIM_KERNEL_DRAM/_SM knobs: the estimates match the knobs; the kernel whose name
            says compute but whose DRAM use is 80% is counted bandwidth-bound (names and
            counters disagree); the pair of kernels that only ever ran together is estimated
            with low confidence and keeps its names' classes; the breakdown follows; the
            bandwidth phase and the compute phase are told apart window by window; the page
            draws the bandwidth lane and the table
  samples   an older GPU (utilization samples, no GPM): counters shown, classes the names'
  absent    NVML refusing (no driver, no permission), missing, the sampler off, a program
            shorter than the sampler's first period: the report as by names alone, and the
            reason
  hang      an NVML call that never returns: the program exits all the same, the trace is
            clean

gpusim is a test double: its NVML reports the knobs' values, not measurements. Expected values
come from the knobs and the classification rule (DRAM >= 60% of peak: bandwidth_bound; DRAM
and SM both under 60%: low_intensity; doc/causes.md); tolerances are the windows' timing
(a window's ends are read on the host a few microseconds from gpusim's), never a fit to this
program's own output.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from checks import FAILS, expect, favoured

ARGS = None
KERNEL_US = 200
DRAM = {'elementwise': 0.9, 'fused': 0.8, 'sgemm': 0.2, 'attention': 0.5, 'softmax': 0.7}
SM = {'softmax': 0.4}  # the others: gpusim's default, the SMs of the first wave (all 132)
KNOBS = {
    'GPUSIM_KERNEL_US': ','.join('%s=%d' % (k, KERNEL_US) for k in DRAM),
    'GPUSIM_KERNEL_DRAM': ','.join('%s=%g' % kv for kv in DRAM.items()),
    'GPUSIM_KERNEL_SM': ','.join('%s=%g' % kv for kv in SM.items()),
}
NAME_CLASS = {'elementwise': 'bandwidth_bound', 'fused': 'compute', 'sgemm': 'compute',
              'attention': 'compute', 'softmax': 'low_intensity'}


def measured_class(dram, sm):
    return 'bandwidth_bound' if dram >= 0.6 else 'low_intensity' if sm < 0.6 else 'compute'


def run(tmp, label, env_extra, kernels):
    trace = os.path.join(tmp, label + '.trace.zst')
    env = dict(os.environ)
    env.update(KNOBS)
    env.update(LD_LIBRARY_PATH=os.path.join(ARGS.build, 'tests/gpusim'),
               LD_PRELOAD=os.path.join(ARGS.build, 'lib/libgpuwhy.so'), GPUWHY_QUIET='1',
               GPUWHY_OUTPUT=trace, GPUWHY_SAMPLE_MS='20')
    for k, v in env_extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    t0 = time.monotonic()
    p = subprocess.run([ARGS.workload, '--kernels', str(kernels)], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                       preexec_fn=favoured)
    wall = time.monotonic() - t0
    if not expect(p.returncode == 0, '%s: two_phases exits 0 (%s)' % (label, p.stderr[-300:])):
        return None, None, wall
    j = subprocess.run([ARGS.report, '--json', trace], capture_output=True, text=True, timeout=120)
    t = subprocess.run([ARGS.report, trace], capture_output=True, text=True, timeout=120)
    if not expect(j.returncode == 0 and t.returncode == 0, '%s: gpuwhy-report reads it' % label):
        return None, None, wall
    return json.loads(j.stdout), t.stdout, wall


def short(name):
    return next(k for k in DRAM if name.startswith(k))


def kernel_times(rep):
    """GPU time x fill of each kernel of the program, from the report's kernel table."""
    return {short(k['name']): (k['total_ns'], k['mean_fill']) for k in rep['kernels_top']}


def expect_breakdown(rep, label, classes):
    """The breakdown's kernel buckets are each class's kernels' time x fill over the window."""
    window = rep['window']['end_ns'] - rep['window']['start_ns']
    kt = kernel_times(rep)
    for bucket in ('bandwidth_bound', 'compute', 'low_intensity'):
        want = sum(ns * fill for k, (ns, fill) in kt.items() if classes[k] == bucket) / window
        got = rep['breakdown'][bucket]
        expect(abs(got - want) < 1e-3,
               '%s: breakdown %s %.4f = its kernels\' time over the window %.4f'
               % (label, bucket, got, want))


def check_gpm(tmp):
    rep, text, _ = run(tmp, 'gpm', {'GPUSIM_NVML': 'gpm'}, 1000)
    if not rep:
        return
    c = rep['utilization']['counters']
    expect(c['measured'] and c['source'] == 'gpm' and c['period_ns'] == 20000000,
           'gpm: counters measured by GPM every 20 ms (%s, %s)' % (c['source'], c['period_ns']))
    expect(set(c['series']) == {'dram_bw_util', 'sm_util', 'sm_occupancy', 'tensor_util'},
           'gpm: the four GPM series (%s)' % sorted(c['series']))
    est = {short(e['name']): e for e in c['estimates'] if e['kernels']}
    expect(set(est) == set(DRAM), 'gpm: an estimate for each kernel (%s)' % sorted(est))
    for k in ('elementwise', 'fused', 'sgemm'):
        e = est.get(k)
        if not e:
            continue
        sm = SM.get(k, 1.0)
        want = measured_class(DRAM[k], sm)
        # the windows' ends are read within microseconds of gpusim's: 20 ms windows, 0.02
        expect(abs(e['dram'] - DRAM[k]) < 0.02 and abs(e['sm'] - sm) < 0.02,
               'gpm: %s uses DRAM %.3f, SMs %.3f (knobs %.2f, %.2f)'
               % (k, e['dram'], e['sm'], DRAM[k], sm))
        expect(e['confidence'] == 'high' and e['applied'] and e['measured_class'] == want
               and e['name_class'] == NAME_CLASS[k] and e['agrees'] == (want == NAME_CLASS[k]),
               'gpm: %s: name says %s, counters say %s (%s), applied'
               % (k, e['name_class'], e['measured_class'], e['confidence']))
    # always one of each in turn: the windows see their sum, never either alone
    for k in ('attention', 'softmax'):
        e = est.get(k)
        if e:
            expect(e['confidence'] == 'low' and not e['applied'] and e['dram_se'] is None,
                   'gpm: %s ran only beside its partner: low confidence, names kept (%s)'
                   % (k, e['confidence']))
    if est.get('attention') and est.get('softmax'):
        a, s = est['attention'], est['softmax']
        expect(abs(a['dram'] + s['dram'] - DRAM['attention'] - DRAM['softmax']) < 0.04,
               'gpm: the pair together is estimated right: %.3f + %.3f'
               % (a['dram'], s['dram']))
    classes = dict(NAME_CLASS)
    classes['fused'] = 'bandwidth_bound'
    expect_breakdown(rep, 'gpm', classes)
    kt = kernel_times(rep)
    total = sum(ns for ns, _ in kt.values())
    expect(abs(c['reclassified_share'] - kt['fused'][0] / total) < 1e-6,
           'gpm: the counters moved fused_update_kernel\'s share of kernel time (%.3f)'
           % c['reclassified_share'])
    # memory_bandwidth: the kernels' DRAM use over the time they ran, within the two edge
    # windows' share of the run (the sampler starts at the device's first call)
    want = sum(DRAM[k] * ns for k, (ns, _) in kt.items()) / (
        rep['window']['end_ns'] - rep['window']['start_ns'])
    mb = rep['utilization']['memory_bandwidth']
    expect(mb is not None and abs(mb - want) < 0.05,
           'gpm: memory_bandwidth %.3f, the knobs say %.3f' % (mb or -1, want))
    # the phases apart: every window at the bandwidth phase's level comes before every
    # window at the compute phase's
    pts = c['series']['dram_bw_util']
    high = [t for t, v in pts[:-1] if v > DRAM['elementwise'] - 0.05]
    low = [t for t, v in pts[:-1] if v < DRAM['sgemm'] + 0.05]
    expect(len(high) >= 3 and len(low) >= 3 and max(high) < min(low),
           'gpm: %d windows of the bandwidth phase, then %d of the compute phase'
           % (len(high), len(low)))
    expect('Measured counters' in text and re.search(
        r'fused_update_kernel.*compute +bandwidth_bound +high +<- names disagree', text),
           'gpm: the text names the kernel where names and counters disagree')
    expect('memory bandwidth' in text and 'measured: NVML GPM' in text,
           'gpm: the text gives the measured bandwidth')
    check_page(tmp, os.path.join(tmp, 'gpm.trace.zst'))


def check_page(tmp, trace):
    page = os.path.join(tmp, 'counters.html')
    p = subprocess.run([ARGS.report, '--html', page, trace], capture_output=True, text=True,
                       timeout=120)
    if not expect(p.returncode == 0, 'page: written'):
        return
    binary = next((shutil.which(n) for n in ('chromium', 'chromium-browser') if shutil.which(n)),
                  None)
    if not binary:
        print('skip page: no Chromium')
        return
    profile = tempfile.mkdtemp(dir=tmp)
    base = [binary, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
            '--hide-scrollbars', '--user-data-dir=' + profile, '--window-size=1300,1500',
            '--virtual-time-budget=5000']
    if ARGS.outdir:
        os.makedirs(ARGS.outdir, exist_ok=True)
        subprocess.run(base + ['--screenshot=' + os.path.join(ARGS.outdir, 'counters-gpusim.png'),
                               'file://' + page], capture_output=True, timeout=120)
    r = subprocess.run(base + ['--dump-dom', 'file://' + page], capture_output=True, text=True,
                       timeout=120)
    dom = r.stdout
    lane = re.search(r'<path d="M[^"]+"[^>]*data-series="dram_bw_util"', dom)
    expect(lane is not None, 'page: the bandwidth lane draws the measured DRAM windows')
    expect('not measured' not in dom.split('id="timeline"')[-1][:20000],
           'page: the lane is not marked "not measured"')
    table = dom[dom.find('id="counters"'):]
    expect('fused_update_kernel' in table and 'names disagree: counted as the counters say'
           in table, 'page: the Measured counters table shows where names and counters disagree')


def check_samples(tmp):
    rep, text, _ = run(tmp, 'samples', {'GPUSIM_NVML': 'samples', 'GPUSIM_NVML_SAMPLE_MS': '20'},
                       400)
    if not rep:
        return
    c = rep['utilization']['counters']
    expect(c['measured'] and c['source'] == 'samples'
           and set(c['series']) == {'gpu_busy', 'memory_busy'},
           'samples: utilization samples recorded (%s)' % sorted(c['series']))
    expect(rep['utilization']['memory_bandwidth'] is None,
           'samples: memory busy time is not bandwidth: memory_bandwidth null')
    expect(not any(e['applied'] for e in c['estimates']),
           'samples: no class comes from the samples')
    expect_breakdown(rep, 'samples', NAME_CLASS)
    # every kernel uses DRAM in the knobs, so memory is busy whenever a kernel runs
    busy = [v for _, v in c['series']['gpu_busy'][:-1]]
    mem = [v for _, v in c['series']['memory_busy'][:-1]]
    expect(len(busy) >= 3 and busy == mem and max(busy) > 0.95,
           'samples: memory busy whenever a kernel ran (%d samples)' % len(busy))
    expect('only NVML utilization samples' in text, 'samples: the text says why no bandwidth')


def check_absent(tmp):
    cases = [
        ('off', {}, 'Driver Not Loaded'),
        ('refuse', {'GPUSIM_NVML': 'refuse'}, 'Insufficient Permissions'),
        ('missing', {'GPUSIM_NVML': 'gpm', 'GPUWHY_NVML_PATH': os.path.join(tmp, 'nope.so.1')},
         'could not be loaded'),
        ('sampler-off', {'GPUSIM_NVML': 'gpm', 'GPUWHY_SAMPLE_MS': '0'}, None),
        # 200 kernels a phase are 0.16 s of device time, well within a first period of 5 s
        ('short', {'GPUSIM_NVML': 'gpm', 'GPUWHY_SAMPLE_MS': '5000'},
         'ended within the sampler\'s first period (5000 ms)'),
    ]
    for label, env, reason in cases:
        rep, text, _ = run(tmp, label, env, 200)
        if not rep:
            continue
        c = rep['utilization']['counters']
        expect(not c['measured'] and rep['utilization']['memory_bandwidth'] is None
               and c['series'] == {} and c['estimates'] == [],
               '%s: no counters, memory_bandwidth null' % label)
        if reason:
            expect(reason in (c['reason'] or '') and reason in text,
                   '%s: the report says why: %r' % (label, c['reason']))
        else:
            expect(c['reason'] is None and 'no measured counters in the trace' in text,
                   '%s: no sampler, no reason: the text says so' % label)
        expect_breakdown(rep, label, NAME_CLASS)
        expect(rep['trace']['clean_exit'] if 'clean_exit' in rep['trace']
               else rep['traces'][0]['clean_exit'], '%s: the trace closed cleanly' % label)


def check_hang(tmp):
    rep, _, wall = run(tmp, 'hang', {'GPUSIM_NVML': 'hang'}, 200)
    if not rep:
        return
    # the exit waits 1 s for the sampler, then leaves it; 200 kernels a phase are 0.16 s
    expect(wall < 30, 'hang: the program ends (%.1f s)' % wall)
    clean = rep['traces'][0]['clean_exit']
    expect(clean, 'hang: the trace is complete (footer written)')
    expect_breakdown(rep, 'hang', NAME_CLASS)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--workload', required=True)
    ap.add_argument('--outdir')
    ap.add_argument('cases', nargs='*', default=['gpm', 'samples', 'absent', 'hang'])
    ARGS = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for case in ARGS.cases:
            {'gpm': check_gpm, 'samples': check_samples, 'absent': check_absent,
             'hang': check_hang}[case](tmp)
    print('%d failed' % len(FAILS))
    sys.exit(1 if FAILS else 0)


if __name__ == '__main__':
    main()
