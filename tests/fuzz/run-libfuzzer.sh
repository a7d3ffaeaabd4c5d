#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the trace reader's fuzz target with clang's libFuzzer, ASan and UBSan, and runs it.
# usage: tests/fuzz/run-libfuzzer.sh [SECONDS] (default 60). Exits 77 (skip) without clang.
# Findings (crash-*, leak-*, timeout-*) are left in $FUZZ_OUT (default: a temp directory).
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gw-fuzz.XXXXXX")}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "run-libfuzzer: $cc not found, skipping" >&2
	exit 77
fi
mkdir -p "$out/corpus"
"$cc" -std=gnu11 -D_GNU_SOURCE -DGW_LIBFUZZER -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$root/include" -I"$root/analysis" -I"$root/tools" \
	"$root/tests/fuzz/fuzz-reader.c" "$root/analysis/trace-reader.c" "$root/tools/dump.c" \
	-lzstd -pthread -o "$out/fuzz-reader"
# new inputs go to the scratch corpus; the seeds are read from the tree, never written
cd "$out"
./fuzz-reader -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
	-print_final_stats=1 "$out/corpus" "$root/tests/fuzz/corpus"
