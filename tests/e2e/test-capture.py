#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of libgpuwhy.so on the simulated GPU (tests/gpusim, a test double).

Each subcommand is one meson test of the 'capture' suite. Expected numbers come from the
workloads' own count formulas (tests/workloads/workloads.json) evaluated with the arguments
this script passes, never from a previous run's output.

  workloads --mode preload|inject   every workload: the trace holds exactly its launches,
                                    kernels, synchronizing calls, copies, memsets, allocations
  exits                             return / exit / _exit / abort / SIGTERM: status unchanged
  fork                              a CUDA child gets its own trace, a non-CUDA child none
  threads                           16 host threads launching and synchronizing
  sigkill                           SIGKILL mid-run: everything older than 250 ms is there
  degrade                           existing file, symlink, unwritable directory, file-size
                                    limit, CUPTI held by another tool, no CUPTI
  dlopen                            a program that loads libcudart late (Python ctypes):
                                    LD_PRELOAD defers to InitializeInjection and sees it all
  floor                             benchmarks' libcupti-floor.so leaves the program alone
                                    and walks every activity record
  symbols                           libgpuwhy.so exports exactly InitializeInjection(Nvtx2)
                                    and the four CUPTI calls it interposes
  paths                             every launch path (runtime, <<<>>>, driver, cooperative,
                                    graph): each KERNEL record joins its launch's API record,
                                    whichever id CUPTI gives it (gpusim's correlation knobs)
  startup                           nothing touches CUDA before main; fork before CUDA; a tool
                                    owning CUDA_INJECTION64_PATH; a libcupti already loaded
  versions                          a CUPTI 12 (no refusal note for ids it does not know), one
                                    older than CUDA 11.0 (refused), no DEVICE record (a note)
  exit-flush                        CUPTI's flush: a kernel running at exit, a program that
                                    only counts devices (flushes hang without a context), a
                                    flush that never returns, a query loop's SYNC records
  second-client                     another CUPTI client takes the buffers: the trace says so,
                                    interposed (LD_PRELOAD) or inferred (injection only)
  skew                              GPU times a few µs off the host's (CUPTI interpolates):
                                    tiny_kernels keeps its cause
  exec                              exec without fork (every exec function, a chain of three
                                    images): each image's records in its own trace (-execN),
                                    closed cleanly; a failed exec; vfork + exec in a child
  descriptors                       the program's descriptor table holds no trace and nothing
                                    of gpuwhy's below 100; started with stderr closed, the
                                    file that takes number 2 gets none of gpuwhy's lines
  settings                          every invalid GPUWHY_* setting warned, once for a wrapper
                                    script and the program it starts
"""
import argparse
import glob
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checks import favoured

FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')

# Smaller than the defaults where a workload's default would take long on two cores; the
# formulas are evaluated with these, so the expectations follow.
SMALL_ARGS = {
    'bandwidth_bound': {'n': 1 << 20, 'iters': 5},
    'low_intensity': {'rows': 512, 'cols': 512, 'iters': 3},
    'small_batch': {'iters': 20},
    'dependency_chain': {'steps': 32, 'seqs': 2},
    'tiny_kernels': {'iters': 300},
    'sync_per_iteration': {'iters': 20},
    'host_work': {'iters': 5},
    'data_transfer': {'iters': 2, 'mb': 4},
    'healthy': {'iters': 20},
    'kv_cache_growth': {'steps': 32},
    'mixed_training': {'iters': 5},
    'multi_stream': {'threads': 4, 'iters': 10},
}


class Ctx:
    def __init__(self, build, source):
        self.build = build
        self.lib = os.path.join(build, 'lib', 'libgpuwhy.so')
        self.report = os.path.join(build, 'tools', 'gpuwhy-report')
        self.gpusim = os.path.join(build, 'tests', 'gpusim')
        self.workloads = os.path.join(build, 'tests', 'workloads')
        with open(os.path.join(source, 'tests', 'workloads', 'workloads.json')) as f:
            self.spec = {w['name']: w for w in json.load(f)['workloads']}
        self.failures = []

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
            print('FAIL:', what)
        return ok

    def env(self, out_dir, mode, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('GPUWHY_') and not k.startswith('GPUSIM_')
               and k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
        env['LD_LIBRARY_PATH'] = self.gpusim
        env['GPUWHY_OUTPUT'] = os.path.join(out_dir, 'trace-%p.zst')
        env['GPUWHY_QUIET'] = '1'
        if mode == 'preload':
            env['LD_PRELOAD'] = self.lib
        elif mode == 'inject':
            env['CUDA_INJECTION64_PATH'] = self.lib
        env.update(extra or {})
        return env

    def run(self, name, args, env, timeout=120, **kw):
        cmd = [os.path.join(self.workloads, name)] + workload_argv(args)
        kw.setdefault('preexec_fn', favoured)  # as high a priority as allowed: checks.py
        with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, **kw) as p:
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                self.check(False, f'{name}: still running after {timeout} s (a hang)')
        return subprocess.CompletedProcess(cmd, p.returncode, out, err), p.pid

    def dump(self, path):
        p = subprocess.run([self.report, '--dump', path], capture_output=True, text=True,
                           timeout=120)
        return p.returncode, [parse_line(line) for line in p.stdout.splitlines()]


def workload_argv(args):
    argv = []
    for k, v in args.items():
        argv += ['--' + k.replace('_', '-'), str(v)]
    return argv


def parse_line(line):
    kind, _, rest = line.partition(' ')
    return kind, {k: v for k, v in FIELD.findall(rest)}


def counts(records):
    c = dict.fromkeys(['kernels', 'launches', 'host_syncs', 'syncs_explicit', 'syncs_copy',
                       'syncs_implicit', 'memcpy', 'memset', 'allocations', 'frees',
                       'api_memcpy', 'api_memset'], 0)
    sync_names = {'1': 'syncs_explicit', '2': 'syncs_copy', '3': 'syncs_implicit'}
    for kind, f in records:
        if kind == 'KERNEL':
            c['kernels'] += 1
        elif kind == 'MEMCPY':
            c['memcpy'] += 1
        elif kind == 'MEMSET':
            c['memset'] += 1
        elif kind == 'MEMORY':
            c['allocations' if f['op'] == '1' else 'frees'] += 1
        elif kind == 'API':
            if f['category'] == '1':
                c['launches'] += 1
            elif f['category'] == '3':
                c['api_memcpy'] += 1
            elif f['category'] == '4':
                c['api_memset'] += 1
            if f['sync_kind'] != '0':
                c['host_syncs'] += 1
                c[sync_names[f['sync_kind']]] += 1
    return c


def expected(formulas, args):
    return {k: eval(v, {}, dict(args)) for k, v in formulas.items()
            if k not in ('tiny_kernels',)}


def header_of(records):
    return next(f for kind, f in records if kind == 'HEADER')


def end_of(records):
    return next((f for kind, f in records if kind == 'END'), {})


def compare(ctx, label, got, want):
    for k, v in want.items():
        ctx.check(got.get(k) == v, f'{label}: {k} = {got.get(k)}, expected {v}')
    # A copy or memset is one API call and one GPU record.
    if 'memcpy' in want:
        ctx.check(got['api_memcpy'] == want['memcpy'],
                  f"{label}: {got['api_memcpy']} copy calls, expected {want['memcpy']}")
    if 'memset' in want:
        ctx.check(got['api_memset'] == want['memset'],
                  f"{label}: {got['api_memset']} memset calls, expected {want['memset']}")


def traces(out_dir):
    return sorted(glob.glob(os.path.join(out_dir, 'trace-*.zst')))


def cmd_workloads(ctx, opts):
    for name, w in ctx.spec.items():
        args = dict(w['args'])
        args.update(SMALL_ARGS.get(name, {}))
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, pid = ctx.run(name, args, ctx.env(out, opts.mode, w.get('env')))
        label = f'{name} ({opts.mode})'
        ctx.check(p.returncode == 0, f'{label}: exit status {p.returncode}: {p.stderr[-500:]}')
        ctx.check('gpuwhy:' not in p.stderr, f'{label}: gpuwhy warned: {p.stderr[-500:]}')
        files = traces(out)
        by_pid = {}
        for path in files:
            rc, recs = ctx.dump(path)
            ctx.check(rc == 0, f'{label}: {path} does not decode')
            by_pid[int(header_of(recs)['pid'])] = recs
        if 'child_counts' in w:
            ctx.check(len(files) == 2, f'{label}: {len(files)} traces, expected 2')
            children = [r for r in by_pid.values() if int(header_of(r)['ppid']) in by_pid]
            parents = [r for r in by_pid.values() if r not in children]
            pairs = [('parent', parents, w['counts']), ('child', children, w['child_counts'])]
        else:
            ctx.check(len(files) == 1, f'{label}: {len(files)} traces, expected 1')
            pairs = [('', list(by_pid.values()), w['counts'])]
        for role, recs, formulas in pairs:
            if not ctx.check(len(recs) == 1, f'{label}: no {role} trace'):
                continue
            recs = recs[0]
            end = end_of(recs)
            ctx.check(end.get('clean_exit') == '1', f'{label} {role}: no footer')
            footer = next((f for k, f in recs if k == 'FOOTER'), {})
            ctx.check(footer.get('dropped') == '0', f'{label} {role}: dropped records')
            want = expected(formulas, args)
            compare(ctx, f'{label} {role}', counts(recs), want)
            print(f'{label} {role}: checked {want}')
        shutil.rmtree(out)


def cmd_exits(ctx, opts):
    w = ctx.spec['exit_modes']
    cases = [('return', 0), ('return', 7), ('exit', 0), ('exit', 9), ('_exit', 5),
             ('abort', None), ('sigterm', None)]
    for mode, status in cases:
        args = dict(w['args'], mode=mode)
        if status is not None:
            args['status'] = status
        want_rc = {'abort': -signal.SIGABRT, 'sigterm': -signal.SIGTERM}.get(mode, status)
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        base, _ = ctx.run('exit_modes', args, ctx.env(out, 'none'), timeout=60)
        ctx.check(base.returncode == want_rc,
                  f'exit_modes {mode} without gpuwhy: {base.returncode}, expected {want_rc}')
        p, pid = ctx.run('exit_modes', args, ctx.env(out, 'preload'), timeout=60)
        label = f'exit_modes --mode {mode} --status {status}'
        ctx.check(p.returncode == want_rc, f'{label}: exit status {p.returncode}, '
                  f'expected {want_rc}: {p.stderr[-300:]}')
        ctx.check(f'ending by {mode}' in p.stdout, f'{label}: stdout lost: {p.stdout!r}')
        files = traces(out)
        if not ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            continue
        rc, recs = ctx.dump(files[0])
        ctx.check(rc == 0, f'{label}: trace does not decode')
        got = counts(recs)
        clean = end_of(recs).get('clean_exit') == '1'
        if mode in w['counts_hold_for']['mode']:
            ctx.check(clean, f'{label}: no footer after a normal exit')
            compare(ctx, label, got, expected(w['counts'], args))
        elif mode == 'sigterm':
            # The handler flushed what the application thread had recorded: every call.
            ctx.check(got['launches'] == args['kernels'] and got['host_syncs'] == args['sync'],
                      f'{label}: host records after SIGTERM: {got}')
        else:
            # _exit and abort run nothing of gpuwhy's: the file decodes, possibly empty.
            ctx.check(not clean, f'{label}: a footer cannot have been written')
        shutil.rmtree(out)


def cmd_fork(ctx, opts):
    w = ctx.spec['forker']
    for mode in ('preload', 'inject'):
        for parent_kernels in (4, 0):
            args = dict(w['args'], parent_kernels=parent_kernels)
            out = tempfile.mkdtemp(prefix='gw-e2e-')
            p, pid = ctx.run('forker', args, ctx.env(out, mode), timeout=60)
            label = f'forker {mode} --parent-kernels {parent_kernels}'
            ctx.check(p.returncode == 0, f'{label}: exit status {p.returncode}')
            pids = {m.group(1): int(m.group(2))
                    for m in re.finditer(r'forker: (\S+) pid (\d+)', p.stdout)}
            recs = {}
            for path in traces(out):
                rc, r = ctx.dump(path)
                ctx.check(rc == 0, f'{label}: {path} does not decode')
                recs[int(header_of(r)['pid'])] = r
            # The non-CUDA child never writes a trace; the parent does only if it used CUDA
            # or was already capturing (LD_PRELOAD with libcudart linked starts at load).
            ctx.check(not any(cpid in recs for role, cpid in pids.items()
                              if 'cuda' not in role and role != 'parent'),
                      f'{label}: a trace for the child without CUDA: {sorted(recs)} {pids}')
            child = [cpid for role, cpid in pids.items() if role != 'parent' and cpid in recs]
            if ctx.check(len(child) == 1, f'{label}: child traces {child}, pids {pids}'):
                r = recs[child[0]]
                h = header_of(r)
                ctx.check(end_of(r).get('clean_exit') == '1', f'{label}: child footer')
                compare(ctx, f'{label} child', counts(r), expected(w['child_counts'], args))
                if mode == 'preload':
                    ctx.check(int(h['flags']) & 2, f'{label}: child header lacks FORKED')
                ctx.check(int(h['ppid']) == pid, f'{label}: child ppid {h["ppid"]} != {pid}')
            parent = recs.get(pid)
            if parent_kernels or parent:
                if ctx.check(parent is not None, f'{label}: no parent trace'):
                    compare(ctx, f'{label} parent', counts(parent),
                            expected(w['counts'], args))
            shutil.rmtree(out)


def cmd_threads(ctx, opts):
    w = ctx.spec['multi_stream']
    args = dict(w['args'], threads=16, iters=25)
    for mode in ('preload', 'inject'):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, pid = ctx.run('multi_stream', args, ctx.env(out, mode, w.get('env')), timeout=120)
        label = f'multi_stream --threads 16 ({mode})'
        ctx.check(p.returncode == 0, f'{label}: exit status {p.returncode}')
        files = traces(out)
        if ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            rc, recs = ctx.dump(files[0])
            ctx.check(rc == 0 and end_of(recs).get('clean_exit') == '1', f'{label}: decode')
            compare(ctx, label, counts(recs), expected(w['counts'], args))
            tids = {f['tid'] for k, f in recs if k == 'API'}
            ctx.check(len(tids) == 17, f'{label}: API records from {len(tids)} threads')
        shutil.rmtree(out)


def cmd_sigkill(ctx, opts):
    """tiny_kernels launches bias_add, scalar_mul, clamp in a loop. Killed mid-run, the trace
    must decode, and every launch made more than 250 ms before the kill must be in it with
    its kernel: no launch is missing from the cycle, and the newest one recorded is at most
    250 ms older than the kill."""
    w = ctx.spec['tiny_kernels']
    args = dict(w['args'], iters=10 ** 7)
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    env = ctx.env(out, 'preload', w.get('env'))
    cmd = [os.path.join(ctx.workloads, 'tiny_kernels')] + workload_argv(args)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.2)
    kill_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    files = traces(out)
    if not ctx.check(len(files) == 1, f'sigkill: {len(files)} traces'):
        return
    rc, recs = ctx.dump(files[0])
    ctx.check(rc == 0, 'sigkill: the trace does not decode')
    ctx.check(end_of(recs).get('clean_exit') != '1', 'sigkill: a footer after SIGKILL')
    names = {f['id']: f['text'] for k, f in recs if k == 'STRING'}
    launches = [f for k, f in recs if k == 'API' and f['category'] == '1']
    kernels = {f['correlation']: names.get(f['name_id'], '') for k, f in recs if k == 'KERNEL'}
    cutoff = kill_ns - 250 * 10 ** 6
    old = [f for f in launches if int(f['end_ns']) < cutoff]
    ctx.check(len(old) > 1000, f'sigkill: only {len(old)} launches older than 250 ms')
    if launches:
        newest = max(int(f['end_ns']) for f in launches)
        ctx.check(newest >= cutoff, f'sigkill: newest launch {(kill_ns - newest) / 1e6:.0f} ms '
                  'before the kill')
    cycle = ['tiny_bias_add', 'tiny_scalar_mul', 'tiny_clamp']
    order = [next((i for i, c in enumerate(cycle) if c in kernels.get(f['correlation'], '')),
                  -1) for f in old]
    first_loop = next((i for i, o in enumerate(order) if o == 0), 0)
    broken = [i for i in range(first_loop + 1, len(order))
              if order[i] != (order[i - 1] + 1) % 3]
    ctx.check(not broken, f'sigkill: launches missing from the cycle at {broken[:5]}')
    missing = [f['correlation'] for f in old if f['correlation'] not in kernels]
    ctx.check(not missing, f'sigkill: {len(missing)} old launches without their kernel')
    print(f'sigkill: {len(launches)} launches recorded, {len(old)} older than 250 ms')
    shutil.rmtree(out)


def warned(p):
    return [line for line in p.stderr.splitlines() if line.startswith('gpuwhy:')]


def cmd_degrade(ctx, opts):
    w = ctx.spec['exit_modes']
    args = dict(w['args'], status=4)
    base, _ = ctx.run('exit_modes', args, ctx.env(tempfile.mkdtemp(prefix='gw-e2e-'), 'none'))
    out = tempfile.mkdtemp(prefix='gw-e2e-')

    def unaffected(p, label):
        ctx.check(p.returncode == 4, f'{label}: exit status {p.returncode}')
        ctx.check(p.stdout == base.stdout, f'{label}: stdout changed: {p.stdout!r}')
        ctx.check(len(warned(p)) == 1, f'{label}: warnings {warned(p)}')

    # An existing file and a symlink (to a file, and dangling): never written through.
    existing = os.path.join(out, 'existing.zst')
    with open(existing, 'w') as f:
        f.write('keep me')
    target = os.path.join(out, 'target')
    with open(target, 'w') as f:
        f.write('keep me too')
    for label, path in (('existing file', existing), ('symlink', os.path.join(out, 'l1')),
                        ('dangling symlink', os.path.join(out, 'l2'))):
        if label == 'symlink':
            os.symlink(target, path)
        elif label == 'dangling symlink':
            os.symlink(os.path.join(out, 'nothing'), path)
        p, pid = ctx.run('exit_modes', args, ctx.env(out, 'preload', {'GPUWHY_OUTPUT': path}))
        unaffected(p, label)
    ctx.check(open(existing).read() == 'keep me', 'existing file: overwritten')
    ctx.check(open(target).read() == 'keep me too', 'symlink target: overwritten')
    ctx.check(not os.path.exists(os.path.join(out, 'nothing')), 'dangling symlink: followed')

    # A directory that cannot be written: read-only for a non-root user; root ignores modes,
    # so it runs as nobody through setpriv where it can.
    ro = os.path.join(out, 'ro')
    os.mkdir(ro, 0o555)
    os.chmod(out, 0o755)
    pre = None
    if os.geteuid() == 0:
        setpriv = shutil.which('setpriv')
        if setpriv:
            env = ctx.env(out, 'preload', {'GPUWHY_OUTPUT': os.path.join(ro, 't-%p.zst')})
            p = subprocess.run([setpriv, '--reuid=65534', '--regid=65534', '--clear-groups',
                                os.path.join(ctx.workloads, 'exit_modes')] +
                               workload_argv(args), env=env, capture_output=True, text=True,
                               timeout=60)
            unaffected(p, 'unwritable directory')
        else:
            print('unwritable directory: running as root without setpriv, using a missing one')
            pre = os.path.join(out, 'missing', 't-%p.zst')
    else:
        pre = os.path.join(ro, 't-%p.zst')
    if pre:
        p, pid = ctx.run('exit_modes', args, ctx.env(out, 'preload', {'GPUWHY_OUTPUT': pre}))
        unaffected(p, 'unwritable directory')
    ctx.check(os.listdir(ro) == [], 'unwritable directory: something was written')

    # A file-size limit hit mid-run: the writer's write fails (no SIGXFSZ kills the program),
    # the trace is cut at the limit and still decodes, and the program's output is intact.
    limit = 64 * 1024
    tk = ctx.spec['tiny_kernels']
    tk_args = dict(tk['args'], iters=20000)
    fs_out = tempfile.mkdtemp(prefix='gw-e2e-')
    env = ctx.env(fs_out, 'preload', tk.get('env'))
    ref, _ = ctx.run('tiny_kernels', tk_args, ctx.env(fs_out, 'none', tk.get('env')))
    p, pid = ctx.run('tiny_kernels', tk_args, env,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    label = 'RLIMIT_FSIZE'
    ctx.check(p.returncode == 0, f'{label}: exit status {p.returncode}')
    ctx.check(p.stdout == ref.stdout, f'{label}: stdout changed')
    ctx.check(any('failed' in line for line in warned(p)), f'{label}: no warning: {p.stderr}')
    files = traces(fs_out)
    if ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
        ctx.check(os.path.getsize(files[0]) <= limit, f'{label}: file beyond the limit')
        rc, recs = ctx.dump(files[0])
        ctx.check(rc == 0, f'{label}: the cut trace does not decode')

    # CUPTI held by another tool (error 39), and no CUPTI at all: the trace says why.
    for label, extra in (('CUPTI busy', {'GPUSIM_CUPTI_BUSY': '1'}),
                         ('no CUPTI', {'GPUWHY_CUPTI_PATH': '/nonexistent/libcupti.so.13'})):
        o = tempfile.mkdtemp(prefix='gw-e2e-')
        p, pid = ctx.run('exit_modes', args, ctx.env(o, 'preload', extra))
        unaffected(p, label)
        files = traces(o)
        if ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            rc, recs = ctx.dump(files[0])
            notes = [f['text'] for k, f in recs if k == 'NOTE']
            ctx.check(rc == 0 and header_of(recs)['capture_mode'] == '0',
                      f'{label}: header capture_mode')
            ctx.check(len(notes) == 1, f'{label}: notes {notes}')
            if label == 'CUPTI busy':
                ctx.check('39' in notes[0] if notes else False, f'{label}: reason {notes}')
            ctx.check(counts(recs)['launches'] == 0, f'{label}: events without CUPTI')


LATE_CUDA = '''
import ctypes
rt = ctypes.CDLL('libcudart.so.13')
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0
assert rt.cudaMemset(p, 0, ctypes.c_size_t(1 << 20)) == 0
assert rt.cudaDeviceSynchronize() == 0
assert rt.cudaFree(p) == 0
print('late cuda done')
'''


def cmd_dlopen(ctx, opts):
    """No libcudart when the constructor runs: capture starts at CUDA initialization."""
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p = subprocess.run([sys.executable, '-c', LATE_CUDA], env=ctx.env(out, 'preload'),
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0 and 'late cuda done' in p.stdout, f'dlopen: {p.stderr[-300:]}')
    files = traces(out)
    if ctx.check(len(files) == 1, f'dlopen: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        ctx.check(rc == 0 and end_of(recs).get('clean_exit') == '1', 'dlopen: decode, footer')
        want = {'allocations': 1, 'frees': 1, 'host_syncs': 3, 'syncs_explicit': 1,
                'syncs_copy': 1, 'syncs_implicit': 1, 'memset': 1, 'launches': 0}
        compare(ctx, 'dlopen', counts(recs), want)
    shutil.rmtree(out)


def cmd_floor(ctx, opts):
    """benchmarks' libcupti-floor.so (CUPTI as gpuwhy configures it, empty handlers), under
    LD_PRELOAD and CUDA_INJECTION64_PATH: the program's output and status are untouched, and
    it walks every activity record: each kernel, the device, at most one per sync."""
    floor = os.path.join(ctx.build, 'benchmarks', 'libcupti-floor.so')
    w = ctx.spec['tiny_kernels']
    args = dict(w['args'])
    args.update(SMALL_ARGS['tiny_kernels'])
    want = expected(w['counts'], args)
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    plain, _ = ctx.run('tiny_kernels', args, ctx.env(out, 'none', w.get('env')))
    for mode, var in (('preload', 'LD_PRELOAD'), ('inject', 'CUDA_INJECTION64_PATH')):
        env = ctx.env(out, 'none', dict(w.get('env', {}), CUPTI_FLOOR_VERBOSE='1'))
        env[var] = floor
        p, _ = ctx.run('tiny_kernels', args, env)
        label = f'cupti-floor ({mode})'
        ctx.check(p.returncode == 0 and p.stdout == plain.stdout,
                  f'{label}: exit {p.returncode}, output changed: {p.stderr[-300:]}')
        m = re.search(r'cupti-floor: (\d+) activity records walked', p.stderr)
        n = int(m.group(1)) if m else -1
        low = want['kernels'] + 1
        ctx.check(low <= n <= low + want['host_syncs'],
                  f'{label}: {n} records walked, expected {low} to {low + want["host_syncs"]}')
        ctx.check(not traces(out), f'{label}: wrote a trace')
        print(f'{label}: {n} records walked')
    shutil.rmtree(out)


# The CUDA and NVTX injection entry points, the CUPTI calls by which another client in the
# process takes CUPTI's activity records from gpuwhy (interposed to say so in the trace), and the
# exec family (the trace is closed before an exec without fork).
EXPORTS = sorted(['InitializeInjection', 'InitializeInjectionNvtx2', 'cuptiActivityDisable',
                  'cuptiActivityRegisterCallbacks', 'cuptiActivityRegisterTimestampCallback',
                  'cuptiFinalize', 'execl', 'execle', 'execlp', 'execv', 'execve', 'execveat',
                  'execvp', 'execvpe', 'fexecve'])


def cmd_symbols(ctx, opts):
    p = subprocess.run(['nm', '-D', '--defined-only', ctx.lib], capture_output=True, text=True)
    names = sorted(line.split()[-1] for line in p.stdout.splitlines() if line.strip())
    ctx.check(p.returncode == 0 and names == EXPORTS, f'exported symbols: {names}')


def unquote(text):
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def dump_index(recs):
    """Kernel names, API records by correlation, KERNEL records and NOTE texts of a dump."""
    names = {f['id']: unquote(f['text']) for k, f in recs if k == 'STRING'}
    apis = {f['correlation']: f for k, f in recs if k == 'API'}
    kernels = [f for k, f in recs if k == 'KERNEL']
    notes = [unquote(f['text']) for k, f in recs if k == 'NOTE']
    return names, apis, kernels, notes


def probe_run(ctx, args, out, mode='preload', extra=None, timeout=60):
    env = ctx.env(out, mode, extra)
    t0 = time.monotonic()
    p = subprocess.run([ctx.probe] + args, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p, time.monotonic() - t0


# The path each probe kernel is launched through, and the call the application made for it
# (the API record the kernel must join).
PATHS = {'k_runtime': 'cudaLaunchKernel', 'k_chevron': '__cudaLaunchKernel',
         'k_chevron_ptsz': '__cudaLaunchKernel_ptsz',
         'k_cooperative': 'cudaLaunchCooperativeKernel', 'k_ex': 'cudaLaunchKernelExC',
         'k_driver': 'cuLaunchKernel', 'k_driver_ex': 'cuLaunchKernelEx',
         'k_driver_coop': 'cuLaunchCooperativeKernel', 'k_graph': 'cudaGraphLaunch',
         'k_driver_graph': 'cuGraphLaunch'}


def cmd_paths(ctx, opts):
    n = 20
    configs = [('default (unique ids, GPU records carry the outer call\'s)', {}),
               ('GPU records carry the driver call\'s id', {'GPUSIM_GPU_CORRELATION': 'driver'}),
               ('no nested driver callbacks', {'GPUSIM_NESTED_CALLBACKS': '0'}),
               ('nested calls share the outer id', {'GPUSIM_NESTED_CORRELATION': 'shared'})]
    for label, extra in configs:
        for mode in ('preload', 'inject'):
            out = tempfile.mkdtemp(prefix='gw-e2e-')
            p, _ = probe_run(ctx, ['paths', str(n)], out, mode, extra)
            tag = f'paths, {label}, {mode}'
            ctx.check(p.returncode == 0, f'{tag}: exit {p.returncode}: {p.stderr[-300:]}')
            files = traces(out)
            if not ctx.check(len(files) == 1, f'{tag}: {len(files)} traces'):
                continue
            rc, recs = ctx.dump(files[0])
            names, apis, kernels, notes = dump_index(recs)
            for kname, call in PATHS.items():
                ks = [k for k in kernels if names.get(k['name_id']) == kname]
                joined = [apis.get(k['correlation']) for k in ks]
                good = [a for a in joined if a and a['category'] in ('1', '2') and
                        names.get(a['name_id']) == call]
                ctx.check(len(ks) == n, f'{tag}: {len(ks)} {kname} records, expected {n}')
                ctx.check(len(good) == len(ks),
                          f'{tag}: {len(good)} of {len(ks)} {kname} records join a {call} call')
            launches = [a for a in apis.values() if a['category'] in ('1', '2')]
            # every path once per round, plus the two captured launches
            ctx.check(len(launches) == n * len(PATHS) + 2,
                      f'{tag}: {len(launches)} launch records, expected {n * len(PATHS) + 2}')
            print(f'{tag}: every kernel joined its launch call')
            shutil.rmtree(out)


def cmd_startup(ctx, opts):
    # 1. A device setting made in main is seen: nothing initialized CUDA before main, although
    # libcudart is a DT_NEEDED of the program and CUPTI initializes the driver when subscribed.
    for mode in ('preload', 'inject'):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, _ = probe_run(ctx, ['visible'], out, mode)
        ctx.check(p.returncode == 0 and 'probe: 64 SMs' in p.stdout,
                  f'visible ({mode}): {p.stdout.strip()} {p.stderr[-200:]}')
        ctx.check(len(traces(out)) == 1, f'visible ({mode}): {len(traces(out))} traces')
        shutil.rmtree(out)
    # 2. fork before any CUDA call: the child is a process of its own, with its own CUPTI and
    # all its GPU records; the parent too.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['forkfirst'], out)
    ctx.check(p.returncode == 0, f'forkfirst: exit {p.returncode}: {p.stderr[-300:]}')
    files = traces(out)
    if ctx.check(len(files) == 2, f'forkfirst: {len(files)} traces'):
        for path in files:
            rc, recs = ctx.dump(path)
            c = counts(recs)
            ctx.check(c['launches'] == 3 and c['kernels'] == 3,
                      f'forkfirst: {path}: {c["launches"]} launches, {c["kernels"]} kernels')
    shutil.rmtree(out)
    # 3. Another tool owns CUDA_INJECTION64_PATH: gpuwhy neither loads CUPTI nor subscribes;
    # its trace says so.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    other = os.path.join(out, 'other-tool.so')
    p, _ = probe_run(ctx, ['paths', '2'], out, 'preload', {'CUDA_INJECTION64_PATH': other})
    ctx.check(p.returncode == 0, f'injection owner: exit {p.returncode}')
    ctx.check(len(warned(p)) == 1 and 'another CUDA tool' in warned(p)[0],
              f'injection owner: warnings {warned(p)}')
    files = traces(out)
    if ctx.check(len(files) == 1, f'injection owner: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        names, apis, kernels, notes = dump_index(recs)
        ctx.check(header_of(recs)['capture_mode'] == '0' and not apis and not kernels,
                  'injection owner: CUPTI was used')
        ctx.check(any(other in n for n in notes), f'injection owner: notes {notes}')
    shutil.rmtree(out)
    # 4. A libcupti the process has already (PyTorch's): gpuwhy uses it, loads no other.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    mine = os.path.join(out, 'libcupti.so.12')
    shutil.copy(os.path.join(ctx.gpusim, 'libcupti.so.13'), mine)
    env = ctx.env(out, 'preload')
    env['LD_PRELOAD'] = ctx.lib + ':' + mine
    p = subprocess.run([ctx.probe, 'paths', '2'], env=env, capture_output=True, text=True,
                       timeout=60)
    ctx.check(p.returncode == 0, f'loaded libcupti: exit {p.returncode}: {p.stderr[-200:]}')
    files = traces(out)
    if ctx.check(len(files) == 1, f'loaded libcupti: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        h = header_of(recs)
        ctx.check(unquote(h.get('cupti_path', '')) == mine,
                  f'loaded libcupti: the trace used {h.get("cupti_path")}, not {mine}')
        ctx.check(counts(recs)['kernels'] == 2 * len(PATHS), 'loaded libcupti: kernels')
    shutil.rmtree(out)


def cmd_versions(ctx, opts):
    cases = [('CUPTI 12', {'GPUSIM_CUPTI_API': '12'}),
             ('CUPTI older than CUDA 11.0', {'GPUSIM_CUPTI_API': '10'}),
             ('no DEVICE record', {'GPUSIM_CUPTI_DEVICE': 'never'})]
    for label, extra in cases:
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, _ = probe_run(ctx, ['paths', '2'], out, 'preload', extra)
        ctx.check(p.returncode == 0, f'{label}: exit {p.returncode}')
        files = traces(out)
        if not ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            continue
        rc, recs = ctx.dump(files[0])
        names, apis, kernels, notes = dump_index(recs)
        h = header_of(recs)
        if label == 'CUPTI 12':
            # __cudaLaunchKernel and cuCtxSynchronize_v2 are newer than CUPTI 12: version
            # noise, not a refusal worth a note; everything else is recorded.
            ctx.check(not any('refused' in n for n in notes), f'{label}: notes {notes}')
            ctx.check(h['cupti_version'] == '26' and h['capture_mode'] == '1',
                      f'{label}: header {h}')
        elif label == 'CUPTI older than CUDA 11.0':
            ctx.check(h['capture_mode'] == '0' and any('older than CUDA 11.0' in n
                                                       for n in notes),
                      f'{label}: capture_mode {h["capture_mode"]}, notes {notes}')
        else:
            ctx.check(any('no DEVICE record' in n for n in notes) and kernels,
                      f'{label}: notes {notes}')
        print(f'{label}: {notes}')
        shutil.rmtree(out)


def cmd_exit_flush(ctx, opts):
    # A program that ends with cudaDeviceReset: gpuwhy hands CUPTI's records back as the
    # reset begins (as NVIDIA's injection sample does), and the reset waits for the device:
    # every kernel is there with its times, and the reset is an implicit synchronization.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, secs = probe_run(ctx, ['reset', '12'], out, 'preload', {'GPUSIM_KERNEL_US': 'k_long=2000'})
    files = traces(out)
    if ctx.check(p.returncode == 0 and len(files) == 1,
                 f'reset: exit {p.returncode}, {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        names, apis, kernels, notes = dump_index(recs)
        ks = [k for k in kernels if names.get(k['name_id']) == 'k_long' and k['start_ns'] != '0']
        resets = [a for a in apis.values()
                  if names.get(a['name_id'], '').startswith('cudaDeviceReset')]
        ctx.check(len(ks) == 12, f'reset: {len(ks)} of 12 kernels recorded with their times')
        ctx.check(len(resets) == 1 and resets[0]['sync_kind'] == '3',
                  f'reset: the reset is recorded as an implicit sync ({resets})')
    shutil.rmtree(out)
    # A kernel running at exit: gpuwhy lets it finish for a while (1 s), then forces CUPTI's
    # buffers out; a longer one comes back without times, and the trace says so.
    for long_us, timed in ((200000, True), (30000000, False)):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, secs = probe_run(ctx, ['inflight'], out, 'preload',
                            {'GPUSIM_KERNEL_US': f'k_long={long_us}'})
        label = f'inflight {long_us / 1e6:g} s kernel'
        ctx.check(p.returncode == 0 and secs < 20, f'{label}: exit {p.returncode} in {secs:.1f} s')
        files = traces(out)
        if ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            rc, recs = ctx.dump(files[0])
            names, apis, kernels, notes = dump_index(recs)
            ks = [k for k in kernels if names.get(k['name_id']) == 'k_long']
            untimed = [k for k in ks if k['start_ns'] == '0' and k['end_ns'] == '0']
            ctx.check(len(ks) == 1, f'{label}: {len(ks)} k_long records')
            ctx.check(bool(untimed) != timed, f'{label}: timed {not untimed}, expected {timed}')
            ctx.check(any('without timestamps' in n for n in notes) != timed,
                      f'{label}: notes {notes}')
        shutil.rmtree(out)
    # CUDA initialized but no hooked call, on a CUPTI whose flush hangs without a context (the
    # default) or always: gpuwhy never flushes, the program exits at once.
    for hang in ('nocontext', 'always'):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, secs = probe_run(ctx, ['count'], out, 'preload', {'GPUSIM_CUPTI_FLUSH_HANG': hang})
        ctx.check(p.returncode == 0 and secs < 4 and not warned(p),
                  f'count, flush hang {hang}: exit {p.returncode} in {secs:.1f} s {warned(p)}')
        shutil.rmtree(out)
    # A flush that never returns, after real work: the program exits after the bounded wait,
    # with a warning and a note, every call recorded.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, secs = probe_run(ctx, ['paths', '5'], out, 'preload', {'GPUSIM_CUPTI_FLUSH_HANG': 'always'})
    ctx.check(p.returncode == 0 and secs < 20, f'flush hang: exit {p.returncode} in {secs:.1f} s')
    ctx.check(len(warned(p)) == 1 and 'gave up' in warned(p)[0], f'flush hang: {warned(p)}')
    files = traces(out)
    if ctx.check(len(files) == 1, f'flush hang: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        names, apis, kernels, notes = dump_index(recs)
        ctx.check(end_of(recs).get('clean_exit') == '1', 'flush hang: no footer')
        ctx.check(any('gave up' in n for n in notes), f'flush hang: notes {notes}')
        launches = [a for a in apis.values() if a['category'] in ('1', '2')]
        ctx.check(len(launches) == 5 * len(PATHS) + 2, f'flush hang: {len(launches)} launches')
    shutil.rmtree(out)
    # A query loop: CUPTI would record every query (gpusim does, GPUSIM_SYNC_QUERIES=1);
    # gpuwhy leaves SYNCHRONIZATION off and folds the loop into one polling wait: one SYNC
    # record whose query count is the loop's polls and the query that ended it.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['poll'], out, 'preload', {'GPUSIM_KERNEL_US': 'k_long=50000'})
    m = re.search(r'probe: (\d+) polls', p.stdout)
    polls = int(m.group(1)) if m else 0
    files = traces(out)
    if ctx.check(p.returncode == 0 and polls > 100 and len(files) == 1,
                 f'poll: exit {p.returncode}, {polls} polls, {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        syncs = [f for k, f in recs if k == 'SYNC']
        # polls + 1 queries, or fewer when the scheduler kept the loop off its CPU for over
        # 10 ms (the wait then restarts: doc/capture.md)
        ctx.check(len(syncs) == 1 and 2 <= int(syncs[0]['queries']) <= polls + 1,
                  f'poll: {len(syncs)} SYNC records for {polls} polls: {syncs}')
        print(f'poll: {polls} polls, {len(syncs)} SYNC records, {os.path.getsize(files[0])} bytes')
    shutil.rmtree(out)
    # 100,000 queries of work already done (a caching allocator's event checks): no host
    # waited, nothing recorded. And a loop of spins: one SYNC record a finished spin.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['queries', '100000'], out, 'preload')
    files = traces(out)
    if ctx.check(p.returncode == 0 and len(files) == 1, f'queries: exit {p.returncode}'):
        rc, recs = ctx.dump(files[0])
        syncs = [f for k, f in recs if k == 'SYNC']
        apis = [f for k, f in recs if k == 'API']
        ctx.check(not syncs and len(apis) < 10,
                  f'queries: {len(syncs)} SYNC and {len(apis)} API records for 100,000 queries')
        print(f'queries: 100000 queries of finished work, {os.path.getsize(files[0])} bytes')
    shutil.rmtree(out)
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['spins', '100000', '1000'], out, 'preload',
                     {'GPUSIM_KERNEL_US': 'k_long=20'})
    m = re.search(r'probe: (\d+) queries, (\d+) spins', p.stdout)
    queries, spins = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    files = traces(out)
    if ctx.check(p.returncode == 0 and spins > 0 and len(files) == 1,
                 f'spins: exit {p.returncode}, {queries} queries in {spins} spins'):
        rc, recs = ctx.dump(files[0])
        syncs = [f for k, f in recs if k == 'SYNC']
        folded = sum(int(f['queries']) for f in syncs)
        # a spin the scheduler paused for over 10 ms is not a wait (doc/capture.md): at most
        # every spin, each at least one unfinished query and the last
        ctx.check(0 < len(syncs) <= spins and folded <= queries and
                  all(int(f['queries']) >= 2 for f in syncs),
                  f'spins: {len(syncs)} SYNC records folding {folded} of {queries} queries, '
                  f'{spins} spins')
        print(f'spins: {queries} queries in {spins} spins: {len(syncs)} SYNC records, '
              f'{os.path.getsize(files[0])} bytes')
    shutil.rmtree(out)


def cmd_second_client(ctx, opts):
    """At launch 1000 of tiny_kernels another client re-registers CUPTI's buffer callbacks (as
    torch.profiler's Kineto does). Preloaded, gpuwhy sees the call; injected only, it infers
    it from CUPTI's silence while launches go on."""
    w = ctx.spec['tiny_kernels']
    # Injected only, the takeover is inferred after 1 s of CUPTI's silence with launches going
    # on (hooks/cupti-activity.c, TAKEOVER_NS): the launches after launch 1000, at least 40 µs
    # each (gpusim spins GPUSIM_LAUNCH_US), must last well over that on a fast machine too.
    takeover_at, launch_us, silence_s = 1000, 40, 1.0
    iters = math.ceil((1.5 * silence_s * 1e6 / launch_us + takeover_at) / 3)
    args = dict(w['args'], iters=iters)
    for mode in ('preload', 'inject'):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        extra = dict(w.get('env', {}), GPUSIM_SECOND_CLIENT=str(takeover_at),
                     GPUSIM_LAUNCH_US=str(launch_us))
        p, pid = ctx.run('tiny_kernels', args, ctx.env(out, mode, extra))
        label = f'second client ({mode})'
        ctx.check(p.returncode == 0, f'{label}: exit {p.returncode}')
        files = traces(out)
        if ctx.check(len(files) == 1, f'{label}: {len(files)} traces'):
            rc, recs = ctx.dump(files[0])
            names, apis, kernels, notes = dump_index(recs)
            want = 'cuptiActivityRegisterCallbacks' if mode == 'preload' else 'taken them over'
            ctx.check(any(want in n for n in notes), f'{label}: notes {notes}')
            c = counts(recs)
            ctx.check(c['launches'] == 1 + 3 * args['iters'], f'{label}: launches {c}')
            ctx.check(c['kernels'] < takeover_at,
                      f'{label}: {c["kernels"]} kernels after takeover')
            print(f'{label}: {notes}')
        shutil.rmtree(out)


def cmd_skew(ctx, opts):
    """CUPTI converts GPU ticks to host time by interpolation, µs off; gap rule 1 compares the
    two at that scale. tiny_kernels (launch-bound, 1 µs kernels) must keep its cause, per
    workloads.json, with the GPU's times 3 µs early or late."""
    w = ctx.spec['tiny_kernels']
    args = dict(w['args'])
    args.update(SMALL_ARGS['tiny_kernels'])
    for skew in (-3000, 3000):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, pid = ctx.run('tiny_kernels', args,
                         ctx.env(out, 'preload', dict(w.get('env', {}),
                                                      GPUSIM_GPU_SKEW_NS=str(skew))))
        files = traces(out)
        if ctx.check(p.returncode == 0 and len(files) == 1, f'skew {skew}: run'):
            r = subprocess.run([ctx.report, '--json', files[0]], capture_output=True, text=True,
                               timeout=120)
            rep = json.loads(r.stdout) if r.returncode == 0 else {}
            got = rep.get(w['cause_field'])
            frac = rep.get('breakdown', {}).get(w['cause'], 0)
            ctx.check(got == w['cause'] and frac >= w['cause_min_fraction'],
                      f'skew {skew} ns: {w["cause_field"]} {got} ({frac:.2f}), expected '
                      f'{w["cause"]} (>= {w["cause_min_fraction"]})')
            print(f'skew {skew} ns: {got} {frac:.2f}')
        shutil.rmtree(out)


def footer_of(records):
    return next((f for kind, f in records if kind == 'FOOTER'), None)


GW_FOOTER_EXEC = 2


def check_image(ctx, tag, path, n, exec_flag):
    """One image's trace: n k_exec launches and kernels, an allocation and a free, closed
    cleanly, with the exec flag when the image ended by exec."""
    rc, recs = ctx.dump(path)
    got = counts(recs)
    foot = footer_of(recs)
    ctx.check(rc == 0, f'{tag}: {os.path.basename(path)} does not decode')
    ctx.check(got['launches'] == n and got['kernels'] == n,
              f'{tag}: {os.path.basename(path)}: {got["launches"]} launches and '
              f'{got["kernels"]} kernels, expected {n}')
    ctx.check(got['allocations'] == 1 and got['frees'] == 1,
              f'{tag}: {os.path.basename(path)}: {got["allocations"]} allocations, '
              f'{got["frees"]} frees, expected 1 and 1')
    if ctx.check(foot is not None, f'{tag}: {os.path.basename(path)} has no footer'):
        flags = int(foot['flags'])
        ctx.check(bool(flags & GW_FOOTER_EXEC) == exec_flag and foot['dropped'] == '0',
                  f'{tag}: {os.path.basename(path)}: footer flags {flags}, dropped '
                  f'{foot["dropped"]}, expected the exec flag {exec_flag}')


def cmd_exec(ctx, opts):
    chain = [3, 4, 5]
    # 1. every exec function: three images of one process, each with its own trace
    for via in ('execv', 'execve', 'execvp', 'execl', 'execle', 'execlp', 'fexecve'):
        out = tempfile.mkdtemp(prefix='gw-e2e-')
        p, _ = probe_run(ctx, ['exec', via] + [str(n) for n in chain], out)
        tag = f'exec through {via}'
        ctx.check(p.returncode == 0, f'{tag}: exit {p.returncode}: {p.stderr[-300:]}')
        pids = set(re.findall(r'probe: pid (\d+) launched', p.stdout))
        ctx.check(len(pids) == 1 and p.stdout.count('launched') == 3,
                  f'{tag}: not one process of three images: {p.stdout!r}')
        ctx.check(not warned(p), f'{tag}: gpuwhy warned: {warned(p)}')
        pid = pids.pop() if pids else '?'
        want = [f'trace-{pid}.zst', f'trace-{pid}-exec1.zst', f'trace-{pid}-exec2.zst']
        got = [os.path.basename(t) for t in traces(out)]
        if ctx.check(sorted(got) == sorted(want), f'{tag}: traces {got}, expected {want}'):
            for i, (name, n) in enumerate(zip(want, chain)):
                check_image(ctx, f'{tag}, image {i + 1}', os.path.join(out, name), n,
                            i < len(chain) - 1)
            if via == 'execv':
                # one process on one GPU, whose window spans the images and the execs between
                # (doc/design.md, Devices are physical GPUs), never three GPUs
                r = subprocess.run([ctx.report, '--json'] + [os.path.join(out, w) for w in want],
                                   capture_output=True, text=True, timeout=120)
                devs = json.loads(r.stdout).get('devices', []) if r.returncode == 0 else []
                ctx.check([d['processes'] for d in devs] == [1],
                          f'{tag}: the images report as one process on one GPU '
                          f'(devices {[(d["name"], d["processes"]) for d in devs]})')
        print(f'{tag}: {len(got)} traces')
        shutil.rmtree(out)

    # 2. an exec that fails: a path that does not exist leaves the trace alone; an executable
    # file that is no program (ENOEXEC) fails after the trace was closed, which gpuwhy says
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['exec', 'fail-noent', '3', 'x'], out)
    files = traces(out)
    ctx.check(p.returncode == 0 and 'failed: No such file' in p.stdout and not warned(p),
              f'failed exec (no such file): {p.returncode} {p.stdout!r} {warned(p)}')
    if ctx.check(len(files) == 1, f'failed exec (no such file): {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        got = counts(recs)
        foot = footer_of(recs)
        ctx.check(got['launches'] == 6 and got['kernels'] == 6 and foot is not None and
                  int(foot['flags']) & GW_FOOTER_EXEC == 0,
                  f'failed exec (no such file): {got["launches"]} launches, {got["kernels"]} '
                  f'kernels (expected 6), footer {foot}')
    bogus = os.path.join(out, 'not-a-program')
    with open(bogus, 'w') as f:
        f.write('neither ELF nor #!\n')
    os.chmod(bogus, 0o755)
    for t in files:
        os.unlink(t)
    p, _ = probe_run(ctx, ['exec', 'fail-noexec', '3', bogus], out)
    files = traces(out)
    ctx.check(p.returncode == 0 and 'Exec format error' in p.stdout,
              f'failed exec (ENOEXEC): {p.returncode} {p.stdout!r}')
    ctx.check(any('an exec failed' in w and 'not recorded' in w for w in warned(p)),
              f'failed exec (ENOEXEC): gpuwhy did not say the rest is not recorded: {warned(p)}')
    if ctx.check(len(files) == 1, f'failed exec (ENOEXEC): {len(files)} traces'):
        check_image(ctx, 'failed exec (ENOEXEC)', files[0], 3, True)
    shutil.rmtree(out)

    # 3. vfork + exec in the child: the child shares the parent's memory and must leave its
    # trace alone (one trace, both halves of the parent's work, no exec flag)
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['vfork', '3'], out)
    files = traces(out)
    ctx.check(p.returncode == 0 and not warned(p), f'vfork: {p.returncode} {p.stderr[-300:]}')
    if ctx.check(len(files) == 1, f'vfork: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        got = counts(recs)
        foot = footer_of(recs)
        ctx.check(got['launches'] == 6 and got['kernels'] == 6 and foot is not None and
                  int(foot['flags']) & GW_FOOTER_EXEC == 0,
                  f'vfork: {got["launches"]} launches, {got["kernels"]} kernels (expected 6), '
                  f'footer {foot}')
    shutil.rmtree(out)

    # 4. CUDA_INJECTION64_PATH alone: nothing hooks exec, the first image's unwritten records
    # are lost with it, but the next image still gets a trace of its own, complete
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    p, _ = probe_run(ctx, ['exec', 'execv', '3', '4'], out, 'inject')
    pid = (re.findall(r'probe: pid (\d+) launched', p.stdout) or ['?'])[0]
    got = [os.path.basename(t) for t in traces(out)]
    want = [f'trace-{pid}.zst', f'trace-{pid}-exec1.zst']
    ctx.check(p.returncode == 0 and not warned(p),
              f'exec, injection only: {p.returncode} {warned(p)}')
    if ctx.check(sorted(got) == sorted(want),
                 f'exec, injection only: traces {got}, expected {want}'):
        check_image(ctx, 'exec, injection only, image 2', os.path.join(out, want[1]), 4, False)
    shutil.rmtree(out)


    # 5. the launcher: gpuwhy run with -o naming one file, a process that checks CUDA
    # and execs the real work; the report holds both images (the second is in -exec1)
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    launcher = os.path.join(ctx.build, 'tools', 'gpuwhy')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('GPUWHY_', 'GPUSIM_')) and
           k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
    p = subprocess.run([launcher, 'run', '--sim', '--json', '-o',
                        os.path.join(out, 'run.trace.zst'), '--', ctx.probe, 'exec', 'execv',
                        '3', '4'], env=env, capture_output=True, text=True, timeout=120)
    rep = json.loads(p.stdout) if p.returncode == 0 else {}
    ctx.check(rep.get('counts', {}).get('launches') == 7 and len(rep.get('traces', [])) == 2,
              f'gpuwhy run -o FILE over an exec: {rep.get("counts", {}).get("launches")} '
              f'launches in {len(rep.get("traces", []))} traces, expected 7 in 2 '
              f'({p.returncode}: {p.stderr[-300:]})')
    shutil.rmtree(out)


def cmd_descriptors(ctx, opts):
    # 1. gpuwhy's descriptors are not where the program's go: its table holds no trace, and
    # what gpuwhy added (libunwind's pipe) sits at 100 or above
    def fds(p):
        return {int(m[0]): m[1] for m in re.findall(r'probe: fd (\d+) (.*)', p.stdout)}

    out = tempfile.mkdtemp(prefix='gw-e2e-')
    base, _ = probe_run(ctx, ['fds', '3'], out, 'none')
    p, _ = probe_run(ctx, ['fds', '3'], out)
    files = traces(out)
    ctx.check(p.returncode == 0 and base.returncode == 0 and len(files) == 1,
              f'descriptors: {p.returncode} {base.returncode} {files}')
    with_gw, without = fds(p), fds(base)
    # numbers the run without gpuwhy did not have open (the same numbers hold other pipes of
    # the same kind: stdout and stderr)
    added = {fd: t for fd, t in with_gw.items() if fd not in without}
    ctx.check(all(fd >= 100 for fd in added),
              f'descriptors: gpuwhy holds numbers below 100: {added}')
    ctx.check(not any(t.endswith('.zst') for t in with_gw.values()),
              f"descriptors: the trace is in the program's table: {with_gw}")
    ctx.check(any(t.startswith('pipe:') for t in added.values()),
              f"descriptors: libunwind's pipe is not among gpuwhy's: {added}")
    print(f'descriptors: gpuwhy added {sorted(added)}')
    shutil.rmtree(out)

    # 2. started with stderr closed (`prog 2>&-`): the program's file that takes number 2 holds
    # its own line and none of gpuwhy's (the summary line included); the trace is whole
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    own = os.path.join(out, 'program.log')
    env = ctx.env(out, 'preload', {'GPUWHY_QUIET': '0'})
    p = subprocess.run(['sh', '-c', 'exec "$@" 2>&-', 'sh', ctx.probe, 'stderr-closed', '3', own],
                       env=env, stdout=subprocess.PIPE, text=True, timeout=60)
    files = traces(out)
    ctx.check(p.returncode == 0, f'stderr closed: exit {p.returncode}')
    with open(own) as f:
        text = f.read()
    ctx.check(text == "the program's own line\n", f"stderr closed: the program's file: {text!r}")
    if ctx.check(len(files) == 1, f'stderr closed: {len(files)} traces'):
        rc, recs = ctx.dump(files[0])
        got = counts(recs)
        ctx.check(rc == 0 and got['launches'] == 6 and got['kernels'] == 6 and
                  footer_of(recs) is not None,
                  f'stderr closed: trace rc {rc}, {got["launches"]} launches, '
                  f'{got["kernels"]} kernels, expected 6, and a footer')
    shutil.rmtree(out)


def cmd_settings(ctx, opts):
    # Every invalid setting is named; a wrapper (sh) and the program it runs both load the
    # library, and the warning comes once.
    out = tempfile.mkdtemp(prefix='gw-e2e-')
    env = ctx.env(out, 'preload', {'GPUWHY_STACKS': 'maybe', 'GPUWHY_DEBUG': 'x'})
    p = subprocess.run(['sh', '-c', '"$@"; exit $?', 'sh', ctx.probe, 'fds', '2'], env=env,
                       capture_output=True, text=True, timeout=60)
    lines = warned(p)
    for name, value in (('GPUWHY_STACKS', 'maybe'), ('GPUWHY_DEBUG', 'x')):
        n = sum(f'ignoring invalid {name}={value}' in w for w in lines)
        ctx.check(n == 1, f'settings: {name}={value} warned {n} times: {lines}')
    ctx.check(p.returncode == 0 and len(traces(out)) == 1,
              f'settings: exit {p.returncode}, {len(traces(out))} traces')
    shutil.rmtree(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--mode', default='preload', choices=['preload', 'inject'])
    ap.add_argument('--probe', help='tests/e2e/capture-probe (paths, startup, versions, exit-flush)')
    ap.add_argument('command', choices=['workloads', 'exits', 'fork', 'threads', 'sigkill',
                                        'degrade', 'dlopen', 'floor', 'symbols', 'paths',
                                        'startup', 'versions', 'exit-flush', 'second-client',
                                        'skew', 'exec', 'descriptors', 'settings'])
    opts = ap.parse_args()
    ctx = Ctx(opts.build, opts.source)
    ctx.probe = opts.probe
    globals()['cmd_' + opts.command.replace('-', '_')](ctx, opts)
    if ctx.failures:
        print(f'{len(ctx.failures)} failure(s)')
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
