#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fault matrix: every workload under every fault, on gpusim, with and without gpuwhy.

Each cell runs one workload (tests/workloads, small 'alt_args' from workloads.json) twice with
the same fault: once without gpuwhy (the baseline) and once with libgpuwhy.so preloaded. It
passes when
  - the exit status is the baseline's (and, for the faults that end the process, the one the
    fault must cause), stdout is the baseline's, stderr is the baseline's apart from gpuwhy's
    own lines (process ids masked in both);
  - neither run hangs (a run still going after --timeout seconds fails the cell);
  - every trace decodes (gpuwhy-report --dump), the report runs (text and --json), and it says
    what was lost: no footer and a truncation warning after a kill, an abort, _exit, SIGTERM
    or a full disk; the reason capture degraded when CUPTI is busy or missing; nothing lost
    (exact counts from workloads.json's formulas plus the injected work) with 16 extra threads
    and under a fork storm; no file and a gpuwhy warning when the directory is unwritable,
    or is removed mid-run (the warning then says the trace is lost).
Faults come from fault-inject.c (preloaded in both runs) or from the environment of both
runs; see README.md. gpusim is a test double: nothing here measures a GPU.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAULTS = ['sigkill', 'sigterm', 'abort', '_exit', 'fork_storm', 'threads16', 'disk_full',
          'unwritable_dir', 'vanished_dir', 'cupti_busy', 'no_cupti', 'flush_hang',
          'second_client', 'closefrom', 'closefrom_shared', 'stderr_closed', 'stdio_closed',
          'exec', 'few_fds', 'no_fds']
# Column headings of the table.
SHORT = {'sigkill': 'KILL', 'sigterm': 'TERM', 'abort': 'abort', '_exit': '_exit',
         'fork_storm': 'forks', 'threads16': 'thr16', 'disk_full': 'fsize',
         'unwritable_dir': 'rodir', 'vanished_dir': 'gone', 'cupti_busy': 'busy',
         'no_cupti': 'nocupti', 'flush_hang': 'hang', 'second_client': '2nd',
         'closefrom': 'closefr', 'closefrom_shared': 'clsfr-s', 'stderr_closed': '2>&-',
         'stdio_closed': '0-2>&-', 'exec': 'exec', 'few_fds': 'fds1', 'no_fds': 'fds0'}
# What the faults that end the process must make of its exit status (fault-inject.c).
ENDINGS = {'sigkill': ('sigkill', -signal.SIGKILL), 'sigterm': ('sigterm', -signal.SIGTERM),
           'abort': ('abort', -signal.SIGABRT), '_exit': ('_exit', 3)}
UNCLEAN = set(ENDINGS) | {'disk_full'}
THREADS16 = {'threads': 16, 'iters': 20}
CLOSEFROM_FILES = 8
# closefrom_shared: the same under a seccomp filter that refuses the writer thread a
# descriptor table of its own, so the trace's descriptor is in the program's table
CLOSEFROM = ('closefrom', 'closefrom_shared')
STDIO_FAULTS = ('stderr_closed', 'stdio_closed')
STORM = {'threads': 4, 'iters': 10, 'forks': 50}
FSIZE_LIMIT = 1024  # below every workload's first frame, so the cut always happens
NOBODY = 65534
COUNT_KEYS = ['kernels', 'launches', 'host_syncs', 'memcpy', 'memset', 'allocations', 'frees']
# Programs that launch from several host threads: a launch counter at N does not bound what
# the others did.
MULTI_THREADED = {'multi_stream'}


def mask(text, several):
    """Process ids differ between runs, and so does a 'check' over host work that runs for a
    fixed time (common.h's wl_host_work_us: how many passes fit depends on the machine's
    load); nothing else the workloads print may. Processes of one run print in any order."""
    text = re.sub(r'\b(pid|child) \d+', r'\1 N', text)
    text = re.sub(r'\bcheck [0-9a-f]{8}\b', 'check X', text)
    lines = text.splitlines()
    return sorted(lines) if several else lines


def own_lines(text):
    return [line for line in text.splitlines() if not line.startswith('gpuwhy:')]


def hang_report(pgid):
    """What each process of a hung run's session was doing: every thread's wait channel and,
    when gdb is there, its stack (a hang in a fork child is a lock some thread held at fork)."""
    lines = ['', f'--- the hung session {pgid}:']
    for pid in sorted(int(d) for d in os.listdir('/proc') if d.isdigit()):
        try:
            if os.getpgid(pid) != pgid:
                continue
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmd = f.read().replace(b'\0', b' ').decode(errors='replace')[:120]
            waits = []
            for tid in sorted(os.listdir(f'/proc/{pid}/task'), key=int):
                with open(f'/proc/{pid}/task/{tid}/wchan') as f:
                    waits.append(f'{tid}:{f.read() or "running"}')
        except OSError:
            continue
        lines.append(f'pid {pid} ({cmd}): ' + ' '.join(waits))
        gdb = shutil.which('gdb')
        if gdb:
            try:
                bt = subprocess.run([gdb, '-batch', '-nx', '-p', str(pid), '-ex',
                                     'thread apply all bt 20'], capture_output=True, text=True,
                                    errors='replace', timeout=30).stdout
                lines += [ln for ln in bt.splitlines() if ln.startswith(('#', 'Thread'))]
            except subprocess.TimeoutExpired:
                lines.append('(gdb did not answer in 30 s)')
    return '\n'.join(lines) + '\n'


class Matrix:
    def __init__(self, opts):
        self.o = opts
        self.lib = os.path.join(opts.build, 'lib', 'libgpuwhy.so')
        self.report = os.path.join(opts.build, 'tools', 'gpuwhy-report')
        self.gpusim = os.path.join(opts.build, 'tests', 'gpusim')
        self.workloads = os.path.join(opts.build, 'tests', 'workloads')
        with open(os.path.join(opts.source, 'tests', 'workloads', 'workloads.json')) as f:
            self.spec = {w['name']: w for w in json.load(f)['workloads']}
        self.root = tempfile.mkdtemp(prefix='gw-matrix-')
        os.chmod(self.root, 0o755)  # a cell may run as nobody

    # --- one run ---------------------------------------------------------------------------

    def run(self, argv, env, timeout):
        """Runs argv in its own session; on a timeout kills the whole group (a fork storm's
        children included). Returns (returncode or None on a hang, stdout, stderr, seconds)."""
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors='replace', start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            stacks = hang_report(p.pid)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            err += stacks
            rc = None
        return rc, out, err, time.monotonic() - t0

    def tool(self, args):
        try:
            p = subprocess.run([self.report] + args, capture_output=True, text=True,
                               errors='replace', timeout=120)
        except subprocess.TimeoutExpired:
            return None, '', 'gpuwhy-report still running after 120 s (a hang)'
        return p.returncode, p.stdout, p.stderr

    # --- one cell --------------------------------------------------------------------------

    def plan(self, name, fault, cell_dir, gpuwhy):
        """argv and environment of one run of the cell."""
        w = self.spec[name]
        args = dict(w['args'])
        args.update(w.get('alt_args', {}))
        out_dir = os.path.join(cell_dir, 'out')
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('GPUWHY_', 'GPUSIM_', 'GWFI_'))
               and k not in ('LD_PRELOAD', 'CUDA_INJECTION64_PATH')}
        env['LD_LIBRARY_PATH'] = self.gpusim
        env['GPUWHY_QUIET'] = '1'
        env['GPUWHY_OUTPUT'] = os.path.join(out_dir, 'trace-%p.zst')
        env.update(w.get('env', {}))
        wrap = []
        if fault in ENDINGS:
            env['GWFI_FAULT'], _ = ENDINGS[fault]
            env['GWFI_AT'] = str(self.fire_at(name, args))
        elif fault == 'threads16':
            env.update(GWFI_FAULT='threads', GWFI_THREADS=str(THREADS16['threads']),
                       GWFI_ITERS=str(THREADS16['iters']))
        elif fault == 'fork_storm':
            env.update(GWFI_FAULT='forks', GWFI_THREADS=str(STORM['threads']),
                       GWFI_ITERS=str(STORM['iters']), GWFI_FORKS=str(STORM['forks']))
        elif fault == 'disk_full':
            wrap = ['prlimit', f'--fsize={FSIZE_LIMIT}:{FSIZE_LIMIT}']
        elif fault == 'unwritable_dir':
            if os.geteuid() == 0:  # root writes through any mode: run as nobody
                wrap = ['setpriv', f'--reuid={NOBODY}', f'--regid={NOBODY}', '--clear-groups']
        elif fault == 'vanished_dir':
            env.update(GWFI_FAULT='vanish', GWFI_AT=str(self.fire_at(name, args)),
                       GWFI_DIR=out_dir)
        elif fault == 'cupti_busy':
            env['GPUSIM_CUPTI_BUSY'] = '1'
        elif fault == 'no_cupti':
            env['GPUWHY_CUPTI_PATH'] = os.path.join(cell_dir, 'no-such-dir', 'libcupti.so.13')
        elif fault == 'flush_hang':
            env['GPUSIM_CUPTI_FLUSH_HANG'] = 'always'
        elif fault == 'second_client':
            env['GPUSIM_SECOND_CLIENT'] = str(self.fire_at(name, args))
        elif fault in CLOSEFROM:
            env.update(GWFI_FAULT='closefrom', GWFI_AT=str(self.fire_at(name, args)),
                       GWFI_FILES=str(CLOSEFROM_FILES), GWFI_DIR=self.files_dir(cell_dir))
            if fault == 'closefrom_shared':
                env['GWFI_SECCOMP'] = '1'
        elif fault in STDIO_FAULTS:
            env.update(GWFI_FAULT=fault, GWFI_DIR=self.files_dir(cell_dir))
        elif fault == 'exec':
            env.update(GWFI_FAULT='exec', GWFI_AT=str(self.fire_at(name, args)))
        elif fault in ('few_fds', 'no_fds'):
            env.update(GWFI_FAULT='fds', GWFI_FREE='1' if fault == 'few_fds' else '0')
        preload = ([self.lib] if gpuwhy else []) + [self.o.inject]
        # The wrappers (prlimit, setpriv) run without the preloads: env(1) sets LD_PRELOAD for
        # the workload alone, so only the workload carries gpuwhy and the injector.
        argv = wrap + ['env', 'LD_PRELOAD=' + ':'.join(preload),
                       os.path.join(self.workloads, name)]
        for k, v in args.items():
            argv += ['--' + k.replace('_', '-'), str(v)]
        return argv, env, args, out_dir

    @staticmethod
    def files_dir(cell_dir):
        return os.path.join(cell_dir, 'files')

    def fire_at(self, name, args):
        """The launch at which an ending fault fires: half way through the first process's
        launches (workloads.json's formula), so every workload is cut mid-run."""
        return max(1, eval(self.spec[name]['counts']['launches'], {}, dict(args)) // 2)

    def launching_procs(self, name, args):
        w = self.spec[name]
        n = 1 if eval(w['counts']['launches'], {}, dict(args)) else 0
        if 'child_counts' in w and eval(w['child_counts']['launches'], {}, dict(args)):
            n += 1
        return n

    def expected_counts(self, name, args, fault):
        """Exact counts over all the cell's traces for the faults that lose nothing."""
        w = self.spec[name]
        want = {k: 0 for k in COUNT_KEYS}
        for formulas in [w['counts']] + ([w['child_counts']] if 'child_counts' in w else []):
            for k in COUNT_KEYS:
                want[k] += eval(formulas[k], {}, dict(args))
        procs = self.launching_procs(name, args)
        if fault not in ('threads16', 'fork_storm'):
            return want

        p = THREADS16 if fault == 'threads16' else STORM
        # per extra thread: cudaMalloc, ITERS x (cudaMemsetAsync + cudaStreamSynchronize),
        # cudaFree (an implicit sync)
        want['allocations'] += procs * p['threads']
        want['frees'] += procs * p['threads']
        want['memset'] += procs * p['threads'] * p['iters']
        want['host_syncs'] += procs * p['threads'] * (p['iters'] + 1)
        if fault == 'fork_storm':
            # each CUDA child (every other one): cudaMalloc, cudaMemset (waits), cudaFree;
            # forked from a process that used CUPTI, it has CUPTI's callbacks but no GPU
            # records (CUPTI has no fork support), so its memset is a call, not a MEMSET
            cuda_children = procs * ((STORM['forks'] + 1) // 2)
            for k, v in (('allocations', 1), ('frees', 1), ('host_syncs', 2)):
                want[k] += cuda_children * v
        return want

    def cell(self, name, fault):
        cell_dir = tempfile.mkdtemp(prefix=f'{name}-{fault}-', dir=self.root)
        os.chmod(cell_dir, 0o755)
        problems = []
        runs = {}
        for gpuwhy in (False, True):
            out_dir = os.path.join(cell_dir, 'out')
            shutil.rmtree(out_dir, ignore_errors=True)
            os.mkdir(out_dir)
            os.chmod(out_dir, 0o555 if fault == 'unwritable_dir' else 0o777)
            files_dir = self.files_dir(cell_dir)
            shutil.rmtree(files_dir, ignore_errors=True)
            os.mkdir(files_dir)
            os.chmod(files_dir, 0o777)
            argv, env, args, out_dir = self.plan(name, fault, cell_dir, gpuwhy)
            rc, out, err, secs = self.run(argv, env, self.o.timeout)
            label = 'with gpuwhy' if gpuwhy else 'without gpuwhy'
            if rc is None:
                problems.append(f'{label}: still running after {self.o.timeout} s (a hang)'
                                f'{err[-4000:]}')
                return problems
            traces = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else None
            if fault == 'vanished_dir' and not gpuwhy and traces is not None:
                problems.append('the fault did not fire: the directory is still there')
            runs[gpuwhy] = (rc, out, err, traces, secs)
        base, run = runs[False], runs[True]
        rc, out, err, traces, _ = run
        if fault in ENDINGS and base[0] != ENDINGS[fault][1]:
            problems.append(f'the fault did not fire: status {base[0]} without gpuwhy')
        if rc != base[0]:
            problems.append(f'exit status {rc}, {base[0]} without gpuwhy: {err[-300:]!r}')
        # lines of several processes, or of several threads (the stdio faults print a line
        # per launch), come in any order
        several = 'child_counts' in self.spec[name] or (fault in STDIO_FAULTS and
                                                        name in MULTI_THREADED)
        if mask(out, several) != mask(base[1], several):
            problems.append(f'stdout {out[-200:]!r}, without gpuwhy {base[1][-200:]!r}')
        if (mask('\n'.join(own_lines(err)), several) !=
                mask('\n'.join(own_lines(base[2])), several)):
            problems.append(f'stderr {err[-300:]!r}, without gpuwhy {base[2][-300:]!r}')
        if fault in ('fork_storm', 'threads16'):
            if ', 0 CUDA errors' not in err or (fault == 'fork_storm' and
                                               'exited 0, 0 did not' not in err):
                problems.append(f'the injected work failed: {err[-300:]!r}')
        if fault in CLOSEFROM:
            # the program's own files after closefrom: every line it wrote, nothing else
            said = [line for line in err.splitlines() if line.startswith('fault-inject: ')]
            if not said or any(', 0 changed, 0 closed under the program' not in line
                               for line in said):
                problems.append(f"the program's files were touched: {said}")
        if fault in STDIO_FAULTS and 'fault-inject: launch 1' not in base[2]:
            problems.append('the fault did not fire: no launch line on the reopened stderr')
        problems += self.check_trace(name, fault, args, err, out_dir, traces)
        if not self.o.keep:
            shutil.rmtree(cell_dir, ignore_errors=True)
        return problems

    def check_exec(self, name, args, paths, rep):
        """The image that exec'd (the trace another is named after, with -exec1) holds every
        call up to the exec, closed cleanly; all the traces together hold that plus a whole
        run (and, for a workload that forks before CUDA, the first image's children)."""
        problems = []
        firsts = [p for p in paths if any(q != p and os.path.basename(q).startswith(
            os.path.basename(p)[:-len('.zst')] + '-exec') for q in paths)]
        if len(firsts) != 1:
            return [f'no trace of the image that exec\'d: {[os.path.basename(p) for p in paths]}']
        rc, js, e = self.tool(['--json', firsts[0]])
        if rc != 0:
            return [f'the report on the exec\'d image failed: {e.strip()[-200:]}']
        first = json.loads(js)
        t = first['trace']
        if not t['clean_exit'] or t['truncated'] or t['dropped_records']:
            problems.append(f'the exec\'d image did not close its trace: {t}')
        n = self.fire_at(name, args)
        launched = first['counts']['launches']
        if launched < n or (name not in MULTI_THREADED and launched != n):
            problems.append(f'{launched} launches in the exec\'d image, {n} had returned')
        want = self.expected_counts(name, args, 'exec')
        if 'child_counts' in self.spec[name]:
            for k in COUNT_KEYS:
                want[k] += eval(self.spec[name]['child_counts'][k], {}, dict(args))
        got = {k: rep['counts'][k] - first['counts'][k] for k in COUNT_KEYS}
        if got != want:
            diff = {k: (got[k], want[k]) for k in COUNT_KEYS if got[k] != want[k]}
            problems.append(f'counts after the exec (got, expected): {diff}')
        return problems

    def check_trace(self, name, fault, args, err, out_dir, traces):
        problems = []
        warnings = [line for line in err.splitlines() if line.startswith('gpuwhy:')]
        if fault in ('unwritable_dir', 'vanished_dir'):
            if traces is None and fault == 'unwritable_dir':
                problems.append('the unwritable directory is gone')
            if traces and fault == 'unwritable_dir':
                problems.append(f'written into an unwritable directory: {traces}')
            if traces is not None and fault == 'vanished_dir':
                problems.append(f'the removed directory is there: {traces}')
            if fault == 'unwritable_dir' and not warnings:
                problems.append('no gpuwhy warning about the directory')
            if fault == 'vanished_dir':
                # The process whose launch removed the directory had its trace open there; a
                # second one (forker's child) may find the directory gone or lose its file.
                removed = [w for w in warnings if 'removed while the program ran' in w]
                other = [w for w in warnings if w not in removed and
                         'cannot create trace' not in w]
                if not removed or other:
                    problems.append(f'gpuwhy did not say the trace was lost: {warnings}')
            return problems
        if fault == 'disk_full':
            if not any('failed' in line for line in warnings):
                problems.append(f'no warning that the trace was cut: {warnings}')
        elif fault == 'no_fds':
            if not any('open files' in w for w in warnings):
                problems.append(f'gpuwhy did not say it had no descriptor: {warnings}')
            if traces:
                problems.append(f'a trace without a descriptor to write it: {traces}')
            return problems
        elif fault == 'few_fds':
            # why CUPTI could not be loaded, not that there is none
            if not any('libcupti' in w and 'open files' in w for w in warnings) or \
                    any('no libcupti found' in w for w in warnings):
                problems.append(f'gpuwhy did not say descriptors ran out: {warnings}')
        elif fault in CLOSEFROM:
            other = [w for w in warnings if 'call stacks' not in w]
            if other:
                problems.append(f'gpuwhy warned: {other}')
        elif fault in ('cupti_busy', 'no_cupti'):
            if not warnings:
                problems.append('no gpuwhy warning about CUPTI')
        elif fault == 'flush_hang':
            if not warnings or any('gave up' not in w for w in warnings):
                problems.append(f'gpuwhy did not say it gave up on CUPTI: {warnings}')
        elif warnings:
            problems.append(f'gpuwhy warned: {warnings}')
        if traces is None:
            return problems + ['the output directory is gone']
        procs = self.launching_procs(name, args)
        want_files = procs * (1 + ((STORM['forks'] + 1) // 2 if fault == 'fork_storm' else 0))
        if fault == 'exec':
            # the process that exec'd has a trace for each image: the new one is named -exec1
            want_files = procs + 1 + (1 if 'child_counts' in self.spec[name] else 0)
        if len(traces) != want_files:
            problems.append(f'{len(traces)} traces, expected {want_files}: {traces}')
        if not traces:
            return problems
        paths = [os.path.join(out_dir, t) for t in traces]
        forked_notes = reopened = 0
        for path in paths:
            rc, dump, e = self.tool(['--dump', path])
            if rc != 0:
                problems.append(f'{os.path.basename(path)} does not decode: {e.strip()}')
            forked_notes += 'a fork child of a process that used CUPTI' in dump
            reopened += 'gpuwhy reopened the trace' in dump
        if fault in CLOSEFROM:
            # in a table of its own the descriptor is out of the program's reach; in the
            # program's table, closefrom closed it and every trace was reopened (its note)
            want = len(paths) if fault == 'closefrom_shared' else 0
            if reopened != want:
                problems.append(f'{reopened} traces reopened after closefrom, expected {want}')
        if fault == 'fork_storm':
            # Each CUDA child's trace says that CUPTI gave it no GPU records.
            want_notes = procs * ((STORM['forks'] + 1) // 2)
            if forked_notes != want_notes:
                problems.append(f'{forked_notes} fork-child notes, expected {want_notes}')
        rc, text, e = self.tool(paths)
        if rc != 0:
            problems.append(f'the text report failed ({rc}): {e.strip()[-200:]}')
        rc, js, e = self.tool(['--json'] + paths)
        if rc != 0:
            problems.append(f'the JSON report failed ({rc}): {e.strip()[-200:]}')
            return problems
        rep = json.loads(js)
        t = rep['trace']
        said = ' | '.join(rep.get('warnings', []))
        if fault in UNCLEAN:
            if t['clean_exit'] or not t['truncated']:
                problems.append(f'the report does not say the trace was cut: {t}')
            if 'truncated' not in said or 'truncated' not in text:
                problems.append(f'no truncation warning in the report: {said!r}')
            if fault == 'disk_full' and 'writes failed' not in said:
                problems.append(f'the report does not name failed writes: {said!r}')
            # Nothing is invented: at most the launches that happened before the fault.
            bound = (eval(self.spec[name]['counts']['launches'], {}, dict(args))
                     if name in MULTI_THREADED else self.fire_at(name, args)) * procs
            if fault == 'disk_full':
                bound = sum(eval(f['launches'], {}, dict(args)) for f in
                            [self.spec[name]['counts']] +
                            ([self.spec[name]['child_counts']]
                             if 'child_counts' in self.spec[name] else []))
            if rep['counts']['launches'] > bound:
                problems.append(f"{rep['counts']['launches']} launches, at most {bound} "
                                'can have happened')
            # SIGTERM: gpuwhy's handler flushed every launch that had returned.
            if fault == 'sigterm' and rep['counts']['launches'] < self.fire_at(name, args) * procs:
                problems.append(f"{rep['counts']['launches']} launches after SIGTERM, "
                                f'{self.fire_at(name, args) * procs} had returned')
        elif fault in ('flush_hang', 'second_client'):
            # CUPTI's flush never returns / another client takes CUPTI's buffers at launch N:
            # the calls are all there, the GPU records only in part, and the report says why.
            reason = 'gave up' if fault == 'flush_hang' else 'another CUPTI client'
            if not t['clean_exit'] or t['truncated']:
                problems.append(f'no clean end: {t}')
            if reason not in said or reason not in text:
                problems.append(f'the report does not say what was lost: {said!r}')
            want = self.expected_counts(name, args, fault)
            for k in ('launches', 'host_syncs', 'allocations', 'frees'):
                if rep['counts'][k] != want[k]:
                    problems.append(f"{k}: {rep['counts'][k]}, expected {want[k]}")
            for k in ('kernels', 'memcpy', 'memset'):
                if rep['counts'][k] > want[k]:
                    problems.append(f"{k}: {rep['counts'][k]}, at most {want[k]}")
        elif fault == 'exec':
            problems += self.check_exec(name, args, paths, rep)
        elif fault in ('cupti_busy', 'no_cupti', 'few_fds'):
            reason = {'cupti_busy': 'error 39', 'no_cupti': 'cannot load',
                      'few_fds': 'cannot load libcupti: too many open files'}[fault]
            if not t['clean_exit'] or t['truncated']:
                problems.append(f'no clean end: {t}')
            if reason not in said or reason not in text:
                problems.append(f'the report does not say why nothing was captured: {said!r}')
            if fault == 'few_fds' and 'no call stacks' not in said:
                problems.append(f'the report does not say why stacks are missing: {said!r}')
            if rep['counts']['launches'] or rep['counts']['kernels']:
                problems.append(f"events without CUPTI: {rep['counts']}")
        else:
            if not t['clean_exit'] or t['truncated'] or t['dropped_records']:
                problems.append(f'records lost: {t}, warnings {said!r}')
            if fault in CLOSEFROM and 'call stacks' in ' '.join(warnings) and \
                    'call stacks' not in said:
                problems.append(f'stacks stopped without a note in the report: {said!r}')
            want = self.expected_counts(name, args, fault)
            got = {k: rep['counts'][k] for k in COUNT_KEYS}
            if got != want:
                diff = {k: (got[k], want[k]) for k in COUNT_KEYS if got[k] != want[k]}
                problems.append(f'counts (got, expected): {diff}')
        return problems


def storm_loop(m, name, times):
    """The fork storm again and again, with gpuwhy only and nothing but the run checked: a
    child that inherits a lock another thread held at fork() hangs in a few percent of runs,
    too few for one matrix cell to catch (fork must wait for gpuwhy's unwinding threads)."""
    for i in range(times):
        cell_dir = tempfile.mkdtemp(prefix=f'{name}-storm-', dir=m.root)
        os.mkdir(os.path.join(cell_dir, 'out'))
        argv, env, _, _ = m.plan(name, 'fork_storm', cell_dir, True)
        rc, out, err, _ = m.run(argv, env, m.o.timeout)
        shutil.rmtree(cell_dir, ignore_errors=True)
        if rc is None:
            return f'run {i + 1}: still running after {m.o.timeout} s (a hang){err[-6000:]}'
        if rc != 0 or 'exited 0, 0 did not' not in err:
            return f'run {i + 1}: exit status {rc}: {err[-300:]!r}'
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--inject', required=True, help='the fault-inject shared library')
    ap.add_argument('--only', action='append', help='workload(s) to run (repeatable)')
    ap.add_argument('--fault', action='append', choices=FAULTS, help='fault(s) (repeatable)')
    ap.add_argument('--jobs', type=int, default=3, help='cells run at once (default 3)')
    ap.add_argument('--timeout', type=float, default=60, help='seconds before a run is a hang')
    ap.add_argument('--keep', action='store_true', help='keep each cell\'s directory')
    ap.add_argument('--repeat', type=int, default=1,
                    help='run each cell N times; it passes when every run passes (for races)')
    ap.add_argument('--storm-loop', type=int, metavar='N',
                    help='only run the first --only workload N times under the fork storm')
    opts = ap.parse_args()
    opts.inject = os.path.abspath(opts.inject)
    m = Matrix(opts)
    if opts.storm_loop:
        name = (opts.only or ['host_work'])[0]
        t0 = time.monotonic()
        problem = storm_loop(m, name, opts.storm_loop)
        shutil.rmtree(m.root, ignore_errors=True)
        print(f'{name} x fork_storm, {opts.storm_loop} runs with gpuwhy: '
              f'{problem or "no hang"} ({time.monotonic() - t0:.0f} s)')
        return 1 if problem else 0
    names = opts.only or list(m.spec)
    faults = opts.fault or FAULTS
    for n in names:
        if n not in m.spec:
            ap.error(f'unknown workload {n}')
    t0 = time.monotonic()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        futures = {pool.submit(m.cell, n, f): (n, f)
                   for _ in range(opts.repeat) for n in names for f in faults}
        for fut in concurrent.futures.as_completed(futures):
            try:
                p = fut.result()
            except Exception as e:  # a driver error fails the cell, and says why
                p = [f'driver error: {e!r}']
            key = futures[fut]
            results[key] = results.get(key, []) + p
    width = max(len(n) for n in names)
    print('fault matrix on gpusim (a test double), with and without gpuwhy:')
    print(' ' * width + ' ' + ' '.join(f'{SHORT[f]:>7}' for f in faults))
    for n in names:
        cells = []
        for f in faults:
            p = results[(n, f)]
            cells.append('ok' if not p else 'HANG' if '(a hang)' in p[0] else 'FAIL')
        print(f'{n:<{width}} ' + ' '.join(f'{c:>7}' for c in cells))
    bad = {k: v for k, v in results.items() if v}
    for (n, f), p in sorted(bad.items()):
        for line in p:
            print(f'FAIL {n} x {f}: {line}')
    total = len(results)
    runs = f', each run {opts.repeat} times' if opts.repeat > 1 else ''
    print(f'{total - len(bad)}/{total} cells passed{runs} ({time.monotonic() - t0:.0f} s)')
    if not opts.keep:
        shutil.rmtree(m.root, ignore_errors=True)
    else:
        print(f'cell directories kept in {m.root}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
