#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuwhy import: a trace of any format the report reads, written as a gpuwhy trace. Reporting
the import gives the report of the input, number for number; bad input and outputs are refused
in one line and leave nothing behind."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def report(a, *args):
    r = run(a.report, "--json", *args)
    return json.loads(r.stdout) if r.returncode == 0 else None


def without_paths(doc):
    """The report less the input's own file name (in the trace rows, warnings, and the
    recommendations' `gpuwhy diff TRACE NEXT`)."""
    for t in doc["traces"]:
        path = t.pop("path")
        doc["warnings"] = [w.replace(path, "TRACE") for w in doc["warnings"]]
        for r in doc["recommendations"]:
            r["text"] = r["text"].replace(path, "TRACE")
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--make-trace", required=True)
    ap.add_argument("--third-party-reader")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuwhy-import-") as tmp:
        src = os.path.join(tmp, "in.trace.zst")
        subprocess.run([a.make_trace, src, "3000", "2", "4", "1"], check=True)
        out = os.path.join(tmp, "out.trace.zst")
        r = run(a.launcher, "import", src, "-o", out)
        check(r.returncode == 0 and os.path.exists(out), "import exits 0 and writes OUT (%s)" % r.stderr.strip())
        want, got = report(a, src), report(a, out)
        check(got is not None and without_paths(got) == without_paths(want),
              "reporting the import gives the input's report, key for key")
        check(oct(os.stat(out).st_mode & 0o777) == "0o600", "the trace is private (0600), as a capture's")
        if a.third_party_reader:
            # The installed headers suffice to read a trace: a reader built from them and
            # libzstd alone counts the records --dump prints.
            for path in (src, out):
                dump = run(a.report, "--dump", path).stdout.splitlines()
                want = {}
                for line in dump[:-1]:  # the last line is the reader's END verdict
                    want[line.split(" ", 1)[0]] = want.get(line.split(" ", 1)[0], 0) + 1
                r = run(a.third_party_reader, path)
                got = dict(l.split() for l in r.stdout.splitlines() if not l.startswith("frames"))
                check(r.returncode == 0 and {k: int(v) for k, v in got.items()} == want,
                      "a reader from the installed headers alone reads %s: %s" %
                      (os.path.basename(path), got))

        r = run(a.launcher, "import", src, "-o", out)
        check(r.returncode == 2 and "never overwritten" in r.stderr and r.stderr.count("\n") == 1,
              "an existing OUT is refused in one line, exit 2 (%s)" % r.stderr.strip())
        missing = os.path.join(tmp, "missing.json")
        r = run(a.launcher, "import", missing, "-o", os.path.join(tmp, "m.trace.zst"))
        check(r.returncode == 1 and not os.path.exists(os.path.join(tmp, "m.trace.zst")),
              "a missing input: exit 1, no output (%s)" % r.stderr.strip())
        junk = os.path.join(tmp, "junk.bin")
        with open(junk, "wb") as f:
            f.write(bytes(range(256)) * 64)
        r = run(a.launcher, "import", junk, "-o", os.path.join(tmp, "j.trace.zst"))
        check(r.returncode == 1 and "not a trace" in r.stderr and
              not os.path.exists(os.path.join(tmp, "j.trace.zst")),
              "bytes of no format: exit 1, no output (%s)" % r.stderr.strip())
        r = run(a.launcher, "import", "--format", "bogus", src, "-o", os.path.join(tmp, "b.zst"))
        check(r.returncode == 2, "an unknown --format is a usage error")
        r = run(a.launcher, "import", src)
        check(r.returncode == 2, "no -o is a usage error")

        # A cut input is imported up to where it ends, and both read as truncated alike.
        data = open(src, "rb").read()
        cut = os.path.join(tmp, "cut.trace.zst")
        with open(cut, "wb") as f:
            f.write(data[:len(data) * 2 // 3])
        cut_out = os.path.join(tmp, "cut-out.trace.zst")
        r = run(a.launcher, "import", cut, "-o", cut_out)
        want, got = report(a, cut), report(a, cut_out)
        check(r.returncode == 0 and got is not None and got["trace"]["truncated"] and
              without_paths(got) == without_paths(want),
              "a cut input: imported as far as it goes, truncated, the same report")
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


sys.exit(main())
