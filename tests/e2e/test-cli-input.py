#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bad input to every option of gpuwhy-report and gpuwhy: one line, exit 2, nothing written.

A table of cases, each an argv, the exit status it must give and words its one line on stderr
must hold (the option and the value). Every case runs in an empty working directory next to
the inputs it names; afterwards no file anywhere under the test's directory may be new,
changed or gone, stdout must be empty, and a launcher case's CMD (a program that creates a
file) must not have run. Control runs with good values show that the same argv with a valid
value does run, so the checks can fail. Exact microsecond values are checked through the
report: make-trace's kernels last 2 us (even) and 5 us (odd), so --tiny-us N counts the
kernels whose duration in ns is below N * 1000, read as a decimal.
"""
import argparse
import decimal
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

from checks import FAILS, expect

A = None
KERNELS = 1000  # make-trace's kernel count, passed to it below

# Values that are no number of microseconds this tool takes (0 to 1e9, at most 3 decimals).
BAD_US = ['-1', '-0', '+5', ' 5', '5 ', '', 'abc', '1x', 'nan', 'inf', '-inf', '0x10', '1e3',
          '1e30', '5.', '.5', '1.0001', '1,5', '18446744073709551616', '99999999999999999999',
          '1000000000.001', '1000000001']
GOOD_US = ['0', '1.999', '2', '2.001', '2.0010', '5', '5.001', '007', '1000000000']



def snapshot(root):
    """Every path under ROOT with its type, mode and content hash."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = ''
            if os.path.isfile(p) and not os.path.islink(p) and os.access(p, os.R_OK):
                with open(p, 'rb') as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            snap[os.path.relpath(p, root)] = (st.st_mode, st.st_size, digest,
                                              os.readlink(p) if os.path.islink(p) else '')
    return snap


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('GPUWHY_') and k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
    env.update(extra)
    return env


def run(argv, cwd, env=None, preexec_fn=None):
    return subprocess.run(argv, cwd=cwd, env=env or clean_env(), capture_output=True,
                          text=True, timeout=120, preexec_fn=preexec_fn)


def case(root, work, argv, code, words, what=None, env=None):
    """ARGV must exit CODE with one line on stderr holding WORDS, print nothing on stdout and
    leave every file under ROOT as it was."""
    what = what or ' '.join(repr(a) for a in argv[1:]) or '(no arguments)'
    before = snapshot(root)
    p = run(argv, work, env)
    after = snapshot(root)
    lines = p.stderr.splitlines()
    ok = (p.returncode == code and len(lines) == 1 and p.stdout == '' and
          all(w in lines[0] for w in words) and before == after)
    detail = ''
    if not ok:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        detail = f' (got {p.returncode}, stderr {lines}, stdout {p.stdout[:200]!r}, ' \
                 f'changed {changed})'
    expect(ok, f'{os.path.basename(argv[0])} {what}: exit {code}, one line{detail}')
    return p


def report_cases(root, work, trace, tdir, afile):
    R = A.report
    missing = os.path.join(root, 'missing.trace.zst')
    for opt in ('--tiny-us', '--starve-us'):
        for v in BAD_US:
            case(root, work, [R, opt, v, trace], 2, [opt, f"'{v}'"])
        case(root, work, [R, trace, opt], 2, [opt], f'{opt} without its value')
    for v in ('(', 'a{2,1}', '[z-a]'):
        case(root, work, [R, '--site-filter', v, trace], 2,
             ['--site-filter', f"'{v}'", 'not a regular expression'])
    for opt in ('--html', '--perfetto'):
        for v, why in ((tdir, 'is a directory'), (tdir + '/', 'is a directory'),
                       (os.path.join(root, 'nodir', 'x.out'), 'does not exist'),
                       ('/nonexistent-dir/x.json', 'does not exist'),
                       (os.path.join(afile, 'x.out'), 'not a directory'),
                       ('', 'empty'), (trace, 'input traces')):
            case(root, work, [R, opt, v, trace], 2, [opt, f"'{v}'", why])
        # The output is checked first: a bad one is a usage error before any trace is read.
        case(root, work, [R, opt, tdir, missing], 2, [opt], f'{opt} DIR with a missing TRACE')
    same = os.path.join(root, 'same.out')
    case(root, work, [R, '--html', same, '--perfetto', same, trace], 2, ['same file'])
    case(root, work, [R, '--html', '-', '--perfetto', '-', trace], 2, ['standard output'])
    for argv, words in (([], ['no TRACE']), (['--json'], ['no TRACE']),
                        (['--bogus', trace], ["'--bogus'"]), (['-x', trace], ["'-x'"]),
                        (['--json=1', trace], ["'--json=1'"]),
                        (['--dump=1', trace], ["'--dump=1'"]),
                        (['--dump', '--json', trace], ['--dump', '--json']),
                        (['--dump', '--html', os.path.join(work, 'p.html'), trace],
                         ['--dump', '--html'])):
        case(root, work, [R] + argv, 2, words)
    # A TRACE that cannot be read is exit 1 (doc/design.md): `gpuwhy-report: FILE: reason`.
    case(root, work, [R, missing], 1, [f'gpuwhy-report: {missing}: '])
    case(root, work, [R, tdir], 1, [f'gpuwhy-report: {tdir}: ', 'directory'])
    case(root, work, [R, '--json', trace, missing], 1, [f'gpuwhy-report: {missing}: '],
         'a good TRACE then a missing one: nothing printed')
    p = run([R, '-h'], work)
    expect(p.returncode == 0 and 'usage:' in p.stdout and p.stderr == '', '-h: usage, exit 0')


def tiny_count(trace, value):
    p = run([A.report, '--json', '--tiny-us', value, trace], os.path.dirname(trace))
    return p.returncode, json.loads(p.stdout)['counts']['tiny_kernels'] if p.returncode == 0 \
        else None


def report_controls(root, trace):
    for v in GOOD_US:
        ns = decimal.Decimal(v) * 1000
        want = sum(1 for i in range(KERNELS) if (2000 if i % 2 == 0 else 5000) < ns)
        rc, got = tiny_count(trace, v)
        expect(rc == 0 and got == want, f'--tiny-us {v!r}: {want} tiny kernels (got {rc}, {got})')
    hw = {}
    for v in ('0', '1000000000'):
        p = run([A.report, '--json', '--starve-us', v, trace], root)
        hw[v] = json.loads(p.stdout)['breakdown']['host_work'] if p.returncode == 0 else None
    # Every starved gap is host work above a 0 us threshold and launch overhead below 1000 s.
    expect(hw['0'] is not None and hw['0'] > 0 and hw['1000000000'] == 0,
           f'--starve-us 0 and 1000000000 are taken (host_work {hw})')

    # Outputs: written whole, through a temporary file, or not at all.
    out = os.path.join(root, 'exports')
    os.mkdir(out)
    page, pf = os.path.join(out, 'page.html'), os.path.join(out, 'trace.json')
    p = run([A.report, '--html', page, '--perfetto', pf, trace], root)
    expect(p.returncode == 0 and os.path.getsize(page) > 0 and
           json.load(open(pf))['traceEvents'] and sorted(os.listdir(out)) ==
           ['page.html', 'trace.json'], 'good --html and --perfetto: both written, nothing else')
    old = {page: open(page, 'rb').read(), pf: open(pf, 'rb').read()}
    limit = 4096  # far below either file (checked next), so the write fails part-way

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    expect(all(len(v) > limit for v in old.values()), 'the exports are larger than the limit')
    for opt, path in (('--html', page), ('--perfetto', pf)):
        p = run([A.report, opt, path, trace], root, preexec_fn=small_files)
        lines = p.stderr.splitlines()
        expect(p.returncode == 1 and len(lines) == 1 and lines[0].startswith(
            f'gpuwhy-report: {path}: ') and p.stdout == '' and
               open(path, 'rb').read() == old[path] and
               sorted(os.listdir(out)) == ['page.html', 'trace.json'],
               f'{opt} cut by a file-size limit: exit 1, the older file whole, no temporary '
               f'file left ({p.returncode}, {lines}, {sorted(os.listdir(out))})')
        fresh = os.path.join(out, 'fresh' + os.path.splitext(path)[1])
        p = run([A.report, opt, fresh, trace], root, preexec_fn=small_files)
        expect(p.returncode == 1 and not os.path.exists(fresh) and
               sorted(os.listdir(out)) == ['page.html', 'trace.json'],
               f'{opt} to a new file cut by the limit: no file at all')


def signal_mid_export(root):
    """SIGTERM while --perfetto is being written: the temporary file goes, FILE stays as it
    was. The trace is large enough (200000 kernels: over a second of writing here) that the
    signal, sent as soon as the temporary file appears, lands during the export."""
    big = os.path.join(root, 'big.trace.zst')
    subprocess.run([A.make_trace, big, '200000', '4'], check=True, timeout=120)
    d = os.path.join(root, 'sig')
    os.mkdir(d)
    target = os.path.join(d, 'out.json')
    with open(target, 'w') as f:
        f.write('older\n')
    p = subprocess.Popen([A.report, '--perfetto', target, big], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    deadline, seen = time.monotonic() + 120, False
    while p.poll() is None and time.monotonic() < deadline:
        # the export is open: unnamed in d (O_TMPFILE), or a named temporary where the
        # file system has no unnamed files
        try:
            fds = [os.readlink('/proc/%d/fd/%s' % (p.pid, fd))
                   for fd in os.listdir('/proc/%d/fd' % p.pid)]
        except OSError:
            fds = []
        if any(f.startswith(d + '/') and not f.endswith('out.json') for f in fds):
            seen = True
            p.send_signal(signal.SIGTERM)
            break
        time.sleep(0.001)
    p.wait(timeout=120)
    p.stderr.close()
    left = sorted(os.listdir(d))
    expect(seen and p.returncode == -signal.SIGTERM and left == ['out.json'] and
           open(target).read() == 'older\n',
           f'SIGTERM during --perfetto: killed by it, no temporary file, the older FILE whole '
           f'(temporary seen {seen}, {p.returncode}, {left})')
    os.unlink(big)


def launcher_cases(root, work, trace, tdir, afile):
    G = A.launcher
    # CMD creates 'ran' in the working directory: a case that starts it changes the snapshot.
    cmd = [sys.executable, '-c', 'open("ran", "w").close()']
    for argv, words in (([], ['no command']), (['foo'], ["'foo'", 'unknown']),
                        (['run'], ['no command']), (['run', '--'], ['no command']),
                        (['run', '--sim'], ['no command']),
                        (['run', '--bogus', '--'] + cmd, ["'--bogus'"]),
                        (['run', '-x', '--'] + cmd, ["'-x'"]),
                        (['run', '--json=1', '--'] + cmd, ["'--json=1'"]),
                        (['run', '-o'], ["'-o'"]), (['run', '--html'], ["'--html'"]),
                        (['run', '--tiny-us'], ["'--tiny-us'"])):
        case(root, work, [G] + argv, 2, words)
    for opt in ('--tiny-us', '--starve-us'):
        for v in BAD_US:
            case(root, work, [G, 'run', opt, v, '--'] + cmd, 2, [opt, f"'{v}'"])
    for opt in ('--html', '--perfetto'):
        for v in (tdir, '/nonexistent-dir/x.json', os.path.join(afile, 'x'), ''):
            case(root, work, [G, 'run', opt, v, '--'] + cmd, 2, [opt, f"'{v}'"])
    link = os.path.join(root, 'link.zst')
    for v, why in (('', 'empty'), ('/nonexistent-dir/x', 'does not exist'),
                   ('/nonexistent-dir/x/', 'does not exist'),
                   (os.path.join(root, 'nodir', 'sub') + '/', 'does not exist'),
                   (afile, 'never overwritten'), (link, 'never overwritten'),
                   (afile + '/', 'not a directory'), (os.path.join(afile, 't-%p'), 'directory'),
                   ('a%x', "'%x'"), ('a%', "'%'"), ('d%h/', 'directory')):
        case(root, work, [G, 'run', '-o', v, '--'] + cmd, 2, ['-o', f"'{v}'", why])
    case(root, work, [G, 'run', '--'] + cmd, 2, ['GPUWHY_OUTPUT', 'does not exist'],
         'GPUWHY_OUTPUT in a missing directory',
         env=clean_env(GPUWHY_OUTPUT='/nonexistent-dir/t-%p.zst'))
    # A CMD that cannot be run: 127 or 126 as a shell says, and the -o directory not made.
    noexec = os.path.join(root, 'noexec')
    for c, code in (('/nonexistent/prog', 127), ('gpuwhy-no-such-program', 127), (tdir, 126),
                    (noexec, 126)):
        case(root, work, [G, 'run', '-o', 'new/', '--', c], code, ['command', f"'{c}'"])
    for argv, words in ((['demo', '-o', 'x'], ['-o']), (['demo', '--no-report'], ['--no-report']),
                        (['demo', 'foo'], ["'foo'"]), (['demo', '--tiny-us', 'abc'], ["'abc'"]),
                        (['demo', '--html', tdir], ['--html']),
                        (['report'], ['no TRACE']),
                        (['report', '--tiny-us', '1e30', trace], ['--tiny-us', "'1e30'"])):
        case(root, work, [G] + argv, 2, words)
    for argv in (['-h'], ['run', '-h']):
        p = run([G] + argv, work)
        expect(p.returncode == 0 and 'usage:' in p.stdout, f'gpuwhy {" ".join(argv)}: exit 0')

    # Controls: the same CMD runs when nothing is wrong (and makes the file the cases watch).
    p = run([G, 'run', '-o', 'ok/', '--tiny-us', '2.5', '--'] + cmd, work)
    expect(p.returncode == 0 and os.path.exists(os.path.join(work, 'ran')) and
           os.path.isdir(os.path.join(work, 'ok')),
           f'control: CMD runs ({p.stderr[-300:].strip()!r})')
    if A.workload:
        p = run([G, 'run', '--sim', '--json', '-o', 'wl/', '--html', 'wl/page.html',
                 '--tiny-us', '2.5', '--starve-us', '0', '--', A.workload, '--iters', '2'], work)
        files = sorted(os.listdir(os.path.join(work, 'wl'))) if p.returncode == 0 else []
        # The workload's own line comes first on stdout, then the report.
        at = p.stdout.find('\n{') + 1
        expect(p.returncode == 0 and json.loads(p.stdout[at:])['schema'] == 'gpuwhy-report/1' and
               len(files) == 2 and files[1] == 'page.html' and files[0].endswith('.trace.zst'),
               f'control: a workload with good report options, --html in the new -o directory '
               f'({p.returncode}, {files}, {p.stderr[-300:].strip()!r})')


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('--report', required=True)
    ap.add_argument('--launcher', required=True)
    ap.add_argument('--make-trace', required=True)
    ap.add_argument('--workload')
    A = ap.parse_args()
    for k in ('report', 'launcher', 'make_trace', 'workload'):
        if getattr(A, k):
            setattr(A, k, os.path.abspath(getattr(A, k)))
    with tempfile.TemporaryDirectory(prefix='gw-cli-') as root:
        trace = os.path.join(root, 'in.trace.zst')
        subprocess.run([A.make_trace, trace, str(KERNELS), '1'], check=True, timeout=60)
        tdir = os.path.join(root, 'adir')
        os.mkdir(tdir)
        afile = os.path.join(root, 'afile')
        with open(afile, 'w') as f:
            f.write('keep me\n')
        os.symlink(afile, os.path.join(root, 'link.zst'))
        with open(os.path.join(root, 'noexec'), 'w') as f:
            f.write('#!/bin/sh\ntouch ran\n')
        work = os.path.join(root, 'work')
        os.mkdir(work)
        report_cases(root, work, trace, tdir, afile)
        launcher_cases(root, work, trace, tdir, afile)
        report_controls(root, trace)
        signal_mid_export(root)
    print(f'{len(FAILS)} failed')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
