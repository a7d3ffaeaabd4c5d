#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gpuwhy-report --html in headless Chromium: a screenshot (kept in the build dir), the SVG charts
# rendered with a non-zero size, zoom works, no console error, no network, the right numbers.
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

failures = []

# Runs before the page's own script: collects every error and console.error.
PROBE_HEAD = """<script>
window.__gwErrors = [];
window.addEventListener("error", function (e) { window.__gwErrors.push("error: " + e.message); });
window.addEventListener("unhandledrejection", function (e) { window.__gwErrors.push("rejection: " + e.reason); });
(function () { var ce = console.error; console.error = function () {
  window.__gwErrors.push("console.error: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
</script>"""

# Runs after the page's script: measures the charts, zooms with the wheel, resets, reports.
PROBE_TAIL = """<script>
(function () {
  var r = {};
  function box(sel) {
    var e = document.querySelector(sel);
    if (!e) return null;
    var b = e.getBoundingClientRect();
    return { w: b.width, h: b.height, shapes: e.querySelectorAll("path,rect,line").length };
  }
  r.rendered = document.body.dataset.rendered || null;
  r.renderMs = parseFloat(document.body.dataset.renderMs || "-1");
  r.timeline = box("#timeline");
  r.breakdown = box("#breakdown svg");
  r.timelinePaths = document.querySelectorAll("#timeline path").length;
  r.breakdownRects = document.querySelectorAll("#breakdown rect").length;
  r.simBannerVisible = !document.getElementById("sim-banner").hidden;
  r.verdict = (document.querySelector("#verdict .headline") || {}).textContent || "";
  r.causeCards = document.querySelectorAll("#causes .cause").length;
  r.tables = document.querySelectorAll("table").length;
  var svg = document.getElementById("timeline"), b = svg.getBoundingClientRect();
  svg.dispatchEvent(new PointerEvent("pointermove", { clientX: b.left + b.width / 2,
    clientY: b.top + 150, bubbles: true }));
  var tip = document.getElementById("tooltip");
  r.tooltip = tip.hidden ? "" : tip.textContent;
  r.zoomBefore = document.getElementById("zoom-label").textContent;
  svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -600, clientX: b.left + b.width / 2,
    clientY: b.top + 40, bubbles: true, cancelable: true }));
  r.zoomAfterWheel = document.getElementById("zoom-label").textContent;
  var x = b.left + b.width / 2;
  svg.dispatchEvent(new PointerEvent("pointerdown", { pointerId: 1, clientX: x, clientY: b.top + 40, bubbles: true }));
  svg.dispatchEvent(new PointerEvent("pointermove", { pointerId: 1, clientX: x - 200, clientY: b.top + 40, bubbles: true }));
  svg.dispatchEvent(new PointerEvent("pointerup", { pointerId: 1, clientX: x - 200, clientY: b.top + 40, bubbles: true }));
  r.zoomAfterDrag = document.getElementById("zoom-label").textContent;
  document.getElementById("zoom-reset").click();
  r.zoomAfterReset = document.getElementById("zoom-label").textContent;
  r.errors = window.__gwErrors;
  var pre = document.createElement("pre");
  pre.id = "gw-test-result";
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();
</script>"""


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, profile, args, timeout=120):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
           "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
           "--window-size=1400,2200", "--virtual-time-budget=5000"] + args
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def page_data(page):
    m = re.search(r'<script id="gw-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m.group(1)) if m else None


def open_in_chromium(binary, path, shot, tmp, label):
    """Screenshot, then the probed copy's DOM. Returns the probe's result."""
    profile = tempfile.mkdtemp(dir=tmp)
    r = chromium(binary, profile, ["--screenshot=" + shot, "file://" + path])
    ok = os.path.exists(shot) and os.path.getsize(shot) > 10000
    with open(shot, "rb") as f:
        png = f.read(8) == b"\x89PNG\r\n\x1a\n"
    check(ok and png, "%s: screenshot written (%s)" % (label, shot))
    check("Uncaught" not in r.stderr, "%s: no uncaught error in Chromium's console log" % label)

    with open(path, encoding="utf-8") as f:
        page = f.read()
    probed = page.replace("<head>", "<head>" + PROBE_HEAD, 1)
    probed = probed.replace("</body>", PROBE_TAIL + "</body>", 1)
    probed_path = os.path.join(tmp, "probed-" + os.path.basename(path))
    with open(probed_path, "w", encoding="utf-8") as f:
        f.write(probed)
    r = chromium(binary, profile, ["--dump-dom", "file://" + probed_path])
    m = re.search(r'<pre id="gw-test-result">(.*?)</pre>', r.stdout, re.S)
    check(m is not None, "%s: the probe ran in Chromium" % label)
    if not m:
        print(r.stderr[-2000:])
        return None
    res = json.loads(html.unescape(m.group(1)))
    print("     %s: render %.1f ms in headless Chromium" % (label, res["renderMs"]))
    check(res["errors"] == [], "%s: no console error (%s)" % (label, res["errors"]))
    check(res["rendered"] == "1", "%s: the page's script finished" % label)
    for name in ("timeline", "breakdown"):
        b = res[name]
        check(b is not None and b["w"] > 100 and b["h"] > 20 and b["shapes"] > 0,
              "%s: the %s SVG exists with a non-zero size (%s)" % (label, name, b))
    check(res["timelinePaths"] >= 4, "%s: the timeline draws memory and compute curves (%d paths)" % (label, res["timelinePaths"]))
    check("live memory" in res["tooltip"] and "SM fill" in res["tooltip"],
          "%s: hovering the timeline shows the bin's values (%r)" % (label, res["tooltip"][:80]))
    check(res["zoomBefore"].startswith("whole run"), "%s: the timeline starts unzoomed" % label)
    check(res["zoomAfterWheel"].startswith("showing"), "%s: the wheel zooms in (%r)" % (label, res["zoomAfterWheel"]))
    check(res["zoomAfterDrag"].startswith("showing") and res["zoomAfterDrag"] != res["zoomAfterWheel"],
          "%s: dragging pans the zoomed view (%r)" % (label, res["zoomAfterDrag"]))
    check(res["zoomAfterReset"].startswith("whole run"), "%s: reset shows the whole run" % label)
    check(res["tables"] >= 4, "%s: the site tables are there (%d)" % (label, res["tables"]))
    check(len(res["verdict"]) > 20, "%s: a verdict at the top (%r)" % (label, res["verdict"]))
    return res


def static_checks(path, label):
    size = os.path.getsize(path)
    with open(path, encoding="utf-8") as f:
        page = f.read()
    check(size < 5 * 1024 * 1024, "%s: page under 5 MB (%d bytes)" % (label, size))
    # Self-contained: nothing is fetched. The SVG namespace URI is a name, not a request.
    external = re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', page) + \
        re.findall(r'url\(\s*["\']?(?:https?:)?//', page) + re.findall(r'<link\b', page) + \
        re.findall(r'@import', page) + re.findall(r'\bfetch\(|XMLHttpRequest', page)
    check(not external, "%s: no external resource (%s)" % (label, external[:3]))
    data = page_data(page)
    check(data is not None, "%s: the embedded data parses as JSON" % label)
    return data, size


def synthetic(a, binary, tmp):
    n, streams = 20000, 2
    trace = os.path.join(tmp, "synthetic.trace.zst")
    subprocess.run([a.make_trace, trace, str(n), str(streams)], check=True)
    page = os.path.join(tmp, "synthetic.html")
    r = subprocess.run([a.report, "--html", page, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "synthetic: gpuwhy-report --html exits 0 (%s)" % r.stderr[-300:])
    data, _ = static_checks(page, "synthetic")
    if data:
        # From make-trace.c's shape (see its header comment).
        allocs = n // 1000
        rep, pg = data["report"], data["page"]
        c = rep["counts"]
        check(c["kernels"] == n and c["launches"] == n, "synthetic: %d kernels and launches in the page" % n)
        check(c["memcpy"] == n // 100 and c["memset"] == allocs, "synthetic: copies and memsets in the page")
        live, peak = 0, 0
        for k in range(allocs):
            live += (k % 8 + 1) << 20
            peak = max(peak, live)
            if k % 2 == 0:
                live -= (k % 8 + 1) << 20
        check(rep["memory"]["peak_bytes"] == peak, "synthetic: peak memory %d == %d" % (rep["memory"]["peak_bytes"], peak))
        check(rep["memory"]["final_bytes"] == live, "synthetic: final memory %d == %d" % (rep["memory"]["final_bytes"], live))
        # n periods of 10 us: the last kernel (odd, 5 us) ends 9 us into the last period and
        # the last copy (i % 100 == 99) at 9.8 us; the window runs from the first kernel's
        # start (4 us into the first period) to 9.8 us into the last.
        dur = rep["window"]["duration_ns"]
        check(dur == (n - 1) * 10000 + 9800 - 4000, "synthetic: window %d ns" % dur)
        total = sum(rep["breakdown"].values())
        check(abs(total - 1) < 1e-6, "synthetic: the breakdown sums to 1 (%r)" % total)
        check(not pg["simulated"], "synthetic: not marked as simulated")
        # One serialization of the model: the page carries what --json writes, and the names
        # of every breakdown key.
        r = subprocess.run([a.report, "--json", trace], stdout=subprocess.PIPE, text=True)
        check(json.loads(r.stdout) == rep, "synthetic: the page's report is --json's, key for key")
        check([b["key"] for b in pg["buckets"]] == list(rep["breakdown"]),
              "synthetic: the page names every breakdown key, in its order")
    shot = os.path.join(a.outdir, "report-synthetic.png")
    res = open_in_chromium(binary, page, shot, tmp, "synthetic")
    if res and data:
        nonzero = sum(1 for v in data["report"]["breakdown"].values() if v > 0)
        check(res["breakdownRects"] == nonzero, "synthetic: one bar segment per non-empty bucket (%d)" % nonzero)
        check(not res["simBannerVisible"], "synthetic: no simulated-GPU banner")
    shutil.copy(page, os.path.join(a.outdir, "report-synthetic.html"))


def large(a, binary, tmp):
    # 5 million iterations: 10.1 million records (launch + kernel each, plus copies, memsets,
    # allocations). The numbers come from every event; the drawing is downsampled.
    n = 5000000
    trace = os.path.join(tmp, "large.trace.zst")
    subprocess.run([a.make_trace, trace, str(n), "4"], check=True)
    page = os.path.join(tmp, "large.html")
    t = time.time()
    r = subprocess.run([a.report, "--html", page, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    print("     large: gpuwhy-report --html took %.1f s" % (time.time() - t))
    check(r.returncode == 0, "large: gpuwhy-report --html exits 0 (%s)" % r.stderr[-300:])
    data, size = static_checks(page, "large")
    print("     large: page is %d bytes" % size)
    if data:
        check(data["report"]["counts"]["kernels"] == n, "large: all %d kernels counted" % n)
        check(data["page"]["timeline"]["n"] <= 4000,
              "large: the drawing is downsampled (%d bins)" % data["page"]["timeline"]["n"])
    open_in_chromium(binary, page, os.path.join(a.outdir, "report-large.png"), tmp, "large")


def workload(a, binary, tmp):
    out = os.path.join(tmp, "wl") + "/"
    page = os.path.join(tmp, "workload.html")
    r = subprocess.run([a.launcher, "run", "--sim", "--html", page, "-o", out, "--", a.workload],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "workload: gpuwhy run --sim --html exits 0 (%s)" % r.stderr[-300:])
    if not os.path.exists(page):
        check(False, "workload: the page was written")
        return
    data, _ = static_checks(page, "workload")
    check(data is not None and data["page"]["simulated"], "workload: a gpusim trace is marked simulated")
    res = open_in_chromium(binary, page, os.path.join(a.outdir, "report-gpusim.png"), tmp, "workload")
    if res:
        check(res["simBannerVisible"], "workload: the simulated-GPU banner is visible")
    shutil.copy(page, os.path.join(a.outdir, "report-gpusim.html"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--make-trace", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--launcher")
    ap.add_argument("--workload")
    ap.add_argument("--large", action="store_true")
    a = ap.parse_args()
    binary = chromium_binary()
    if not binary:
        print("chromium not installed (scripts/deps.sh installs it): skipped")
        return 77
    os.makedirs(a.outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuwhy-html-") as tmp:
        if a.large:
            large(a, binary, tmp)
        else:
            synthetic(a, binary, tmp)
            if a.workload and a.launcher:
                workload(a, binary, tmp)
    print("screenshots in " + a.outdir)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


sys.exit(main())
