#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the fuzz targets with clang's libFuzzer, ASan and UBSan, and fuzzes each in turn.
# usage: tests/fuzz/run-libfuzzer.sh [SECONDS [TARGET...]] (default 60 s each; targets
# fuzz-reader, fuzz-kineto and fuzz-analysis). Prints executions, exec/s, crashes and corpus size per
# target; exits 1 when a target crashed, 77 (skip) without clang. Findings (crash-*, leak-*,
# timeout-*, oom-*) and the grown corpora stay in $FUZZ_OUT (default: a temp directory).
set -eu

secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-fuzz-reader fuzz-kineto fuzz-analysis}
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gw-fuzz.XXXXXX")}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "run-libfuzzer: $cc not found, skipping" >&2
	exit 77
fi
mkdir -p "$out"
flags="-std=gnu11 -D_GNU_SOURCE -DGW_LIBFUZZER -g -O1 -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -I$root/include -I$root/sources -I$root/analysis
	-I$root/report -isystem ${CUDA_ROOT:-/usr/local/cuda}/include"
# Every source of a folder, so that a new file needs no line here; the libraries the formats
# read with come from pkg-config.
sources=$(ls "$root"/sources/*.c)
libs="-lzstd -lz -pthread $(pkg-config --libs yajl sqlite3 2>/dev/null || true)"
page=$out/report-html-page.c

# Each target: its sources, libraries, longest input and seed corpus in the tree. The two
# builds run side by side.
for target in $targets; do
	case $target in
	fuzz-reader)
		# shellcheck disable=SC2086
		"$cc" $flags "$root/tests/fuzz/fuzz-reader.c" $sources "$root/report/dump.c" \
			$libs -o "$out/fuzz-reader" &
		;;
	fuzz-kineto)
		# shellcheck disable=SC2086
		"$cc" $flags "$root/tests/fuzz/fuzz-kineto.c" $sources "$root/report/dump.c" \
			$libs -o "$out/fuzz-kineto" &
		;;
	fuzz-analysis)
		# both pages, as report/meson.build makes them
		python3 "$root/report/html/embed.py" gw_html_page "$root/report/html/report.html" \
			"$root/report/html/report.css" "$root/report/html/colors.js" \
			"$root/report/html/report.js" "$page"
		python3 "$root/report/html/embed.py" gw_diff_page "$root/report/html/diff.html" \
			"$root/report/html/report.css" "$root/report/html/colors.js" \
			"$root/report/html/diff.js" "$out/report-diff-page.c"
		# shellcheck disable=SC2086
		"$cc" $flags "$root/tests/fuzz/fuzz-analysis.c" "$root"/analysis/*.c $sources \
			"$root"/report/*.c "$page" "$out/report-diff-page.c" $libs -ldw -lm -lstdc++ \
			-o "$out/fuzz-analysis" &
		;;
	*)
		echo "run-libfuzzer: unknown target $target" >&2
		exit 2
		;;
	esac
done
wait
for target in $targets; do
	[ -x "$out/$target" ] || { echo "run-libfuzzer: $target did not build" >&2; exit 1; }
done

failed=0
for target in $targets; do
	case $target in
	fuzz-reader) seeds=$root/tests/fuzz/corpus max_len=65536 ;;
	fuzz-kineto) seeds=$root/tests/fuzz/corpus-kineto max_len=65536 ;;
	fuzz-analysis) seeds=$root/tests/fuzz/corpus-analysis max_len=8192 ;;
	esac
	dir=$out/$target.out
	mkdir -p "$dir/corpus"
	# New inputs go to the scratch corpus; the seeds are read from the tree, never written.
	rc=0
	t0=$(date +%s)
	(cd "$dir" && "$out/$target" -max_total_time="$secs" -max_len="$max_len" \
		-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$dir/corpus" "$seeds" \
		>"$dir/log" 2>&1) || rc=$?
	elapsed=$(($(date +%s) - t0))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
	crashes=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o \
		-name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	corpus=$(($(find "$dir/corpus" -type f | wc -l) + $(find "$seeds" -type f | wc -l)))
	echo "$target: $elapsed s, ${execs:-0} executions, ${rate:-0} exec/s, $crashes crashes," \
		"corpus $corpus inputs"
	if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
		failed=1
		grep -E -A30 '^==[0-9]+==ERROR|runtime error|deadly signal|invariant|JSON report' \
			"$dir/log" | head -60
		find "$dir" -maxdepth 1 -name '*-*' -type f | sed 's/^/  finding: /'
	fi
done
exit $failed
