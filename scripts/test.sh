#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests in one command: install what is missing, build, run every test suite, and end
# with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
scripts/build.sh || exit 1
venv=${GPUWHY_TORCH_VENV:-.venv-torch}
[ -f "$venv/.gpuwhy-torch-env" ] ||
	echo "gpuwhy: the torch suite is skipped: no PyTorch environment at $venv (scripts/torch-env.sh makes one, about 3 GB to download)" >&2
meson test -C build --print-errorlogs --num-processes 2 "$@"
status=$?
python3 scripts/test-summary.py build/meson-logs/testlog.json || status=1
exit $status
