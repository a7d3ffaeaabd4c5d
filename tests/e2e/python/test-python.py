#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python call sites, end to end on gpusim (the simulated GPU, a test double).

usage: test-python.py --build DIR --source DIR --pysim LIB --python PY [--late PROG]
                      [--probe PROG] CHECK...

Checks:
  sites     train_loop.py (Debian's python3, and python3.10/3.12/3.13 when installed) under
            `gpuwhy run --sim`: every site of the report (text, JSON, Perfetto) is the file:line
            of train_loop.py that made the call, found in its own source ('# site: NAME'
            comments, read with tokenize), with the user's frames below it (a decorator's
            wrapper, a generator's caller, a C frame between two Python frames) and the native
            frame of pysim.cu that issued the call beside it (its line found in pysim.cu);
            counts from the program's parameters
  native    a program without Python: no PYCODE record, no mixed stack, no Python note
  refused   GPUWHY_PYTHON_LAYOUT names another version's layout: refused with one warning in
            the trace and the report, native frames only, the program's output unchanged
  off       GPUWHY_PYTHON=0: native frames only, no warning
  stress    stress_frames.py: frames changing on other threads, threads exiting, deep
            recursion, a sub-interpreter: no crash, no hang, no frame that is not the program's
            or the standard library's, no stack that lost its Python frames
  late      py_late: a CUDA program that loads libpython (dlopen) after its first CUDA calls
  layouts   capture/python-layouts.h's row of each interpreter found is what
            python-layout-probe.c prints when built against that interpreter's own headers
  lines     each line table of real code objects (every interpreter found) read by
            gw_py_line for every offset, against the interpreter's own co_lines()
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, 'train_loop.py')
STRESS = os.path.join(HERE, 'stress_frames.py')
PYSIM_SRC = os.path.join(HERE, 'pysim.cu')
STEPS = 12
N = 1 << 16  # train_loop.py's buffer: N floats

failures = []


def expect(ok, what):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok:
        failures.append(what)
    return ok


def markers(path):
    """NAME -> line of each '# site: NAME' comment of a Python source."""
    out = {}
    with open(path, 'rb') as f:
        for tok in tokenize.tokenize(f.readline):
            m = tok.type == tokenize.COMMENT and re.fullmatch(r'#\s*site:\s*(\w+)', tok.string)
            if m:
                out[m.group(1)] = tok.start[0]
    return out


def c_line(path, text, nth=0):
    """The line of pysim.cu holding text (its nth occurrence)."""
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if text in line]
    return hits[nth]


class Ctx:
    def __init__(self, a):
        self.a = a
        self.gpuwhy = os.path.join(a.build, 'tools', 'gpuwhy')
        self.report = os.path.join(a.build, 'tools', 'gpuwhy-report')
        self.gpusim = os.path.join(a.build, 'tests', 'gpusim')
        self.tmp = tempfile.mkdtemp(prefix='gw-python-')

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('GPUWHY_', 'GPUSIM_', 'PYTHON'))
               and k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
        env.update(extra or {})
        return env

    def run(self, name, argv, extra_env=None, timeout=300):
        """argv under `gpuwhy run --sim`; returns (process, trace path)."""
        trace = os.path.join(self.tmp, name + '.trace.zst')
        if os.path.exists(trace):
            os.unlink(trace)
        cmd = [self.gpuwhy, 'run', '--sim', '--no-report', '-o', trace, '--'] + argv
        p = subprocess.run(cmd, env=self.env(extra_env), capture_output=True, text=True,
                           timeout=timeout)
        expect(p.returncode == 0 and os.path.exists(trace),
               f'{name}: runs to its end under gpuwhy (exit {p.returncode}) '
               f'{p.stderr.strip()[-300:]}')
        return p, trace

    def json_report(self, trace, *opts):
        p = subprocess.run([self.report, '--json', *opts, trace], capture_output=True,
                           text=True, timeout=300)
        expect(p.returncode == 0, f'report --json {trace} (exit {p.returncode}) {p.stderr}')
        return json.loads(p.stdout) if p.returncode == 0 else {}

    def text_report(self, trace):
        p = subprocess.run([self.report, trace], capture_output=True, text=True, timeout=300)
        return p.stdout

    def dump(self, trace):
        p = subprocess.run([self.report, '--dump', trace], capture_output=True, text=True,
                           timeout=300)
        return p.stdout.splitlines()


def interpreters(a):
    """Debian's python3 first, then the other versions installed here (pyenv and the like),
    each as (name, real executable)."""
    found = [('python3', a.python)]
    pyenv = os.environ.get('PYENV_ROOT', os.path.expanduser('~/.pyenv'))
    for v in ('3.10', '3.12', '3.13'):
        for exe in [shutil.which('python' + v)] + sorted(
                glob.glob(os.path.join(pyenv, 'versions', v + '.*', 'bin', 'python' + v))):
            if not exe:
                continue
            p = subprocess.run([exe, '-c', 'import sys; print(sys.executable)'],
                               capture_output=True, text=True)
            if p.returncode == 0 and p.stdout.strip():
                found.append(('python' + v, p.stdout.strip()))
                break
        else:
            print(f'skip python{v}: not installed here')
    return found


def by_api(sites, api):
    return [s for s in sites if s['api'] == api]


def frames(site):
    return [(f['lang'], f['function'], os.path.basename(f['file'] or ''), f['line'])
            for f in site['stack']]


def check_sites(ctx, name, exe):
    m = markers(PROGRAM)
    prog = os.path.realpath(PROGRAM)
    base = os.path.basename(PROGRAM)
    version = tuple(map(int, subprocess.run(
        [exe, '-c', 'import sys; print(*sys.version_info[:2])'], capture_output=True,
        text=True).stdout.split()))
    # a function's name in the report is its qualified name, which code objects hold from 3.11
    wrapper = 'timed.<locals>.wrapper' if version >= (3, 11) else 'wrapper'
    # the library by a path relative to the working directory, as a script's ctypes.CDLL
    # often has it: its frames must still be named (the module's path made absolute)
    p, trace = ctx.run(name, [exe, PROGRAM, os.path.relpath(ctx.a.pysim), str(STEPS)])
    expect(p.stdout.startswith('loss '), f'{name}: the program printed its result')
    dump = ctx.dump(trace)
    expect(any(l.startswith('NOTE') and 'stacks carry its Python frames' in l for l in dump),
           f'{name}: the trace says the interpreter was found and its frames are read')
    r = ctx.json_report(trace)
    if not r:
        return

    def site_is(row, what, key, function):
        ok = (row['lang'] == 'python' and row['file'] == prog and row['line'] == m[key] and
              row['function'] == function and
              row['site'] == f'{function} ({base}:{m[key]})')
        return expect(ok, f'{name}: {what} at {function} ({base}:{m[key]}) '
                          f'(report: {row["site"]}, {row["lang"]}, {row["file"]})')

    def native_is(row, what, function, line):
        want = f'{function} (pysim.cu:{line})'
        return expect(row['native_site'] == want,
                      f'{name}: {what}: the native frame beside it is {want} '
                      f'(report: {row["native_site"]})')

    def below(row, what, want):
        got = frames(row)[1:1 + len(want)]
        return expect(got == want, f'{name}: {what}: the frames below it are {want} '
                                   f'(report: {got})')

    syncs = r.get('sync_sites', [])
    item = by_api(syncs, 'cudaMemcpy')
    if expect(len(item) == 1 and item[0]['count'] == STEPS,
              f'{name}: one cudaMemcpy site (loss.item()), {STEPS} calls '
              f'(report: {[(s["site"], s["count"]) for s in item]})'):
        site_is(item[0], 'the read-back', 'item', 'train_step')
        native_is(item[0], 'the read-back', 'pysim_item', c_line(PYSIM_SRC, 'cudaMemcpy('))
        # the decorator's wrapper, then the loop that called it
        below(item[0], 'the read-back',
              [('python', wrapper, base, m['wrapper']),
               ('python', 'main', base, m['step_caller']),
               ('python', '<module>', base, m['module'])])

    dsync = {s['line']: s for s in by_api(syncs, 'cudaDeviceSynchronize')}
    cb = dsync.get(m['callback_sync'])
    if expect(cb is not None and cb['count'] == 3,
              f'{name}: the callback\'s sync, 3 calls (report: '
              f'{[(s["site"], s["count"]) for s in dsync.values()]})'):
        site_is(cb, 'the callback\'s sync', 'callback_sync', 'on_each')
        # the C function that called the callback, between two Python frames
        below(cb, 'the callback\'s sync',
              [('native', 'pysim_each', 'pysim.cu', c_line(PYSIM_SRC, 'callback(i)')),
               ('python', 'main', base, m['callback_caller'])])
    wk = dsync.get(m['worker_sync'])
    if expect(wk is not None and wk['count'] == 1, f'{name}: the second thread\'s sync, once'):
        site_is(wk, 'the second thread\'s sync', 'worker_sync', 'worker')
        native_is(wk, 'the second thread\'s sync', 'pysim_sync',
                  c_line(PYSIM_SRC, 'cudaDeviceSynchronize('))
        expect(len(wk['stack']) == 1,
               f'{name}: below the thread\'s function only threading.py\'s frames, left out '
               f'(report: {frames(wk)})')
    free = by_api(syncs, 'cudaFree')
    if expect(len(free) == 1 and free[0]['count'] == 4, f'{name}: 4 frees at one site'):
        site_is(free[0], 'the frees', 'free', 'main')
        native_is(free[0], 'the frees', 'pysim_free', c_line(PYSIM_SRC, 'cudaFree('))

    allocs = r.get('allocation_sites', [])
    if expect(len(allocs) == 1 and allocs[0]['count'] == 4 and allocs[0]['bytes'] == 4 * N * 4,
              f'{name}: 4 allocations of {N * 4} B at one site '
              f'(report: {[(s["site"], s["count"], s["bytes"]) for s in allocs]})'):
        site_is(allocs[0], 'the allocations', 'alloc', 'make_buffers')
        native_is(allocs[0], 'the allocations', 'pysim_alloc', c_line(PYSIM_SRC, 'cudaMalloc('))
        below(allocs[0], 'the allocations', [('python', 'main', base, m['alloc_caller'])])

    kernels = {k['name'].split('(')[0]: k for k in r.get('kernels_top', [])}
    for kernel, key, function, count in (('pysim_step_kernel', 'step_launch', 'train_step', STEPS),
                                         ('pysim_batch_kernel', 'batch_launch', 'batches', STEPS),
                                         ('pysim_worker_kernel', 'worker_launch', 'worker', STEPS)):
        k = kernels.get(kernel)
        if expect(k is not None and k['count'] == count, f'{name}: {kernel} ran {count} times'):
            site_is(k, f'{kernel}\'s launch', key, function)
            native_is(k, f'{kernel}\'s launch', 'pysim_launch',
                      c_line(PYSIM_SRC, kernel + '<<<'))
    if 'pysim_batch_kernel' in kernels:
        # a generator: the frame below it is the loop that iterates it
        below(kernels['pysim_batch_kernel'], 'the generator\'s launch',
              [('python', 'main', base, m['batch_loop'])])

    text = ctx.text_report(trace)
    for line in (f'train_step ({base}:{m["item"]})',
                 f'via pysim_item (pysim.cu:{c_line(PYSIM_SRC, "cudaMemcpy(")})',
                 f'called from pysim_each (pysim.cu:{c_line(PYSIM_SRC, "callback(i)")})',
                 f'make_buffers ({base}:{m["alloc"]})'):
        expect(line in text, f'{name}: the text report shows "{line}"')

    pf = os.path.join(ctx.tmp, name + '.perfetto.json')
    subprocess.run([ctx.report, '--perfetto', pf, trace], capture_output=True, timeout=300)
    with open(pf) as f:
        events = json.load(f)
    events = events['traceEvents'] if isinstance(events, dict) else events
    memcpys = [e for e in events if e.get('name') == 'cudaMemcpy' and e.get('ph') == 'X']
    expect(len(memcpys) == STEPS and all(
        e['args'].get('site') == f'train_step ({base}:{m["item"]})' and
        e['args'].get('site_lang') == 'python' for e in memcpys),
        f'{name}: every cudaMemcpy of the Perfetto export carries its Python site')
    return r


def check_native(ctx):
    prog = os.path.join(ctx.a.build, 'tests', 'workloads', 'sync_per_iteration')
    p, trace = ctx.run('native', [prog, '--iters', '5'])
    dump = ctx.dump(trace)
    expect(not any(l.startswith('PYCODE') for l in dump) and
           not any(l.startswith('STACK') and 'ips_kind=2' in l for l in dump) and
           not any(l.startswith('NOTE') and 'Python' in l for l in dump) and
           any(l.startswith('STACK') for l in dump),
           'native: a program without Python has stacks of addresses only, no Python record')


def check_refused(ctx):
    version = subprocess.run([ctx.a.python, '-c', 'import sys; print(*sys.version_info[:2])'],
                             capture_output=True, text=True).stdout.split()
    wrong = '3.12' if version != ['3', '12'] else '3.11'
    p0 = subprocess.run([ctx.a.python, PROGRAM, ctx.a.pysim, str(STEPS)], capture_output=True,
                        text=True, env=ctx.env({'LD_LIBRARY_PATH': ctx.gpusim}), timeout=300)
    for name, extra, warned in (('refused', {'GPUWHY_PYTHON_LAYOUT': wrong}, True),
                                ('off', {'GPUWHY_PYTHON': '0'}, False)):
        p, trace = ctx.run(name, [ctx.a.python, PROGRAM, ctx.a.pysim, str(STEPS)], extra)
        expect(p.stdout == p0.stdout, f'{name}: the program\'s output is what it is without gpuwhy')
        dump = ctx.dump(trace)
        notes = [l for l in dump if l.startswith('NOTE') and 'CPython' in l]
        if warned:
            expect(len(notes) == 1 and 'level=1' in notes[0] and
                   'native frames only' in notes[0],
                   f'{name}: a {wrong} layout on another version: one warning ({notes})')
        else:
            expect(not notes, f'{name}: no note about Python ({notes})')
        expect(not any(l.startswith('PYCODE') for l in dump) and
               not any('ips_kind=2' in l for l in dump if l.startswith('STACK')),
               f'{name}: no Python frame in the trace')
        r = ctx.json_report(trace)
        item = by_api(r.get('sync_sites', []), 'cudaMemcpy')
        expect(len(item) == 1 and item[0]['lang'] == 'native' and
               item[0]['site'].startswith('pysim_item (pysim.cu:'),
               f'{name}: the read-back\'s site is native, pysim_item '
               f'(report: {[s["site"] for s in item]})')
        expect(any('native frames only' in w for w in r.get('warnings', [])) == warned,
               f'{name}: the report {"warns" if warned else "does not warn"} '
               f'({r.get("warnings")})')


def check_stress(ctx):
    for name, exe in interpreters(ctx.a):
        p, trace = ctx.run('stress-' + name, [exe, STRESS, ctx.a.pysim, '3'], timeout=240)
        expect('done' in p.stdout, f'stress {name}: the program ended ({p.stdout.strip()})')
        dump = ctx.dump(trace)
        lost = [l for l in dump if l.startswith('NOTE') and 'lost their Python frames' in l]
        expect(not lost, f'stress {name}: no stack lost its Python frames ({lost})')
        files = set()
        for l in dump:
            if l.startswith('STRING') and 'kind=6 ' in l:
                files.add(l.split('text="', 1)[1].rstrip('"'))
        bad = [f for f in files if f != os.path.realpath(STRESS) and
               not re.search(r'/lib/python3\.\d+/|<frozen |<string>', f)]
        expect(files and not bad, f'stress {name}: every Python file in the trace is the '
                                  f'program\'s or the standard library\'s ({sorted(bad)[:5]})')
        r = ctx.json_report(trace)
        sites = r.get('sync_sites', []) + r.get('kernels_top', [])
        expect(any(s['lang'] == 'python' and s['file'] == os.path.realpath(STRESS)
                   for s in sites), f'stress {name}: its sites are in stress_frames.py')


def check_late(ctx):
    if not ctx.a.late:
        print('skip late: no py_late program')
        return
    out = subprocess.run([ctx.a.python, '-c',
                          'import sysconfig as s; print(s.get_config_var("LIBDIR") + "/" + '
                          's.get_config_var("INSTSONAME"))'], capture_output=True, text=True)
    libpython = out.stdout.strip()
    if not os.path.exists(libpython):
        print(f'skip late: no libpython next to {ctx.a.python} ({libpython})')
        return
    m = markers(PROGRAM)
    p, trace = ctx.run('late', [ctx.a.late, libpython, os.path.realpath(PROGRAM), ctx.a.pysim,
                                str(STEPS)])
    r = ctx.json_report(trace)
    item = [s for s in by_api(r.get('sync_sites', []), 'cudaMemcpy') if s['lang'] == 'python']
    expect(len(item) == 1 and item[0]['line'] == m['item'] and item[0]['count'] == STEPS,
           f'late: Python started after the first CUDA calls: the read-back\'s site is '
           f'train_loop.py:{m["item"]}, {STEPS} calls '
           f'(report: {[(s["site"], s["count"]) for s in item]})')


def check_lines(ctx):
    if not ctx.a.probe:
        print('skip lines: no probe')
        return
    sample = ('import threading\n' + open(PROGRAM).read() + open(STRESS).read())
    code = r'''
import sys, types
src = sys.stdin.read()
def walk(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from walk(c)
import threading, argparse
for co in [compile(src, 'sample.py', 'exec'), compile(open(threading.__file__).read(),
           threading.__file__, 'exec'), compile(open(argparse.__file__).read(),
           argparse.__file__, 'exec')]:
    for c in walk(co):
        lines = {}
        for start, end, line in c.co_lines():
            for o in range(start, end, 2):
                lines[o] = line or 0
        offs = sorted(lines)
        v = (sys.version_info[0] << 8) | sys.version_info[1]
        print(v, c.co_firstlineno, c.co_linetable.hex() or '-', *offs, '|',
              *[lines[o] for o in offs])
'''
    for name, exe in interpreters(ctx.a):
        p = subprocess.run([exe, '-c', code], input=sample, capture_output=True, text=True)
        if not expect(p.returncode == 0, f'lines {name}: the interpreter lists its tables'):
            continue
        rows = [l.split(' | ') for l in p.stdout.splitlines()]
        q = subprocess.run([ctx.a.probe], input=''.join(a + '\n' for a, _ in rows),
                           capture_output=True, text=True)
        got = [l.split() for l in q.stdout.splitlines()]
        want = [b.split() for _, b in rows]
        bad = [(rows[i][0][:60], g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
        n = sum(len(w) for w in want)
        expect(len(got) == len(want) and not bad,
               f'lines {name}: {n} offsets of {len(want)} code objects: the line of each is '
               f'co_lines()\'s ({bad[:2]})')


def check_layouts(ctx):
    src = ctx.a.source
    with open(os.path.join(src, 'capture', 'python-layouts.h')) as f:
        table = f.read()
    rows = {}
    for m in re.finditer(r'/\* (\d+)\.(\d+)\.\d+, from its headers \*/\n(.*?\}),', table, re.S):
        rows[(int(m.group(1)), int(m.group(2)))] = m.group(3)
    cc = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
    for name, exe in interpreters(ctx.a):
        out = subprocess.run([exe, '-c', 'import sys, sysconfig; '
                              'print(*sys.version_info[:2], sysconfig.get_paths()["include"])'],
                             capture_output=True, text=True).stdout.split()
        version, inc = (int(out[0]), int(out[1])), out[2]
        if not os.path.exists(os.path.join(inc, 'internal', 'pycore_runtime.h')):
            print(f'skip layouts {name}: no internal headers in {inc} (python3-dev)')
            continue
        probe = os.path.join(ctx.tmp, 'layout-probe')
        b = subprocess.run([cc, '-I' + inc, '-o', probe,
                            os.path.join(src, 'capture', 'python-layout-probe.c')],
                           capture_output=True, text=True)
        if not expect(b.returncode == 0, f'layouts {name}: the probe builds against {inc} '
                                         f'{b.stderr[-300:]}'):
            continue
        got = subprocess.run([probe], capture_output=True, text=True).stdout
        got = got.split('*/\n', 1)[1].rstrip().rstrip(',')
        expect(rows.get(version) == got,
               f'layouts {name}: python-layouts.h holds what {inc} lays out '
               f'({"same" if rows.get(version) == got else got})')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--pysim', required=True)
    ap.add_argument('--python', required=True)
    ap.add_argument('--late')
    ap.add_argument('--probe')
    ap.add_argument('checks', nargs='+')
    a = ap.parse_args()
    # a library loaded by a relative path is recorded by that path: the report could not
    # find it from another directory
    a.pysim = os.path.abspath(a.pysim)
    a.late = a.late and os.path.abspath(a.late)
    a.probe = a.probe and os.path.abspath(a.probe)
    ctx = Ctx(a)
    for check in a.checks:
        if check == 'sites':
            for name, exe in interpreters(a):
                check_sites(ctx, name, exe)
        elif check == 'native':
            check_native(ctx)
        elif check == 'refused':
            check_refused(ctx)
        elif check == 'stress':
            check_stress(ctx)
        elif check == 'late':
            check_late(ctx)
        elif check == 'lines':
            check_lines(ctx)
        elif check == 'layouts':
            check_layouts(ctx)
        else:
            sys.exit(f'unknown check {check}')
    shutil.rmtree(ctx.tmp, ignore_errors=True)
    print(f'{len(failures)} failed')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
