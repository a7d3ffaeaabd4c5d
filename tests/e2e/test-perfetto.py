#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gpuwhy-report --perfetto: the JSON parses, has the promised tracks, and its event counts
# equal the trace's (from --dump) and the synthetic trace's parameters (make-trace.c).
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []
BUCKETS = {"compute", "bandwidth_bound", "low_intensity", "small_batch", "dependency_chain",
           "launch_overhead", "host_sync", "data_transfer", "host_work", "communication", "blocked"}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def dump_counts(report, trace):
    r = subprocess.run([report, "--dump", trace], stdout=subprocess.PIPE, text=True, check=True)
    counts = collections.Counter(line.split(" ", 1)[0] for line in r.stdout.splitlines())
    device_memory = 0
    for line in r.stdout.splitlines():
        # the analysis's rule: every kind but managed (3) and pinned host memory (4) is device
        # memory, kinds this build does not know included
        if line.startswith("MEMORY ") and not any(" mem_kind=%d " % k in line + " " for k in (3, 4)):
            device_memory += 1
    return counts, device_memory


def export(report, traces, out):
    r = subprocess.run([report, "--perfetto", out] + traces, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "gpuwhy-report --perfetto exits 0 (%d: %s)" % (r.returncode, r.stderr[-300:]))
    with open(out) as f:
        doc = json.load(f)
    check(isinstance(doc.get("traceEvents"), list), "the JSON has a traceEvents array")
    check(doc.get("displayTimeUnit") == "ns" and "largest_loss" in doc.get("otherData", {}),
          "the JSON has its time unit and the verdict in otherData")
    return doc["traceEvents"]


def common_checks(ev, counts, device_memory, label):
    by_cat = collections.Counter(e.get("cat") for e in ev if e["ph"] == "X")
    check(by_cat["kernel"] == counts["KERNEL"], "%s: kernel events %d == KERNEL records %d" % (label, by_cat["kernel"], counts["KERNEL"]))
    check(by_cat["memcpy"] == counts["MEMCPY"], "%s: memcpy events %d == MEMCPY records %d" % (label, by_cat["memcpy"], counts["MEMCPY"]))
    check(by_cat["memset"] == counts["MEMSET"], "%s: memset events %d == MEMSET records %d" % (label, by_cat["memset"], counts["MEMSET"]))
    check(by_cat["api"] == counts["API"], "%s: API call events %d == API records %d" % (label, by_cat["api"], counts["API"]))
    mem = [e for e in ev if e["ph"] == "C" and e["name"] == "live device memory"]
    check(len(mem) == device_memory, "%s: memory counter events %d == device MEMORY records %d" % (label, len(mem), device_memory))
    fill = [e for e in ev if e["ph"] == "C" and e["name"].startswith("SM fill")]
    check(len(fill) > 0 and all(0 <= e["args"]["fill"] <= 1.0000001 for e in fill), "%s: SM fill counter in [0, 1]" % label)
    # Exact: the fill rises at a kernel's start and falls back at its end, so it is 0 at the
    # end of every GPU's last kernel.
    last = {}
    for e in sorted((e for e in fill if e["name"] == "SM fill"), key=lambda e: e["ts"]):
        last[e["pid"]] = e["args"]["fill"]
    check(all(v == 0 for v in last.values()), "%s: SM fill ends at 0 on every GPU (%s)" % (label, last))

    # Tracks: host threads in the trace's process, GPU streams in a GPU process.
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    for e in ev:
        if e["ph"] == "X" and e["cat"] in ("kernel", "memcpy", "memset"):
            if not names.get((e["pid"], e["tid"]), "").startswith("stream "):
                check(False, "%s: GPU event on a named stream track: %r" % (label, e))
                break
            if not procs.get(e["pid"], "").startswith("GPU "):
                check(False, "%s: GPU event in a GPU process: %r" % (label, e))
                break
    idle = [e for e in ev if e["ph"] == "X" and e["cat"] == "idle"]
    check(len(idle) > 0, "%s: the GPU idle track has events (%d)" % (label, len(idle)))
    check(all(e["name"] in BUCKETS for e in idle), "%s: idle events are named by their cause" % label)
    check(all(names.get((e["pid"], e["tid"]), "").startswith("GPU idle") for e in idle), "%s: idle events sit on the GPU idle track" % label)

    # An idle gap is time when nothing ran: it overlaps no kernel, copy or memset of its GPU.
    busy = collections.defaultdict(list)
    for e in ev:
        if e["ph"] == "X" and e["cat"] in ("kernel", "memcpy", "memset"):
            busy[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
    for pid in busy:
        busy[pid].sort()
    overlaps = 0
    import bisect
    for e in idle:
        spans = busy[e["pid"]]
        s, t = e["ts"], e["ts"] + e["dur"]
        i = bisect.bisect_left(spans, (t, t))
        for j in range(max(0, i - 64), min(len(spans), i + 1)):
            if spans[j][0] < t - 1e-6 and spans[j][1] > s + 1e-6:
                overlaps += 1
                break
    check(overlaps == 0, "%s: no idle gap overlaps a GPU operation (%d do)" % (label, overlaps))

    # Launch calls and their kernels are joined by flows.
    out_ids = {e["bind_id"] for e in ev if e.get("flow_out")}
    kern = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"]
    joined = sum(1 for e in kern if e.get("bind_id") in out_ids)
    check(joined == len(kern), "%s: every kernel has a flow from its launch call (%d of %d)" % (label, joined, len(kern)))
    return names, procs


def synthetic(a, tmp):
    n, streams = 3000, 3
    trace = os.path.join(tmp, "synthetic.trace.zst")
    subprocess.run([a.make_trace, trace, str(n), str(streams)], check=True)
    counts, device_memory = dump_counts(a.report, trace)
    # From make-trace.c's shape: one launch per iteration, a copy every 100, a malloc and a
    # memset every 1000, a free for every even thousand's allocation.
    allocs = (n + 999) // 1000
    frees = len([k for k in range(allocs) if k % 2 == 0 and k * 1000 + 500 < n])
    check(counts["KERNEL"] == n, "synthetic: the trace holds its %d kernels" % n)
    check(counts["MEMCPY"] == n // 100 and counts["MEMSET"] == allocs, "synthetic: copies and memsets as generated")
    check(device_memory == allocs + frees, "synthetic: %d allocations + %d frees" % (allocs, frees))
    check(counts["API"] == n + n // 100 + 2 * allocs + frees, "synthetic: API calls as generated")

    ev = export(a.report, [trace], os.path.join(tmp, "synthetic.json"))
    names, procs = common_checks(ev, counts, device_memory, "synthetic")
    kern = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"]
    per_stream = collections.Counter(names[(e["pid"], e["tid"])] for e in kern)
    check(per_stream == {"stream %d" % (7 + s): n // streams for s in range(streams)},
          "synthetic: kernels spread over %d stream tracks (%s)" % (streams, dict(per_stream)))
    check(any(v == "main" for v in names.values()), "synthetic: the host thread track is named 'main'")
    check(any("synthetic device" in v for v in procs.values()), "synthetic: the GPU process names its device")
    # Times: make-trace starts the capture at 0.5 ms and the first kernel at 1.004 ms; kernels
    # alternate 2 us and 5 us.
    first = min(kern, key=lambda e: e["ts"])
    check(abs(first["ts"] - 504.0) < 1e-6, "synthetic: first kernel at 504 us after capture start (%r)" % first["ts"])
    # SM fill from the launch shapes (design.md's occupancy rule, make-trace's device: 132 SMs,
    # 2048 threads, 32 blocks, 65536 registers per SM): a 256-thread block of 32-register
    # threads fits 8 times per SM, 1056 on the GPU. gemm_kernel's 264 blocks fill 264/1056;
    # add_kernel's 1 block fills 1/1056. Kernels never overlap, so the counter steps between
    # 0 and those two values, once at each kernel's start and end.
    fill = [e for e in ev if e["ph"] == "C" and e["name"] == "SM fill"]
    values = collections.Counter(round(e["args"]["fill"], 6) for e in fill)
    check(values == {round(264 / 1056, 6): n // 2, round(1 / 1056, 6): n // 2, 0.0: n},
          "synthetic: exact SM fill steps (%s)" % dict(values))
    classes = {(e["name"].split("(")[0], e["args"]["class"]) for e in kern}
    check(classes == {("add_kernel", "bandwidth_bound"), ("gemm_kernel", "compute")},
          "synthetic: kernels carry their name class (%s)" % sorted(classes))
    durs = collections.Counter(round(e["dur"], 3) for e in kern)
    check(durs == {2.0: n // 2, 5.0: n // 2}, "synthetic: kernel durations 2 us and 5 us, half each (%s)" % dict(durs))
    # Live memory: allocation k is k % 8 + 1 MiB; the even ones are freed 500 iterations later.
    mem = sorted((e["ts"], e["args"]["bytes"]) for e in ev if e["ph"] == "C" and e["name"] == "live device memory")
    live, peak = 0, 0
    for k in range(allocs):
        live += (k % 8 + 1) << 20
        peak = max(peak, live)
        if k % 2 == 0 and k * 1000 + 500 < n:
            live -= (k % 8 + 1) << 20
    check(mem[-1][1] == live, "synthetic: final live memory %d == %d" % (mem[-1][1], live))
    check(max(b for _, b in mem) == peak, "synthetic: peak live memory == %d" % peak)


def untimed(a, tmp):
    # Kernels CUPTI could not time (start and end 0) are counted by the report but have no
    # place on the timeline: no event for them, and nothing before the capture's start.
    n, extra = 200, 5
    trace = os.path.join(tmp, "untimed.trace.zst")
    subprocess.run([a.make_trace, trace, str(n), "1", str(extra)], check=True)
    counts, _ = dump_counts(a.report, trace)
    check(counts["KERNEL"] == n + extra, "untimed: the trace holds %d + %d kernels" % (n, extra))
    ev = export(a.report, [trace], os.path.join(tmp, "untimed.json"))
    kern = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"]
    check(len(kern) == n, "untimed: %d kernel events, the timed ones (%d)" % (n, len(kern)))
    check(min(e["ts"] for e in ev if "ts" in e) >= 0, "untimed: no event before the capture")
    r = subprocess.run([a.report, "--json", trace], stdout=subprocess.PIPE, text=True)
    rj = json.loads(r.stdout)
    check(rj["trace"]["untimed_gpu_ops"] == extra and rj["counts"]["kernels"] == n + extra,
          "untimed: the report counts them (%s, %s)" % (rj["trace"]["untimed_gpu_ops"],
                                                       rj["counts"]["kernels"]))
    # make-trace's first kernel starts at 1.004 ms, its last timed one ends 10 us a launch later
    check(rj["window"]["start_ns"] == 1004000, "untimed: the window starts at the first timed kernel")


def edges(a, tmp):
    # The writer shows the analysis's answers, not its own: an allocation of a memory kind this
    # build does not know is device memory (as the report's peak counts it), and a kernel with
    # grid (264, 0, 0) and block (256, 0, 0) fills what 264 blocks of 256 threads fill.
    n = 10
    trace = os.path.join(tmp, "edges.trace.zst")
    subprocess.run([a.make_trace, trace, str(n), "1", "0", "1"], check=True)
    ev = export(a.report, [trace], os.path.join(tmp, "edges.json"))
    rj = json.loads(subprocess.run([a.report, "--json", trace], stdout=subprocess.PIPE,
                                   text=True).stdout)
    mem = sorted((e for e in ev if e["ph"] == "C" and e["name"] == "live device memory"),
                 key=lambda e: e["ts"])
    # make-trace allocates 1 MiB at iteration 0 and never frees it within 10 iterations
    want = (1 << 20) + 3 * (1 << 20)
    check(mem and mem[-1]["args"]["bytes"] == want and rj["memory"]["final_bytes"] == want,
          "edges: the unknown-kind allocation is device memory in the counter (%s) and the "
          "report (%s), %d bytes" % (mem[-1]["args"]["bytes"] if mem else None,
                                     rj["memory"]["final_bytes"], want))
    # 256 threads, 32 registers: 2048 / 256 = 8 blocks an SM (65536 / (32 * 256) = 8 too),
    # 132 SMs hold 1056 blocks at once, 264 blocks fill a quarter
    zero = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel" and e["args"]["grid"] == [264, 0, 0]]
    check(len(zero) == 1 and abs(zero[0]["args"]["fill"] - 0.25) < 1e-6,
          "edges: the kernel with 0 dimensions fills 0.25 (%s)" % [e["args"]["fill"] for e in zero])
    fills = [e for e in ev if e["ph"] == "C" and e["name"] == "SM fill" and zero and
             e["ts"] == zero[0]["ts"]]
    check(len(fills) == 1 and abs(fills[0]["args"]["fill"] - 0.25) < 1e-6,
          "edges: the SM fill counter rises to 0.25 when it starts")


def read_once(a, tmp):
    # --perfetto renders the analysis's event view: each trace is opened once, for the report
    # and the export together.
    traces = []
    for i in range(2):
        traces.append(os.path.join(tmp, "once%d.trace.zst" % i))
        subprocess.run([a.make_trace, traces[-1], "2000", "2"], check=True)
    log = os.path.join(tmp, "strace.txt")
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, a.report,
                        "--json", "--perfetto", os.path.join(tmp, "once.json")] + traces,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "read-once: the report ran under strace (%s)" % r.stderr[-200:])
    opened = open(log).read()
    for t in traces:
        check(opened.count(t) == 1, "read-once: %s opened once (%d)" % (os.path.basename(t),
                                                                       opened.count(t)))


def workload(a, tmp):
    out = os.path.join(tmp, "wl") + "/"
    r = subprocess.run([a.launcher, "run", "--sim", "--no-report", "-o", out, "--", a.workload],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "workload ran under capture on gpusim (%s)" % r.stderr[-300:])
    traces = sorted(os.path.join(out, f) for f in os.listdir(out))
    if not traces:
        check(False, "workload left a trace")
        return
    counts, device_memory = dump_counts(a.report, traces[0])
    ev = export(a.report, traces[:1], os.path.join(tmp, "workload.json"))
    common_checks(ev, counts, device_memory, os.path.basename(a.workload))


def several(a, tmp):
    # Two processes (forker: a CUDA child and the parent): one host process and one GPU
    # process per trace, and the counts are the sums of the two traces'.
    out = os.path.join(tmp, "fork") + "/"
    r = subprocess.run([a.launcher, "run", "--sim", "--no-report", "-o", out, "--", a.forker],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    traces = sorted(os.path.join(out, f) for f in os.listdir(out)) if os.path.isdir(out) else []
    check(r.returncode == 0 and len(traces) == 2, "forker left two traces (%s)" % traces)
    if len(traces) != 2:
        return
    total, device_memory = collections.Counter(), 0
    for t in traces:
        c, m = dump_counts(a.report, t)
        total += c
        device_memory += m
    ev = export(a.report, traces, os.path.join(tmp, "fork.json"))
    common_checks(ev, total, device_memory, "two traces")
    procs = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
    check(sum(1 for p in procs if p.startswith("pid ")) == 2 and sum(1 for p in procs if p.startswith("GPU ")) == 2,
          "two traces: a host and a GPU process each (%s)" % procs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--make-trace", required=True)
    ap.add_argument("--launcher")
    ap.add_argument("--workload")
    ap.add_argument("--forker")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuwhy-perfetto-") as tmp:
        synthetic(a, tmp)
        untimed(a, tmp)
        edges(a, tmp)
        if shutil.which("strace"):
            read_once(a, tmp)
        else:
            check(False, "strace is installed (scripts/deps.sh) for the read-once check")
        if a.workload and a.launcher:
            workload(a, tmp)
        if a.forker and a.launcher:
            several(a, tmp)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


sys.exit(main())
