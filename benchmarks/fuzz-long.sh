#!/bin/sh
# SPDX-License-Identifier: MIT
# Fuzzes each libFuzzer target for longer than CI does and prints a summary table.
# usage: benchmarks/fuzz-long.sh [MINUTES [TARGET...]] (default 10 per target, both targets).
# Findings and the grown corpora stay in $FUZZ_OUT (default: a temp directory, printed); a
# crash exits 1.
set -eu

minutes=${1:-10}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_OUT=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gw-fuzz-long.XXXXXX")}
export FUZZ_OUT
mkdir -p "$FUZZ_OUT"
[ "$minutes" -ge 1 ] || { echo "fuzz-long: MINUTES must be at least 1" >&2; exit 2; }

rc=0
"$root/tests/fuzz/run-libfuzzer.sh" $((minutes * 60)) "$@" >"$FUZZ_OUT/summary" 2>&1 || rc=$?
[ "$rc" = 77 ] && { cat "$FUZZ_OUT/summary"; exit 77; }
echo "fuzzing, $minutes min per target, $(date -u +%Y-%m-%d) on $(nproc) cores" \
	"($(clang --version | head -1)); findings in $FUZZ_OUT"
echo "| target | seconds | executions | exec/s | crashes | corpus (inputs) |"
echo "|---|---|---|---|---|---|"
# "fuzz-X: S s, E executions, R exec/s, C crashes, corpus N inputs" -> a table row
awk '/^fuzz-[a-z]*: / { sub(":", "", $1)
	printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $4, $6, $8, $11 }' "$FUZZ_OUT/summary"
[ "$rc" = 0 ] || { echo; cat "$FUZZ_OUT/summary"; }
exit "$rc"
