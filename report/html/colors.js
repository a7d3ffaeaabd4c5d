// SPDX-License-Identifier: MIT
// The buckets' colours, for the report page and the diff page: one colour per bucket, keyed by
// the JSON breakdown keys (analysis/buckets.def). Chosen to stay distinguishable for common
// colour-vision deficiencies and to keep 3:1 contrast on white.
"use strict";
const GW_COLORS = {
	compute: "#2e7d32",
	bandwidth_bound: "#e8710a",
	low_intensity: "#b58900",
	small_batch: "#7b3fa0",
	dependency_chain: "#c2185b",
	launch_overhead: "#1f63b5",
	host_sync: "#c62828",
	data_transfer: "#00838f",
	host_work: "#6b7280",
	communication: "#795548",
	blocked: "#37474f",
};
// Bottom to top in a stack: work, then loss inside kernels, then idle causes.
const GW_STACK_ORDER = ["compute", "bandwidth_bound", "low_intensity", "communication", "small_batch",
	"dependency_chain", "data_transfer", "launch_overhead", "host_sync", "host_work", "blocked"];
