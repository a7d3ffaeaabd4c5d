#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages gpuwhy needs to build and test, when any is missing.
set -euo pipefail

packages=(
	meson ninja-build pkg-config gcc g++ python3
	libzstd-dev zlib1g-dev libyajl-dev libxxhash-dev libsqlite3-dev libunwind-dev libdw-dev libelf-dev libcmocka-dev
	zstd binutils clang clang-format libclang-rt-14-dev chromium strace
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "gpuwhy: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
