#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report on the audit programs (tests/e2e/audit): patterns no cause workload covers.

Each program runs on gpusim (a test double: its durations are a cost model, never GPU
measurements) under libgpuwhy.so; its JSON report must meet what the program's comment
derives by hand from its constants, gpusim's cost model and design.md's rules: exact counts and
memory figures, device-time shares (gpusim makes kernel and copy durations exact, the window
is measured), and bounds for host-time shares. The constants below are the programs'.
Each program runs once and passes or fails: host time on a loaded machine only stretches
what the checks bound, and where a derivation needs the host to stay ahead of the GPU the
device is held until the host has queued its work (GPUSIM_HOLD_US), so a descheduled host
thread cannot change the device timeline. scripts/load-test.py checks that on a busy machine.
"""
import argparse
import os
import sys
import tempfile

from checks import FAILS, expect, profile

ARGS = None
CAP = 132 * 8  # gpusim: 132 SMs x 8 blocks of 256 threads at 32 registers
H2D_US = lambda b: 5 + b / 25e3  # GPUSIM_COPY_US + bytes / GPUSIM_H2D_GBPS (GB/s = 1e3 B/us)


def run(name, args=(), env_extra=None, tmp=None):
    """Runs an audit program under gpuwhy on gpusim; returns (why it failed or None, JSON,
    text)."""
    trace = os.path.join(tmp, f'{name}-{run.n}.trace.zst')
    run.n += 1
    run.trace = trace
    return profile(ARGS.build, ARGS.report,
                   [os.path.join(ARGS.programs, 'audit-' + name), *args], trace, env_extra)


run.n = 0


class Checker:
    """Collects the failures of one run."""

    def __init__(self, r):
        self.r = r
        self.errors = []
        self.window_us = r['window']['duration_ns'] / 1e3

    def ok(self, cond, what):
        if not cond:
            self.errors.append(what)

    def us(self, key):
        return self.r['breakdown'][key] * self.window_us

    def counts(self, **want):
        for k, v in want.items():
            self.ok(self.r['counts'][k] == v, f"counts.{k} = {self.r['counts'][k]}, want {v}")

    def near_us(self, key, want, tol, why):
        got = self.us(key)
        self.ok(abs(got - want) <= tol, f'{key} = {got:.3f} us, want {want:.3f} +- {tol}: {why}')

    def sums_to_one(self):
        total = sum(self.r['breakdown'].values())
        self.ok(abs(total - 1) < 1e-9, f'breakdown sums to {total}')

    def site(self, api):
        for s in self.r['sync_sites']:
            if s['api'] == api:
                return s
        self.errors.append(f'no sync site {api}')
        return {'count': 0, 'wait_ns': 0, 'exposed_ns': 0, 'host_work_after_ns': 0,
                'kind': None, 'site': ''}


def graph_replay(c, text):
    nodes, replays, wave = 10, 200, 5.0
    k = nodes * replays
    c.counts(kernels=k, tiny_kernels=k, launches=replays, captured_launches=nodes, host_syncs=2,
             syncs_explicit=1, syncs_implicit=1, memcpy=0, allocations=1, frees=1)
    # One-block kernels: fill 1/CAP, the rest of their time small_batch (10 names: no chain).
    c.near_us('compute', k * wave / CAP, 0.01, 'filled share of 2000 one-block kernels')
    c.near_us('small_batch', k * wave * (1 - 1 / CAP), 0.5, 'unfilled share, period 10')
    c.ok(c.r['breakdown']['dependency_chain'] == 0, 'period 10 is no chain (1-4)')
    # The host stays ahead: every gap is a queued 1 us (QUEUE_US) gap, launch_overhead.
    c.near_us('launch_overhead', (k - 1) * 1.0, 0.5, '1999 queued 1 us gaps')
    c.ok(abs(c.window_us - (k * wave + k - 1)) < 0.5,
         f'window {c.window_us} us, want {k * wave + k - 1}')
    c.ok(c.r['dominant_cause'] == 'small_batch', 'dominant small_batch')
    c.ok(not c.r['fusion_candidates'], 'a period of 10 is no fusion candidate (2-8 kernels)')
    # The kernels already run from a graph: the advice must not be to capture them in one.
    c.ok('Capture the loop in a CUDA Graph' not in text and 'already run from a graph' in text,
         'launch-overhead advice for graph nodes is fusion, not a graph')
    tops = {t['name']: t['count'] for t in c.r['tiny_kernels_top']}
    c.ok(tops == {f'st{i}(float*)': replays for i in range(nodes)},
         f'tiny kernels st0..st9 x200 each, got {tops}')


def polled(c, loops):
    """The polling waits of `loops` polling loops: one each, but for a loop whose host thread
    the scheduler kept off its CPU from the launch until its kernel was done (no query found it
    unfinished: the host never waited), or for over 10 ms in the middle (capture.md: not a
    wait); on a loaded machine a few. At least 2 queries each."""
    n = c.r['counts']['syncs_poll']
    c.ok(loops - 3 <= n <= loops, f'{n} polling waits of {loops} loops')
    c.ok(c.r['counts']['poll_queries'] >= 2 * n,
         f"{c.r['counts']['poll_queries']} queries in {n} polling waits: at least 2 each")
    return n


def sync_poll(c, text):
    iters, kernel_us = 100, 2 * 250.0
    polls = polled(c, iters)
    c.counts(kernels=2 * iters, launches=2 * iters, host_syncs=iters + polls + 2,
             syncs_explicit=iters + 1, syncs_implicit=1, tiny_kernels=0)
    # Full-wave kernels (fill 1), unclassified names: compute is exactly their time.
    c.near_us('compute', 2 * iters * kernel_us, 1.0, '200 kernels of 2 waves x 250 us')
    ev, poll = c.site('cudaEventSynchronize'), c.site('cudaStreamQuery')
    c.ok(ev['count'] == iters and poll['count'] == polls,
         f"event syncs {ev['count']}, polling waits {poll['count']}")
    c.ok(poll['kind'] == 'poll', f"the polling site's kind is {poll['kind']}")
    # Each waited for at most its whole kernel; the debt is what the rule may charge.
    for s in (ev, poll):
        c.ok(0 < s['wait_ns'] <= iters * kernel_us * 1e3, f"{s['api']} wait {s['wait_ns']} ns")
    hs = c.us('host_sync')
    c.ok(hs <= (ev['wait_ns'] + poll['wait_ns']) / 1e3 + 1,
         f'host_sync {hs:.0f} us over the debts: a sync can at most double the time it waited')
    # Each gap after a wait holds at least a 4 us launch call, paid by a debt of hundreds of
    # us, the polled phase's as the event-synced one's (the last wait of each phase may have
    # no gap of its own after it).
    c.ok(hs >= (iters + polls - 2) * 4, f'host_sync {hs:.0f} us, want >= '
         f'{(iters + polls - 2) * 4}')
    c.ok(poll['exposed_ns'] >= (polls - 1) * 4000,
         f"polling waits exposed {poll['exposed_ns']} ns, want >= {(polls - 1) * 4000}")
    c.ok(abs((ev['exposed_ns'] + poll['exposed_ns']) / 1e3 - hs) < 1,
         'host_sync is the event syncs\' and the polling waits\' exposed time')
    c.ok(c.r['dominant_cause'] == 'compute', 'dominant compute')
    c.ok('cudaStreamQuery' in text and 'poll' in text, 'the text report lists the polling site')


def memcpy_kinds(c, text):
    copies, size = 50, 4 << 20
    c.counts(memcpy=2 * copies, kernels=0, launches=0, host_syncs=copies + 4,
             syncs_copy=copies, syncs_explicit=2, syncs_implicit=2, allocations=2, frees=2)
    c.near_us('data_transfer', 2 * copies * H2D_US(size), 2 * copies * 0.002,
              '100 copies of 4 MiB at 25 GB/s + 5 us')
    m = c.r['memory']
    c.ok(m['peak_bytes'] == size and m['final_bytes'] == 0, f'device peak/final {m}')
    c.ok(m['pinned_peak_bytes'] == size and m['managed_peak_bytes'] == 0,
         'pinned memory counted apart')
    kinds = sorted((a['kind'], a['count'], a['bytes']) for a in c.r['allocation_sites'])
    c.ok(kinds == [('device', 1, size), ('pinned', 1, size)], f'allocation sites {kinds}')
    pg = c.site('cudaMemcpyAsync')
    c.ok(pg['kind'] == 'copy' and pg['count'] == copies, 'the pageable copies are copy syncs')
    # Only the GPU record says a copy was pageable: every copy call carries its stack.
    c.ok('memcpy_kinds.cu' in pg['site'], f"the pageable copies' site is {pg['site']!r}")
    # Each pageable copy is issued on an idle device and waits for itself: W = its duration.
    want = copies * H2D_US(size) * 1e3
    c.ok(abs(pg['wait_ns'] - want) <= copies * 2, f"pageable copies waited {pg['wait_ns']} ns, "
         f'want {want:.0f} (their own copies)')
    c.ok(0 < pg['exposed_ns'] <= (copies - 1) * H2D_US(size) * 1e3 + copies,
         f"pageable copies exposed {pg['exposed_ns']} ns: at most 49 debts of one copy")


def host_item(c, text):
    iters, every, host_us, kernel_us = 60, 10, 2000, 100.0
    reads = iters // every
    copy_us = 5 + 4 / 25e3
    c.counts(kernels=iters, launches=iters, memcpy=reads, host_syncs=reads + 2,
             syncs_copy=reads, syncs_explicit=1, syncs_implicit=1)
    c.near_us('compute', iters * kernel_us, 0.5, '60 full-wave kernels of 100 us')
    c.near_us('data_transfer', reads * copy_us, 0.05, '6 copies of 4 bytes')
    s = c.site('cudaMemcpy')
    # A read-back waits at most for its kernel, the 1 us queue gap and its copy; at least its
    # own copy.
    c.ok(reads * copy_us * 1e3 <= s['wait_ns'] <= reads * (kernel_us + 1 + copy_us) * 1e3,
         f"read-backs waited {s['wait_ns']} ns")
    # The last read-back has no gap after it: 5 debts are paid, each in full (gaps of ~2 ms).
    hs = c.us('host_sync')
    c.ok(hs <= (reads - 1) * (kernel_us + 1 + copy_us) + 0.5, f'host_sync {hs:.0f} us')
    c.ok(abs(hs - s['exposed_ns'] / 1e3) < 0.5, 'host_sync is the read-backs\' exposed time')
    # Every gap is >= HOST_US less the kernel and the copy; host work is the rest, after any
    # debt and outside the launch calls.
    gap_min = host_us - kernel_us - 1 - copy_us
    lo = 0.9 * ((iters - 1) * gap_min - hs - c.us('launch_overhead'))
    c.ok(c.us('host_work') >= lo, f"host_work {c.us('host_work'):.0f} us, want >= {lo:.0f}")
    c.ok(s['host_work_after_ns'] >= 0.9 * (reads - 1) * (gap_min - kernel_us - 1 - copy_us -
                                                          50) * 1e3,
         f"host work after the read-backs {s['host_work_after_ns']} ns")
    c.ok(c.r['dominant_cause'] == 'host_work', 'dominant host_work')
    c.ok('follows cudaMemcpy at main (host_item.cu:' in text,
         'the text report names the read-back the host work followed')


def alloc_churn(c, text):
    iters, every, step, leak, pinned = 400, 20, 16 << 20, 8 << 20, 8 << 20
    leaks = iters // every
    c.counts(allocations=iters + leaks + 1, frees=iters + 1, kernels=iters, launches=iters,
             host_syncs=iters + 1, syncs_explicit=iters, syncs_implicit=1)
    m = c.r['memory']
    c.ok(m['peak_bytes'] == step + leaks * leak, f"peak {m['peak_bytes']}")
    c.ok(m['final_bytes'] == leaks * leak, f"final {m['final_bytes']}")
    c.ok(m['never_freed'] == leaks and m['never_freed_bytes'] == leaks * leak,
         f"never freed {m['never_freed']} / {m['never_freed_bytes']}")
    c.ok(m['pinned_peak_bytes'] == pinned, f"pinned peak {m['pinned_peak_bytes']}")
    sites = {a['kind']: a for a in c.r['allocation_sites']}
    c.ok(set(sites) == {'async', 'device', 'pinned'}, f'allocation kinds {set(sites)}')
    if 'async' in sites and 'device' in sites:
        a, d = sites['async'], sites['device']
        c.ok(a['count'] == iters and a['max_bytes'] == step and a['never_freed'] == 0,
             'stream-ordered allocations all freed')
        c.ok(d['count'] == leaks and d['never_freed'] == leaks, 'the leak site')
    # Growth: design.md's rule, the least-squares slope of live device bytes (the step curve,
    # each level weighted by how long it lasted) over the second half of the span from the
    # first launch call to the last. The leak makes it positive however the host was
    # scheduled; its size depends on where host stalls bent the staircase (a short run on a
    # busy machine: 0.45-1.6x the leak over the window), so it is checked against the rule
    # worked out here from the trace's own allocation and launch times.
    got = m['growth_bytes_per_s']
    want = growth_by_rule(dump(run.trace))
    c.ok(got > 0, f'growth {got:.3g} B/s: a leak under the churn must read as growth')
    c.ok(abs(got - want) <= 1e-6 * abs(want) + 1,
         f'growth {got:.6g} B/s, the rule on the trace gives {want:.6g}')


def growth_by_rule(recs):
    """design.md's growth from a trace's records: live device bytes (device, async and VMM
    allocations; frees by address) as a step curve over the second half of the first-to-last
    launch-call span, its slope by least squares weighted by time."""
    launches = [int(f['start_ns']) for k, f in recs
                if k == 'API' and f.get('category') in ('1', '2')]
    s, e = min(launches), max(launches)
    w0, w1 = s + (e - s) // 2, e
    events = sorted((int(f['time_ns']), f) for k, f in recs if k == 'MEMORY' and
                    f['mem_kind'] not in ('3', '4', '6'))  # managed, pinned, tensor: apart
    live, size, curve = 0, {}, []
    for t, f in events:
        if f['op'] == '1':
            size[f['address']] = int(f['bytes'])
            live += int(f['bytes'])
        else:
            live -= size.pop(f['address'], 0)
        curve.append((t, live))
    sy = sty = 0.0
    prev_t, prev_y = s, 0
    for t, y in curve + [(w1, None)]:
        a, b = max(prev_t, w0), min(t, w1)
        if b > a:
            x0, x1 = (a - w0) * 1e-9, (b - w0) * 1e-9
            sy += prev_y * (x1 - x0)
            sty += prev_y * (x1 * x1 - x0 * x0) / 2
        prev_t = max(prev_t, t)
        if y is not None:
            prev_y = y
    span = (w1 - w0) * 1e-9
    slope = (sty - span / 2 * sy) / (span ** 3 / 12)
    return 0 if abs(slope) < 1 else slope


def two_streams(c, text):
    iters, us = 150, 200.0
    c.counts(kernels=2 * iters, launches=2 * iters, host_syncs=3, syncs_explicit=2,
             syncs_implicit=1)
    # The device is held until both threads have queued every step: both kernels of each step
    # run together at fill min(1, 2 * 0.75) = 1, so compute is the steps' time, not the sum of
    # fills (1.5x), and nothing runs alone (no small_batch).
    c.near_us('compute', iters * us, 0.5, 'both kernels of every step together at fill 1')
    c.near_us('small_batch', 0, 0.5, 'no kernel runs alone')
    c.near_us('launch_overhead', iters - 1, 0.5, f'{iters - 1} queued 1 us gaps')
    c.ok(abs(c.window_us - (iters * us + iters - 1)) < 0.5,
         f'window {c.window_us} us, want {iters * us + iters - 1}')
    c.ok(c.r['breakdown']['dependency_chain'] == 0, 'overlapped kernels are no chain')
    c.ok(c.r['dominant_cause'] == 'compute', 'dominant compute')


def occupancy(c, text):
    iters, us = 20, 100.0
    fills = [1, 0.5, 0.5, 0.75]  # 100 KiB shared memory; 1024 threads; 512 threads (3-D)
    c.counts(kernels=4 * iters, launches=4 * iters, host_syncs=2, allocations=1, frees=1)
    c.near_us('compute', iters * sum(fills) * us, 0.05, 'fill from the occupancy limits')
    c.near_us('small_batch', iters * sum(1 - f for f in fills) * us, 0.05, 'the unfilled rest')
    c.ok(c.r['breakdown']['dependency_chain'] == 0, 'a fill-1 kernel breaks every run')
    got = {k['name']: round(k['mean_fill'], 6) for k in c.r['kernels_top']}
    c.ok(got == {'smem_tile(float*)': 0.75, 'wide_tile(float*)': 0.625},
         f'mean fills {got}: (1 + 0.5) / 2 and (0.5 + 0.75) / 2')


def edge_cases(tmp):
    """Degenerate programs: exit 0, JSON without NaN, nothing attributed when nothing ran."""
    env = {'GPUSIM_KERNEL_US': 'exit_tail=50000'}
    for mode, want in [('idle', dict(allocations=0, host_syncs=0)),
                       ('alloc', dict(allocations=1, frees=1, host_syncs=1, syncs_implicit=1)),
                       ('zerocopy', dict(allocations=1, frees=1, memcpy=0, host_syncs=2,
                                         syncs_copy=1, syncs_implicit=1))]:
        why, r, text = run('edge_cases', [mode], env, tmp)
        if not expect(not why, f'edge_cases {mode}: {why or "runs"}'):
            continue
        c = Checker(r)
        c.counts(kernels=0, launches=0, **want)
        c.ok(r['window']['duration_ns'] == 0, 'no GPU operation: an empty window')
        c.ok(r['dominant_cause'] is None and r['top_idle_cause'] is None, 'no cause')
        c.ok(all(v == 0 for v in r['breakdown'].values()), 'nothing attributed')
        c.ok('No GPU operation was recorded' in text, 'the text report says so')
        if mode == 'alloc':
            c.ok(r['memory']['peak_bytes'] == 1 << 30, 'an allocation without GPU work')
        expect(not c.errors, f'edge_cases {mode}: ' + ('; '.join(c.errors) or 'as derived'))
    # A kernel still queued at exit: CUDA finishes it at teardown; the window is that kernel,
    # all compute, and no idle bucket is named the top idle cause at 0%.
    why, r, text = run('edge_cases', ['queued'], env, tmp)
    if expect(not why, f'edge_cases queued: {why or "runs"}'):
        c = Checker(r)
        c.counts(kernels=1, launches=1, host_syncs=0, allocations=1, frees=0)
        c.ok(r['window']['duration_ns'] == 50_000_000, 'the window is the 50 ms kernel')
        c.ok(r['breakdown']['compute'] == 1, 'all compute')
        c.ok(r['trace']['clean_exit'], 'a clean exit')
        c.ok(r['memory']['never_freed'] == 1, 'the buffer was never freed')
        c.ok(r['dominant_cause'] == 'compute', 'dominant compute')
        c.ok(r['top_idle_cause'] is None, f"top_idle_cause {r['top_idle_cause']}, want null "
             'when no SM-time was idle')
        c.ok('largest idle cause' not in text, 'the verdict names no idle cause')
        expect(not c.errors, 'edge_cases queued: ' + ('; '.join(c.errors) or 'as derived'))


def dump(trace):
    """The trace's records as (type, {field: text}), from gpuwhy-report --dump."""
    import subprocess
    out = subprocess.run([ARGS.report, '--dump', trace], capture_output=True, text=True,
                         timeout=120).stdout
    recs = []
    for line in out.splitlines():
        kind, _, rest = line.partition(' ')
        fields = dict(f.split('=', 1) for f in rest.split(' ') if '=' in f)
        recs.append((kind, fields))
    return recs


def api_names(recs):
    names = {f['id']: f['text'].strip('"') for k, f in recs if k == 'STRING'}
    return {f['correlation']: (names.get(f['name_id'], ''), f) for k, f in recs if k == 'API'}


def device_us(r, dev, bucket):
    """A device's time in a bucket, us: its share of its own window (per_device)."""
    for d in r.get('per_device', []):
        if d['id'] == dev:
            return d['breakdown'][bucket] * (d['end_ns'] - d['start_ns']) / 1e3
    return None


# copies_waits: the program's constants (audit/copies_waits.cu) and gpusim's cost model.
CW_ITERS, CW_KERNEL_US, CW_HOST_US = 30, {'peer': 250.0, 'host': 100.0, 'wait': 100.0}, 300
P2P_US = lambda b: 5 + b / 400e3  # GPUSIM_COPY_US + bytes / GPUSIM_P2P_GBPS
D2D_US = lambda b: 5 + b / 1500e3  # memsets, at GPUSIM_D2D_GBPS


def cw_peer(c, text, recs):
    n, size = CW_ITERS, 256 << 10
    c.counts(kernels=n, launches=n, memcpy=n + 1, peer_copies=n + 1, host_syncs=3,
             syncs_explicit=2, syncs_copy=1)
    c.ok(len(c.r.get('per_device', [])) == 2, 'two devices in the report')
    # Every copy is one MEMCPY2 (copy kind PTOP) naming both devices, on device 0's stream.
    cps = [f for k, f in recs if k == 'MEMCPY']
    c.ok(len(cps) == n + 1 and all(f['copy_kind'] == '10' and f['src_device'] == '1' and
                                   f['dst_device'] == '2' and f['device'] == '0'
                                   for f in cps),
         f'{len(cps)} MEMCPY records, peer (kind 10) from device 0 to 1')
    want = (n + 1) * P2P_US(size)
    for dev in (0, 1):
        got = device_us(c.r, dev, 'data_transfer')
        c.ok(got is not None and abs(got - want) < 0.05,
             f'device {dev} data_transfer {got} us, want {want:.3f}: 31 copies on both')
    got = device_us(c.r, 0, 'compute')
    c.ok(got is not None and abs(got - n * 250) < 0.05, f'device 0 compute {got} us')
    # Device 1's copies waited in device 0's stream behind its kernels: each gap between two
    # of the 30 async copies (all queued: the device is held until the host has issued them)
    # is a 1 us queue gap, a kernel, another: 252 us of queued work held, blocked. The gap
    # before the last, synchronous copy follows a stream sync: not queued, not blocked.
    got = device_us(c.r, 1, 'blocked')
    c.ok(got is not None and abs(got - (n - 1) * 252) < 0.05,
         f'device 1 blocked {got} us, want 29 gaps of 252 us')


def cw_batch(c, text, recs):
    n, batch, size = CW_ITERS, 8, 1 << 20
    c.counts(memcpy=n * batch, kernels=0, host_syncs=n + 2, syncs_explicit=n, syncs_implicit=2)
    c.near_us('data_transfer', n * batch * H2D_US(size), 0.05, '240 copies of 1 MiB at 25 GB/s')
    apis = api_names(recs)
    calls = [f for name, f in apis.values() if name.startswith('cudaMemcpyBatchAsync')]
    c.ok(len(calls) == n and all(int(f['bytes']) == batch * size and f['stream'] != '0'
                                 for f in calls),
         f'{len(calls)} batch calls of {batch * size} bytes each on a stream')
    by_corr = {}
    for k, f in recs:
        if k == 'MEMCPY':
            by_corr.setdefault(f['correlation'], []).append(f)
    ok = True
    for f in calls:
        cps = sorted(by_corr.get(f['correlation'], []), key=lambda x: int(x['start_ns']))
        # one record a copy, joined to its call, back to back (1 us queue gap)
        ok &= len(cps) == batch and all(
            int(b['start_ns']) - int(a['end_ns']) == 1000 for a, b in zip(cps, cps[1:]))
    c.ok(ok, 'each batch: 8 MEMCPY records joined to its call, 1 us apart')


def cw_driver(c, text, recs):
    n, rows, row = CW_ITERS, 64, 4096
    c.counts(memcpy=2 * n, memset=2 * n, host_syncs=2 * n + 3, syncs_copy=2 * n,
             syncs_explicit=1, syncs_implicit=2)
    want = n * (2 * H2D_US(rows * row) + D2D_US(rows * row) + D2D_US(row))
    c.near_us('data_transfer', want, 0.05, '2D and 3D copies of 256 KiB, memsets')
    for api in ('cuMemcpy2D_v2', 'cuMemsetD16_v2'):
        s = c.site(api)
        c.ok(s['kind'] == 'copy' and s['count'] == n, f"{api}: {s['kind']} x{s['count']}")
    apis = api_names(recs)
    for name, want_bytes in (('cuMemcpy3DAsync_v2', rows * row), ('cuMemcpy2D_v2', rows * row),
                             ('cuMemsetD2D32Async', rows * row), ('cuMemsetD16_v2', row)):
        got = [int(f['bytes']) for nm, f in apis.values() if nm == name]
        c.ok(len(got) == n and set(got) == {want_bytes}, f'{name}: bytes {set(got)} x{len(got)}')


def cw_eventpoll(c, text, recs):
    n, kernel_us = CW_ITERS, 2 * 250.0
    polls = polled(c, n)
    c.counts(kernels=n, launches=n, host_syncs=polls + 1, syncs_implicit=1)
    c.near_us('compute', n * kernel_us, 1.0, '30 kernels of 2 waves x 250 us')
    s = c.site('cudaEventQuery')
    c.ok(s['kind'] == 'poll' and s['count'] == polls,
         f"cudaEventQuery {s['kind']} x{s['count']}")
    c.ok(0 < s['wait_ns'] <= polls * kernel_us * 1e3, f"polling waited {s['wait_ns']} ns")
    hs = c.us('host_sync')
    c.ok(hs >= (polls - 1) * 4 and abs(hs - s['exposed_ns'] / 1e3) < 1,
         f'host_sync {hs:.0f} us: the polling waits\' exposure, >= a 4 us launch each')


def cw_hostfn(c, text, recs):
    n = CW_ITERS
    c.counts(kernels=n, launches=n, host_functions=n, host_syncs=2, syncs_explicit=1,
             syncs_implicit=1)
    c.near_us('compute', n * 100.0, 0.5, '30 kernels of 100 us')
    c.ok(c.r['breakdown']['blocked'] == 0, 'no gap blocked: host functions are host work')
    sites = {h['api']: h for h in c.r['host_function_sites']}
    c.ok(set(sites) == {'cudaLaunchHostFunc', 'cudaStreamAddCallback', 'cuLaunchHostFunc'} and
         all(h['calls'] == n // 3 for h in sites.values()),
         f"host function sites {[(k, h['calls']) for k, h in sites.items()]}")
    gaps = sum(h['gaps'] for h in sites.values())
    held = sum(h['held_ns'] for h in sites.values()) / 1e3
    c.ok(gaps == n - 1, f'{gaps} gaps held by a host function, want {n - 1}: every kernel after '
         'the first')
    # Every kernel was queued (the device is held until the host has issued all), each after
    # the first waited for a 300 us function (and 1 us before and after it): all the idle
    # time is those gaps, host work by the host functions' sites.
    c.ok(held >= (n - 1) * (CW_HOST_US + 2), f'held {held:.0f} us, want >= '
         f'{(n - 1) * (CW_HOST_US + 2)}')
    hw = c.us('host_work')
    c.ok(abs(held - hw) < 0.5, f'held {held:.0f} us is all the host work ({hw:.0f} us)')
    c.ok(abs(hw - (c.window_us - n * 100.0)) < 0.5, 'the idle time is all host work')
    c.ok('host functions' in text, 'the text report names the host functions')


def cw_waitvalue(c, text, recs):
    n = CW_ITERS
    c.counts(kernels=2 * n, launches=2 * n, value_waits=n, host_syncs=n + 2, syncs_explicit=n,
             syncs_implicit=2)
    c.near_us('compute', 2 * n * 100.0, 0.5, '60 kernels of 100 us')
    b = c.r['blocked_streams']
    c.ok(len(b) == 1 and b[0]['gaps'] == n and b[0]['held_by'] and
         b[0]['held_by']['api'] == 'cuStreamWaitValue32_v2',
         f"blocked streams {[(x['gaps'], x['held_by']) for x in b]}")
    # Each second kernel waited for a write made 300 us after its first kernel began.
    c.ok(c.us('blocked') >= n * (CW_HOST_US - 100), f"blocked {c.us('blocked'):.0f} us, "
         f'want >= {n * (CW_HOST_US - 100)}')
    c.ok('held by cuStreamWaitValue32_v2' in text, 'the text report names the wait')


def copies_waits(tmp):
    """The copies and waits of audit/copies_waits.cu, one mode a run."""
    ku, hold = 'GPUSIM_KERNEL_US', {'GPUSIM_HOLD_US': '200000'}
    # peer and hostfn need every operation queued before the device starts: it is held
    for fn, env in [(cw_peer, {'GPUSIM_DEVICES': '2', ku: 'k_peer=250', **hold}),
                    (cw_batch, {}), (cw_driver, {}),
                    (cw_eventpoll, {ku: 'k_poll=250'}),
                    (cw_hostfn, {ku: 'k_host=100', **hold}),
                    (cw_waitvalue, {ku: 'k_wait=100'})]:
        mode = fn.__name__[3:]
        if ARGS.only and ARGS.only not in ('copies_waits', mode):
            continue
        trace = os.path.join(tmp, f'cw-{mode}.trace.zst')
        why, r, text = profile(ARGS.build, ARGS.report,
                               [os.path.join(ARGS.programs, 'audit-copies_waits'), mode],
                               trace, env)
        if why:
            errors = [why]
        else:
            c = Checker(r)
            c.sums_to_one()
            fn(c, text, dump(trace))
            errors = c.errors
        expect(not errors, f'copies_waits {mode}: ' + ('; '.join(errors) or 'as derived'))


PROGRAMS = [
    # the device waits until the host has queued everything (GPUSIM_HOLD_US): see the programs
    (graph_replay, {'GPUSIM_HOLD_US': '200000', 'GPUSIM_QUEUE_DEPTH': '4096'}),
    (sync_poll, {'GPUSIM_KERNEL_US': 'tile_step=250'}),
    (memcpy_kinds, {}),
    (host_item, {'GPUSIM_KERNEL_US': 'tile_matmul=100'}),
    (alloc_churn, {}),
    (two_streams, {'GPUSIM_KERNEL_US': 'half_step=200', 'GPUSIM_HOLD_US': '2000000'}),
    (occupancy, {'GPUSIM_KERNEL_US': 'smem_tile=100,wide_tile=100'}),
]


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--programs', required=True, help='directory of the built audit-* programs')
    ap.add_argument('--only', help='one program')
    ARGS = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='gpuwhy-audit-') as tmp:
        for fn, env in PROGRAMS:
            if ARGS.only and ARGS.only != fn.__name__:
                continue
            why, r, text = run(fn.__name__, (), env, tmp)
            if why:
                errors = [why]
            else:
                c = Checker(r)
                c.sums_to_one()
                fn(c, text)
                errors = c.errors
            expect(not errors, f'{fn.__name__}: ' + ('; '.join(errors) or 'as derived'))
        if not ARGS.only or ARGS.only == 'edge_cases':
            edge_cases(tmp)
        copies_waits(tmp)
    print(f'{len(FAILS)} failed')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
