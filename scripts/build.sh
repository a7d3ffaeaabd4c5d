#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures (once) and builds gpuwhy in build/ with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build --werror >/dev/null
meson compile -C build >/dev/null
