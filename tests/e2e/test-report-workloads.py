#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy-report end to end on the simulated GPU: each cause workload names its cause.

Each workload of tests/workloads/workloads.json runs on gpusim (a test double: its kernel
and copy durations are a cost model, never GPU measurements) under libgpuwhy.so, and
`gpuwhy-report --json` must show:
  - the workload's expected cause in its cause field (top_idle_cause, or dominant_cause for
    the healthy one), and a breakdown that sums to 1;
  - the exact counts of workloads.json (formulas of the workload's arguments);
  - the cause's share of SM-time as this file's models derive it from the workload's
    arguments, gpusim's cost model (design.md "The simulated GPU") and design.md's rules.

The models compute device time, which gpusim makes exact (virtual kernels last
ceil(waves) x wave time), and divide by the measured window: the window holds the host's
real time (launch calls, sleeps, page faults), which no parameter fixes. Host-side shares
(host_sync, host_work, launch_overhead) are bounded by parameters instead, because gpusim
runs the host in real time: a descheduled host thread stretches a gap, and design.md's rules
put that stretch into host_work. Each bound says how much host noise it allows and why;
a workload runs once and passes or fails (scripts/load-test.py checks the bounds hold on a
busy machine).
"""
import argparse
import json
import math
import os
import re
import sys
import tempfile

from checks import profile

ARGS = None
ALT = False  # checking a workload at its alt_args: device-time models and counts only


def wave_us(env, name):
    """gpusim's per-wave time for a kernel name: GPUSIM_KERNEL_US first match, else WAVE_US."""
    for item in filter(None, env.get('GPUSIM_KERNEL_US', '').split(',')):
        sub, us = item.split('=')
        if sub in name:
            return float(us)
    return float(env.get('GPUSIM_WAVE_US', 5))


def kernel(blocks, us, cap):
    """(fill, duration us) of a kernel of `blocks` blocks of 256 threads (design.md's fill)."""
    waves = blocks / cap
    n = max(1, math.ceil(waves))
    fill = waves if waves < 1 else waves / n
    return fill, n * us


def fd(blocks, us, cap):
    f, d = kernel(blocks, us, cap)
    return f * d


def unfilled(blocks, us, cap):
    f, d = kernel(blocks, us, cap)
    return (1 - f) * d


def check_share(errors, r, key, model_us, rel_tol, why):
    window_us = r['window']['duration_ns'] / 1e3
    got = r['breakdown'][key]
    want = model_us / window_us
    if abs(got - want) > rel_tol * want:
        errors.append(f'{key} = {got:.4f}, model {want:.4f} (+-{rel_tol:.0%}): {why}')


def check_range(errors, r, key, lo_us, hi_us, why):
    if ALT:
        return  # host-time bounds are stated for the default arguments only
    window_us = r['window']['duration_ns'] / 1e3
    got_us = r['breakdown'][key] * window_us
    if not lo_us <= got_us <= hi_us:
        errors.append(f'{key} = {got_us:.0f} us of the window, want [{lo_us:.0f}, {hi_us:.0f}]: '
                      f'{why}')


def source_line(name, pattern):
    """The line of tests/workloads/NAME.cu whose code contains pattern (comments skipped)."""
    path = os.path.join(os.path.dirname(ARGS.workloads_json), name + '.cu')
    for no, line in enumerate(open(path), 1):
        if pattern in line and not line.lstrip().startswith(('*', '/*', '//')):
            return f'{name}.cu:{no}'
    return None


def site_checks(name, r, errors):
    """Call sites are the user's source lines (symbolized offline from the module map)."""
    if name == 'sync_per_iteration':
        want = source_line(name, 'cudaMemcpy(')
        got = r['sync_sites'][0]['site'] if r['sync_sites'] else None
        if not want or not got or want not in got:
            errors.append(f'top sync site {got!r}, want the read-back at {want}')
    elif name == 'tiny_kernels':
        sites = {t['name'].split('(')[0]: t['site'] for t in r['tiny_kernels_top']}
        for kernel in ('tiny_bias_add_kernel', 'tiny_scalar_mul_kernel', 'tiny_clamp_kernel'):
            want = source_line(name, kernel + '<<<')
            if not want or want not in (sites.get(kernel) or ''):
                errors.append(f'{kernel} launch site {sites.get(kernel)!r}, want {want}')


def model_checks(name, a, env, r, errors):
    """The cause's share from the workload's arguments; a[...] are its args."""
    cap = r['devices'][0]['sm_count'] * 8  # 8 blocks of 256 threads at 32 registers per SM
    w = lambda k: wave_us(env, k)
    if name == 'bandwidth_bound':
        n = a['n']
        us = 2 * fd(math.ceil(n / 256), w('fill_uniform_kernel'), cap) + a['iters'] * (
            fd(math.ceil(n / 256), w('elementwise_add_kernel'), cap) +
            fd(math.ceil(n / 4 / 256), w('vectorized_scale_kernel'), cap) +
            fd(math.ceil(n / 256), w('axpy_kernel'), cap))
        check_share(errors, r, 'bandwidth_bound', us, 0.02, 'filled share of the 3 kernels')
    elif name == 'low_intensity':
        R, C = a['rows'], a['cols']
        us = a['iters'] * (fd(C // 32 * (R // 32), w('transpose_tiled_kernel'), cap) +
                           fd(R, w('layer_norm_stats_kernel'), cap) +
                           fd(math.ceil(R * C / 4 / 256), w('dropout_mask_philox_kernel'), cap))
        check_share(errors, r, 'low_intensity', us, 0.02, 'filled share of the 3 kernels')
    elif name == 'small_batch':
        dims = [1024, 4096, 4096, 1024, 1024, 1000]  # small_batch.cu
        B = a['batch']
        per_iter = sum(unfilled(math.ceil(o / 32) * B, w('mlp_'), cap) for o in dims[1:])
        per_iter += unfilled(B, w('mlp_head_log_softmax_kernel'), cap)
        n_params = sum(dims[i] * dims[i + 1] + dims[i + 1] for i in range(5))
        fills = unfilled(math.ceil(n_params / 256), w('fill_uniform_kernel'), cap) + unfilled(
            math.ceil(B * dims[0] / 256), w('fill_uniform_kernel'), cap)
        check_share(errors, r, 'small_batch', a['iters'] * per_iter + fills, 0.03,
                    'unfilled share of 6 one-wave layers (no chain: period 6)')
    elif name == 'dependency_chain':
        H = a['hidden']
        per_step = unfilled(H // 8, w('rnn_cell_gemv_kernel'), cap) + unfilled(
            H // 256, w('rnn_cell_tanh_kernel'), cap)
        check_share(errors, r, 'dependency_chain', a['seqs'] * a['steps'] * per_step, 0.02,
                    'unfilled share of the gemv/tanh chain, period 2')
    elif name == 'kv_cache_growth':
        H = a['heads']
        per_step = (unfilled(H, w('kv_cache_append_copy_kernel'), cap) +
                    unfilled(H, w('decode_attention_kernel'), cap) +
                    unfilled(1, w('topk_argmax_kernel'), cap))
        check_share(errors, r, 'dependency_chain', a['steps'] * per_step, 0.03,
                    'unfilled share of the append/attention/argmax chain, period 3')
        if r['memory']['growth_bytes_per_s'] <= 0:
            errors.append('a cache that only grows must have a positive growth rate')
    elif name == 'tiny_kernels':
        k_us = 3 * a['iters'] * w('tiny_')
        window_us = r['window']['duration_ns'] / 1e3
        # The loop's kernels (1/1056 fill, period 3) are a chain; everything between them is a
        # starved gap under 100 us: launch_overhead, less any host stall over 100 us.
        check_share(errors, r, 'dependency_chain', k_us * (1 - 1 / cap), 0.02,
                    'unfilled share of the tiny kernels (a period-3 chain)')
        check_range(errors, r, 'launch_overhead', 0.85 * (window_us - k_us), window_us - k_us,
                    'the gaps between tiny kernels (15% allowed for host stalls > 100 us)')
    elif name == 'sync_per_iteration':
        K, W, it = a['kernels'], a['waves'], a['iters']
        g = w('sgemm_tile16_nn_kernel')
        check_share(errors, r, 'compute', it * K * W * g, 0.02, 'K gemms of W full waves')
        debt = K * W * g  # what each read-back waited for, at least
        check_range(errors, r, 'host_sync', 0.99 * it * a['decide_us'],
                    it * min(debt, a['decide_us'] + 2000),
                    'each gap after the read-back (>= decide-us) is paid from a debt of K gemms')
    elif name == 'host_work':
        check_range(errors, r, 'host_work', 0.95 * (a['iters'] - 1) * a['load_us'],
                    r['window']['duration_ns'] / 1e3,
                    'the loader runs load-us of CPU work between iterations, no sync before')
    elif name == 'data_transfer':
        gbps = float(env.get('GPUSIM_H2D_GBPS', 25))
        copy_us = float(env.get('GPUSIM_COPY_US', 5)) + a['mb'] * 2**20 / (gbps * 1e3)
        check_share(errors, r, 'data_transfer', a['iters'] * 2 * copy_us, 0.03,
                    'an upload and a download of mb MiB per iteration (memsets are tiny)')
    elif name == 'healthy' and not ALT:
        if r['breakdown']['compute'] < 0.95:
            errors.append(f"compute {r['breakdown']['compute']:.3f} < 0.95: full-wave gemms "
                          "1 us apart are W*50/(W*50+1) of the loop")
        if r['quadrant'] != {'memory': 'high', 'compute': 'high'}:
            errors.append(f"quadrant {r['quadrant']}, want high/high")
    elif name == 'mixed_training':
        check_range(errors, r, 'host_work', 0.9 * a['iters'] * a['load_us'],
                    r['window']['duration_ns'] / 1e3, 'load-us of loader work per iteration')
        # The mixture's other causes, each present: the .item() read-back (host_sync), the
        # upload (data_transfer), small kernels (launch_overhead between them).
        for key in ('host_sync', 'data_transfer', 'launch_overhead'):
            if not ALT and r['breakdown'][key] <= 0:
                errors.append(f'the mixed loop shows no {key}')
    elif name == 'multi_stream' and not ALT:
        # 1 - T*64/1056 of the window while the T streams overlap (~76% at T = 4); the host
        # threads' scheduling decides how well they overlap, hence the wide margin.
        if r['breakdown']['small_batch'] < 0.5:
            errors.append(f"small_batch {r['breakdown']['small_batch']:.3f} < 0.5 "
                          f"{ {k: round(v, 3) for k, v in r['breakdown'].items() if v} }")


def run_one(w, tmp):
    trace = os.path.join(tmp, f"{w['name']}-{os.getpid()}-{run_one.n}.trace.zst")
    run_one.n += 1
    argv = [os.path.join(ARGS.build, 'tests/workloads', w['name'])]
    for k, v in w['args'].items():
        argv += ['--' + k.replace('_', '-'), str(v)]
    why, r, text = profile(ARGS.build, ARGS.report, argv, trace, w['env'])
    if why:
        return None, [why]
    r['_text'] = text
    return r, []


run_one.n = 0


def check(w, r):
    errors = []
    a = dict(w['args'])
    total = sum(r['breakdown'].values())
    if abs(total - 1) > 1e-6:
        errors.append(f'breakdown sums to {total}')
    field = w['cause_field']
    if not ALT and r[field] != w['cause']:
        top = sorted(r['breakdown'].items(), key=lambda kv: -kv[1])[:3]
        errors.append(f"{field} = {r[field]}, want {w['cause']} (top: {top})")
    counts = dict(r['counts'])
    for key, formula in w['counts'].items():
        want = eval(formula, {}, dict(a))  # workloads.json: integer expressions of the args
        if counts.get(key) != want:
            errors.append(f'counts.{key} = {counts.get(key)}, want {want} ({formula})')
    mem_env = dict(a, memory_total_bytes=r['devices'][0]['memory_total_bytes'])
    for key, formula in w.get('memory', {}).items():
        if key == 'growth':
            if formula == 'positive' and not r['memory']['growth_bytes_per_s'] > 0:
                errors.append(f"memory growth {r['memory']['growth_bytes_per_s']}, want > 0")
            continue
        want = eval(formula, {}, mem_env)
        if r['memory'].get(key) != want:
            errors.append(f"memory.{key} = {r['memory'].get(key)}, want {want} ({formula})")
    model_checks(w['name'], a, w['env'], r, errors)
    if not ALT:
        site_checks(w['name'], r, errors)
    # a call site's callers stop at main or the thread's function: the C library's start-up
    # frames are noise
    for line in r['_text'].splitlines():
        if re.match(r'\s+called from (__libc_start|_start\b|start_thread \(pthread_create'
                    r'|start_thread \(libc|__clone)', line):
            errors.append(f'text report shows a start-up frame: {line.strip()}')
            break
    return errors


def main():
    global ARGS, ALT
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--workloads-json', required=True)
    ap.add_argument('--only', nargs='*')
    ARGS = ap.parse_args()
    spec = json.load(open(ARGS.workloads_json))
    # Each workload at its defaults (cause, counts, shares), then at its alt_args (counts and
    # the device-time shares: the models are formulas of the arguments, not fitted numbers).
    runs = [(w, False) for w in spec['workloads']]
    runs += [(dict(w, args={**w['args'], **w['alt_args']}), True)
             for w in spec['workloads'] if w.get('alt_args')]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for w, ALT in runs:
            if not w.get('cause') or (ARGS.only and w['name'] not in ARGS.only):
                continue
            if not os.path.exists(os.path.join(ARGS.build, 'tests/workloads', w['name'])):
                print(f"FAIL {w['name']}: not built")  # meson runs this only with workloads
                failed += 1
                continue
            r, errors = run_one(w, tmp)
            if r is not None:
                errors = check(w, r)
            if errors:
                failed += 1
                print(f"FAIL {w['name']}{' (alt_args)' if ALT else ''}:")
                for e in errors:
                    print(f'  {e}')
            else:
                top = {k: round(v, 3) for k, v in r['breakdown'].items() if v >= 0.005}
                what = (f"alt_args {w['args']}" if ALT else
                        f"{w['cause_field']} = {w['cause']}")
                print(f"ok   {w['name']}: {what} {top}")
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
