#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmark table in one command: builds (when needed), measures every figure side by side
# and writes benchmarks/results/<date>-<machine>.md. Usage: benchmarks/run.sh [--build DIR]
# [--reps N] [--quick] [--out FILE]. Nothing here fails on a figure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dworkloads=enabled >/dev/null
meson compile -C "$build" >/dev/null
exec python3 "$root/benchmarks/run-table.py" --build "$build" "${args[@]}"
