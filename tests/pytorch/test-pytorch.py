#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The torch suite: real PyTorch programs (this folder) under `gpuwhy run --sim`, each with the
cause the report must name worked out here from the program's parameters and gpusim's knobs,
and the report's counts checked against gpusim's own (GPUSIM_STATS, counted where the work is
placed on the simulated timeline, not from CUPTI). gpusim is a test double: its durations are
a model's, and the checks are on causes, shares with margins the rules give, and exact counts.

Skipped (exit 77) with a plain message when the PyTorch environment (scripts/torch-env.sh) is
not there."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'e2e'))
from checks import FAILS, expect, favoured  # noqa: E402

GEMM = re.compile(r'nvjet|xmma_gemm|gemv')
ALLOWED_UNCLASSIFIED = 0.05


def line_of(program, marker):
    with open(os.path.join(HERE, program)) as f:
        for n, text in enumerate(f, 1):
            if f'# {marker}' in text:
                return n
    raise LookupError(f'{program}: no {marker}')


def run(opts, tmp, name, program, args, knobs):
    """Runs program under gpuwhy run --sim; returns (report JSON, gpusim's counts)."""
    out = os.path.join(tmp, name)
    stats = os.path.join(tmp, name + '.stats')
    env = dict(os.environ, GPUSIM_STATS=stats, GPUWHY_QUIET='1', **knobs)
    p = subprocess.run([opts.launcher, 'run', '--sim', '-o', out + '/', '--no-report', '--',
                        opts.python, os.path.join(HERE, program)] + [str(a) for a in args],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=600, preexec_fn=favoured)
    if not expect(p.returncode == 0, f'{name}: {program} ran (exit {p.returncode}) '
                  f'{p.stderr.strip()[-800:]}'):
        return None, None
    traces = [os.path.join(out, f) for f in os.listdir(out)]
    j = subprocess.run([opts.launcher, 'report', '--json'] + traces, capture_output=True,
                       text=True, timeout=300)
    if not expect(j.returncode == 0, f'{name}: report (exit {j.returncode}) {j.stderr[-400:]}'):
        return None, None
    with open(stats) as f:
        return json.loads(j.stdout), json.load(f)


GAPS = ('launch_overhead', 'host_sync', 'host_work', 'blocked')


def idle_top(breakdown):
    """The cause of the GPU's idle gaps that took the most SM-time (design.md, rule C)."""
    return max(GAPS, key=lambda k: breakdown[k])


def gap_share(breakdown, cause):
    total = sum(breakdown[k] for k in GAPS)
    return breakdown[cause] / total if total else 0


def common(name, r, sim, steps, ops_per_step=None):
    """What every program's report must agree on with gpusim's own count."""
    c = r['counts']
    expect(c['kernels'] == sim['kernels'],
           f'{name}: kernels in the report {c["kernels"]} = gpusim\'s {sim["kernels"]}')
    expect(c['syncs_explicit'] == sim['syncs'],
           f'{name}: explicit syncs in the report {c["syncs_explicit"]} = gpusim\'s '
           f'{sim["syncs"]}')
    gemms = sum(k['count'] for k in r['kernels_top'] if GEMM.search(k['name']))
    expect(gemms == sim['gemms'], f'{name}: GEMM-named kernels {gemms} = gpusim\'s {sim["gemms"]}')
    ss = r['step_summary']
    expect(ss['count'] == steps, f'{name}: {ss["count"]} steps = {steps}')
    ops = [s['ops'] for s in r['steps']]
    if ops_per_step is not None:
        expect(ops and all(o == ops_per_step for o in ops),
               f'{name}: GPU operations per step {sorted(set(ops))} = {ops_per_step}')
    expect(r['unclassified_kernel_share'] <= ALLOWED_UNCLASSIFIED,
           f'{name}: unclassified kernel time {r["unclassified_kernel_share"]:.3f} <= '
           f'{ALLOWED_UNCLASSIFIED}')
    return ss['breakdown']


def sites_at(entries, program, line):
    return [e for e in entries if e.get('file') and e['file'].endswith('/' + program)
            and e.get('line') == line]


def mlp_item(opts, tmp):
    """.item() every step: the host waits for the step's GPU work, then the GPU waits while the
    host starts the next step. With 5 ms a wave every non-GEMM kernel is longer than the host's
    whole step, so the sync's wait W (most of the step's GPU time) exceeds the gaps after it:
    they are all sync debt, host_sync (design.md, C.2)."""
    steps, layers, width, batch = 10, 3, 256, 64
    r, sim = run(opts, tmp, 'mlp_item', 'mlp_item.py', [steps, layers, width, batch],
                 {'GPUSIM_WAVE_US': '5000'})
    if not r:
        return
    b = common('mlp_item', r, sim, steps)
    # forward: one GEMM a layer; backward: the weight gradient of each layer and the input
    # gradient of all but the first
    expect(sim['gemms'] == steps * (3 * layers - 1),
           f'mlp_item: gpusim ran {sim["gemms"]} GEMMs = {steps} x (3 x {layers} - 1)')
    # each parameter tensor's .cuda() copy waits once; then one .item() a step
    expect(sim['syncs'] == steps + 2 * layers,
           f'mlp_item: gpusim counted {sim["syncs"]} syncs = {steps} + 2 x {layers}')
    expect(gap_share(b, 'host_sync') >= 0.8,
           f'mlp_item: host_sync is {gap_share(b, "host_sync"):.2f} >= 0.8 of the steps\' idle '
           f'gaps ({ {k: round(v, 3) for k, v in b.items() if v} })')
    item = line_of('mlp_item.py', 'ITEM_LINE')
    top = max(r['sync_sites'], key=lambda s: s['exposed_ns'])
    expect(top.get('file', '').endswith('/mlp_item.py') and top.get('line') == item,
           f'mlp_item: the top sync site {top["site"]} is the .item() line {item}')
    expect(top['count'] == steps, f'mlp_item: {top["count"]} syncs there = {steps} steps')


def sync_wrong(opts, tmp):
    """torch.cuda.synchronize() between forward and backward: the same debt as .item(), named
    at the synchronize line."""
    steps, width, batch = 10, 256, 64
    r, sim = run(opts, tmp, 'sync_wrong', 'sync_wrong.py', [steps, width, batch],
                 {'GPUSIM_WAVE_US': '5000'})
    if not r:
        return
    b = common('sync_wrong', r, sim, steps)
    expect(sim['gemms'] == steps * (3 * 2 - 1), f'sync_wrong: {sim["gemms"]} GEMMs = {steps} x 5')
    expect(sim['syncs'] == steps + 2 * 2 + 1,
           f'sync_wrong: gpusim counted {sim["syncs"]} syncs = {steps} + 4 copies + the last')
    expect(gap_share(b, 'host_sync') >= 0.8,
           f'sync_wrong: host_sync is {gap_share(b, "host_sync"):.2f} >= 0.8 of the steps\' idle '
           f'gaps ({ {k: round(v, 3) for k, v in b.items() if v} })')
    line = line_of('sync_wrong.py', 'SYNC_LINE')
    top = max(r['sync_sites'], key=lambda s: s['exposed_ns'])
    expect(top.get('file', '').endswith('/sync_wrong.py') and top.get('line') == line and
           top['api'] == 'cudaDeviceSynchronize' and top['count'] == steps,
           f'sync_wrong: the top sync site {top["api"]} x{top["count"]} at {top["site"]} is '
           f'the synchronize line {line}, {steps} times')


def loader_stall(opts, tmp):
    """Each step waits stall_ms for its batch: a step's GPU work (12 kernels of 5 us) is
    microseconds, so at least 1 - 1 ms / stall_ms of every step is the GPU waiting for the
    host (host_work: gaps over 100 us with no sync debt)."""
    steps, stall_ms, batch = 8, 50, 8
    r, sim = run(opts, tmp, 'loader_stall', 'loader_stall.py', [steps, stall_ms, batch], {})
    if not r:
        return
    b = common('loader_stall', r, sim, steps)
    expect(idle_top(b) == 'host_work' and b['host_work'] >= 1 - 1 / stall_ms,
           f'loader_stall: host_work {b["host_work"]:.3f} of the steps >= 1 - 1/{stall_ms}')
    expect(r['step_summary']['median_ns'] >= stall_ms * 1e6,
           f'loader_stall: a step lasts {r["step_summary"]["median_ns"] / 1e6:.1f} ms >= the '
           f'{stall_ms} ms stall')


def elementwise(opts, tmp):
    """3 x repeats tiny in-place kernels a step, each launch call holding the host for
    GPUSIM_LAUNCH_US = 200 us while a kernel runs 5 us: every gap is covered by a launch call,
    launch_overhead (design.md, C.3), at least 200 / (200 + 5 + 100) of the steps; the
    repeated multiply-add-ReLU sequence is a fusion candidate at the program's lines."""
    steps, repeats, size = 8, 20, 1024
    r, sim = run(opts, tmp, 'elementwise', 'elementwise.py', [steps, repeats, size],
                 {'GPUSIM_LAUNCH_US': '200'})
    if not r:
        return
    b = common('elementwise', r, sim, steps, ops_per_step=3 * repeats)
    expect(sim['kernels'] == steps * 3 * repeats,
           f'elementwise: gpusim ran {sim["kernels"]} kernels = {steps} x 3 x {repeats}')
    expect(idle_top(b) == 'launch_overhead' and b['launch_overhead'] >= 200 / 305,
           f'elementwise: launch_overhead {b["launch_overhead"]:.3f} of the steps >= 200/305')
    expect(r['counts']['tiny_kernels'] == sim['kernels'],
           f'elementwise: all {sim["kernels"]} kernels are tiny ({r["counts"]["tiny_kernels"]})')
    op = line_of('elementwise.py', 'OP_LINE')
    fused = [f for f in r['fusion_candidates']
             if any(str(f.get('site', '')).endswith(f'(elementwise.py:{n})')
                    for n in (op, op + 1, op + 2))]
    expect(fused, f'elementwise: a fusion candidate at elementwise.py:{op}-{op + 2} '
           f'({[f.get("site") for f in r["fusion_candidates"]][:3]})')


def memory_growth(opts, tmp):
    """steps x mib MiB kept alive: mib MiB is over the caching allocator's small pool, so each
    step's tensor is its own cudaMalloc, never freed: the allocation site is the program's
    line, steps allocations of mib MiB, and memory grows."""
    steps, mib = 10, 16
    r, sim = run(opts, tmp, 'memory_growth', 'memory_growth.py', [steps, mib], {})
    if not r:
        return
    common('memory_growth', r, sim, steps, ops_per_step=1)
    expect(sim['allocations'] == steps and sim['allocated_bytes'] == steps * mib << 20,
           f'memory_growth: gpusim allocated {sim["allocations"]} x = {sim["allocated_bytes"]} '
           f'bytes = {steps} x {mib} MiB')
    line = line_of('memory_growth.py', 'ALLOC_LINE')
    at = sites_at(r['allocation_sites'], 'memory_growth.py', line)
    expect(at and at[0]['count'] == steps and at[0]['bytes'] == steps * mib << 20 and
           at[0]['never_freed'] == steps,
           f'memory_growth: allocation site memory_growth.py:{line}, {steps} never freed '
           f'({[(a["site"], a["count"], a["bytes"]) for a in r["allocation_sites"]][:2]})')
    expect(r['memory']['growth_bytes_per_s'] > 0 and r['memory']['final_bytes'] >= steps * mib << 20,
           f'memory_growth: growth {r["memory"]["growth_bytes_per_s"]:.0f} B/s > 0, final '
           f'{r["memory"]["final_bytes"]} >= {steps * mib << 20}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--launcher', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--only', default='')
    opts = ap.parse_args()
    venv = os.environ.get('GPUWHY_TORCH_VENV') or os.path.join(opts.source, '.venv-torch')
    opts.python = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(os.path.join(venv, '.gpuwhy-torch-env')):
        print(f'SKIP: no PyTorch environment at {venv} (make it with scripts/torch-env.sh, '
              f'about 3 GB to download)')
        return 77
    tests = [mlp_item, sync_wrong, loader_stall, elementwise, memory_growth]
    with tempfile.TemporaryDirectory(prefix='gw-torch-') as tmp:
        for t in tests:
            if not opts.only or t.__name__ in opts.only.split(','):
                t(opts, tmp)
    checks = sum(1 for _ in FAILS)
    print(f'{len(FAILS)} failed' if FAILS else 'all passed')
    return 1 if checks else 0


if __name__ == '__main__':
    sys.exit(main())
