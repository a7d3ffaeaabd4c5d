#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The report at its edges: traces written record by record (undump, the inverse of --dump)
in shapes no workload makes, and the outputs' own edges. Each case is one way the report lost
data, said something wrong, crashed or misled; the expected answers come from the records
the case writes and the rules in doc/design.md.

  shared GPU      two processes on one GPU (same host, same uuid, overlapping windows) are one
                  device: one budget, their memory summed; the same processes apart in time
                  stay two; the same trace given twice is counted once, with a warning
  no kernel       a run of copies and memsets only is never told to use CUDA Graphs
  stopped host    a 2 s launch call (the process was stopped inside it) is host work, not
                  launch overhead "inside launch calls"
  no GPU op       no dominant cause anywhere in JSON (null per trace too)
  empty strings   an empty command and thread name export to Perfetto fine
  stdout exports  --html - and --perfetto - put only that file on stdout
  escapes         control characters from the trace never reach the terminal raw
  errors          --html on a file system that cannot hold it fails before the analysis;
                  a full device says so (ENOSPC); too many devices says so
  corrupt frame   a corrupt frame mid-file costs its own records, not the frames after it
  modes           the page and the export are private (0600) like the trace
  perfetto size   --perfetto stops at --perfetto-max-events, and says where
  killed export   a SIGKILL while --perfetto writes leaves no file behind
"""
import argparse
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

failures = []
A = None


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, **kw):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def esc(s):
    """A BYTES value as --dump writes it."""
    out = []
    for ch in s.encode():
        if ch in (0x22, 0x5c):
            out.append('\\' + chr(ch))
        elif ch == 0x0a:
            out.append('\\n')
        elif ch == 0x09:
            out.append('\\t')
        elif ch < 0x20 or ch >= 0x7f:
            out.append('\\x%02x' % ch)
        else:
            out.append(chr(ch))
    return '"' + ''.join(out) + '"'


class Trace:
    """Records as text lines, written with undump. Times in ns on the host clock."""

    def __init__(self, pid=100, host='node-1', command='app', start=1_000_000, mode=1):
        self.lines = ['HEADER format_version=1 pid=%d rank=-1 clock_id=4 start_ns=%d '
                      'capture_mode=%d host=%s command=%s' % (pid, start, mode, esc(host),
                                                              esc(command))]
        self.corr = 0

    def add(self, line):
        self.lines.append(line)
        return self

    def device(self, dev=0, sms=4, uuid='gpu-aaaa-0000-01', mem=80 << 30):
        return self.add('DEVICE device=%d name="Test GPU" sm_count=%d cc_major=9 '
                        'memory_total_bytes=%d max_threads_per_sm=2048 max_blocks_per_sm=32 '
                        'regs_per_sm=65536 smem_per_sm_bytes=233472 warp_size=32 uuid=%s' %
                        (dev, sms, mem, uuid.encode().hex()))

    def string(self, sid, text, kind=1):
        return self.add('STRING id=%d kind=%d text=%s' % (sid, kind, esc(text)))

    def launch(self, a0, a1, k0, k1, name_id=1, blocks=32, stream=7, dev=0, tid=1):
        self.corr += 1
        self.add('API tid=%d start_ns=%d end_ns=%d correlation=%d category=1 name_id=2 '
                 'device=%d stream=%d kernel_name_id=%d' % (tid, a0, a1, self.corr, dev,
                                                            stream, name_id))
        return self.add('KERNEL device=%d stream=%d correlation=%d start_ns=%d end_ns=%d '
                        'name_id=%d grid_x=%d grid_y=1 grid_z=1 block_x=256 block_y=1 '
                        'block_z=1 registers_per_thread=32' % (dev, stream, self.corr, k0, k1,
                                                               name_id, blocks))

    def memset(self, a0, a1, m0, m1, stream=7, dev=0):
        self.corr += 1
        self.add('API tid=1 start_ns=%d end_ns=%d correlation=%d category=4 device=%d '
                 'stream=%d bytes=4096' % (a0, a1, self.corr, dev, stream))
        return self.add('MEMSET device=%d stream=%d correlation=%d start_ns=%d end_ns=%d '
                        'bytes=4096' % (dev, stream, self.corr, m0, m1))

    def alloc(self, t, addr, nbytes, dev=0):
        self.corr += 1
        return self.add('MEMORY time_ns=%d op=1 mem_kind=1 tid=1 correlation=%d device=%d '
                        'address=%d bytes=%d' % (t, self.corr, dev, addr, nbytes))

    def write(self, path, footer=True):
        text = path + '.txt'
        with open(text, 'w') as f:
            f.write('\n'.join(self.lines + (['FOOTER'] if footer else [])) + '\n')
        r = run(A.undump, text, path, text=True)
        assert r.returncode == 0, r.stderr
        return path


def report_json(*args):
    r = run(A.report, '--json', *args, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None, r


def busy_trace(tmp, name, pid=100, start=1_000_000, n=20, uuid='gpu-aaaa-0000-01',
               alloc=1 << 30):
    """n kernels of 10 us every 20 us on 4 SMs (32 blocks fill them), and one allocation."""
    t = Trace(pid=pid, start=start).device(uuid=uuid).string(1, 'sgemm_kernel')
    t.string(2, 'cudaLaunchKernel', kind=2)
    t.alloc(start + 10, 0x7f0000000000 + pid * 0x100000000, alloc)
    for i in range(n):
        k0 = start + 10_000 + i * 20_000
        t.launch(k0 - 5_000, k0 - 4_000, k0, k0 + 10_000)
    return t.write(os.path.join(tmp, name))


def shared_gpu(tmp):
    # A: kernels at 10..400 us (20 x 10 us, each 20 us apart); B, another process on the same
    # GPU, the same shape 10 us later: together they fill the GPU 400 of 400 us.
    a = busy_trace(tmp, 'a.trace.zst', pid=100)
    b = busy_trace(tmp, 'b.trace.zst', pid=200, start=1_010_000, alloc=2 << 30)
    d, r = report_json(a, b)
    check(d is not None and len(d['devices']) == 1,
          'shared GPU: two processes on one GPU (one uuid, overlapping) are one device (%s)' %
          (d and len(d['devices'])))
    if d:
        check(abs(d['breakdown']['compute'] - 1) < 1e-9,
              'shared GPU: their kernels fill it together: compute 100%% (%.4f)' %
              d['breakdown']['compute'])
        check(d['memory']['peak_bytes'] == 3 << 30,
              'shared GPU: memory is the sum of both processes (%d)' % d['memory']['peak_bytes'])
        check(d['counts']['kernels'] == 40, 'shared GPU: both processes\' kernels counted')
    # The same two an hour apart: two devices (the GPU's windows never meet).
    c = busy_trace(tmp, 'c.trace.zst', pid=300, start=3_600_000_000_000)
    d, r = report_json(a, c)
    check(d is not None and len(d['devices']) == 2,
          'apart in time, the same GPU is two device windows (%s)' % (d and len(d['devices'])))
    # The same trace twice: counted once, with a warning naming it.
    d1, _ = report_json(a)
    d2, r = report_json(a, a)
    check(d2 is not None and d2['counts'] == d1['counts'] and len(d2['devices']) == 1 and
          any('same trace' in w for w in d2['warnings']),
          'the same trace twice: counted once, with a warning (%s)' %
          (d2 and [w for w in d2['warnings']]))


def no_kernel(tmp):
    # Memsets of 5 us every 50 us: the gaps between them are short starved gaps (launch
    # overhead by rule 3), but no kernel ran: CUDA Graphs of kernels are no advice here.
    t = Trace().device().string(2, 'cudaMemset', kind=2)
    for i in range(50):
        m0 = 1_010_000 + i * 50_000
        t.memset(m0 - 3_000, m0 - 2_000, m0, m0 + 5_000)
    d, _ = report_json(t.write(os.path.join(tmp, 'memsets.trace.zst')))
    recs = ' '.join(r['text'] for r in d['recommendations']) if d else ''
    check(d is not None and d['counts']['kernels'] == 0 and 'Graph' not in recs,
          'no kernel: no CUDA Graph advice (%r)' % recs[:160])


def stopped_host(tmp):
    # K1 ends at 110 us; K2's launch call runs from 120 us to 2.00012 s (the process was
    # stopped inside it): the gap is host work; a launch call that long is no launch overhead.
    t = Trace().device().string(1, 'sgemm_kernel').string(2, 'cudaLaunchKernel', kind=2)
    t.launch(1_090_000, 1_095_000, 1_100_000, 1_110_000)
    t.launch(1_120_000, 2_001_120_000, 2_001_130_000, 2_001_140_000)
    d, _ = report_json(t.write(os.path.join(tmp, 'stopped.trace.zst')))
    check(d is not None and d['top_idle_cause'] == 'host_work' and
          d['breakdown']['launch_overhead'] < 0.01,
          'stopped host: a 2 s launch call is host work (%s, launch_overhead %.3f)' %
          (d and d['top_idle_cause'], d and d['breakdown']['launch_overhead']))


def no_gpu_op(tmp):
    t = Trace().device().string(2, 'cudaMalloc', kind=2).alloc(1_000_100, 0x1000, 4096)
    d, _ = report_json(t.write(os.path.join(tmp, 'nogpu.trace.zst')))
    check(d is not None and d['dominant_cause'] is None and
          all(x['dominant_cause'] is None for x in d['traces']),
          'no GPU op: no dominant cause, at the top or per trace (%s)' %
          (d and [x['dominant_cause'] for x in d['traces']]))


def empty_strings(tmp):
    t = Trace(command='').device().add('THREAD time_ns=1000001 tid=1 name=-')
    t.string(1, 'sgemm_kernel').string(2, 'cudaLaunchKernel', kind=2)
    t.launch(1_005_000, 1_006_000, 1_010_000, 1_020_000)
    trace = t.write(os.path.join(tmp, 'empty.trace.zst'))
    out = os.path.join(tmp, 'empty.json')
    r = run(A.report, '--perfetto', out, trace, text=True)
    ok = r.returncode == 0
    if ok:
        try:
            json.load(open(out))
        except ValueError:
            ok = False
    check(ok, 'empty command and thread name: the export is valid JSON (%s)' % r.stderr[-200:])


def stdout_exports(tmp):
    trace = busy_trace(tmp, 'out.trace.zst')
    r = run(A.report, '--perfetto', '-', trace, text=True)
    try:
        json.loads(r.stdout)
        ok = True
    except ValueError:
        ok = False
    check(r.returncode == 0 and ok, '--perfetto -: standard output is the export alone')
    r = run(A.report, '--html', '-', trace, text=True)
    check(r.returncode == 0 and r.stdout.lstrip().startswith('<!DOCTYPE html>') and
          r.stdout.rstrip().endswith('</html>'), '--html -: standard output is the page alone')


def escapes(tmp):
    evil = 'k\x1b]0;pwned\x07\x1b[2J\x9b31m'
    t = Trace(command='app\x1b[2J\nsecond line\x00--flag').device()
    t.string(1, evil).string(2, 'cudaLaunchKernel', kind=2)
    t.add('THREAD time_ns=1000001 tid=1 name=%s' % esc('w\x1b[31m'))
    for i in range(30):
        k0 = 1_010_000 + i * 10_000
        t.launch(k0 - 3000, k0 - 2000, k0, k0 + 2_000, blocks=1)
    trace = t.write(os.path.join(tmp, 'evil.trace.zst'))
    r = run(A.report, trace, env=dict(os.environ, NO_COLOR='1'))
    bad = [c for c in r.stdout if (c < 0x20 and c not in (0x0a,)) or c == 0x7f]
    check(r.returncode == 0 and not bad, 'escapes: no control character reaches the terminal '
          '(%d found)' % len(bad))
    first = r.stdout.decode(errors='replace').splitlines()[:3]
    check(not any(l.startswith('second line') for l in first),
          'escapes: a newline in argv does not break the header line')


def errors(tmp):
    trace = busy_trace(tmp, 'err.trace.zst')
    if os.path.isdir('/proc/self'):
        r = run(A.report, '--html', '/proc/gpuwhy-test.html', trace, text=True)
        check(r.returncode == 2 and r.stderr.count('\n') == 1 and '--html' in r.stderr,
              '--html where no file can be made: a usage error before the analysis (%s)' %
              r.stderr.strip())
    if os.path.exists('/dev/full'):
        r = run(A.report, '--html', '/dev/full', trace, text=True)
        check(r.returncode != 0 and 'No space left' in r.stderr,
              'a full device says so (%s)' % r.stderr.strip())
    t = Trace().string(1, 'sgemm_kernel')
    for dev in range(70000):
        t.add('KERNEL device=%d stream=7 correlation=%d start_ns=%d end_ns=%d name_id=1 '
              'grid_x=1 grid_y=1 grid_z=1 block_x=32 block_y=1 block_z=1' %
              (dev, dev + 1, 2_000_000 + dev, 2_000_001 + dev))
    many = t.write(os.path.join(tmp, 'many.trace.zst'))
    r = run(A.report, many, text=True)
    check(r.returncode == 1 and 'devices' in r.stderr and 'Argument list' not in r.stderr,
          'too many devices: said so (%s)' % r.stderr.strip())


def corrupt_middle(tmp):
    # make-trace flushes a frame every 20000 launches: 70000 make four frames, each decoding
    # alone. One byte flipped in the second costs that frame's records and no other: the
    # frames after it are read to the footer (a clean exit), and the report says what was lost.
    trace = os.path.join(tmp, 'frames.trace.zst')
    subprocess.run([A.make_trace, trace, '70000', '1'], check=True)
    full, _ = report_json(trace)
    data = bytearray(open(trace, 'rb').read())
    data[len(data) * 3 // 8] ^= 0xff
    bad = os.path.join(tmp, 'frames-bad.trace.zst')
    open(bad, 'wb').write(bytes(data))
    d, r = report_json(bad)
    ok = d is not None and full is not None
    check(ok and d['trace']['clean_exit'] and not d['trace']['truncated'] and
          0 < d['counts']['kernels'] < full['counts']['kernels'] and
          any('passed over' in w for w in d['warnings']),
          'a corrupt frame mid-file: passed over, the frames after it read to the footer (%s)' %
          (d and (d['trace'], d['counts']['kernels'], full['counts']['kernels']),))


def modes(tmp):
    trace = busy_trace(tmp, 'mode.trace.zst')
    old = os.umask(0o022)
    try:
        page, pf = os.path.join(tmp, 'new.html'), os.path.join(tmp, 'new.json')
        r = run(A.report, '--html', page, '--perfetto', pf, trace)
    finally:
        os.umask(old)
    check(r.returncode == 0 and stat.S_IMODE(os.stat(page).st_mode) == 0o600 and
          stat.S_IMODE(os.stat(pf).st_mode) == 0o600,
          'new pages and exports are private (0600), as the trace is')


def perfetto_size(tmp):
    trace = os.path.join(tmp, 'size.trace.zst')
    subprocess.run([A.make_trace, trace, '20000', '1'], check=True)
    out = os.path.join(tmp, 'size.json')
    r = run(A.report, '--perfetto', out, '--perfetto-max-events', '5000', trace, text=True)
    doc = json.load(open(out)) if r.returncode == 0 else {}
    n = sum(1 for e in doc.get('traceEvents', []) if e.get('ph') == 'X' and
            e.get('cat') in ('api', 'kernel', 'memcpy', 'memset'))
    check(r.returncode == 0 and 0 < n <= 5000 and 'cut_at' in doc.get('otherData', {}),
          '--perfetto-max-events 5000: %d call and operation events, and the cut said' % n)


def killed_export(tmp):
    trace = os.path.join(tmp, 'big.trace.zst')
    subprocess.run([A.make_trace, trace, '600000', '4'], check=True)
    outdir = os.path.join(tmp, 'exports')
    os.mkdir(outdir)
    p = subprocess.Popen([A.report, '--perfetto', os.path.join(outdir, 'x.json'), trace],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    writing = False
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not writing:
        try:
            writing = any(os.readlink('/proc/%d/fd/%s' % (p.pid, fd)).startswith(outdir)
                          for fd in os.listdir('/proc/%d/fd' % p.pid))
        except OSError:
            pass
        time.sleep(0.002)
    p.send_signal(signal.SIGKILL)
    p.wait()
    check(writing, 'killed export: caught it while the export was open')
    check(os.listdir(outdir) == [], 'killed export: no file left behind (%s)' % os.listdir(outdir))


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('--report', required=True)
    ap.add_argument('--undump', required=True)
    ap.add_argument('--make-trace', required=True)
    A = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='gpuwhy-edges-') as tmp:
        for case in (shared_gpu, no_kernel, stopped_host, no_gpu_op, empty_strings,
                     stdout_exports, escapes, errors, corrupt_middle, modes, perfetto_size,
                     killed_export):
            case(tmp)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    return 0


sys.exit(main())
