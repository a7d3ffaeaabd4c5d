#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages gpuwhy needs to build and test, when any is missing, and
# NVIDIA's nvml.h (from PyPI) when no toolkit or system include directory has it.
set -euo pipefail

packages=(
	meson ninja-build pkg-config gcc g++ python3
	libzstd-dev zlib1g-dev libyajl-dev libxxhash-dev libsqlite3-dev libunwind-dev libdw-dev libelf-dev libcmocka-dev
	zstd binutils clang clang-format libclang-rt-14-dev chromium strace
	gdb # the fault matrix prints a hung run's stacks
	python3-pip python3-venv # nvml.h from PyPI; the torch environment (scripts/torch-env.sh)
	python3-dev # CPython's internal headers: the python-layouts test checks the capture's offsets
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
	echo "gpuwhy: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvml.h, for the NVML sampler (libnvidia-ml is loaded at run time, never linked): a CUDA
# toolkit with the NVML dev component has it; otherwise NVIDIA's PyPI package does, and the
# header goes where the compiler looks by default.
cuda_root=${CUDA_ROOT:-/usr/local/cuda}
nvml_dirs=("$cuda_root/include" "$cuda_root"/targets/*/include /usr/local/include /usr/include)
for d in "${nvml_dirs[@]}"; do
	[ -f "$d/nvml.h" ] && exit 0
done
nvml_pkg=nvidia-nvml-dev==13.4.92
echo "gpuwhy: installing nvml.h from $nvml_pkg" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$nvml_pkg"
python3 - "$tmp" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + '/*.whl')[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith('/include/nvml.h'))
    open(sys.argv[1] + '/nvml.h', 'wb').write(z.read(name))
PY
$sudo install -m 0644 "$tmp/nvml.h" /usr/local/include/nvml.h
