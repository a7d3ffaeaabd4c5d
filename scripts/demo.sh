#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job in one command: install what is missing, build, profile a bundled workload
# (on the real GPU when there is one, else on the simulated GPU) and show the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/tools/gpuwhy demo "$@"
