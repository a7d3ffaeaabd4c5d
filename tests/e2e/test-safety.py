#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Safety of capture and the launcher, on gpusim (a test double) with a CUDA workload.

  mode      the trace is created 0600 even under umask 000, by libgpuwhy.so alone and under
            gpuwhy run; a FIFO named by GPUWHY_OUTPUT is never opened (no hang) nor replaced
  writes    under gpuwhy run (with --html), with the working directory, HOME and TMPDIR empty
            directories: they stay empty, and every path the process tree creates, opens for
            writing, renames, links, removes or chmods (strace -f, skipped without strace) is
            one the workload alone also writes, or the trace, the -o directory and the page
  argv      gpuwhy run passes CMD's arguments without a shell: quotes, $(...), globs, ; | >
            reach the program as given, and nothing they would make in a shell appears
  secrets   environment values never reach the trace (raw file, every frame decompressed,
            --dump) nor the report, while the command line is recorded there
  lint      lib/, hooks/ and tools/ read the environment only through secure_getenv
"""
import argparse
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile

from checks import FAILS, expect

A = None
WORKLOAD_ARGS = ['--iters', '2']



def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('GPUWHY_', 'GPUSIM_'))
           and k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
    env.update(extra)
    return env


def run(argv, **kw):
    kw.setdefault('env', clean_env())
    return subprocess.run(argv, capture_output=True, timeout=120, **kw)


def traces(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.trace.zst')) \
        if os.path.isdir(d) else []


def test_mode(tmp):
    # libgpuwhy.so alone, umask 000: the file is 0600 all the same.
    out = tempfile.mkdtemp(dir=tmp)
    env = clean_env(LD_PRELOAD=A.lib, LD_LIBRARY_PATH=A.gpusim, GPUWHY_QUIET='1',
                    GPUWHY_OUTPUT=os.path.join(out, 't-%p.zst'))
    p = run([A.workload] + WORKLOAD_ARGS, env=env, preexec_fn=lambda: os.umask(0))
    files = [os.path.join(out, f) for f in os.listdir(out)]
    expect(p.returncode == 0 and len(files) == 1, f'LD_PRELOAD under umask 000: one trace '
           f'({p.returncode}, {files})')
    for f in files:
        mode = stat.S_IMODE(os.stat(f).st_mode)
        expect(mode == 0o600, f'LD_PRELOAD under umask 000: trace mode {mode:o} is 600')

    # gpuwhy run, umask 000.
    out = os.path.join(tmp, 'mode-run') + '/'
    p = run([A.launcher, 'run', '--sim', '--no-report', '-o', out, '--', A.workload] +
            WORKLOAD_ARGS, preexec_fn=lambda: os.umask(0))
    files = traces(out)
    expect(p.returncode == 0 and len(files) == 1,
           f'gpuwhy run under umask 000: one trace ({p.returncode}, {files})')
    for f in files:
        mode = stat.S_IMODE(os.stat(f).st_mode)
        expect(mode == 0o600, f'gpuwhy run under umask 000: trace mode {mode:o} is 600')

    # A FIFO where the trace would go: opening it for writing would wait for a reader forever;
    # O_EXCL fails first. The program runs to its end with its own status.
    fifo = os.path.join(tmp, 'fifo')
    os.mkfifo(fifo)
    env = clean_env(LD_PRELOAD=A.lib, LD_LIBRARY_PATH=A.gpusim, GPUWHY_OUTPUT=fifo)
    try:
        p = run([A.workload] + WORKLOAD_ARGS, env=env)
        expect(p.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and
               b'never overwritten' in p.stderr,
               f'a FIFO as GPUWHY_OUTPUT: not opened, not replaced, said so '
               f'({p.returncode}, {p.stderr[-200:]!r})')
    except subprocess.TimeoutExpired:
        expect(False, 'a FIFO as GPUWHY_OUTPUT: the program hung')


# Syscalls that change the file system by name; open* only with a flag that writes.
WRITES = re.compile(r'^(\d+)\s+(open|openat|openat2|creat|rename|renameat|renameat2|unlink|'
                    r'unlinkat|mkdir|mkdirat|rmdir|link|linkat|symlink|symlinkat|truncate|'
                    r'mknod|mknodat|chmod|fchmodat|chown|lchown|fchownat|utime|utimes|'
                    r'utimensat|futimesat)\((.*)\)\s+=\s+(-?\d+)')
OPEN_WRITES = re.compile(r'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND')


UNFINISHED = re.compile(r'^(\d+)\s+(.*) <unfinished \.\.\.>$')
RESUMED = re.compile(r'^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$')


def joined(log):
    """The lines of an strace -f log, each call whole: a call another thread's line
    interrupted is printed as 'PID call(args <unfinished ...>' and, later, 'PID <... call
    resumed>rest' (the trace's open in the program races the writer's and CUPTI's threads:
    one run in about 60 split it)."""
    pending = {}
    for line in open(log, errors='replace'):
        line = line.rstrip('\n')
        m = UNFINISHED.match(line)
        if m:
            pending[m.group(1)] = f'{m.group(1)}  {m.group(2)}'
            continue
        m = RESUMED.match(line)
        if m and m.group(1) in pending:
            yield pending.pop(m.group(1)) + m.group(3)
            continue
        yield line


def written(log, cwd):
    """(syscall, absolute path, flags text) for each successful write by name in an strace
    log. Paths relative to the working directory are made absolute (the programs here never
    change directory); one relative to another directory fd is kept as it is, so it fails."""
    out = []
    for line in joined(log):
        m = WRITES.match(line)
        if not m or int(m.group(4)) < 0:
            continue
        call, args = m.group(2), m.group(3)
        if call.startswith(('open', 'creat')) and call != 'creat' and \
                not OPEN_WRITES.search(args):
            continue
        for at, path in re.findall(r'(AT_FDCWD, |\d+, )?"((?:[^"\\]|\\.)*)"', args):
            if not path.startswith('/') and (not at or at == 'AT_FDCWD, '):
                path = os.path.join(cwd, path)
            out.append((call, os.path.normpath(path) if path.startswith('/') else path, args))
    return out


def strace_works():
    st = shutil.which('strace')
    if not st:
        return None
    p = subprocess.run([st, '-f', '-qq', '-o', os.devnull, 'true'], capture_output=True)
    return st if p.returncode == 0 else None


def test_writes(tmp):
    root = tempfile.mkdtemp(dir=tmp)
    dirs = {n: os.path.join(root, n) for n in ('cwd', 'home', 'tmpdir', 'base-out')}
    for d in dirs.values():
        os.mkdir(d)
    out = os.path.join(root, 'out')
    page = os.path.join(out, 'page.html')
    env = clean_env(HOME=dirs['home'], TMPDIR=dirs['tmpdir'])
    st = strace_works()
    if not st:
        print('skip: strace is missing or cannot trace here; checking the directories only')

    def traced(argv, log, env):
        pre = [st, '-f', '-qq', '-s', '4096', '-e', 'trace=%file', '-e', 'signal=none',
               '-o', log] if st else []
        return run(pre + argv, cwd=dirs['cwd'], env=env)

    # The workload alone, on gpusim: whatever it (and gpusim) writes is not gpuwhy's doing.
    base_log = os.path.join(root, 'base.strace')
    p = traced([A.workload] + WORKLOAD_ARGS, base_log,
               dict(env, LD_LIBRARY_PATH=A.gpusim))
    expect(p.returncode == 0, f'the workload alone runs ({p.returncode})')
    gw_log = os.path.join(root, 'gw.strace')
    p = traced([A.launcher, 'run', '--sim', '-o', out + '/', '--html', page, '--', A.workload] +
               WORKLOAD_ARGS, gw_log, env)
    files = traces(out)
    expect(p.returncode == 0 and len(files) == 1 and os.path.isfile(page),
           f'gpuwhy run --html: one trace and the page ({p.returncode}, {files})')
    for name in ('cwd', 'home', 'tmpdir'):
        left = os.listdir(dirs[name])
        expect(left == [], f'nothing written in the {name} directory ({left})')
    expect(sorted(os.listdir(out)) == sorted([os.path.basename(f) for f in files] +
                                             ['page.html']),
           f'the -o directory holds the trace and the page only ({sorted(os.listdir(out))})')
    if not st or len(files) != 1:
        return
    base = {path for _, path, _ in written(base_log, dirs['cwd'])}
    trace = files[0]
    temp = re.compile(re.escape(out) + r'/\.gpuwhy-report-\w{6}$')
    unexpected, seen = [], set()
    for call, path, args in written(gw_log, dirs['cwd']):
        if path in base:
            continue
        if path == trace and call.startswith('open') and 'O_EXCL' in args and \
                'O_NOFOLLOW' in args and '0600' in args:
            seen.add('trace')
        elif call.startswith('mkdir') and path == out:
            seen.add('mkdir')
        elif call.startswith('open') and 'O_TMPFILE' in args:
            # an unnamed file in a directory: the page being written, or a check that the
            # directory takes files; no name is made
            seen.add('temp')
        elif temp.match(path) and call in ('open', 'openat', 'chmod', 'rename', 'renameat',
                                           'renameat2'):
            seen.add('temp')
        elif call.startswith('link') and path.startswith('/proc/self/fd/'):
            continue  # the unnamed page, given its name just below
        elif path == page and (call.startswith('rename') or call.startswith('link')):
            seen.add('page')
        else:
            unexpected.append(f'{call}({path})')
    expect(not unexpected, f'strace: no write outside the trace, its directory and the page '
           f'({unexpected[:10]})')
    expect(seen == {'trace', 'mkdir', 'temp', 'page'},
           f'strace saw the writes that were expected: the trace created O_EXCL|O_NOFOLLOW '
           f'0600, the -o directory, the page through an unnamed or temporary file '
           f'({sorted(seen)})')


def test_argv(tmp):
    cwd = tempfile.mkdtemp(dir=tmp)
    # A file here, so that a shell would expand '*' to it.
    open(os.path.join(cwd, 'only-file'), 'w').close()
    args = ['a b', '$(touch X)', '`touch Y`', '*', ';', '|', '>Z', '&&', "'", '"', '',
            '\\', 'tab\there', 'new\nline', '$HOME', '~', '--', '-o', 'x%p']
    prog = 'import json, sys; print(json.dumps(sys.argv[1:]))'
    out = os.path.join(tmp, 'argv-out') + '/'
    p = run([A.launcher, 'run', '--no-report', '-o', out, '--', sys.executable, '-c', prog] +
            args, cwd=cwd)
    got = json.loads(p.stdout.decode()) if p.returncode == 0 else None
    expect(got == args, f'CMD receives its arguments exactly ({got})')
    expect(sorted(os.listdir(cwd)) == ['only-file'],
           f'no shell ran them: nothing made ({sorted(os.listdir(cwd))})')


def test_secrets(tmp):
    secret = secrets.token_hex(16)
    secret2 = secrets.token_hex(16)
    marker = secrets.token_hex(8)
    # argv[0] carries a random marker through a symlink, so the recorded command line is told
    # apart from any other path in the trace.
    link = os.path.join(tmp, 'workload-' + marker)
    os.symlink(A.workload, link)
    argv = [link] + WORKLOAD_ARGS
    out = os.path.join(tmp, 'secret-out') + '/'
    env = clean_env(GW_TEST_SECRET=secret, AWS_SECRET_ACCESS_KEY=secret2)
    p = run([A.launcher, 'run', '--sim', '--json', '-o', out, '--'] + argv, env=env)
    files = traces(out)
    if not expect(p.returncode == 0 and len(files) == 1,
                  f'gpuwhy run with secrets in the environment: one trace ({p.returncode})'):
        return
    raw = open(files[0], 'rb').read()
    views = {'the raw file': raw}
    zstd = shutil.which('zstd')
    if zstd:
        views['every frame decompressed'] = run([zstd, '-dc', files[0]]).stdout
    else:
        print('skip: no zstd program to decompress the frames with; --dump reads them')
    views['--dump'] = run([A.report, '--dump', files[0]]).stdout
    views['the report'] = p.stdout
    for name, data in views.items():
        expect(len(data) > 0 and secret.encode() not in data and secret2.encode() not in data,
               f'{name}: no environment secret ({len(data)} bytes)')
    expect(b'\0'.join(a.encode() for a in argv) in raw,
           'the raw file holds the command line, NUL between arguments')
    expect(marker.encode() in views['--dump'] and marker.encode() in views['the report'],
           '--dump and the report show the command line')


def test_lint():
    # secure_getenv: a set-uid or file-capability program never takes settings from a caller's
    # environment. The pattern is checked against known lines first, so the lint can fail.
    pat = re.compile(r'(?<![\w])getenv\s*\(')
    expect(pat.search('x = getenv("A");') and pat.search('(getenv ("A"))') and
           not pat.search('secure_getenv("A")'), 'lint: the pattern finds a plain getenv')
    hits = []
    for d in ('lib', 'capture', 'hooks', 'sources', 'report', 'tools'):
        for dirpath, _, names in os.walk(os.path.join(A.source, d)):
            for n in names:
                if not n.endswith(('.c', '.h', '.def')):
                    continue
                path = os.path.join(dirpath, n)
                for i, line in enumerate(open(path, errors='replace'), 1):
                    if pat.search(line):
                        hits.append(f'{os.path.relpath(path, A.source)}:{i}')
    expect(not hits, f'lint: lib/, hooks/ and tools/ call only secure_getenv ({hits})')


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--workload', required=True)
    A = ap.parse_args()
    A.build, A.source, A.workload = (os.path.abspath(p) for p in (A.build, A.source,
                                                                    A.workload))
    A.lib = os.path.join(A.build, 'lib', 'libgpuwhy.so')
    A.gpusim = os.path.join(A.build, 'tests', 'gpusim')
    A.launcher = os.path.join(A.build, 'tools', 'gpuwhy')
    A.report = os.path.join(A.build, 'tools', 'gpuwhy-report')
    with tempfile.TemporaryDirectory(prefix='gw-safety-') as tmp:
        test_mode(tmp)
        test_writes(tmp)
        test_argv(tmp)
        test_secrets(tmp)
    test_lint()
    print(f'{len(FAILS)} failed')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
