# SPDX-License-Identifier: MIT
"""The e2e scripts' shared check: print each result, keep the failures for the exit status."""

FAILS = []


def expect(cond, what):
    if not cond:
        FAILS.append(what)
        print('FAIL', what)
    else:
        print('ok  ', what)
    return cond


def favoured():
    """preexec_fn for a profiled program on gpusim: the highest priority the test may give it
    (nice -20 as root or with CAP_SYS_NICE; unchanged otherwise). On gpusim the host's
    scheduling is part of the simulated timeline: a program descheduled by unrelated load on
    the machine records host stalls the workload never made (tiny_kernels under four CPU hogs
    on two cores: host_work 10-18% of the window at nice 0, 0-0.2% at nice -20)."""
    import os
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    except OSError:
        pass


def profile(build, report, argv, trace, env_extra=None):
    """Runs argv on gpusim (a test double) under libgpuwhy.so, writing trace, then gpuwhy-report
    on it as JSON and as text. Returns (None, report dict, text), or (why, None, None) when a
    step failed. JSON's parser would take NaN and Infinity, which are not JSON: refused."""
    import json
    import os
    import subprocess

    env = dict(os.environ)
    env.update(env_extra or {})
    env.update(LD_LIBRARY_PATH=os.path.join(build, 'tests/gpusim'),
               LD_PRELOAD=os.path.join(build, 'lib/libgpuwhy.so'), GPUWHY_QUIET='1',
               GPUWHY_OUTPUT=trace)
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=120, preexec_fn=favoured)
    if p.returncode:
        return f'{argv[0]} exit {p.returncode}: {p.stderr.strip()[-500:]}', None, None
    j = subprocess.run([report, '--json', trace], capture_output=True, text=True, timeout=120)
    t = subprocess.run([report, trace], capture_output=True, text=True, timeout=120)
    if j.returncode or t.returncode:
        return (f'gpuwhy-report exit {j.returncode or t.returncode}: '
                f'{(j.stderr + t.stderr).strip()[-500:]}', None, None)
    return None, json.loads(j.stdout, parse_constant=lambda c: {}['not JSON: ' + c]), t.stdout
