// SPDX-License-Identifier: MIT
// gpuwhy diff's page renderer: reads the embedded gpuwhy-diff/1 document and draws both
// breakdowns, one above the other, the deltas and the sites (plain DOM and SVG).
"use strict";
(function () {
	const SVGNS = "http://www.w3.org/2000/svg";
	const el = (tag, attrs, ...kids) => {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null || v === false) continue;
			if (k === "text") e.textContent = v;
			else if (k === "style") e.style.cssText = v;
			else e.setAttribute(k, String(v));
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
	const num = (v) => (typeof v === "number" && isFinite(v) ? v : 0);
	const pct = (f) => (num(f) * 100).toFixed(1) + "%";
	const fmtTime = (ns) => {
		const a = Math.abs(num(ns));
		if (a >= 1e9) return (ns / 1e9).toFixed(2) + " s";
		if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
		if (a >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
		return num(ns).toFixed(0) + " ns";
	};
	const fmtBytes = (b) => {
		const u = ["B", "KiB", "MiB", "GiB", "TiB"];
		let i = 0;
		b = num(b);
		while (Math.abs(b) >= 1024 && i < u.length - 1) {
			b /= 1024;
			i++;
		}
		return (i ? b.toFixed(1) : b.toFixed(0)) + " " + u[i];
	};
	const signed = (s) => (s.startsWith("-") ? "\u2212" + s.slice(1) : "+" + s);

	let D, P;
	try {
		const data = JSON.parse(document.getElementById("gw-data").textContent);
		D = data.diff || {};
		P = data.page || {};
	} catch (e) {
		document.querySelector("main").prepend(el("p", { class: "banner warn", text: "gpuwhy: this page's data could not be read: " + e.message }));
		return;
	}
	const B = D.before || {}, A = D.after || {}, X = D.delta || {};
	const labels = {};
	for (const b of P.buckets || []) labels[b.key] = b.label;
	const perStep = D.per === "step";
	const unit = perStep ? "a step" : "the run";

	document.getElementById("meta").textContent = "before: " + (B.inputs || []).join(", ") + " · after: " + (A.inputs || []).join(", ");
	if ((D.warnings || []).length) {
		const box = document.getElementById("warnings");
		box.hidden = false;
		box.append(el("strong", { text: "Read with care:" }), el("ul", {}, ...D.warnings.map((w) => el("li", { text: w }))));
	}
	document.getElementById("verdict").append(el("h1", { text: D.verdict || "" }));

	// Both bars on one scale: the longer side's GPU time a step (or run) is the full width, so
	// the bars show the time as well as the shares.
	const total = (s) => GW_STACK_ORDER.reduce((t, k) => t + num((s.device_ns || {})[k]), 0);
	const scale = Math.max(total(B), total(A), 1);
	const svg = sv("svg", { viewBox: "0 0 1000 150", role: "img", "aria-label": "SM-time before and after", id: "diff-bars" });
	[["before", B, 20], ["after", A, 90]].forEach(([name, s, y]) => {
		sv("text", { x: 0, y: y - 6, class: "lane-label", text: name + ": " + fmtTime(total(s)) + " of GPU time " + unit + (s.steps ? " (" + s.steps + " steps)" : "") }, svg);
		let x = 0;
		for (const k of GW_STACK_ORDER) {
			const w = (num((s.device_ns || {})[k]) / scale) * 1000;
			if (w <= 0) continue;
			const r = sv("rect", { x: x, y: y, width: Math.max(w, 0.5), height: 40, fill: GW_COLORS[k] || "#999", "data-side": name, "data-bucket": k }, svg);
			sv("title", { text: (labels[k] || k) + ": " + pct((s.breakdown || {})[k]) + ", " + fmtTime((s.device_ns || {})[k]) }, r);
			x += w;
		}
	});
	document.getElementById("bars").append(svg);
	document.getElementById("bars-hint").textContent = "GPU time " + unit + " by bucket, both bars on one scale." +
		(perStep ? " Wall time a step (median): " + fmtTime(B.step_median_ns) + " before, " + fmtTime(A.step_median_ns) + " after." : "");
	const lg = document.getElementById("bars-legend");
	for (const k of GW_STACK_ORDER)
		if (num((B.breakdown || {})[k]) >= 0.001 || num((A.breakdown || {})[k]) >= 0.001)
			lg.append(el("li", {}, el("span", { class: "swatch", style: "background:" + GW_COLORS[k] }), el("span", { text: labels[k] || k })));

	const rows = GW_STACK_ORDER.filter((k) => num((B.breakdown || {})[k]) >= 0.001 || num((A.breakdown || {})[k]) >= 0.001)
		.sort((p, q) => Math.abs(num(X.breakdown[q])) - Math.abs(num(X.breakdown[p])));
	const head = ["Bucket", "Share before", "Share after", "Points", "Time " + unit + " before", "After", "Delta"];
	document.getElementById("deltas").append(
		el("table", { id: "delta-table" },
			el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", { class: i ? "num" : null, text: h })))),
			el("tbody", {}, ...rows.map((k) => el("tr", { "data-bucket": k },
				el("td", {}, el("span", { class: "swatch", style: "background:" + GW_COLORS[k] + ";margin-right:0.4rem" }), el("span", { text: k })),
				el("td", { class: "num", text: pct(B.breakdown[k]) }),
				el("td", { class: "num", text: pct(A.breakdown[k]) }),
				el("td", { class: "num", text: signed((num(X.breakdown[k]) * 100).toFixed(1)) }),
				el("td", { class: "num", text: fmtTime(B.device_ns[k]) }),
				el("td", { class: "num", text: fmtTime(A.device_ns[k]) }),
				el("td", { class: "num", text: signed(fmtTime(X.device_ns[k])) })
			)))
		)
	);
	const sites = D.sites || [];
	const val = (s, v) => (s.unit === "bytes" ? fmtBytes(v) : fmtTime(v));
	document.getElementById("sites").append(
		sites.length
			? el("table", { id: "site-table" },
				el("thead", {}, el("tr", {}, ...["Kind", "Call or kernel", "Before", "After", "Count", "Site"].map((h) => el("th", { text: h })))),
				el("tbody", {}, ...sites.map((s) => el("tr", {},
					el("td", { text: s.kind.replace(/_/g, " ") }),
					el("td", { class: "mono", text: s.name }),
					el("td", { class: "num", text: val(s, s.before) }),
					el("td", { class: "num", text: val(s, s.after) }),
					el("td", { class: "num", text: num(s.before_count).toPrecision(3) + " \u2192 " + num(s.after_count).toPrecision(3) }),
					el("td", { class: "site", text: s.site || "(no stack)" })
				))))
			: el("p", { class: "empty", text: "No site changed." })
	);
	document.body.dataset.rendered = "1";
})();
