#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The gpuwhy launcher: exit status, signal forwarding (a terminal's ^C delivered once, a signal
# to the whole job delivered once, the program gone with a killed launcher), capture
# across exec, --sim from any working directory, per-pid traces, `gpuwhy report`.
import argparse
import glob
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def wait_for(path, text, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(path) as f:
                if text in f.read():
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    return False


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def dump_counts(report, trace):
    out = run([report, "--dump", trace]).stdout
    counts = {}
    for line in out.splitlines():
        word = line.split(" ", 1)[0]
        counts[word] = counts.get(word, 0) + 1
    return counts, out


def test_exit_status(a, tmp):
    child = [sys.executable, a.child]
    r = run([a.launcher, "run", "--no-report", "-o", tmp + "/", "--"] + child + ["exit", "3"])
    check(r.returncode == 3, "exit status 3 passes through (got %d)" % r.returncode)
    r = run([a.launcher, "run", "--no-report", "-o", tmp + "/", "--"] + child + ["exit", "0"])
    check(r.returncode == 0, "exit status 0 passes through (got %d)" % r.returncode)
    r = run([a.launcher, "run", "--no-report", "-o", tmp + "/", "--"] + child + ["signal", "KILL"])
    check(r.returncode == 128 + signal.SIGKILL, "killed by SIGKILL gives 137 (got %d)" % r.returncode)
    check("killed by signal 9" in r.stderr, "the launcher says the program was killed")
    r = run([a.launcher, "run", "--no-report", "--", tmp + "/no-such-program"])
    check(r.returncode == 127, "a missing program gives 127 (got %d)" % r.returncode)
    r = run([a.launcher, "run"])
    check(r.returncode == 2, "no command is a usage error (got %d)" % r.returncode)


def test_forwarding(a, tmp):
    # A signal sent to the launcher alone (kill, a batch scheduler) reaches the program once.
    for sig in (signal.SIGINT, signal.SIGTERM):
        marker = os.path.join(tmp, "marker-%d" % sig)
        p = subprocess.Popen([a.launcher, "run", "--no-report", "-o", tmp + "/", "--",
                              sys.executable, a.child, "wait", marker],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, GPUWHY_DEBUG="1"))
        ready = wait_for(marker, "ready")
        check(ready, "child started (%s)" % signal.Signals(sig).name)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        got = read(marker).split()
        name = signal.Signals(sig).name
        check(got.count(name) == 1, "%s sent to the launcher reached the program once (%s)" % (name, got))
        check(p.returncode == 40 + sig, "the program's own exit status after %s (got %d)" % (name, p.returncode))
        check(err.count("forwarded signal %d " % sig) == 1, "the launcher forwarded %s once" % name)


def test_terminal_ctrl_c(a, tmp, prefix=()):
    # A terminal's ^C goes to the whole foreground process group, child included: the launcher
    # must not forward it a second time. A child that left the group (setsid) does not get the
    # terminal's signal: then the launcher must forward it.
    how = " ".join(prefix) or "same group"
    marker = os.path.join(tmp, "marker-tty-" + (prefix[0] if prefix else "group"))
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["GPUWHY_DEBUG"] = "1"
        os.execv(a.launcher, [a.launcher, "run", "--no-report", "-o", tmp + "/", "--"] +
                 list(prefix) + [sys.executable, a.child, "wait", marker])
    ready = wait_for(marker, "ready")
    check(ready, "child started under a terminal (%s)" % how)
    os.write(fd, b"\x03")
    status = None
    output = b""
    end = time.time() + 30
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                output += os.read(fd, 4096)
            except OSError:
                pass
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    got = read(marker).split()
    check(got.count("SIGINT") == 1, "terminal ^C reached the program exactly once (%s: %s)" % (how, got))
    # Two SIGINTs that arrive close together merge into one pending signal, so the count above
    # cannot always see a duplicate: the launcher's own account (GPUWHY_DEBUG) can.
    forwarded = output.count(b"forwarded signal %d " % signal.SIGINT)
    check(forwarded == (1 if prefix else 0),
          "the launcher forwarded the terminal's ^C %d time(s) (%s)" % (forwarded, how))
    check(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 40 + signal.SIGINT,
          "after ^C the launcher exits with the program's status (%s: %r)" % (how, status))
    os.close(fd)


def descendants(pid):
    """The processes under pid (its children, theirs, ...), from /proc."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def alive(pid):
    """Running, or stopped: not gone and not a zombie waiting for its parent."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start_job(a, tmp, name, mode="count"):
    """gpuwhy run -- signal-count MODE MARKER, in a session (and process group) of its own, as a
    batch job runs; returns the launcher and the program's pid once the program is ready."""
    marker = os.path.join(tmp, name)
    p = subprocess.Popen([a.launcher, "run", "--no-report", "-o", tmp + "/", "--",
                          a.signal_count, mode, marker],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, GPUWHY_DEBUG="1"), start_new_session=True)
    check(wait_for(marker, "ready"), "the program started (%s)" % name)
    m = re.search(r"ready (\d+)", read(marker))
    return p, marker, int(m.group(1)) if m else -1


def test_job_signals(a, tmp):
    # A signal sent to the whole job reaches the program itself: the launcher must not send it
    # again (job-signals.h). The program counts each delivery; the launcher's own account
    # (GPUWHY_DEBUG) shows a second delivery even when the kernel merged it into the first.
    senders = {
        # kill -TERM -PGID, timeout(1), a terminal: the process group
        "group": lambda p, sig: os.killpg(p.pid, sig),
        # systemd KillMode=control-group, Slurm's step teardown: every process of the job
        "every process": lambda p, sig: [os.kill(q, sig) for q in [p.pid] + descendants(p.pid)],
    }
    if shutil.which("pkill"):
        # pkill -f train.py: every process whose command line matches
        senders["pkill -f"] = lambda p, sig: subprocess.run(
            ["pkill", "-" + signal.Signals(sig).name[3:], "-f", p.args[-1]])
    for how, send in senders.items():
        for sig in (signal.SIGTERM, signal.SIGINT):
            name = signal.Signals(sig).name
            p, marker, _ = start_job(a, tmp, "job-%s-%s" % (how.replace(" ", "-"), name))
            send(p, sig)
            out, err = p.communicate(timeout=30)
            got = re.search(r"SIGTERM (\d+) SIGINT (\d+)", read(marker))
            n = int(got.group(1 if sig == signal.SIGTERM else 2)) if got else -1
            check(n == 1, "%s to the job (%s): the program got it %d time(s)" % (name, how, n))
            forwarded = err.count("forwarded signal %d " % sig)
            check(forwarded == 0, "%s to the job (%s): the launcher sent it again %d time(s)"
                  % (name, how, forwarded))
            check(p.returncode == 0, "%s to the job (%s): the program's status (got %d)"
                  % (name, how, p.returncode))
    # Sent to the launcher alone: forwarded, once.
    p, marker, _ = start_job(a, tmp, "job-launcher-only")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    got = re.search(r"SIGTERM (\d+)", read(marker))
    check(got and got.group(1) == "1" and err.count("forwarded signal 15 ") == 1,
          "SIGTERM to the launcher alone reached the program once (%s, %s)"
          % (got and got.group(0), err.strip().splitlines()))

    # SIGKILL of the launcher: the program goes with it (nothing left running, the launcher's
    # witness included).
    p, marker, prog = start_job(a, tmp, "job-sigkill", "sleep")
    under = descendants(p.pid)
    check(prog in under and len(under) >= 2, "the program and the witness run under the launcher")
    p.kill()
    p.wait(timeout=30)  # an orphan would keep the pipes open: read them once it is gone
    end = time.time() + 10
    while time.time() < end and any(alive(q) for q in under):
        time.sleep(0.05)
    left = [q for q in under if alive(q)]
    check(not left, "SIGKILL of the launcher left no process running (left: %s)" % left)
    for q in left:
        os.kill(q, signal.SIGKILL)
    p.communicate(timeout=30)


def test_capture(a, tmp):
    if not a.workload:
        print("skip capture checks: no CUDA workload built")
        return
    # --sim from a working directory far from the build tree, with a relative output dir.
    wd = tempfile.mkdtemp(dir=tmp)
    r = run([a.launcher, "run", "--sim", "-o", "traces/", "--", a.workload], cwd=wd)
    check(r.returncode == 0, "--sim run from %s exits 0 (got %d: %s)" % (wd, r.returncode, r.stderr[-500:]))
    traces = glob.glob(os.path.join(wd, "traces", "gpuwhy-*.trace.zst"))
    check(len(traces) == 1, "one trace in the relative -o directory (%s)" % traces)
    check(len(r.stdout) > 0, "the report was printed after the run")
    if traces:
        counts, _ = dump_counts(a.report, traces[0])
        check(counts.get("KERNEL", 0) > 0, "the trace has kernels (%d)" % counts.get("KERNEL", 0))
        check(counts.get("FOOTER", 0) == 1, "the trace ended cleanly")

    # --json: standard output is the JSON document alone; the program's own output (the
    # workloads print a line) goes to standard error, so `gpuwhy run --json > r.json` parses.
    r = run([a.launcher, "run", "--sim", "--json", "-o", os.path.join(wd, "json") + "/", "--",
             a.workload], cwd=wd)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = None
    check(r.returncode == 0 and doc is not None and doc.get("schema") == "gpuwhy-report/1",
          "run --json: standard output parses as the report alone (%r)" % r.stdout[:80])
    name = os.path.basename(a.workload) + ":"
    check(name in r.stderr and name not in r.stdout,
          "run --json: the program's own output went to stderr")

    # Without -o, an exported GPUWHY_OUTPUT pattern decides where the trace goes.
    envdir = os.path.join(tmp, "env")
    os.makedirs(envdir)
    r = run([a.launcher, "run", "--sim", "--no-report", "--", a.workload],
            env=dict(os.environ, GPUWHY_OUTPUT=envdir + "/mine-%p.zst"))
    check(len(glob.glob(envdir + "/mine-*.zst")) == 1, "an exported GPUWHY_OUTPUT is kept")

    # A program that execs another keeps capture: the environment carries LD_PRELOAD.
    out = os.path.join(tmp, "exec") + "/"
    r = run([a.launcher, "run", "--sim", "--no-report", "-o", out, "--",
             "sh", "-c", 'exec "$0"', a.workload])
    traces = glob.glob(out + "gpuwhy-*.trace.zst")
    check(r.returncode == 0, "exec'd workload exits 0 (got %d: %s)" % (r.returncode, r.stderr[-500:]))
    check(len(traces) == 1, "sh -c 'exec workload' left one trace (%s)" % traces)
    if traces:
        counts, text = dump_counts(a.report, traces[0])
        header = text.splitlines()[0] if text else ""
        check(os.path.basename(a.workload) in header, "the trace is the exec'd program's")
        check(counts.get("KERNEL", 0) > 0, "the exec'd program's kernels were captured")

    # `gpuwhy report` is gpuwhy-report.
    if traces:
        r1 = run([a.launcher, "report", "--json", traces[0]])
        r2 = run([a.report, "--json", traces[0]])
        check(r1.returncode == 0 and r1.stdout == r2.stdout, "`gpuwhy report` equals gpuwhy-report")

    # Exit status and capture together: the workload killed by a signal still leaves a trace
    # and a report, and the launcher exits 128 + signal.
    if a.exit_workload:
        out = os.path.join(tmp, "killed") + "/"
        r = run([a.launcher, "run", "--sim", "-o", out, "--", a.exit_workload, "--mode", "abort"])
        check(r.returncode == 128 + signal.SIGABRT, "abort() gives 134 (got %d)" % r.returncode)
        check(len(glob.glob(out + "*.trace.zst")) == 1, "a killed program still leaves its trace")

    # Forked children that use CUDA: one trace per process, all reported.
    if a.forker:
        out = os.path.join(tmp, "fork") + "/"
        r = run([a.launcher, "run", "--sim", "--json", "-o", out, "--", a.forker])
        traces = glob.glob(out + "gpuwhy-*.trace.zst")
        check(r.returncode == 0, "forker exits 0 (got %d: %s)" % (r.returncode, r.stderr[-300:]))
        check(len(traces) >= 2, "forked CUDA children get their own traces (%d)" % len(traces))
        # The parent forks before its first CUDA call, so no atfork handler of gpuwhy ran in
        # it: the child is still marked a fork child (GW_HEADER_FORKED = 2) of the parent.
        headers = {}
        for t in traces:
            d = run([a.report, "--dump", t])
            m = re.search(r"^HEADER .*?flags=(\d+) pid=(\d+) ppid=(\d+)", d.stdout, re.M)
            if m:
                headers[int(m.group(2))] = (int(m.group(1)), int(m.group(3)))
        children = [pid for pid, (_, ppid) in headers.items() if ppid in headers]
        check(len(children) == len(traces) - 1 and
              all(headers[p][0] & 2 for p in children) and
              not any(f & 2 for p, (f, _) in headers.items() if p not in children),
              "fork children's headers, and only theirs, carry GW_HEADER_FORKED (%s)" % headers)


def test_installed(a, tmp):
    # An installed tree: gpuwhy finds libgpuwhy.so in the configured libdir relative to its own
    # bin directory, and says clearly that --sim needs a build tree.
    if not (a.build_dir and a.workload):
        return
    dest = os.path.join(tmp, "dest")
    r = run(["meson", "install", "-C", a.build_dir, "--no-rebuild", "--quiet", "--destdir", dest])
    check(r.returncode == 0, "meson install --destdir works (%s)" % r.stderr[-300:])
    found = glob.glob(dest + "/**/bin/gpuwhy", recursive=True)
    check(len(found) == 1, "gpuwhy installed (%s)" % found)
    if not found:
        return
    gpuwhy = found[0]
    check(len(glob.glob(dest + "/**/man1/gpuwhy.1", recursive=True)) == 1, "gpuwhy.1 installed")
    env = dict(os.environ)
    env.pop("GPUWHY_LIBRARY", None)
    env["LD_LIBRARY_PATH"] = os.path.dirname(a.gpusim_lib) if a.gpusim_lib else ""
    out = os.path.join(tmp, "installed") + "/"
    r = run([gpuwhy, "run", "-o", out, "--", a.workload], env=env)
    check(r.returncode == 0 and len(glob.glob(out + "*.trace.zst")) == 1 and r.stdout,
          "the installed gpuwhy captures and reports (%d: %s)" % (r.returncode, r.stderr[-300:]))
    r = run([gpuwhy, "run", "--sim", "--", a.workload], env=env)
    check(r.returncode == 1 and "build tree" in r.stderr, "the installed gpuwhy explains --sim")


def test_demo(a):
    if not a.workload:
        return
    r = run([a.launcher, "demo", "--sim"], timeout=300)
    check(r.returncode == 0, "gpuwhy demo --sim exits 0 (got %d: %s)" % (r.returncode, r.stderr[-300:]))
    check("SIMULATED" in r.stdout and "not a GPU" in r.stdout, "the demo says its numbers are simulated")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--child", required=True)
    ap.add_argument("--workload")
    ap.add_argument("--exit-workload")
    ap.add_argument("--forker")
    ap.add_argument("--build-dir")
    ap.add_argument("--gpusim-lib")
    ap.add_argument("--signal-count", required=True)
    a = ap.parse_args()
    # Meson passes paths relative to the build directory; some checks run elsewhere.
    for k in ("launcher", "report", "child", "workload", "exit_workload", "forker", "build_dir",
              "gpusim_lib", "signal_count"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    with tempfile.TemporaryDirectory(prefix="gpuwhy-launcher-") as tmp:
        test_exit_status(a, tmp)
        test_forwarding(a, tmp)
        test_terminal_ctrl_c(a, tmp)
        if shutil.which("setsid"):
            test_terminal_ctrl_c(a, tmp, ("setsid",))
        test_job_signals(a, tmp)
        test_capture(a, tmp)
        test_installed(a, tmp)
        test_demo(a)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


sys.exit(main())
