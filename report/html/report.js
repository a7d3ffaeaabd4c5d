// SPDX-License-Identifier: MIT
// The gpuwhy HTML report's renderer: reads the embedded JSON model and draws the page (plain DOM and SVG).
"use strict";
(function () {
	const SVGNS = "http://www.w3.org/2000/svg";
	// The buckets' colours and their stacking order: colors.js, shared with the diff page.
	const COLORS = GW_COLORS;
	const STACK_ORDER = GW_STACK_ORDER;
	const MEM_COLOR = "#3b6fb6";
	const FILL_COLOR = "#14181f";
	const ACTIVE_COLOR = "#8a94a0";

	const el = (tag, attrs, ...kids) => {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null || v === false) continue;
			if (k === "text") e.textContent = v;
			else if (k === "style") e.style.cssText = v;
			else e.setAttribute(k, v === true ? "" : String(v));
		}
		for (const k of kids) if (k !== null && k !== undefined) e.append(k);
		return e;
	};
	const sv = (tag, attrs, parent) => {
		const e = document.createElementNS(SVGNS, tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (k === "text") e.textContent = v;
			else e.setAttribute(k, String(v));
		}
		if (parent) parent.appendChild(e);
		return e;
	};
	const num = (v, d) => (typeof v === "number" && isFinite(v) ? v : d === undefined ? 0 : d);
	const pct = (f, digits) => {
		if (typeof f !== "number" || !isFinite(f)) return "n/a";
		const p = f * 100;
		if (digits !== undefined) return p.toFixed(digits) + "%";
		if (p > 0 && p < 0.1) return "<0.1%";
		return (p >= 10 ? p.toFixed(0) : p.toFixed(1)) + "%";
	};
	const fmtBytes = (b) => {
		b = num(b);
		const u = ["B", "KiB", "MiB", "GiB", "TiB"];
		let i = 0;
		while (Math.abs(b) >= 1024 && i < u.length - 1) {
			b /= 1024;
			i++;
		}
		return (i === 0 ? b.toFixed(0) : b >= 100 ? b.toFixed(0) : b.toFixed(1)) + " " + u[i];
	};
	const fmtTime = (ns) => {
		ns = num(ns);
		const a = Math.abs(ns);
		if (a >= 60e9) return (ns / 60e9).toFixed(1) + " min";
		if (a >= 1e9) return (ns / 1e9).toFixed(a >= 10e9 ? 1 : 2) + " s";
		if (a >= 1e6) return (ns / 1e6).toFixed(a >= 10e6 ? 1 : 2) + " ms";
		if (a >= 1e3) return (ns / 1e3).toFixed(a >= 10e3 ? 1 : 2) + " µs";
		return ns.toFixed(0) + " ns";
	};
	const fmtCount = (n) => num(n).toLocaleString("en-US");

	// The page's data: the report as --json writes it (schema gpuwhy-report/1) and what only the
	// drawing needs (the timeline, the gaps, and the names of buckets and kinds).
	let D, P;
	try {
		const data = JSON.parse(document.getElementById("gw-data").textContent);
		D = data.report || {};
		P = data.page || {};
	} catch (e) {
		document.querySelector("main").prepend(
			el("p", { class: "banner warn", text: "gpuwhy: this page's data could not be read: " + e.message })
		);
		return;
	}
	const breakdownOf = D.breakdown || {};
	const buckets = (P.buckets || []).map((b) => Object.assign({}, b, { fraction: num(breakdownOf[b.key]) }));
	const durationNs = num((D.window || {}).duration_ns);
	const U = D.utilization || {};
	const bucketIndex = {};
	buckets.forEach((b, i) => (bucketIndex[b.key] = i));
	const bucketByKey = (k) => buckets[bucketIndex[k]];
	const colorOf = (k) => COLORS[k] || "#999";
	const labelOf = (k) => (bucketByKey(k) || { label: k }).label;
	const fractionOf = (k) => num((bucketByKey(k) || {}).fraction);

	function renderHeader() {
		const t0 = (D.traces || [])[0] || {};
		const cmd = t0.command || "";
		const parts = [];
		if (cmd) parts.push(cmd);
		if ((D.traces || []).length > 1) parts.push(D.traces.length + " processes");
		else if (t0.pid) parts.push("pid " + t0.pid);
		parts.push(fmtTime(durationNs) + " of GPU activity");
		document.getElementById("meta").textContent = parts.join(" · ");
		document.title = "gpuwhy · " + (cmd ? cmd.split(" ")[0].split("/").pop() : "report");
		if (P.simulated) document.getElementById("sim-banner").hidden = false;
		const w = D.warnings || [];
		if (w.length) {
			const box = document.getElementById("warnings");
			box.hidden = false;
			box.append(el("strong", { text: "Read with care:" }), el("ul", {}, ...w.map((x) => el("li", { text: x }))));
		}
	}

	function renderVerdict() {
		const box = document.getElementById("verdict");
		const compute = fractionOf("compute");
		const top = D.top_idle_cause;
		const topF = fractionOf(top);
		const q = D.quadrant || {};
		const mem = D.memory || {};
		let memText = mem.recorded === false
			? "memory was not recorded (the profile has no memory events)"
			: mem.total_bytes
			? "memory peaked at " + fmtBytes(mem.peak_bytes) + " of " + fmtBytes(mem.total_bytes) + " (" + pct(mem.peak_fraction) + ")"
			: "memory peaked at " + fmtBytes(mem.peak_bytes) + " (device capacity unknown)";
		if (num(mem.allocator_reserved_peak_bytes) > 0 && num(mem.allocator_allocated_peak_bytes) > 0)
			memText += "; the caching allocator held " + fmtBytes(mem.allocator_reserved_peak_bytes) + " at most, tensors used " +
				fmtBytes(mem.allocator_allocated_peak_bytes) + " (" + pct(num(mem.allocator_allocated_peak_bytes) / num(mem.allocator_reserved_peak_bytes)) + ")";
		let headline;
		if (!durationNs)
			headline = "No GPU operation was recorded: nothing to attribute.";
		else if (q.memory === "high" && q.compute === "high")
			headline = "Healthy: memory is well used and the SMs did useful work " + pct(compute) + " of the time.";
		else if (q.memory === "high")
			headline = "Memory is full but compute is idle: useful work on only " + pct(compute) + " of SM-time.";
		else if (q.compute === "low" && q.memory === "unknown")
			headline = "Compute is low: useful work on only " + pct(compute) + " of SM-time.";
		else if (q.compute === "low")
			headline = "The GPU is waiting for work: useful work on only " + pct(compute) + " of SM-time.";
		else headline = "Compute-dense: useful work on " + pct(compute) + " of SM-time, with memory to spare.";
		box.style.setProperty("--verdict-color", q.compute === "high" ? COLORS.compute : COLORS.host_sync);
		const detail = [];
		if (top && topF > 0)
			detail.push("The largest loss is " + labelOf(top) + ": " + pct(topF) + " of SM-time.");
		detail.push(memText.charAt(0).toUpperCase() + memText.slice(1) + ".");
		const quadRec = (D.recommendations || []).find((r) => r.bucket === "quadrant");
		box.append(
			el("p", { class: "headline", text: headline }),
			el("p", { class: "detail", text: detail.join(" ") }),
			quadRec ? el("p", { class: "detail", text: quadRec.text, style: "margin-top:0.4rem" }) : null,
			el(
				"div",
				{ class: "quadrant" },
				el("span", { class: "badge " + (q.memory === "high" ? "high" : "low"), text: "memory " + (q.memory || "?") }),
				el("span", { class: "badge " + (q.compute === "high" ? "good" : "low"), text: "compute " + (q.compute || "?") }),
				D.dominant_cause ? el("span", { class: "badge", text: "dominant: " + labelOf(D.dominant_cause) }) : null
			)
		);
	}

	function renderFigures() {
		const u = U;
		const m = D.memory || {};
		const c = D.counts || {};
		const figs = [
			["Compute share", pct(u.compute), "the compute bucket of SM-time"],
			["SM busy", pct(u.sm_busy), "mean SM fill, estimated from launch configs"],
			["Kernel active", pct(u.kernel_active), "time any kernel ran (nvidia-smi's GPU-Util)"],
			[
				"Memory bandwidth",
				u.memory_bandwidth === null || u.memory_bandwidth === undefined || u.memory_bandwidth < 0 ? "not measured" : pct(u.memory_bandwidth),
				u.memory_bandwidth === null || u.memory_bandwidth === undefined || u.memory_bandwidth < 0
					? (u.counters && u.counters.reason) || "needs hardware counters"
					: "measured: NVML GPM DRAM_BW_UTIL, mean",
			],
			[
				"Peak memory",
				fmtBytes(m.peak_bytes),
				(m.total_bytes ? pct(m.peak_fraction) + " of " + fmtBytes(m.total_bytes) : "capacity unknown") +
					", " + fmtBytes(m.final_bytes) + " live at the end" +
					(num(m.growth_bytes_per_s) > 0 && num(m.final_bytes) > 0 ? ", growing " + fmtBytes(m.growth_bytes_per_s) + "/s" : ""),
			],
			["Kernels", fmtCount(c.kernels), fmtCount(c.tiny_kernels) + " tiny, " + fmtCount(c.launches) + " launches"],
			["Host syncs", fmtCount(c.host_syncs), fmtCount(c.memcpy) + " copies, " + fmtCount(c.memset) + " memsets"],
			["GPU window", fmtTime(durationNs), (D.devices || []).length + " device(s)"],
		];
		const box = document.getElementById("figures");
		for (const [label, value, source] of figs)
			box.append(
				el(
					"div",
					{ class: "figure" + (value === "not measured" ? " na" : "") },
					el("div", { class: "value", text: value }),
					el("div", { class: "label", text: label }),
					el("div", { class: "source", text: source })
				)
			);
	}

	function renderBreakdown() {
		const box = document.getElementById("breakdown");
		const svg = sv("svg", { viewBox: "0 0 1000 46", preserveAspectRatio: "none", role: "img", "aria-label": "SM-time breakdown" });
		box.append(svg);
		let x = 0;
		for (const b of buckets) {
			const w = num(b.fraction) * 1000;
			if (w <= 0) continue;
			const r = sv("rect", { x: x, y: 0, width: Math.max(w, 0.5), height: 46, fill: colorOf(b.key) }, svg);
			sv("title", { text: b.label + ": " + pct(b.fraction) }, r);
			x += w;
		}
		const legend = document.getElementById("breakdown-legend");
		for (const b of buckets)
			legend.append(
				el(
					"li",
					{ title: b.remedy || "" },
					el("span", { class: "swatch", style: "background:" + colorOf(b.key) }),
					el("span", { text: b.label }),
					el("strong", { class: "num", text: pct(b.fraction) })
				)
			);
	}

	// ---------- the timeline ----------
	const T = P.timeline || { n: 0 };
	const nb = num(T.n);
	const binNs = num(T.bin_ns, 1) || 1;
	const total = Math.max(durationNs, nb * binNs, 1);
	const gapList = (P.gaps && P.gaps.list) || [];
	const nGaps = Math.floor(gapList.length / 4);
	const view = { v0: 0, v1: total };
	const L = { left: 128, right: 18, top: 10 };
	const lanes = [
		{ id: "memory", title: "Memory", h: 112 },
		{ id: "compute", title: "Compute", h: 132 },
		{ id: "bandwidth", title: "Bandwidth", h: U.counters && U.counters.measured ? 76 : 58 },
		{ id: "causes", title: "Idle cause", h: 20 },
	];
	// Steps (ranges named like steps), on the run's time axis: a lane of their own.
	const STEPS = D.steps || [];
	const SS = D.step_summary || {};
	const windowStart = num((D.window || {}).start_ns);
	const slowSet = new Set((SS.slowest || []).map((w) => w.index));
	if (STEPS.length) lanes.push({ id: "steps", title: "Steps", h: 22 });
	const laneGap = 14;
	const livePeak = Math.max(...(T.live || [0]).map((v) => num(v)), 1);
	// The memory lane is scaled to the device's capacity (the honest picture) or, on request, to
	// the run's peak so that a small footprint still shows its shape.
	const capBytes = num((D.memory || {}).total_bytes);
	let memFit = capBytes > 0 && livePeak < 0.05 * capBytes; // a small footprint: show its shape first
	const memMaxOf = () => (memFit ? livePeak : Math.max(num((D.memory || {}).total_bytes), livePeak));
	const bwMeasured = !(U.memory_bandwidth === null || U.memory_bandwidth === undefined || U.memory_bandwidth < 0);
	// Measured counters (NVML): each series [[t_ns, value], ...], a value holding until the next
	// point; GPM's DRAM bandwidth, else the utilization samples' memory-busy time.
	const CN = U.counters || {};
	const SER = CN.series || {};
	const dramSeries = SER.dram_bw_util || null;
	const memBusySeries = !dramSeries ? SER.memory_busy || null : null;
	const smSeries = SER.sm_util || SER.gpu_busy || null;
	const seriesAt = (s, t) => {
		// the value of the window holding time t (relative to the window start), or null
		if (!s) return null;
		let lo = 0, hi = s.length - 1;
		const ta = t + windowStart;
		if (hi < 1 || ta < num(s[0][0]) || ta >= num(s[hi][0])) return null;
		while (hi - lo > 1) {
			const mid = (lo + hi) >> 1;
			if (num(s[mid][0]) <= ta) lo = mid;
			else hi = mid;
		}
		return num(s[lo][1]);
	};

	function layout(width) {
		let y = L.top;
		for (const l of lanes) {
			l.y = y;
			y += l.h + laneGap;
		}
		return { width: width, plotW: Math.max(width - L.left - L.right, 50), height: y + 12 };
	}

	function drawTimeline() {
		const svg = document.getElementById("timeline");
		const width = svg.clientWidth || 1000;
		const G = layout(width);
		svg.setAttribute("viewBox", "0 0 " + width + " " + G.height);
		svg.style.height = G.height + "px";
		while (svg.firstChild) svg.removeChild(svg.firstChild);
		const span = view.v1 - view.v0;
		const X = (t) => L.left + ((t - view.v0) / span) * G.plotW;
		const defs = sv("defs", {}, svg);
		const clip = sv("clipPath", { id: "plot-clip" }, defs);
		sv("rect", { x: L.left, y: 0, width: G.plotW, height: G.height }, clip);
		const hatch = sv("pattern", { id: "hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
		sv("rect", { width: 8, height: 8, fill: "#f4f5f7" }, hatch);
		sv("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#d5d9de", "stroke-width": 3 }, hatch);

		// Lane frames and titles.
		for (const l of lanes) {
			sv("text", { x: 8, y: l.y + 13, class: "lane-title", text: l.title }, svg);
			if (l.id !== "causes" && l.id !== "steps") sv("rect", { x: L.left, y: l.y, width: G.plotW, height: l.h, class: "lane-frame" }, svg);
		}
		const plot = sv("g", { "clip-path": "url(#plot-clip)" }, svg);

		// Idle gaps: translucent bands across the three metric lanes, solid in the cause strip.
		const bandTop = lanes[0].y, bandBot = lanes[2].y + lanes[2].h;
		const cl = lanes[3];
		const bands = sv("g", {}, plot);
		let prev = null;
		let drawn = 0;
		const flush = () => {
			if (!prev) return;
			const w = Math.max(prev.x1 - prev.x0, 0.6);
			const c = colorOf(buckets[prev.b] ? buckets[prev.b].key : "");
			sv("rect", { x: prev.x0, y: bandTop, width: w, height: bandBot - bandTop, fill: c, "fill-opacity": 0.16 * prev.a }, bands);
			sv("rect", { x: prev.x0, y: cl.y, width: w, height: cl.h, fill: c, "fill-opacity": Math.max(prev.a, 0.35) }, bands);
			drawn++;
		};
		for (let i = 0; i < nGaps; i++) {
			const s = gapList[4 * i], e = gapList[4 * i + 1];
			if (e < view.v0 || s > view.v1) continue;
			const x0 = Math.max(X(s), L.left - 1), x1 = Math.min(X(e), L.left + G.plotW + 1);
			const b = gapList[4 * i + 2], a = num(gapList[4 * i + 3], 100) / 100;
			// Gaps closer than a pixel merge into one band, so a dense run draws as a strip, not
			// as a million rectangles.
			if (prev && prev.b === b && x0 - prev.x1 < 1) {
				prev.x1 = Math.max(prev.x1, x1);
				prev.a = Math.max(prev.a, a);
				continue;
			}
			flush();
			prev = { x0: x0, x1: x1, b: b, a: a };
		}
		flush();
		sv("rect", { x: L.left, y: cl.y, width: G.plotW, height: cl.h, class: "lane-frame" }, svg);

		// Bins in view.
		const i0 = Math.max(0, Math.floor(view.v0 / binNs) - 1);
		const i1 = Math.min(nb, Math.ceil(view.v1 / binNs) + 1);
		const step = (vals, y0, h, vmax) => {
			let d = "";
			for (let i = i0; i < i1; i++) {
				const y = y0 + h - (Math.min(num(vals(i)), vmax) / vmax) * h;
				const xa = X(i * binNs), xb = X((i + 1) * binNs);
				d += (d ? "L" : "M") + xa.toFixed(1) + " " + y.toFixed(1) + "L" + xb.toFixed(1) + " " + y.toFixed(1);
			}
			return d;
		};
		const area = (vals, y0, h, vmax) => {
			const d = step(vals, y0, h, vmax);
			if (!d) return "";
			return d + "L" + X(i1 * binNs).toFixed(1) + " " + (y0 + h) + "L" + X(i0 * binNs).toFixed(1) + " " + (y0 + h) + "Z";
		};

		// Memory lane.
		const ml = lanes[0];
		const memMax = memMaxOf();
		if (nb) {
			sv("path", { d: area((i) => T.live[i], ml.y, ml.h, memMax), fill: MEM_COLOR, "fill-opacity": 0.28, stroke: "none" }, plot);
			sv("path", { d: step((i) => T.live[i], ml.y, ml.h, memMax), fill: "none", stroke: MEM_COLOR, "stroke-width": 1.6 }, plot);
		}
		const cap = num((D.memory || {}).total_bytes);
		if (cap && cap > memMax * 1.0001) {
			sv("text", { x: L.left + G.plotW - 4, y: ml.y + 12, "text-anchor": "end", class: "lane-note", text: "scaled to the run's peak; capacity " + fmtBytes(cap) + " is off this scale" }, svg);
		} else if (cap) {
			const yc = ml.y + ml.h - (cap / memMax) * ml.h;
			sv("line", { x1: L.left, x2: L.left + G.plotW, y1: yc, y2: yc, stroke: "#444", "stroke-dasharray": "5 4", "stroke-width": 1.2 }, svg);
			sv("text", { x: L.left + G.plotW - 4, y: yc + 12 > ml.y + ml.h ? yc - 4 : yc + 12, "text-anchor": "end", class: "lane-note", text: "capacity " + fmtBytes(cap) }, svg);
		}
		sv("text", { x: L.left - 6, y: ml.y + 10, "text-anchor": "end", class: "lane-label", text: fmtBytes(memMax) }, svg);
		sv("text", { x: L.left - 6, y: ml.y + ml.h, "text-anchor": "end", class: "lane-label", text: "0" }, svg);
		sv("text", { x: 8, y: ml.y + 28, class: "lane-label", text: "live bytes" }, svg);

		// Compute lane: each bin's SM-time stacked by bucket, compute at the bottom, then the
		// rest of the filled share, the unfilled share inside kernels, and the idle causes;
		// SM fill and kernel-active as lines over it.
		const cl2 = lanes[1];
		if (nb) {
			const base = new Float64Array(Math.max(i1 - i0, 0));
			const ys = (v) => cl2.y + cl2.h - Math.min(Math.max(v, 0), 1) * cl2.h;
			for (const key of STACK_ORDER) {
				const k = bucketIndex[key];
				const vals = T.sm && k !== undefined ? T.sm[k] : null;
				if (!vals) continue;
				let any = false;
				for (let i = i0; i < i1 && !any; i++) any = num(vals[i]) > 0;
				if (!any) continue;
				let top = "", bottom = "";
				for (let i = i0; i < i1; i++) {
					const v = num(vals[i]), b0 = base[i - i0];
					const xa = X(i * binNs).toFixed(1), xb = X((i + 1) * binNs).toFixed(1);
					top += (top ? "L" : "M") + xa + " " + ys(b0 + v).toFixed(1) + "L" + xb + " " + ys(b0 + v).toFixed(1);
					bottom = "L" + xb + " " + ys(b0).toFixed(1) + "L" + xa + " " + ys(b0).toFixed(1) + bottom;
					base[i - i0] = b0 + v;
				}
				sv("path", { d: top + bottom + "Z", fill: colorOf(key), "fill-opacity": key === "compute" ? 0.8 : 0.5, stroke: "none", "data-bucket": key }, plot);
			}
			sv("path", { d: step((i) => T.active[i], cl2.y, cl2.h, 1), fill: "none", stroke: ACTIVE_COLOR, "stroke-width": 1.2, "stroke-dasharray": "3 3" }, plot);
			sv("path", { d: step((i) => T.busy[i], cl2.y, cl2.h, 1), fill: "none", stroke: FILL_COLOR, "stroke-width": 1, "stroke-opacity": 0.7 }, plot);
		}
		for (const f of [0.25, 0.5, 0.75]) {
			const y = cl2.y + cl2.h - f * cl2.h;
			sv("line", { x1: L.left, x2: L.left + G.plotW, y1: y, y2: y, class: "grid", "stroke-opacity": 0.5 }, plot);
		}
		sv("text", { x: L.left - 6, y: cl2.y + 10, "text-anchor": "end", class: "lane-label", text: "100%" }, svg);
		sv("text", { x: L.left - 6, y: cl2.y + cl2.h, "text-anchor": "end", class: "lane-label", text: "0%" }, svg);
		sv("text", { x: 8, y: cl2.y + 28, class: "lane-label", text: "SM-time share" }, svg);

		// Bandwidth lane: the measured windows as steps (DRAM filled, SM activity as a line), or
		// hatched with the reason there are none.
		const bl = lanes[2];
		const seriesPath = (s, closed) => {
			let d = "", x0 = null, xl = null;
			const ys = (v) => bl.y + bl.h - Math.min(Math.max(num(v), 0), 1) * bl.h;
			for (let k = 0; k + 1 < s.length; k++) {
				const t0 = num(s[k][0]) - windowStart, t1 = num(s[k + 1][0]) - windowStart;
				if (t1 < view.v0 || t0 > view.v1) continue;
				const xa = X(t0).toFixed(1), xb = X(t1).toFixed(1), y = ys(s[k][1]).toFixed(1);
				d += (d ? "L" : "M") + xa + " " + y + "L" + xb + " " + y;
				if (x0 === null) x0 = xa;
				xl = xb;
			}
			if (!d || !closed) return d;
			return d + "L" + xl + " " + (bl.y + bl.h) + "L" + x0 + " " + (bl.y + bl.h) + "Z";
		};
		const lanePath = dramSeries || memBusySeries;
		if (lanePath) {
			sv("path", { d: seriesPath(lanePath, true), fill: COLORS.bandwidth_bound, "fill-opacity": 0.35, stroke: "none", "data-series": dramSeries ? "dram_bw_util" : "memory_busy" }, plot);
			sv("path", { d: seriesPath(lanePath, false), fill: "none", stroke: COLORS.bandwidth_bound, "stroke-width": 1.6 }, plot);
			if (smSeries)
				sv("path", { d: seriesPath(smSeries, false), fill: "none", stroke: FILL_COLOR, "stroke-width": 1, "stroke-dasharray": "4 3", "stroke-opacity": 0.7, "data-series": SER.sm_util ? "sm_util" : "gpu_busy" }, plot);
			const y60 = bl.y + bl.h - 0.6 * bl.h;
			sv("line", { x1: L.left, x2: L.left + G.plotW, y1: y60, y2: y60, class: "grid", "stroke-dasharray": "2 3" }, plot);
			const every = num(CN.period_ns) ? " every " + fmtTime(CN.period_ns) : "";
			sv("text", {
				x: L.left + 6, y: bl.y + 12, class: "lane-note",
				text: dramSeries
					? "measured (NVML GPM" + every + "): DRAM bandwidth, mean " + pct(U.memory_bandwidth) + " of peak; dashed: SMs busy; dotted: 60%"
					: "NVML utilization samples" + every + ": share of time memory was read or written (not bandwidth); dashed: kernel active",
			}, svg);
		} else {
			sv("rect", { x: L.left, y: bl.y, width: G.plotW, height: bl.h, fill: "url(#hatch)", "fill-opacity": 0.85 }, svg);
			sv("text", {
				x: L.left + G.plotW / 2, y: bl.y + bl.h / 2 + 4, "text-anchor": "middle", class: "lane-note",
				text: "not measured (" + (CN.reason || "no hardware counters in the trace") + "); bandwidth-bound time above is classified from kernel names",
			}, svg);
		}
		sv("text", { x: L.left - 6, y: bl.y + 10, "text-anchor": "end", class: "lane-label", text: "100%" }, svg);
		sv("text", { x: L.left - 6, y: bl.y + bl.h, "text-anchor": "end", class: "lane-label", text: "0%" }, svg);
		sv("text", { x: 8, y: bl.y + 28, class: "lane-label", text: memBusySeries ? "memory busy" : "DRAM % of peak" }, svg);

		// Steps: alternating shades, the slowest outlined, a name where it fits; a step's start
		// is a thin line across the lanes above.
		const stl = lanes.find((l) => l.id === "steps");
		if (stl) {
			const g = sv("g", { class: "steps" }, plot);
			let lastLine = -Infinity;
			for (let i = 0; i < STEPS.length; i++) {
				const p = STEPS[i];
				const s0 = num(p.start_ns) - windowStart, s1 = num(p.end_ns) - windowStart;
				if (s1 < view.v0 || s0 > view.v1) continue;
				const x0 = Math.max(X(s0), L.left - 1), x1 = Math.min(X(s1), L.left + G.plotW + 1);
				const r = sv("rect", {
					x: x0, y: stl.y, width: Math.max(x1 - x0, 0.6), height: stl.h,
					fill: i % 2 ? "#9aa5b1" : "#c9d1d9",
					stroke: slowSet.has(i) ? COLORS.host_sync : "none", "stroke-width": slowSet.has(i) ? 1.5 : 0,
					"data-step": i,
				}, g);
				sv("title", { text: p.name + ": " + fmtTime(p.duration_ns) + ", GPU " + fmtTime(p.device_ns) }, r);
				if (x1 - x0 > 7 * p.name.length) sv("text", { x: (x0 + x1) / 2, y: stl.y + 15, "text-anchor": "middle", class: "lane-note", text: p.name }, g);
				if (x0 - lastLine >= 3) {
					sv("line", { x1: x0, x2: x0, y1: lanes[0].y, y2: lanes[2].y + lanes[2].h, stroke: "#56606b", "stroke-opacity": 0.35, "stroke-width": 1 }, g);
					lastLine = x0;
				}
			}
		}

		// Time axis.
		const axisLane = stl || cl;
		const ay = axisLane.y + axisLane.h + 2;
		const ax = sv("g", { class: "axis" }, svg);
		const ticks = niceTicks(view.v0, view.v1, Math.max(2, Math.floor(G.plotW / 110)));
		for (const t of ticks) {
			const x = X(t);
			if (x < L.left - 0.5 || x > L.left + G.plotW + 0.5) continue;
			sv("line", { x1: x, x2: x, y1: lanes[0].y, y2: bl.y + bl.h, class: "grid", "stroke-opacity": 0.6 }, plot);
			sv("line", { x1: x, x2: x, y1: ay, y2: ay + 4, stroke: "#888" }, ax);
			const anchor = x > L.left + G.plotW - 30 ? "end" : x < L.left + 30 ? "start" : "middle";
			sv("text", { x: x, y: ay + 15, "text-anchor": anchor, text: fmtTime(t) }, ax);
		}
		svg.dataset.bands = String(drawn);
		document.getElementById("zoom-label").textContent =
			span < total * 0.999 ? "showing " + fmtTime(view.v0) + " – " + fmtTime(view.v1) + " of " + fmtTime(total) : "whole run, " + fmtTime(total);
		return G;
	}

	function niceTicks(a, b, n) {
		const span = b - a;
		if (!(span > 0)) return [a];
		const raw = span / n;
		const p = Math.pow(10, Math.floor(Math.log10(raw)));
		const m = raw / p;
		const step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
		const out = [];
		for (let t = Math.ceil(a / step) * step; t <= b + step * 1e-9 && out.length < 200; t += step) out.push(t);
		return out;
	}

	function renderTimelineLegend() {
		const lg = document.getElementById("timeline-legend");
		const item = (sw, text) => lg.append(el("li", {}, sw, el("span", { text: text })));
		item(el("span", { class: "swatch", style: "background:" + MEM_COLOR + ";opacity:0.55" }), "live device memory");
		item(el("span", { class: "swatch dash" }), "memory capacity");
		item(el("span", { class: "swatch", style: "background:linear-gradient(90deg," + COLORS.compute + " 0 50%," + COLORS.host_work + " 50%)" }), "SM-time by bucket (colours of the bar above)");
		item(el("span", { class: "swatch line", style: "background:" + FILL_COLOR }), "SM fill (estimated)");
		item(el("span", { class: "swatch line", style: "background:" + ACTIVE_COLOR }), "kernel active");
		if (dramSeries) item(el("span", { class: "swatch", style: "background:" + COLORS.bandwidth_bound + ";opacity:0.6" }), "DRAM bandwidth (measured)");
		if (memBusySeries) item(el("span", { class: "swatch", style: "background:" + COLORS.bandwidth_bound + ";opacity:0.6" }), "memory busy time (measured)");
		if (smSeries) item(el("span", { class: "swatch line", style: "background:" + FILL_COLOR + ";opacity:0.6" }), SER.sm_util ? "SMs busy (measured)" : "kernel active (measured)");
		if (STEPS.length) item(el("span", { class: "swatch", style: "background:#9aa5b1;outline:1.5px solid " + COLORS.host_sync }), "steps (the slowest outlined)");
		const seen = new Set();
		for (let i = 0; i < nGaps; i++) seen.add(gapList[4 * i + 2]);
		for (const b of buckets)
			if (seen.has(bucketIndex[b.key]))
				item(el("span", { class: "swatch", style: "background:" + colorOf(b.key) }), "idle: " + b.label);
	}

	function setupTimeline() {
		const svg = document.getElementById("timeline");
		const tip = document.getElementById("tooltip");
		let G = drawTimeline();
		const minSpan = Math.max(total / 1e6, Math.min(binNs / 4, total), 1);
		const clampView = () => {
			let s = Math.min(Math.max(view.v1 - view.v0, minSpan), total);
			if (view.v0 < 0) view.v0 = 0;
			if (view.v0 + s > total) view.v0 = total - s;
			view.v1 = view.v0 + s;
		};
		const timeAt = (clientX) => {
			const r = svg.getBoundingClientRect();
			const x = ((clientX - r.left) / r.width) * G.width;
			return view.v0 + ((x - L.left) / G.plotW) * (view.v1 - view.v0);
		};
		const zoom = (factor, center) => {
			view.v0 = center - (center - view.v0) * factor;
			view.v1 = center + (view.v1 - center) * factor;
			clampView();
			G = drawTimeline();
		};
		svg.addEventListener(
			"wheel",
			(ev) => {
				ev.preventDefault();
				const f = Math.pow(1.0015, ev.deltaY * (ev.deltaMode === 1 ? 30 : 1));
				zoom(f, timeAt(ev.clientX));
			},
			{ passive: false }
		);
		let drag = null;
		svg.addEventListener("pointerdown", (ev) => {
			drag = { x: ev.clientX, v0: view.v0, v1: view.v1 };
			try {
				svg.setPointerCapture(ev.pointerId);
			} catch (e) {
				// A pointer the browser does not track (synthetic events): drag without capture.
			}
			svg.classList.add("dragging");
		});
		svg.addEventListener("pointermove", (ev) => {
			if (drag) {
				const r = svg.getBoundingClientRect();
				const dt = ((ev.clientX - drag.x) / r.width) * (G.width / G.plotW) * (drag.v1 - drag.v0);
				view.v0 = drag.v0 - dt;
				view.v1 = drag.v1 - dt;
				clampView();
				G = drawTimeline();
				tip.hidden = true;
				return;
			}
			showTip(ev);
		});
		const endDrag = () => {
			drag = null;
			svg.classList.remove("dragging");
		};
		svg.addEventListener("pointerup", endDrag);
		svg.addEventListener("pointercancel", endDrag);
		svg.addEventListener("pointerleave", () => (tip.hidden = true));
		document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5, (view.v0 + view.v1) / 2));
		document.getElementById("zoom-out").addEventListener("click", () => zoom(2, (view.v0 + view.v1) / 2));
		const scaleBtn = document.getElementById("mem-scale");
		scaleBtn.addEventListener("click", () => {
			memFit = !memFit;
			scaleBtn.textContent = memFit ? "Memory: scale to capacity" : "Memory: scale to peak";
			G = drawTimeline();
		});
		scaleBtn.textContent = memFit ? "Memory: scale to capacity" : "Memory: scale to peak";
		if (!capBytes) scaleBtn.hidden = true;
		document.getElementById("zoom-reset").addEventListener("click", () => {
			view.v0 = 0;
			view.v1 = total;
			G = drawTimeline();
		});
		window.addEventListener("resize", () => (G = drawTimeline()));
		// Keyboard: arrows pan by a tenth of the view, + and - zoom, 0 resets.
		svg.setAttribute("tabindex", "0");
		svg.addEventListener("keydown", (ev) => {
			const span = view.v1 - view.v0;
			if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
				const d = (ev.key === "ArrowLeft" ? -0.1 : 0.1) * span;
				view.v0 += d;
				view.v1 += d;
				clampView();
				G = drawTimeline();
			} else if (ev.key === "+" || ev.key === "=") zoom(0.5, view.v0 + span / 2);
			else if (ev.key === "-") zoom(2, view.v0 + span / 2);
			else if (ev.key === "0") {
				view.v0 = 0;
				view.v1 = total;
				G = drawTimeline();
			} else return;
			ev.preventDefault();
		});

		function showTip(ev) {
			const t = timeAt(ev.clientX);
			const i = Math.floor(t / binNs);
			if (!nb || i < 0 || i >= nb || t < view.v0 || t > view.v1) {
				tip.hidden = true;
				return;
			}
			const shares = buckets
				.map((b, k) => ({ b: b, f: T.sm && T.sm[k] ? num(T.sm[k][i]) : 0 }))
				.filter((x) => x.f >= 0.005)
				.sort((x, y) => y.f - x.f)
				.slice(0, 4);
			tip.innerHTML = "";
			const line = (k, v) => tip.append(el("div", {}, el("span", { text: k + ": " }), el("strong", { text: v })));
			line("time", fmtTime(i * binNs) + " (a bin of " + fmtTime(binNs) + ")");
			line("live memory", fmtBytes(T.live[i]));
			line("SM fill", pct(num(T.busy[i])) + ", kernel active " + pct(num(T.active[i])));
			const dv = seriesAt(dramSeries || memBusySeries, t), sm = seriesAt(smSeries, t);
			if (dv !== null) line(dramSeries ? "DRAM (measured)" : "memory busy (measured)", pct(dv) + (sm !== null ? ", SMs busy " + pct(sm) : ""));
			for (const x of shares)
				tip.append(
					el(
						"div",
						{},
						el("span", { class: "swatch", style: "background:" + colorOf(x.b.key) + ";margin-right:0.35rem;vertical-align:-1px" }),
						el("span", { text: x.b.label + " " }),
						el("strong", { text: pct(x.f) })
					)
				);
			const wrap = document.getElementById("timeline-wrap").getBoundingClientRect();
			let x = ev.clientX - wrap.left + 14;
			if (x > wrap.width - 260) x = ev.clientX - wrap.left - 260;
			tip.style.left = x + "px";
			tip.style.top = ev.clientY - wrap.top + 12 + "px";
			tip.hidden = false;
		}
	}

	// ---------- causes and tables ----------
	// A row's call site: its text ("site") and the frames below it.
	const siteText = (r) => (r && r.site) || "(no stack)";
	// Python frames and native ones are told apart by a tag; a Python site shows the native frame
	// that issued the CUDA call under it ("via").
	const langTag = (lang) => el("span", { class: "lang lang-" + lang, text: lang === "python" ? "py" : "C" });
	const siteCell = (r) => {
		const td = el("td", { class: "site" });
		const text = siteText(r);
		const frames = (r && r.frames) || [];
		const stack = (r && r.stack) || [];
		const python = stack.some((f) => f.lang === "python");
		const item = (f, i) => el("li", {}, ...(python && stack[i] ? [langTag(stack[i].lang), " "] : []), f);
		if (frames.length > 1) {
			td.append(el("details", {}, el("summary", { text: text }), el("ol", {}, ...frames.map(item))));
		} else td.textContent = text;
		if (r && r.native_site) td.append(el("div", { class: "via", text: "via " + r.native_site }));
		return td;
	};

	function table(rows, cols, emptyText) {
		if (!rows || !rows.length) return el("p", { class: "empty", text: emptyText });
		const head = el("tr", {}, ...cols.map((c) => el("th", { class: c.num ? "num" : null, text: c.title })));
		const body = rows.map((r) =>
			el(
				"tr",
				{},
				...cols.map((c) => {
					const v = c.get(r);
					if (v instanceof Node) return v;
					return el("td", { class: c.num ? "num" : null, text: v });
				})
			)
		);
		return el("table", {}, el("thead", {}, head), el("tbody", {}, ...body));
	}

	const kindLabel = (names, key) => (names || {})[key] || String(key);

	// What the measured counters say each kernel uses, and where they disagree with the names.
	function renderCounters() {
		const card = document.getElementById("counters-card");
		const est = CN.estimates || [];
		if (!card) return;
		if (!CN.measured) {
			card.hidden = true;
			return;
		}
		const gpm = CN.source === "gpm";
		document.getElementById("counters-hint").textContent =
			(gpm ? "NVML GPM metrics" : "NVML utilization samples (the share of time memory was busy, not bandwidth: shown, classes stay the names')") +
			(num(CN.period_ns) ? ", sampled every " + fmtTime(CN.period_ns) : "") +
			". A window holds many kernels, so each kernel's use is estimated from all windows together (least squares over the time each kernel ran in each window; " +
			num(CN.windows) + " windows, residual " + pct(CN.dram_fit_rms) + " RMS). ± is one standard error; ? means it only ever ran beside other kernels in one proportion, so its share cannot be told apart. " +
			"DRAM ≥ 60% of peak is bandwidth-bound; DRAM and SMs both under 60% is low intensity; a clear estimate decides the class.";
		const se = (v, s) => (v === null || v === undefined ? "–" : pct(v) + (s === null || s === undefined ? " ?" : " ±" + pct(s)));
		const cls = (k) => (k ? k.replace(/_/g, " ") : "–");
		document.getElementById("counters").append(
			table(
				est,
				[
					{ title: "kernels", get: (r) => el("td", { class: "site", text: r.name }) },
					{ title: "GPU time", num: true, get: (r) => fmtTime(r.busy_ns) },
					{ title: gpm ? "DRAM" : "memory busy", num: true, get: (r) => se(r.dram, r.dram_se) },
					{ title: "SMs busy", num: true, get: (r) => se(r.sm, r.sm_se) },
					{ title: "name says", get: (r) => (r.kernels ? cls(r.name_class) : "–") },
					{ title: "counters say", get: (r) => (r.kernels ? cls(r.measured_class) : "–") },
					{ title: "confidence", get: (r) => r.confidence },
					{
						title: "",
						get: (r) =>
							el("td", {
								class: r.agrees === false ? "disagree" : null,
								text: r.agrees === false ? (r.applied ? "names disagree: counted as the counters say" : "names disagree; estimate unclear: names kept") : "",
							}),
					},
				],
				"No kernel ran in a measured window."
			)
		);
	}

	function renderCauses() {
		const box = el("div", { class: "causes" });
		document.getElementById("causes").append(box);
		const idle = buckets.filter((b) => b.key !== "compute" && num(b.fraction) >= 0.005).sort((a, b) => b.fraction - a.fraction).slice(0, 5);
		if (!idle.length) {
			box.append(el("p", { class: "empty", text: "No idle bucket above 0.5% of SM-time." }));
			return;
		}
		const split = D.launch_overhead_split || {};
		for (const b of idle) {
			const recs = (D.recommendations || []).filter((r) => r.bucket === b.key);
			const title = (b.cause ? "Cause " + b.cause + " · " : "") + b.label;
			const card = el(
				"div",
				{ class: "cause", style: "--c:" + colorOf(b.key) },
				el("div", { class: "cause-head" }, el("span", { class: "cause-title", text: title }), el("span", { class: "cause-share", text: pct(b.fraction) + " of SM-time" })),
				recs.length ? null : el("p", { text: b.remedy || "" }),
				...recs.map((r) => el("p", { text: r.text }))
			);
			const sites = [];
			if (b.key === "host_sync")
				for (const s of (D.sync_sites || []).slice(0, 3))
					sites.push(s.api + " ×" + fmtCount(s.count) + " at " + siteText(s) + " — exposed " + fmtTime(s.exposed_ns));
			if (b.key === "launch_overhead") {
				const tot = num(split.queued) + num(split.in_launch_calls) + num(split.between_launches);
				if (tot > 0)
					card.append(
						el("p", {
							class: "hint",
							text: "Of this: " + pct(num(split.in_launch_calls) / tot) + " inside launch calls, " + pct(num(split.between_launches) / tot) +
								" between them, " + pct(num(split.queued) / tot) + " the GPU's own latency between queued work.",
						})
					);
				for (const f of (D.fusion_candidates || []).slice(0, 3))
					sites.push("fuse " + f.kernels.join(" → ") + " (×" + fmtCount(f.occurrences) + ", gives back " + fmtTime(f.saved_ns) + ")");
				if (!sites.length)
					for (const t of (D.tiny_kernels_top || []).slice(0, 3)) sites.push(t.name + " ×" + fmtCount(t.count) + " at " + siteText(t));
			}
			if (b.key === "host_work")
				for (const s of (D.sync_sites || []).filter((x) => x.host_work_after_ns > 0).slice(0, 3))
					sites.push("after " + s.api + " at " + siteText(s) + ": " + fmtTime(s.host_work_after_ns) + " of host work");
			if (sites.length) card.append(el("ul", { class: "sites mono" }, ...sites.map((s) => el("li", { text: s }))));
			box.append(card);
		}
	}

	// ---------- steps ----------
	// One bar a step: its GPU time stacked by bucket (the order of the timeline), its wall time
	// (the range on its thread) as a tick; the slowest named below with what grew.
	function renderSteps() {
		const card = document.getElementById("steps-card");
		const hint = document.getElementById("steps-hint");
		if (!STEPS.length) {
			const names = SS.range_names || [];
			hint.textContent = names.length
				? "No range matched the step pattern " + SS.pattern + "; the most frequent: " +
				  names.map((x) => "\u201c" + x.name + "\u201d ×" + fmtCount(x.count)).join(", ") + " (--steps REGEX names them)."
				: "No steps: the trace has no ranges. Mark each step with an NVTX range (torch.cuda.nvtx.range_push, or torch.profiler's schedule) to see the run step by step.";
			return;
		}
		card.dataset.steps = String(STEPS.length);
		hint.textContent = fmtCount(STEPS.length) + " steps (" + pct(SS.sm_share) + " of the SM-time): time per step median " + fmtTime(SS.median_ns) +
			", p90 " + fmtTime(SS.p90_ns) + ", max " + fmtTime(SS.max_ns) + ". Bars: each step's GPU time by bucket; ticks: its wall time.";
		const n = Math.min(STEPS.length, 2000);
		const W = 1000, H = 220, left = 58, bottom = 22, top = 8;
		const plotW = W - left - 8, plotH = H - top - bottom;
		let vmax = 0;
		for (let i = 0; i < n; i++) vmax = Math.max(vmax, num(STEPS[i].device_ns), num(STEPS[i].duration_ns));
		vmax = vmax || 1;
		const svg = sv("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "GPU time of each step by bucket", id: "steps-bars" });
		const bw = plotW / n;
		const Y = (v) => top + plotH - (v / vmax) * plotH;
		for (let i = 0; i < n; i++) {
			const p = STEPS[i];
			const g = sv("g", { "data-step": i }, svg);
			let base = 0;
			for (const key of STACK_ORDER) {
				const v = num(p.device_ns) * num((p.breakdown || {})[key]);
				if (v <= 0) continue;
				sv("rect", { x: left + i * bw, y: Y(base + v), width: Math.max(bw * 0.85, 0.5), height: Math.max(Y(base) - Y(base + v), 0), fill: colorOf(key), "data-bucket": key }, g);
				base += v;
			}
			const yd = Y(num(p.duration_ns));
			sv("line", { x1: left + i * bw, x2: left + i * bw + Math.max(bw * 0.85, 1), y1: yd, y2: yd, stroke: slowSet.has(i) ? COLORS.host_sync : "#14181f", "stroke-width": 2 }, g);
			const shares = STACK_ORDER.filter((k) => num((p.breakdown || {})[k]) >= 0.01)
				.map((k) => k + " " + pct(num(p.breakdown[k])))
				.join(", ");
			sv("title", { text: p.name + ": wall " + fmtTime(p.duration_ns) + ", GPU " + fmtTime(p.device_ns) + (shares ? " (" + shares + ")" : "") }, g);
		}
		for (const f of [0, 0.5, 1]) {
			sv("line", { x1: left, x2: W - 8, y1: Y(f * vmax), y2: Y(f * vmax), class: "grid", "stroke-opacity": 0.5 }, svg);
			sv("text", { x: left - 6, y: Y(f * vmax) + 4, "text-anchor": "end", class: "lane-label", text: fmtTime(f * vmax) }, svg);
		}
		sv("text", { x: left, y: H - 6, class: "lane-label", text: STEPS[0].name }, svg);
		sv("text", { x: W - 8, y: H - 6, "text-anchor": "end", class: "lane-label", text: STEPS[n - 1].name + (n < STEPS.length ? " (first " + n + " of " + STEPS.length + ")" : "") }, svg);
		document.getElementById("steps-chart").append(svg);
		const lg = document.getElementById("steps-legend");
		for (const key of STACK_ORDER)
			if (num((SS.breakdown || {})[key]) >= 0.001)
				lg.append(el("li", {}, el("span", { class: "swatch", style: "background:" + colorOf(key) }), el("span", { text: labelOf(key) }), el("strong", { class: "num", text: fmtTime(num((SS.mean_bucket_ns || {})[key])) + " a step" })));
		const rows = (SS.slowest || []).map((w) => w);
		document.getElementById("steps-slow").append(
			table(rows, [
				{ title: "Slow step", get: (w) => w.name },
				{ title: "Wall time", num: true, get: (w) => fmtTime(w.duration_ns) },
				{ title: "Over the median", num: true, get: (w) => "+" + fmtTime(w.over_median_ns) },
				{ title: "What grew", get: (w) => (w.bucket ? w.bucket + " +" + fmtTime(w.bucket_over_median_ns) : "no part of its GPU time") },
				{ title: "From", get: (w) => (w.what || "—") },
				{ title: "Site", get: (w) => siteCell(w) },
			], "No step is slower than the median (fewer than three steps, or all alike).")
		);
	}

	function renderTables() {
		document.getElementById("sync-sites").append(
			table(
				D.sync_sites,
				[
					{ title: "call", get: (r) => r.api },
					{ title: "kind", get: (r) => kindLabel(P.sync_kinds, r.kind) },
					{ title: "calls", num: true, get: (r) => fmtCount(r.count) },
					{ title: "host waited", num: true, get: (r) => fmtTime(r.wait_ns) },
					{ title: "exposed idle", num: true, get: (r) => fmtTime(r.exposed_ns) },
					{ title: "host work after", num: true, get: (r) => fmtTime(r.host_work_after_ns) },
					{ title: "call site", get: (r) => siteCell(r) },
				],
				"No synchronizing call made the GPU wait."
			)
		);
		document.getElementById("kernels").append(
			table(
				D.kernels_top,
				[
					{ title: "kernel", get: (r) => el("td", { class: "site", text: r.name }) },
					{
						title: "class",
						get: (r) =>
							el(
								"td",
								{},
								el("span", { class: "swatch", style: "background:" + colorOf(r.class) + ";margin-right:0.35rem;vertical-align:-1px" }),
								el("span", { text: (r.class || "?").replace(/_/g, " ") + (r.classified ? "" : " (no rule matched)") })
							),
					},
					{ title: "runs", num: true, get: (r) => fmtCount(r.count) },
					{ title: "GPU time", num: true, get: (r) => fmtTime(r.total_ns) },
					{ title: "mean fill", num: true, get: (r) => pct(r.mean_fill) },
					{ title: "in a chain", num: true, get: (r) => (r.chain_count ? fmtCount(r.chain_count) : "–") },
					{ title: "launch site", get: (r) => siteCell(r) },
				],
				"No kernels ran."
			)
		);
		renderCounters();
		document.getElementById("tiny-hint").textContent =
			"Kernels shorter than " + num((D.thresholds || {}).tiny_ns, 10000) / 1000 + " µs. Their launch cost can exceed their work.";
		document.getElementById("tiny-kernels").append(
			table(
				D.tiny_kernels_top,
				[
					{ title: "kernel", get: (r) => el("td", { class: "site", text: r.name }) },
					{ title: "runs", num: true, get: (r) => fmtCount(r.count) },
					{ title: "GPU time", num: true, get: (r) => fmtTime(r.total_ns) },
					{ title: "idle before", num: true, get: (r) => fmtTime(r.gap_before_ns) },
					{ title: "launch site", get: (r) => siteCell(r) },
				],
				"No tiny kernels."
			)
		);
		document.getElementById("fusion").append(
			table(
				D.fusion_candidates,
				[
					{ title: "sequence", get: (r) => el("td", { class: "site", text: (r.kernels || []).join(" → ") }) },
					{ title: "times", num: true, get: (r) => fmtCount(r.occurrences) },
					{ title: "kernel time", num: true, get: (r) => fmtTime(r.kernel_ns) },
					{ title: "gives back", num: true, get: (r) => fmtTime(r.saved_ns) },
					{ title: "site", get: (r) => siteCell(r) },
				],
				"No repeated sequence of tiny kernels."
			)
		);
		document.getElementById("alloc-sites").append(
			table(
				D.allocation_sites,
				[
					{ title: "kind", get: (r) => kindLabel(P.mem_kinds, r.kind) },
					{ title: "allocations", num: true, get: (r) => fmtCount(r.count) },
					{ title: "bytes", num: true, get: (r) => fmtBytes(r.bytes) },
					{ title: "largest", num: true, get: (r) => fmtBytes(r.max_bytes) },
					{ title: "never freed", num: true, get: (r) => (r.never_freed ? fmtCount(r.never_freed) + " (" + fmtBytes(r.never_freed_bytes) + ")" : "0") },
					{ title: "call site", get: (r) => siteCell(r) },
				],
				"No allocations recorded."
			)
		);
		document.getElementById("traces").append(
			table(
				D.traces,
				[
					{ title: "trace", get: (r) => el("td", { class: "site", text: r.path }) },
					{ title: "pid", num: true, get: (r) => String(r.pid) },
					{ title: "rank", num: true, get: (r) => (r.rank < 0 ? "–" : String(r.rank)) },
					{ title: "compute", num: true, get: (r) => pct((r.breakdown || {}).compute) },
					{
						title: "largest loss",
						get: (r) => (r.top_idle_cause ? labelOf(r.top_idle_cause) + " " + pct((r.breakdown || {})[r.top_idle_cause]) : "–"),
					},
					{ title: "records", num: true, get: (r) => fmtCount(r.records) },
					{ title: "dropped", num: true, get: (r) => fmtCount(r.dropped_records) },
					{ title: "ended", get: (r) => (r.clean_exit ? "clean exit" : r.truncated ? "truncated" : "no footer (killed?)") },
					{ title: "command", get: (r) => el("td", { class: "site", text: r.command }) },
				],
				"No trace."
			)
		);
		document.getElementById("devices").append(
			table(
				(D.devices || []).map((d, i) =>
					Object.assign({}, d, { compute: D.per_device ? ((D.per_device[i] || {}).breakdown || {}).compute : breakdownOf.compute })
				),
				[
					{ title: "device", get: (r) => String(r.id) },
					{ title: "name", get: (r) => r.name },
					{ title: "SMs", num: true, get: (r) => String(r.sm_count) },
					{ title: "memory", num: true, get: (r) => fmtBytes(r.memory_total_bytes) },
					{ title: "peak used", num: true, get: (r) => fmtBytes(r.peak_bytes) },
					{ title: "compute", num: true, get: (r) => pct(r.compute) },
					{ title: "trace", num: true, get: (r) => String(num(r.trace_index) + 1) },
					{ title: "limits", get: (r) => (r.described ? "from the device record" : "assumed (no device record)") },
				],
				"No device record."
			)
		);
		const unc = num(D.unclassified_kernel_share);
		document.getElementById("method").textContent =
			"SM fill is estimated from each kernel's launch configuration and the device's occupancy limits; kernel classes come from kernel names" +
			(unc > 0 ? " (" + pct(unc) + " of kernel time matched no rule and counts as compute)" : "") +
			". The timeline is drawn from " + fmtCount(nb) + " bins of " + fmtTime(binNs) + "; every number on this page is computed from all events.";
	}

	const t0 = performance.now();
	renderHeader();
	renderVerdict();
	renderFigures();
	renderBreakdown();
	renderTimelineLegend();
	renderCauses();
	renderSteps();
	renderTables();
	setupTimeline();
	document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
	document.body.dataset.rendered = "1";
})();
