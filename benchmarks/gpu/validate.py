#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The body of validate.sh: runs every check, prints progress, writes the JSON and markdown
# summaries. See validate.sh for usage; README.md for what each section checks and why.
import argparse
import csv
import datetime
import glob
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import wlcheck  # noqa: E402

SCHEMA = 'gpuwhy-validate/1'



def favoured():
    """On gpusim the host's scheduling is part of the simulated timeline: a program descheduled
    by unrelated load records host stalls it never made, so the simulated runs get the highest
    priority allowed (nice -20 as root or with CAP_SYS_NICE; unchanged otherwise)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    except OSError:
        pass

class Validation:
    def __init__(self, a):
        self.a = a
        self.sim = a.sim
        self.t0 = time.monotonic()
        self.out = os.path.abspath(a.out)
        os.makedirs(self.out, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix='gpuwhy-validate-')
        self.logf = open(os.path.join(self.out, 'validate.log'), 'w')
        self.results = []
        self.info = {'versions': {}, 'build': {}}
        self.env = dict(os.environ)
        self.env.pop('LD_PRELOAD', None)
        self.env['GPUWHY_QUIET'] = '1'
        self.build = None
        self.nvcc = None

    # --- plumbing ---------------------------------------------------------------------

    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.a.budget - self.elapsed()

    def log(self, msg):
        line = '[%4.0fs] %s' % (self.elapsed(), msg)
        print(line, file=sys.stderr, flush=True)
        self.logf.write(line + '\n')
        self.logf.flush()

    def record(self, section, name, status, **detail):
        if isinstance(detail.get('note'), str):
            detail['note'] = ' / '.join(l.strip() for l in detail['note'].splitlines()
                                        if l.strip())
        r = {'section': section, 'name': name, 'status': status}
        r.update(detail)
        self.results.append(r)
        extra = ''
        if 'expected' in detail or 'got' in detail:
            extra = ': expected %s, got %s' % (detail.get('expected'), detail.get('got'))
        elif 'note' in detail:
            extra = ': ' + str(detail['note'])
        self.log('%-4s %s %s%s' % (status, section, name, extra))

    def run(self, cmd, env=None, timeout=120, cwd=None, name=None, preexec_fn=None):
        """Runs cmd; returns (rc, stdout, stderr, seconds). rc 124 on timeout, 127 when the
        program is missing. Never raises."""
        timeout = max(1, min(timeout, self.left()))
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, env=env or self.env, cwd=cwd or self.work, timeout=timeout,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               errors='replace', preexec_fn=preexec_fn)
            rc, so, se = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, so, se = 124, e.stdout or '', (e.stderr or '') + '\n(timed out)'
            so = so if isinstance(so, str) else so.decode(errors='replace')
            se = se if isinstance(se, str) else se.decode(errors='replace')
        except OSError as e:
            rc, so, se = 127, '', str(e)
        secs = time.monotonic() - t
        if name:
            with open(os.path.join(self.work, name + '.log'), 'w') as f:
                f.write('$ %s\n[rc %d, %.2fs]\n--- stdout\n%s\n--- stderr\n%s\n' %
                        (' '.join(map(str, cmd)), rc, secs, so, se))
        return rc, so, se, secs

    def budget_ok(self, section, need_s):
        if self.left() >= need_s:
            return True
        self.record(section, 'all', 'SKIP',
                    note='out of time: %.0f s left, needs ~%d s' % (self.left(), need_s))
        return False

    # --- sections ---------------------------------------------------------------------

    def versions(self):
        v = self.info['versions']
        v['host'] = platform.node()
        v['os'] = platform.platform()
        v['date_utc'] = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%SZ')
        v['mode'] = 'sim' if self.sim else 'gpu'
        v['cpus'] = os.cpu_count()
        try:  # the host figures (section host) depend on it
            with open('/proc/cpuinfo') as f:
                v['cpu'] = next((l.split(':', 1)[1].strip() for l in f
                                 if l.startswith('model name')), None)
        except OSError:
            v['cpu'] = None
        rc, so, _, _ = self.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], timeout=10)
        v['commit'] = so.strip() if rc == 0 else None
        self.nvcc = shutil.which('nvcc') or (os.path.exists('/usr/local/cuda/bin/nvcc') and
                                              '/usr/local/cuda/bin/nvcc') or None
        if self.nvcc:
            rc, so, _, _ = self.run([self.nvcc, '--version'], timeout=30)
            m = re.search(r'release ([\d.]+), V([\d.]+)', so)
            v['nvcc'] = m.group(2) if m else so.strip().splitlines()[-1:]
        if self.sim:
            v['gpu'] = 'gpusim (simulated GPU: a test double, no GPU measured)'
        else:
            rc, so, se, _ = self.run(['nvidia-smi', '--query-gpu=name,driver_version,'
                                      'memory.total,compute_cap', '--format=csv,noheader'],
                                     timeout=30)
            if rc == 0 and so.strip():
                f = [x.strip() for x in so.strip().splitlines()[0].split(',')]
                v.update({'gpu': f[0], 'driver': f[1], 'gpu_memory': f[2],
                          'compute_capability': f[3] if len(f) > 3 else None})
            else:
                v['gpu'] = None
                self.record('versions', 'nvidia-smi', 'FAIL', note=(se or so).strip()[-300:])
            rc, so, _, _ = self.run([sys.executable, '-c', 'import torch; print(torch.__version__,'
                                     ' torch.version.cuda, torch.cuda.is_available())'],
                                    timeout=60)
            v['torch'] = so.strip() if rc == 0 else None
            ncu = self.find_ncu()
            if ncu:
                rc, so, _, _ = self.run([ncu, '--version'], timeout=30)
                v['ncu'] = so.strip().splitlines()[-1] if rc == 0 and so.strip() else None
            cupti = sorted(set(glob.glob('/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so*') +
                               glob.glob('/usr/local/cuda*/lib64/libcupti.so*')))
            v['cupti'] = cupti[:4]
        self.record('versions', 'recorded', 'INFO', note=json.dumps(v, sort_keys=True))

    def find_ncu(self):
        for c in [shutil.which('ncu'), '/usr/local/cuda/bin/ncu'] + \
                sorted(glob.glob('/opt/nvidia/nsight-compute/*/ncu'), reverse=True):
            if c and os.path.exists(c):
                return c
        return None

    def have_outputs(self, b):
        need = ['lib/libgpuwhy.so', 'tools/gpuwhy', 'tools/gpuwhy-report',
                'tests/workloads/healthy']
        return all(os.path.exists(os.path.join(b, n)) for n in need)

    def do_build(self):
        a, bi = self.a, self.info['build']
        carried = os.path.join(ROOT, '.device', 'build')
        if a.build:
            self.build = os.path.abspath(a.build)
            bi['source'] = 'given: ' + self.build
        elif not self.sim and not a.rebuild and self.have_outputs(carried):
            self.build = carried
            bi['source'] = 'carried (.device/build, built on another machine)'
        else:
            b = os.path.join(self.work, 'build')
            opts = ['-Dworkloads=enabled', '-Dworkloads_static=%s' % str(not self.sim).lower()]
            self.log('building gpuwhy and the workloads in %s' % b)
            rc, so, se, secs = self.run(['meson', 'setup', b, ROOT] + opts, timeout=240,
                                        cwd=ROOT, name='build-setup')
            if rc == 0:
                rc, so, se, secs2 = self.run(['meson', 'compile', '-C', b], timeout=400,
                                             name='build-compile')
                secs += secs2
            if rc == 0:
                self.build = b
                bi['source'] = 'built here in %.0f s' % secs
            elif self.have_outputs(carried):
                self.build = carried
                bi['source'] = 'carried (.device/build): building here failed: ' + \
                    (se or so).strip()[-200:]
            else:
                self.record('build', 'meson', 'FAIL', note=(se or so).strip()[-500:])
                return False
        devlib = os.path.join(ROOT, '.device', 'lib')
        if self.build == carried and os.path.isdir(devlib):
            self.env['LD_LIBRARY_PATH'] = devlib + ':' + self.env.get('LD_LIBRARY_PATH', '')
        if not self.sim:
            for d in ['/usr/local/cuda/lib64', '/usr/local/cuda/extras/CUPTI/lib64']:
                if os.path.isdir(d):
                    self.env['LD_LIBRARY_PATH'] = self.env.get('LD_LIBRARY_PATH', '') + ':' + d
        ok = self.have_outputs(self.build)
        self.record('build', 'outputs', 'PASS' if ok else 'FAIL', note=bi['source'])
        rc, so, se, _ = self.run([os.path.join(self.build, 'tools', 'gpuwhy-report'), '--help'],
                                 timeout=20)
        self.report_json = '--json' in so + se
        if not self.report_json:
            self.record('build', 'gpuwhy-report --json', 'SKIP',
                        note='this gpuwhy-report has no --json: causes are not checked, '
                        'counts come from --dump alone')
        return ok

    def gpuwhy_run(self, tag, cmd, extra_env=None, timeout=120):
        """Runs cmd under `gpuwhy run`; returns (rc, secs, [trace paths])."""
        d = os.path.join(self.work, 'traces', tag)
        os.makedirs(d, exist_ok=True)
        env = dict(self.env)
        env.update(extra_env or {})
        launcher = [os.path.join(self.build, 'tools', 'gpuwhy'), 'run', '-o', d + '/',
                    '--no-report'] + (['--sim'] if self.sim else []) + ['--']
        rc, so, se, secs = self.run(launcher + cmd, env=env, timeout=timeout, name='run-' + tag,
                                    preexec_fn=favoured if self.sim else None)
        return rc, secs, sorted(glob.glob(os.path.join(d, '*.trace.zst'))), se

    def analyse(self, trace, tag):
        """(report dict or None, dump path or None) of one trace."""
        rep_bin = os.path.join(self.build, 'tools', 'gpuwhy-report')
        report = None
        if self.report_json:
            rc, so, se, _ = self.run([rep_bin, '--json', trace], timeout=120,
                                     name='report-' + tag)
            if rc == 0:
                try:
                    report = json.loads(so)
                    with open(os.path.join(self.work, 'report-%s.json' % tag), 'w') as f:
                        f.write(so)
                except ValueError:
                    self.record('report', tag, 'FAIL', note='--json output is not JSON')
            else:
                self.record('report', tag, 'FAIL', note='exit %d: %s' % (rc, se.strip()[-200:]))
        dump = os.path.join(self.work, 'dump-%s.txt' % tag)
        with open(dump, 'w') as f:
            rc = subprocess.call([rep_bin, '--dump', trace], stdout=f, stderr=subprocess.DEVNULL,
                                 env=self.env)
        return report, (dump if rc == 0 else None)

    @staticmethod
    def header(dump):
        """pid, ppid and flags of a trace's HEADER record."""
        with open(dump, errors='replace') as f:
            for line in f:
                if line.startswith('HEADER '):
                    return {k: int(v) for k, v in re.findall(r'\b(pid|ppid|flags)=(\d+)', line)}
        return {}

    def workloads(self):
        with open(os.path.join(ROOT, 'tests', 'workloads', 'workloads.json')) as f:
            specs = json.load(f)['workloads']
        wdir = os.path.join(self.build, 'tests', 'workloads')
        variants = [''] if self.sim else ['', '-static']
        if self.sim:
            self.record('workloads', 'static cudart variants', 'SKIP',
                        note='a static cudart cannot run on gpusim (needs a GPU)')
        runs = [(spec, variant, False) for spec in specs for variant in variants]
        if self.sim:
            # the formulas again at a second set of args (counts only), cheap on gpusim
            runs += [(spec, '', True) for spec in specs if spec.get('alt_args')]
        for spec, variant, alt in runs:
            if True:
                name = spec['name'] + variant
                binary = os.path.join(wdir, name)
                if not os.path.exists(binary):
                    self.record('workloads', name, 'SKIP' if variant else 'FAIL',
                                note='not built')
                    continue
                if not self.budget_ok('workloads', 20):
                    return
                args = wlcheck.resolve_args(spec, ['%s=%s' % kv for kv in
                                                   (spec['alt_args'].items() if alt else [])])
                env = spec.get('env', {}) if self.sim and not alt else {}
                if alt:
                    name += ' (alt args)'
                rc, secs, traces, se = self.gpuwhy_run(name.replace(' (alt args)', '-alt'),
                                                       [binary] + wlcheck.argv_of(args), env)
                if rc != 0 or not traces:
                    self.record('workloads', name, 'FAIL',
                                note='exit %d, %d traces: %s' % (rc, len(traces),
                                                                 se.strip()[-300:]))
                    continue
                tag0 = name.replace(' (alt args)', '-alt')
                analysed = [(t, '%s-%d' % (tag0, i)) + self.analyse(t, '%s-%d' % (tag0, i))
                            for i, t in enumerate(traces)]
                headers = [self.header(d) if d else {} for _, _, _, d in analysed]
                pids = {h.get('pid') for h in headers}
                for (trace, tag, report, dump), hdr in zip(analysed, headers):
                    # a fork child is the trace whose parent wrote another trace of this run
                    child = bool(spec.get('child_counts')) and hdr.get('ppid') in pids
                    if child:
                        self.record('workloads', name + ' fork child header flag',
                                    'PASS' if hdr.get('flags', 0) & 2 else 'WARN',
                                    expected='GW_HEADER_FORKED set', got=hdr.get('flags'))
                    checks = wlcheck.check_run(spec, args, report, dump, self.sim, child,
                                               counts_only=alt)
                    bad = [c for c in checks if c['status'] == 'FAIL']
                    judged = [c for c in checks if c['status'] in ('PASS', 'FAIL')]
                    summary = {'checks': checks, 'seconds': round(secs, 3),
                               'process': 'child' if child else 'main'}
                    if report:
                        summary['breakdown'] = report.get('breakdown')
                        summary['top_idle_cause'] = report.get('top_idle_cause')
                        summary['dominant_cause'] = report.get('dominant_cause')
                    self.record('workloads', name + (' (fork child)' if child else ''),
                                'FAIL' if bad else ('PASS' if judged else 'SKIP'),
                                note='%d/%d checks pass%s' % (
                                    len(judged) - len(bad), len(judged),
                                    ''.join('; %s: expected %s, got %s' %
                                            (c['check'], c['expected'], c['got'])
                                            for c in bad)),
                                **summary)

    def build_helper(self, src, extra=()):
        if not self.nvcc:
            return None
        out = os.path.join(self.work, os.path.basename(src).replace('.cu', ''))
        cmd = [self.nvcc, '-O2', '-arch=sm_90', '-o', out, os.path.join(HERE, src)]
        if self.sim:
            cmd[1:1] = ['-cudart', 'shared']
        rc, so, se, _ = self.run(cmd + list(extra), timeout=180, name='nvcc-' + src)
        if rc != 0:
            self.record('programs', src, 'FAIL', note='nvcc: ' + se.strip()[-300:])
            return None
        return out

    def overhead(self, section, name, cmd, reps, timing_re, extra_env=None, target=None):
        """Alternated plain / gpuwhy runs; the program prints its loop time. With a target
        (a fraction), the median overhead is judged against it."""
        plain, traced, floor = [], [], []
        env = dict(self.env)
        env.update(extra_env or {})
        if self.sim:  # what `gpuwhy run --sim` does for the traced runs
            env['LD_LIBRARY_PATH'] = os.path.join(self.build, 'tests', 'gpusim') + ':' + \
                env.get('LD_LIBRARY_PATH', '')
        # CUPTI configured as gpuwhy configures it, with empty handlers (cupti-floor.c)
        floor_lib = os.path.join(self.build, 'benchmarks', 'libcupti-floor.so')
        floor_env = dict(env, LD_PRELOAD=floor_lib) if os.path.exists(floor_lib) else None
        for _ in range(reps):
            if self.left() < 30:
                break
            rc, so, _, _ = self.run(cmd, env=env, timeout=60)
            m = re.search(timing_re, so)
            if rc == 0 and m:
                plain.append(float(m.group(1)))
            if floor_env:
                rc, so, _, _ = self.run(cmd, env=floor_env, timeout=60)
                m = re.search(timing_re, so)
                if rc == 0 and m:
                    floor.append(float(m.group(1)))
            rc, secs, traces, se = self.gpuwhy_run(name + '-overhead', cmd, extra_env)
            for t in traces:
                os.unlink(t)
            m = re.search(timing_re, self.last_stdout(name + '-overhead'))
            if rc == 0 and m:
                traced.append(float(m.group(1)))
        if len(plain) >= 3 and len(traced) >= 3:
            p, t = statistics.median(plain), statistics.median(traced)
            # a figure from the simulated GPU is information, never a verdict on gpuwhy
            status = 'INFO' if target is None or self.sim else (
                'PASS' if t / p - 1 <= target else 'WARN')
            self.record(section, name + ' overhead', status,
                        note='median loop %.3f ms plain, %.3f ms under gpuwhy: %+.1f%% (%d runs '
                        'each, alternated)%s' % (p, t, 100 * (t / p - 1), len(plain),
                                                 '' if target is None else
                                                 '; target <= %.0f%%' % (100 * target)),
                        plain_ms=plain, gpuwhy_ms=traced, overhead=t / p - 1)
            if len(floor) >= 3:
                f = statistics.median(floor)
                self.record(section, name + ' overhead split', 'INFO',
                            note='CUPTI alone (libcupti-floor.so: gpuwhy\'s callback ids and '
                            'activity kinds, empty handlers) %+.1f%% over plain; gpuwhy %+.1f%% '
                            'over CUPTI alone (median loop %.3f ms)' % (
                                100 * (f / p - 1), 100 * (t / f - 1), f),
                            floor_ms=floor, cupti_floor=f / p - 1, gpuwhy_over_floor=t / f - 1)
        else:
            self.record(section, name + ' overhead', 'SKIP', note='too few good runs')

    def last_stdout(self, tag):
        try:
            with open(os.path.join(self.work, 'run-%s.log' % tag)) as f:
                text = f.read()
            return text.split('--- stdout\n', 1)[1].split('\n--- stderr\n', 1)[0]
        except (OSError, IndexError):
            return ''

    def run_program(self, name, cmd, extra_env=None):
        """One run of a check program under gpuwhy: (report, dump) of its first trace, or
        None after recording the failure."""
        rc, secs, traces, se = self.gpuwhy_run(name, cmd, extra_env)
        if rc != 0 or not traces:
            self.record('programs', name, 'FAIL', note='exit %d: %s' % (rc, se.strip()[-300:]))
            return None
        return self.analyse(traces[0], name)

    def check_counts(self, name, dump, want):
        """The trace's own counts against want; returns the records capture dropped."""
        c = wlcheck.counts_from_dump(dump) if dump else {}
        dropped = self.dropped(dump) if dump else 0
        for k, v in want.items():
            status = 'PASS' if c.get(k) == v else 'FAIL'
            # records capture dropped and counted are a finding, not a miscount
            if status == 'FAIL' and dropped and c.get(k, 0) < v <= c.get(k, 0) + dropped:
                status = 'WARN'
            self.record('programs', name + ' trace ' + k, status, expected=v, got=c.get(k),
                        dropped_records=dropped)
        return dropped

    def tiny_loop(self):
        """design.md's capture-cost target: a launch-bound loop of one-block kernels, <= 5%."""
        if not self.budget_ok('programs', 30):
            return
        t = self.build_helper('tiny_loop.cu')
        if not t:
            return
        iters = 50000 if not self.sim else 5000
        # on gpusim a kernel of a microsecond, as on a GPU, so launches bound the loop there too
        env = {'GPUSIM_KERNEL_US': 'tiny_loop=1'} if self.sim else {}
        ran = self.run_program('tiny_loop', [t, str(iters)], env)
        if not ran:
            return
        report, dump = ran
        self.check_counts('tiny_loop', dump, {'kernels': iters + 100, 'launches': iters + 100,
                                              'syncs_explicit': 2})
        if report:
            # on a GPU one block on one SM may outweigh the gaps (small_batch): information
            got = report.get('top_idle_cause')
            self.record('programs', 'tiny_loop top idle cause',
                        ('PASS' if got == 'launch_overhead' else 'FAIL') if self.sim else 'INFO',
                        expected='launch_overhead' if self.sim else None, got=got,
                        breakdown=report.get('breakdown'))
        self.overhead('programs', 'tiny_loop', [t, str(iters)], 7 if not self.sim else 3,
                      r'loop_ms=([\d.]+)', env, target=0.05)

    def graph_and_cublas(self):
        if not self.budget_ok('programs', 30):
            return
        g = self.build_helper('graph_replay.cu')
        if g:
            replays, kernels = 1000, 8
            ran = self.run_program('graph_replay', [g, str(replays), str(kernels)])
            if ran:
                report, dump = ran
                dropped = self.check_counts('graph_replay', dump, {
                    'kernels': kernels * replays, 'graph_launches': replays,
                    'launches': kernels, 'syncs_explicit': 2})
                if report:
                    got = report.get('counts', {}).get('kernels')
                    want = kernels * replays
                    status = 'PASS' if got == want else 'FAIL'
                    if status == 'FAIL' and dropped and got is not None and \
                            got < want <= got + dropped:
                        status = 'WARN'
                    self.record('programs', 'graph_replay report counts.kernels', status,
                                expected=want, got=got, dropped_records=dropped)
                if not self.sim:
                    self.overhead('programs', 'graph_replay', [g, str(replays), str(kernels)],
                                  5, r'loop_ms=([\d.]+)')
        if self.sim:
            self.record('programs', 'cublas_gemm', 'SKIP', note='needs a GPU (gpusim has no '
                        'cuBLAS)')
            return
        cb = self.build_helper('cublas_gemm.cu', ['-lcublas'])
        if not cb:
            return
        iters = 100
        ran = self.run_program('cublas_gemm', [cb, str(iters)])
        if not ran:
            return
        report, dump = ran
        c = wlcheck.counts_from_dump(dump) if dump else {}
        k = c.get('kernels', 0)
        self.record('programs', 'cublas_gemm kernels', 'PASS' if k >= iters and k % iters == 0
                    else 'FAIL', expected='a multiple of %d' % iters, got=k)
        names = self.kernel_names(dump) if dump else []
        classes = sorted({self.classify(n) for n in names})
        self.record('programs', 'cublas_gemm kernel classes',
                    'PASS' if classes == ['compute'] else 'FAIL', expected=['compute'],
                    got=classes, names=names[:8])
        self.overhead('programs', 'cublas_gemm', [cb, str(iters)], 5, r'loop_ms=([\d.]+)')

    # --- what the real CUPTI does that capture depends on (doc/capture.md, "verify" items) ---

    CUPTI_PATHS = {'p_chevron': '__cudaLaunchKernel', 'p_runtime': 'cudaLaunchKernel',
                   'p_coop': 'cudaLaunchCooperativeKernel', 'p_ex': 'cudaLaunchKernelExC',
                   'p_driver': 'cuLaunchKernel', 'p_graph': 'cudaGraphLaunch'}

    @staticmethod
    def records(dump):
        """(kind, fields) of each record of a --dump file, strings unquoted."""
        out = []
        with open(dump, errors='replace') as f:
            for line in f:
                kind, _, rest = line.rstrip('\n').partition(' ')
                fields = {}
                for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', rest):
                    fields[k] = v[1:-1] if v.startswith('"') else v
                out.append((kind, fields))
        return out

    def cupti_run(self, tag, binary, args, env=None, gpuwhy=True, timeout=120):
        """One run of cupti_check: (rc, stdout, stderr, secs, [record lists of its traces])."""
        if not gpuwhy:
            e = dict(self.env)
            if self.sim:
                e['LD_LIBRARY_PATH'] = os.path.join(self.build, 'tests', 'gpusim') + ':' + \
                    e.get('LD_LIBRARY_PATH', '')
            e.update(env or {})
            rc, so, se, secs = self.run([binary] + args, env=e, timeout=timeout, name=tag)
            return rc, so, se, secs, []
        rc, secs, traces, se = self.gpuwhy_run(tag, [binary] + args, env, timeout=timeout)
        recs = []
        for i, t in enumerate(traces):
            _, dump = self.analyse(t, '%s-%d' % (tag, i))
            recs.append(self.records(dump) if dump else [])
        return rc, self.last_stdout(tag), se, secs, recs

    def cupti_section(self):
        """The review's device check, one verdict per "verify": join rate per launch path and
        copy kind, which correlation id CUPTI gives, start-up (nothing touches CUDA before
        main, DEVICE records in both start paths, the first call's cost), exit paths (no GPU
        call, work in flight, cudaDeviceReset), fork before and after CUDA, CUPTI's own device
        memory, a CUDA_INJECTION64_PATH that names nothing, GPU against host timestamps."""
        sec = 'cupti'
        if not self.budget_ok(sec, 60):
            return
        b = self.build_helper('cupti_check.cu')
        if not b:
            return
        sim = {'GPUSIM_KERNEL_US': 'p_spin=3000000'} if self.sim else {}
        n = 200
        # 1. every launch path and copy kind joined to its call; which id the GPU records carry
        rc, so, se, _, recs = self.cupti_run('cupti-paths', b, ['paths', str(n)],
                                             dict(sim, GPUWHY_DEBUG='1'))
        if rc != 0 or not recs or not recs[0]:
            self.record(sec, 'launch paths', 'FAIL', note='exit %d: %s' % (rc, se[-300:]))
        else:
            r = recs[0]
            names = {f['id']: f['text'] for k, f in r if k == 'STRING'}
            apis = {f['correlation']: f for k, f in r if k == 'API'}
            driver = 'driver_launch=1' in so
            for kname, call in self.CUPTI_PATHS.items():
                mangled = '_Z%d%sPi' % (len(kname), kname)
                ks = [f for k, f in r if k == 'KERNEL' and names.get(f['name_id']) == mangled]
                if kname == 'p_driver' and not driver:
                    self.record(sec, 'join ' + kname, 'SKIP', note='no cuLaunchKernel')
                    continue
                joined = [apis.get(f['correlation']) for f in ks]
                calls = sorted({names.get(a['name_id'], '?') + ' cbid ' + a['cbid']
                                for a in joined if a})
                good = sum(1 for a in joined if a and a['category'] in ('1', '2'))
                self.record(sec, 'join %s (%s)' % (kname, call),
                            'PASS' if ks and good == len(ks) == n else 'FAIL',
                            expected='%d of %d joined' % (n, n),
                            got='%d of %d joined' % (good, len(ks)), api_records=calls)
            for label, pick in (('pageable cudaMemcpyAsync', lambda f: f['src_kind'] == '1'),
                                ('pinned copies', lambda f: f['src_kind'] != '1'),):
                cs = [f for k, f in r if k == 'MEMCPY' and pick(f)]
                good = sum(1 for f in cs if f['correlation'] in apis)
                self.record(sec, 'join ' + label, 'PASS' if cs and good == len(cs) else 'FAIL',
                            got='%d of %d joined' % (good, len(cs)))
            ms = [f for k, f in r if k == 'MEMSET']
            good = sum(1 for f in ms if f['correlation'] in apis)
            self.record(sec, 'join cudaMemset', 'PASS' if ms and good == len(ms) else 'FAIL',
                        got='%d of %d joined' % (good, len(ms)))
            m = re.search(r"gpuwhy: (GPU records that carried an inner call's .*)", se)
            self.record(sec, 'correlation ids CUPTI gives GPU records', 'INFO',
                        note=m.group(1) if m else 'no line (GPUWHY_DEBUG=1)')
            first = next((a for k, a in r if k == 'API'), None)
            if first:
                self.record(sec, 'first CUDA call (context creation)', 'INFO',
                            note='%s took %.1f ms' % (names.get(first['name_id']),
                                                      (int(first['end_ns']) -
                                                       int(first['start_ns'])) / 1e6))
            starts = []
            for k, f in r:
                a = apis.get(f.get('correlation')) if k == 'KERNEL' else None
                if a and a['category'] == '1' and int(f['start_ns']):
                    starts.append(int(f['start_ns']) - int(a['start_ns']))
            if starts:
                starts.sort()
                self.record(sec, 'kernel start - launch call start', 'INFO',
                            note='min %d ns, median %d ns, %d of %d negative (GPU and host '
                            'clocks disagree)' % (starts[0], starts[len(starts) // 2],
                                                  sum(1 for d in starts if d < 0), len(starts)))
            dev = sum(1 for k, _ in r if k == 'DEVICE')
            self.record(sec, 'DEVICE record (gpuwhy run: preload and injection)',
                        'PASS' if dev else 'FAIL', got=dev)
        # the injection path alone (no LD_PRELOAD)
        e = dict(self.env, CUDA_INJECTION64_PATH=os.path.join(self.build, 'lib', 'libgpuwhy.so'),
                 GPUWHY_OUTPUT=os.path.join(self.work, 'inject-%p.trace.zst'))
        e.update(sim)
        if self.sim:
            e['LD_LIBRARY_PATH'] = os.path.join(self.build, 'tests', 'gpusim') + ':' + \
                e.get('LD_LIBRARY_PATH', '')
        rc, so, se, _ = self.run([b, 'paths', '2'], env=e, timeout=60, name='cupti-inject')
        traces = glob.glob(os.path.join(self.work, 'inject-*.trace.zst'))
        dev = 0
        if traces:
            _, dump = self.analyse(traces[0], 'cupti-inject')
            dev = sum(1 for k, _ in self.records(dump) if k == 'DEVICE') if dump else 0
        self.record(sec, 'DEVICE record (CUDA_INJECTION64_PATH only)', 'PASS' if dev else 'FAIL',
                    got=dev, note='exit %d, %d traces' % (rc, len(traces)))
        # 2. nothing initializes CUDA before main: a device choice made in main holds
        plain = self.cupti_run('cupti-visible-plain', b, ['visible'], sim, gpuwhy=False)
        traced = self.cupti_run('cupti-visible', b, ['visible'], sim)
        self.record(sec, 'CUDA_VISIBLE_DEVICES set in main', 'PASS' if plain[1] == traced[1] and
                    plain[0] == traced[0] == 0 else 'FAIL', expected=plain[1].strip(),
                    got=traced[1].strip())
        # 3. fork before any CUDA call: two processes, each with its own complete trace
        rc, so, se, _, recs = self.cupti_run('cupti-forkfirst', b, ['forkfirst'], sim)
        ks = [sum(1 for k, _ in r if k == 'KERNEL') for r in recs]
        self.record(sec, 'fork before CUDA', 'PASS' if rc == 0 and ks == [3, 3] else 'FAIL',
                    expected='two traces of 3 kernels', got='exit %d, kernels %s' % (rc, ks))
        # 4. fork after CUDA, a CUDA call in the child: no hang; the child's trace says why it
        # has no GPU records
        rc, so, se, secs, recs = self.cupti_run('cupti-forkafter', b, ['forkafter'], sim,
                                                timeout=90)
        notes = [f['text'] for r in recs for k, f in r if k == 'NOTE']
        self.record(sec, 'fork after CUDA, CUDA call in the child',
                    'PASS' if rc == 0 and secs < 60 else 'FAIL',
                    note='exit %d in %.1f s; %s; notes %s' % (
                        rc, secs, (re.findall(r'cupti_check: forked child.*', so) or ['?'])[0],
                        notes))
        # 5. exits: no GPU call (CUPTI is never flushed), work still running, cudaDeviceReset
        _, _, _, plain_s, _ = self.cupti_run('cupti-count-plain', b, ['count'], sim, gpuwhy=False)
        rc, so, se, secs, recs = self.cupti_run('cupti-count', b, ['count'], sim)
        self.record(sec, 'exit of a program without GPU work', 'PASS' if rc == 0 and
                    secs < plain_s + 3 else 'FAIL',
                    note='exit %d: %.2f s under gpuwhy, %.2f s plain' % (rc, secs, plain_s))
        rc, so, se, secs, recs = self.cupti_run('cupti-inflight', b, ['inflight', '3000'], sim)
        notes = [f['text'] for r in recs for k, f in r if k == 'NOTE']
        untimed = sum(1 for r in recs for k, f in r if k == 'KERNEL' and f['start_ns'] == '0')
        self.record(sec, 'exit with a 3 s kernel running', 'PASS' if rc == 0 and
                    any('without timestamps' in t for t in notes) else 'WARN',
                    note='exit %d in %.1f s; %d untimed kernel records; notes %s' % (
                        rc, secs, untimed, notes))
        rc, so, se, secs, recs = self.cupti_run('cupti-reset', b, ['reset', '100'], sim)
        ks = sum(1 for r in recs for k, _ in r if k == 'KERNEL')
        self.record(sec, 'kernels before cudaDeviceReset', 'PASS' if ks == 100 else 'FAIL',
                    expected=100, got=ks)
        # the exit drain (doc/capture.md): gpuwhy flushes while CUPTI holds a buffer of its,
        # at most 1 s; a CUPTI that keeps an empty buffer would cost every exit that second
        _, _, _, plain_s, _ = self.cupti_run('cupti-exit-plain', b, ['paths', '20'], sim,
                                             gpuwhy=False)
        rc, so, se, secs, recs = self.cupti_run('cupti-exit', b, ['paths', '20'], sim)
        self.record(sec, 'exit after GPU work (the drain)', 'PASS' if rc == 0 and
                    secs < plain_s + 0.9 else 'WARN',
                    note='%.2f s under gpuwhy, %.2f s plain (a second more: CUPTI keeps a '
                    'buffer, and every exit waits the whole drain)' % (secs, plain_s))
        # 6. CUPTI's own device memory; a CUDA_INJECTION64_PATH that names nothing
        plain = self.cupti_run('cupti-mem-plain', b, ['meminfo'], sim, gpuwhy=False)
        traced = self.cupti_run('cupti-mem', b, ['meminfo'], sim)
        fp = re.search(r'free=(\d+)', plain[1])
        ft = re.search(r'free=(\d+)', traced[1])
        self.record(sec, 'device memory CUPTI takes', 'INFO',
                    note='%.1f MiB less free under gpuwhy' % (
                        (int(fp.group(1)) - int(ft.group(1))) / 2 ** 20) if fp and ft else
                    'no figure')
        rc, so, se, _, _ = self.cupti_run('cupti-noinject', b, ['paths', '2'],
                                          dict(sim, CUDA_INJECTION64_PATH='/nonexistent/lib.so'),
                                          gpuwhy=False)
        self.record(sec, 'CUDA_INJECTION64_PATH naming no file', 'PASS' if rc == 0 else 'FAIL',
                    note='exit %d: %s' % (rc, (se or so).strip()[-200:]))

    def torch_window(self):
        """A torch.profiler window in the middle of a gpuwhy run (Kineto re-registers CUPTI's
        buffers): the trace must say from when GPU records are missing."""
        if self.sim:
            self.record('torch', 'profiler window inside a gpuwhy run', 'SKIP',
                        note='needs a GPU')
            return
        if not (self.info['versions'].get('torch') or '').endswith('True'):
            self.record('torch', 'profiler window inside a gpuwhy run', 'SKIP',
                        note='no PyTorch with CUDA here')
            return
        if not self.budget_ok('torch', 40):
            return
        cmd = [sys.executable, os.path.join(HERE, 'torch_loop.py'), '--steps', '20',
               '--configs', 'small,small,small', '--profile', 'window']
        rc, _, traces, se = self.gpuwhy_run('torch-window', cmd, timeout=180)
        if rc != 0 or not traces:
            self.record('torch', 'profiler window inside a gpuwhy run', 'FAIL',
                        note='exit %d: %s' % (rc, se.strip()[-300:]))
            return
        _, dump = self.analyse(traces[0], 'torch-window')
        r = self.records(dump) if dump else []
        notes = [f['text'] for k, f in r if k == 'NOTE']
        kernels = sum(1 for k, _ in r if k == 'KERNEL')
        launches = sum(1 for k, f in r if k == 'API' and f['category'] in ('1', '2'))
        self.record('torch', 'profiler window inside a gpuwhy run',
                    'PASS' if any('another CUPTI client' in t for t in notes) else 'FAIL',
                    note='%d launches, %d kernel records; notes %s' % (launches, kernels, notes))

    @staticmethod
    def dropped(dump):
        with open(dump, errors='replace') as f:
            return sum(int(m.group(1)) for line in f if line.startswith('DROPS ')
                       for m in [re.search(r'\bcount=(\d+)', line)] if m)

    @staticmethod
    def kernel_names(dump):
        names = []
        with open(dump, errors='replace') as f:
            for line in f:
                if line.startswith('STRING ') and re.search(r'\bkind=1\b', line):
                    m = re.search(r'\btext=(.*)$', line.rstrip('\n'))
                    if m:
                        names.append(m.group(1))
        return names

    def classify(self, name):
        if not hasattr(self, '_rules'):
            with open(os.path.join(ROOT, 'analysis', 'kernel-classes.def')) as f:
                self._rules = re.findall(r'^K\((\w+),\s*"([^"]+)"\)', f.read(), re.M)
        low = name.lower()
        for bucket, needle in self._rules:
            if needle in low:
                return bucket.lower()
        return 'compute'

    def torch_section(self):
        if self.sim:
            self.record('torch', 'training loop', 'SKIP', note='needs a GPU')
            return
        if not (self.info['versions'].get('torch') or '').endswith('True'):
            self.record('torch', 'training loop', 'SKIP', note='no PyTorch with CUDA here')
            return
        if not self.budget_ok('torch', 60):
            return
        script = os.path.join(HERE, 'torch_loop.py')
        base = [sys.executable, script, '--steps', str(self.a.torch_steps)]
        variants = {'plain': {}, 'gpuwhy': {}, 'torch.profiler': {}}
        counts = {}
        reps = 5 if self.left() > 240 else 3
        for rep in range(reps):
            for v in variants:
                if self.left() < 45:
                    break
                j = os.path.join(self.work, 'torch-%s-%d.json' % (v.replace('.', '_'), rep))
                if v == 'plain':
                    rc, so, se, _ = self.run(base + ['--json', j], timeout=120,
                                             name='torch-plain-%d' % rep)
                elif v == 'gpuwhy':
                    rc, _, traces, se = self.gpuwhy_run('torch-%d' % rep, base + ['--json', j],
                                                        timeout=120)
                    if rc == 0 and traces and rep == 0:
                        report, dump = self.analyse(traces[0], 'torch-gpuwhy')
                        c = wlcheck.counts_from_dump(dump) if dump else {}
                        counts['gpuwhy_kernels'] = (report or {}).get('counts', {}).get(
                            'kernels', c.get('kernels'))
                        counts['gpuwhy_trace_bytes'] = os.path.getsize(traces[0])
                else:
                    tr = os.path.join(self.work, 'torch-profiler-%d.trace.json' % rep)
                    rc, so, se, _ = self.run(base + ['--json', j, '--profile', 'torch',
                                                     '--trace', tr], timeout=180,
                                             name='torch-profiler-%d' % rep)
                    if rc == 0 and rep == 0:
                        with open(j) as f:
                            pj = json.load(f)
                        counts['profiler_kernels'] = pj.get('profiler_kernels')
                        counts['profiler_trace_bytes'] = pj.get('trace_bytes')
                    if os.path.exists(tr):
                        os.unlink(tr)
                if rc != 0:
                    self.record('torch', '%s run %d' % (v, rep), 'FAIL',
                                note='exit %d: %s' % (rc, se.strip()[-300:]))
                    continue
                with open(j) as f:
                    for cfg, r in json.load(f)['configs'].items():
                        variants[v].setdefault(cfg, []).append(r['step_ms'])
        gk, pk = counts.get('gpuwhy_kernels'), counts.get('profiler_kernels')
        self.record('torch', 'kernel count gpuwhy vs torch.profiler',
                    'PASS' if gk is not None and gk == pk else ('FAIL' if gk and pk else 'SKIP'),
                    expected=pk, got=gk,
                    note_bytes='gpuwhy trace %s bytes, profiler Chrome trace %s bytes' % (
                        counts.get('gpuwhy_trace_bytes'), counts.get('profiler_trace_bytes')))
        if counts.get('gpuwhy_trace_bytes') and counts.get('profiler_trace_bytes'):
            self.record('torch', 'trace size', 'INFO', note='gpuwhy %d bytes, torch.profiler '
                        '%d bytes: %.0fx smaller' % (counts['gpuwhy_trace_bytes'],
                                                     counts['profiler_trace_bytes'],
                                                     counts['profiler_trace_bytes'] /
                                                     counts['gpuwhy_trace_bytes']))
        for cfg in variants['plain']:
            p = statistics.median(variants['plain'][cfg])
            row = {'plain_ms': variants['plain'][cfg]}
            notes = ['plain %.3f ms/step' % p]
            for v in ('gpuwhy', 'torch.profiler'):
                if variants[v].get(cfg):
                    m = statistics.median(variants[v][cfg])
                    row[v + '_ms'] = variants[v][cfg]
                    notes.append('%s %+.1f%%' % (v, 100 * (m / p - 1)))
            self.record('torch', 'overhead ' + cfg, 'INFO', note=', '.join(notes) +
                        ' (medians of %d alternated runs)' % len(variants['plain'][cfg]), **row)
        # attribution per configuration, one process each
        for cfg in ['small-item', 'small', 'large-item', 'large']:
            if self.left() < 40:
                self.record('torch', 'attribution ' + cfg, 'SKIP', note='out of time')
                continue
            rc, _, traces, se = self.gpuwhy_run('torch-' + cfg, base + ['--configs', cfg],
                                                timeout=120)
            if rc != 0 or not traces:
                self.record('torch', 'attribution ' + cfg, 'FAIL', note=se.strip()[-300:])
                continue
            report, _ = self.analyse(traces[0], 'torch-' + cfg)
            if not report:
                self.record('torch', 'attribution ' + cfg, 'SKIP', note='no --json report')
                continue
            self.record('torch', 'attribution ' + cfg, 'INFO',
                        note='dominant %s, top idle %s' % (report.get('dominant_cause'),
                                                           report.get('top_idle_cause')),
                        breakdown=report.get('breakdown'), counts=report.get('counts'))

    NCU_METRICS = ['sm__throughput.avg.pct_of_peak_sustained_elapsed',
                   'dram__throughput.avg.pct_of_peak_sustained_elapsed',
                   'launch__grid_size', 'launch__waves_per_multiprocessor',
                   'sm__warps_active.avg.pct_of_peak_sustained_active']

    def host_benchmarks(self):
        """Issue 2's trace figures and issue 4's per-callback cost on this machine's CPUs: the
        writer with one and four producers, bytes per launch, the decoder alone and the reader
        (which gains from more cores than a 2-CPU VM has). Judged against the targets as
        information: they measure the host, not the GPU."""
        if not self.budget_ok('host', 40):
            return
        bdir = os.path.join(self.build, 'benchmarks')
        trace_cmd = [os.path.join(bdir, 'bench-trace')] + (['--quick'] if self.sim else [])
        rc, so, se, secs = self.run(trace_cmd, timeout=120, name='bench-trace')
        if rc != 0:
            self.record('host', 'bench-trace', 'FAIL' if rc != 127 else 'SKIP',
                        note='exit %d: %s' % (rc, se.strip()[-300:]))
        else:
            for name, value, unit, target, met in self.parse_bench_trace(so):
                note = '%.2f %s' % (value, unit)
                if target:
                    note += ' (target %s %s: %s)' % (target, unit, 'met' if met else 'not met')
                self.record('host', name, 'INFO', value=value, unit=unit, target=target,
                            met=met, note=note)
        self.real_trace_read(bdir)
        rc, so, se, _ = self.run([os.path.join(bdir, 'bench-capture-cost')], timeout=60,
                                 name='bench-capture-cost')
        if rc != 0:
            self.record('host', 'bench-capture-cost', 'FAIL' if rc != 127 else 'SKIP',
                        note='exit %d: %s' % (rc, se.strip()[-300:]))
            return
        for line in so.splitlines():
            m = re.match(r'\s*(.+?):\s+(\d+) ns\s*$', line)
            if m:
                self.record('host', m.group(1), 'INFO', value=int(m.group(2)), unit='ns',
                            note='%s ns' % m.group(2))

    def real_trace_read(self, bdir):
        """The reader and the decoder on a trace of this machine's own capture (tiny_loop.cu:
        real thread ids, handles and CUPTI records, not bench-trace's synthetic loop)."""
        t = os.path.join(self.work, 'tiny_loop')
        if not os.path.exists(t) or self.left() < 60:
            self.record('host', 'reader on a real capture', 'SKIP',
                        note='no tiny_loop build' if not os.path.exists(t) else 'out of time')
            return
        iters = 200000 if not self.sim else 20000
        env = {'GPUSIM_KERNEL_US': 'tiny_loop=1'} if self.sim else {}
        rc, _, traces, se = self.gpuwhy_run('tiny_loop-read', [t, str(iters)], env, timeout=120)
        if rc != 0 or not traces:
            self.record('host', 'reader on a real capture', 'FAIL',
                        note='capture: exit %d: %s' % (rc, se.strip()[-300:]))
            return
        for what, flag, rx, unit in (('reader', '--read', r'^reader\s+([\d.]+) M', 'M records/s'),
                                     ('decoder alone', '--decode', r'^decode\s+([\d.]+) ns',
                                      'ns/record')):
            rc, so, se, _ = self.run([os.path.join(bdir, 'bench-trace'), flag, traces[0]],
                                     timeout=60, name='bench-trace%s-real' % flag)
            m = re.search(rx, so, re.M)
            if rc != 0 or not m:
                self.record('host', what + ' on a real capture', 'FAIL',
                            note='exit %d: %s' % (rc, (se or so).strip()[-300:]))
                continue
            value = float(m.group(1))
            note = '%.2f %s on tiny_loop\'s trace (%d launches, %d bytes)' % (
                value, unit, iters + 100, os.path.getsize(traces[0]))
            met = None
            if what == 'reader':
                met = value >= 50
                note += ' (target >= 50 M records/s: %s)' % ('met' if met else 'not met')
            self.record('host', what + ' on a real capture', 'INFO', value=value, unit=unit,
                        met=met, note=note)

    @staticmethod
    def parse_bench_trace(text):
        """(name, value, unit, target, met) for each figure of bench-trace's output that has a
        target; a figure missing from the output is left out."""
        out = []
        emits = re.findall(r'^emit\s+(\d+) producers?\s+([\d.]+) M records/s per producer'
                           r'.*?([\d.]+) M/s together', text, re.M)
        for n, per, together in emits:
            if n == '1':
                out.append(('writer, 1 producer', float(per), 'M records/s', '>= 20',
                            float(per) >= 20))
            else:
                out.append(('writer, %s producers together' % n, float(together),
                            'M records/s', None, None))
        drains = re.findall(r'^writer\s+drain\+encode\+compress\s+([\d.]+) M records/s', text,
                            re.M)
        if drains:  # the background thread alone, after the producers (the first: 1 producer)
            out.append(('writer thread alone, sustained (drain + encode + compress)',
                        float(drains[0]), 'M records/s', '>= 20', float(drains[0]) >= 20))
        m = re.search(r'^\s*\+-256\s+([\d.]+)', text, re.M)
        if m:  # the worst jitter row, at the writer's default level (the first column)
            out.append(('bytes per launch, +-256 ns jitter, zstd 1', float(m.group(1)),
                        'bytes', '<= 8', float(m.group(1)) <= 8))
        m = re.search(r'^decode\s+([\d.]+) ns/record', text, re.M)
        if m:
            out.append(('decoder alone', float(m.group(1)), 'ns/record', None, None))
        m = re.search(r'^reader\s+([\d.]+) M records/s', text, re.M)
        if m:
            out.append(('reader', float(m.group(1)), 'M records/s', '>= 50',
                        float(m.group(1)) >= 50))
        return out

    # --- measured counters (NVML) -----------------------------------------------------

    # Programs whose kernels' classes by name the counters check: (name, binary under the
    # build, the argument that scales its length, its value for a first short run).
    COUNTER_RUNS = [
        ('bandwidth_bound', 'tests/workloads/bandwidth_bound', '--iters', 20),
        ('low_intensity', 'tests/workloads/low_intensity', '--iters', 10),
        ('healthy', 'tests/workloads/healthy', '--iters', 50),
        ('two_phases', 'tests/e2e/two_phases', '--kernels', 200),
    ]
    # gpusim (a test double): each kernel's use as tests/e2e/test-counters.py sets it
    COUNTER_SIM_ENV = {
        'GPUSIM_NVML': 'gpm', 'GPUWHY_SAMPLE_MS': '20',
        'GPUSIM_KERNEL_US': 'elementwise=200,fused=200,sgemm=200,attention=200,softmax=200',
        'GPUSIM_KERNEL_DRAM': 'elementwise=0.9,fused=0.8,sgemm=0.2,attention=0.5,softmax=0.7',
        'GPUSIM_KERNEL_SM': 'softmax=0.4',
    }

    def counters_section(self):
        """The NVML sampler on this machine: which source, the windows on the trace's clock,
        what the counters say each kernel class uses against what its name says, and what the
        sampler thread costs. On a GPU each program is first run short, then for about 3 s
        (30 windows at the default 100 ms)."""
        for name, rel, arg, k0 in self.COUNTER_RUNS:
            binary = os.path.join(self.build, rel)
            if self.sim and name != 'two_phases':
                continue
            if not os.path.exists(binary):
                self.record('counters', name, 'SKIP', note='not built')
                continue
            if not self.budget_ok('counters', 40):
                return
            env = dict(self.COUNTER_SIM_ENV) if self.sim else {}
            k = 1000 if self.sim else k0
            if not self.sim:
                ran = self.run_program('counters-%s-short' % name, [binary, arg, str(k)], env)
                if not ran or not ran[0]:
                    continue
                w = ran[0].get('window') or {}
                secs = max((w.get('end_ns', 0) - w.get('start_ns', 0)) / 1e9, 1e-3)
                k = int(min(max(k * 3.0 / secs, k), 10 ** 7))
            ran = self.run_program('counters-' + name, [binary, arg, str(k)], env)
            if ran:
                self.counters_check(name, ran[0], ran[1])

    def counters_check(self, name, report, dump):
        c = ((report or {}).get('utilization') or {}).get('counters')
        if not c:
            self.record('counters', name, 'FAIL', note='no utilization.counters in the report')
            return
        if not c.get('measured'):
            self.record('counters', name + ' sampler', 'FAIL' if self.sim else 'WARN',
                        note='no counters: %s' % c.get('reason'))
            return
        self.record('counters', name + ' sampler',
                    'PASS' if c.get('source') == 'gpm' or not self.sim else 'FAIL',
                    note='%s every %s ms, %d windows; memory_bandwidth %s; fit RMS %s, R2 %s' % (
                        c.get('source'), (c.get('period_ns') or 0) / 1e6, c.get('windows', 0),
                        report['utilization'].get('memory_bandwidth'), c.get('dram_fit_rms'),
                        c.get('dram_r2')))
        # the windows on the trace's clock: inside the run, the first soon after its start
        pts = [p for s in c.get('series', {}).values() for p in s]
        w = report.get('window') or {}
        period = c.get('period_ns') or 100000000
        if pts and w:
            first, last = min(p[0] for p in pts), max(p[0] for p in pts)
            ok = (w['start_ns'] - 3 * period <= first <= w['start_ns'] + 3 * period and
                  last <= w['end_ns'] + 3 * period)
            self.record('counters', name + ' windows on the trace clock',
                        'PASS' if ok else 'WARN',
                        note='first window %+.1f ms from the first GPU operation, last point '
                        '%+.1f ms from the last' % ((first - w['start_ns']) / 1e6,
                                                    (last - w['end_ns']) / 1e6))
        total = sum(e['busy_ns'] for e in c.get('estimates', []) if e.get('kernels')) or 1
        for e in c.get('estimates', []):
            if not e.get('kernels') or e['busy_ns'] < 0.05 * total:
                continue
            agrees = e.get('agrees')
            confident = e.get('confidence') != 'low'
            if self.sim:
                # the knobs' truth: only the compute-named fused_update uses >= 60% DRAM
                status = 'PASS' if confident == e.get('applied') else 'FAIL'
            else:
                status = 'PASS' if agrees or not confident else 'WARN'
            self.record('counters', '%s: %s' % (name, e['name'][:60]), status,
                        note='DRAM %s (se %s), SMs %s; name says %s, counters say %s '
                        '(confidence %s%s)' % (
                            e.get('dram'), e.get('dram_se'), e.get('sm'), e.get('name_class'),
                            e.get('measured_class'), e.get('confidence'),
                            ', applied' if e.get('applied') else ''),
                        estimate=e)
        if dump:
            with open(dump, errors='replace') as f:
                m = re.search(r'NVML sampler: (\d+) us .*?then (\d+) ticks of (\d+) devices '
                              r'in (\d+) us \(([\d.]+) us a tick\)', f.read())
            if m:
                self.record('counters', name + ' sampler cost', 'INFO',
                            note='%s us of CPU to load and start NVML, then %s us a tick '
                            '(%s ticks, %s device(s))%s' % (
                                m.group(1), m.group(5), m.group(2), m.group(3),
                                ' (gpusim\'s NVML stand-in, not NVML)' if self.sim else ''))

    def ncu_section(self):
        if self.sim:
            self.record('ncu', 'one kernel per class', 'SKIP', note='needs a GPU')
            return
        ncu = self.find_ncu()
        if not ncu:
            self.record('ncu', 'one kernel per class', 'SKIP', note='ncu not found')
            return
        wdir = os.path.join(self.build, 'tests', 'workloads')
        cases = [
            ('bandwidth_bound', 'bandwidth_bound', ['--iters', '1'], 'elementwise_add_kernel'),
            ('low_intensity', 'low_intensity', ['--iters', '1'], 'transpose_tiled_kernel'),
            ('small_batch', 'small_batch', ['--iters', '1'], 'mlp_fc2_bias_gelu_kernel'),
            ('compute', 'sync_per_iteration', ['--iters', '1', '--waves', '4', '--decide-us',
                                               '0'], 'sgemm_tile16_nn_kernel'),
        ]
        for cls, prog, args, kernel in cases:
            if not self.budget_ok('ncu', 25):
                return
            cmd = [ncu, '--csv', '--page', 'raw', '--kernel-name', 'regex:' + kernel,
                   '--launch-count', '1', '--metrics', ','.join(self.NCU_METRICS),
                   os.path.join(wdir, prog)] + args
            rc, so, se, _ = self.run(cmd, timeout=120, name='ncu-' + cls)
            vals = self.parse_ncu(so)
            if rc != 0 or not vals:
                self.record('ncu', kernel, 'FAIL', note='exit %d: %s' %
                            (rc, (se or so).strip()[-300:]))
                continue
            sm = vals.get('sm__throughput.avg.pct_of_peak_sustained_elapsed')
            dram = vals.get('dram__throughput.avg.pct_of_peak_sustained_elapsed')
            waves = vals.get('launch__waves_per_multiprocessor')
            # design.md's counter rule: DRAM >= 60% -> bandwidth_bound; both < 60% ->
            # low_intensity; for a small grid, under half a wave; dense: SM >= 60%.
            agree = {
                'bandwidth_bound': dram is not None and dram >= 60,
                'low_intensity': sm is not None and dram is not None and sm < 60 and dram < 60,
                'small_batch': waves is not None and waves < 0.5,
                'compute': sm is not None and sm >= 60,
            }[cls]
            self.record('ncu', '%s (%s)' % (kernel, cls), 'PASS' if agree else 'WARN',
                        note='SM %s%%, DRAM %s%%, waves/SM %s, grid %s: %s gpuwhy\'s class' % (
                            sm, dram, waves, vals.get('launch__grid_size'),
                            'agrees with' if agree else 'disagrees with'), metrics=vals)

    @staticmethod
    def parse_ncu(text):
        rows = [r for r in csv.reader(io.StringIO('\n'.join(
            l for l in text.splitlines() if l.startswith('"')))) if r]
        if len(rows) < 3:
            return {}
        head, vals = rows[0], rows[-1]
        out = {}
        for h, v in zip(head, vals):
            try:
                out[h] = float(v.replace(',', ''))
            except ValueError:
                pass
        return out

    # --- summary ----------------------------------------------------------------------

    def summarize(self):
        totals = {}
        for r in self.results:
            totals[r['status']] = totals.get(r['status'], 0) + 1
        doc = {'schema': SCHEMA, 'mode': 'sim' if self.sim else 'gpu',
               'elapsed_s': round(self.elapsed(), 1), 'budget_s': self.a.budget,
               'info': self.info, 'totals': totals, 'passed': not totals.get('FAIL'),
               'results': self.results}
        with open(os.path.join(self.out, 'validate.json'), 'w') as f:
            json.dump(doc, f, indent=1, default=str)
        v = self.info['versions']
        md = ['# gpuwhy validation (%s)' % doc['mode'], '',
              '%s on %s (%s CPUs, %s); GPU %s; driver %s; nvcc %s; PyTorch %s; commit %s; '
              '%.0f s.' % (v.get('date_utc'), v.get('host'), v.get('cpus'), v.get('cpu'),
                           v.get('gpu'), v.get('driver', '-'), v.get('nvcc', '-'),
                           v.get('torch', '-'), v.get('commit'), self.elapsed()),
              '', 'Build: %s.' % self.info['build'].get('source'), '',
              'Totals: ' + ', '.join('%s %d' % kv for kv in sorted(totals.items())), '',
              '| section | check | status | detail |', '| --- | --- | --- | --- |']
        for r in self.results:
            if r['section'] == 'versions':
                continue
            detail = r.get('note')
            if detail is None and ('expected' in r or 'got' in r):
                detail = 'expected %s, got %s' % (r.get('expected'), r.get('got'))
            md.append('| %s | %s | %s | %s |' % (r['section'], r['name'], r['status'],
                                                 str(detail or '').replace('|', '/')))
        if self.sim:
            md += ['', 'Simulated GPU: counts and causes check gpuwhy against gpusim\'s '
                   'cost model; no number here is a GPU measurement.']
        with open(os.path.join(self.out, 'validate.md'), 'w') as f:
            f.write('\n'.join(md) + '\n')
        with tarfile.open(os.path.join(self.out, 'details.tar.gz'), 'w:gz') as t:
            for p in sorted(glob.glob(os.path.join(self.work, '*.json')) +
                            glob.glob(os.path.join(self.work, '*.log'))):
                t.add(p, arcname=os.path.basename(p))
        self.log('summary: %s (%s) in %s' % ('PASS' if doc['passed'] else 'FAIL',
                                            ', '.join('%s %d' % kv for kv in
                                                      sorted(totals.items())), self.out))
        return doc['passed']


def main():
    ap = argparse.ArgumentParser(prog='validate.sh')
    ap.add_argument('--sim', action='store_true')
    ap.add_argument('--build')
    ap.add_argument('--rebuild', action='store_true')
    ap.add_argument('--out', default=os.environ.get('OUT') or 'validate-out')
    ap.add_argument('--budget', type=float, default=460)
    ap.add_argument('--torch-steps', type=int, default=40)
    ap.add_argument('--keep', action='store_true', help='keep the work folder')
    a = ap.parse_args()
    v = Validation(a)
    v.log('gpuwhy validation, %s mode, budget %.0f s, work in %s' %
          ('sim' if a.sim else 'gpu', a.budget, v.work))
    try:
        v.versions()
        if v.do_build():
            v.workloads()
            v.tiny_loop()
            v.graph_and_cublas()
            v.cupti_section()
            v.torch_section()
            v.torch_window()
            v.ncu_section()
            v.counters_section()
            v.host_benchmarks()
    except Exception as e:  # a bug here must still leave a summary behind
        import traceback
        v.record('validate', 'internal error', 'FAIL', note=repr(e))
        v.log(traceback.format_exc())
    ok = v.summarize()
    if not a.keep:
        shutil.rmtree(v.work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
