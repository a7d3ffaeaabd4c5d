#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Creates, or reuses when it is already complete, the virtual environment with PyTorch that
# the torch suite (tests/pytorch) runs in: $GPUWHY_TORCH_VENV, default .venv-torch in the
# repository root (ignored by git). PyTorch from PyPI with its CUDA libraries (about 3 GB to
# download, 4-5 GB on disk); Triton is left out: eager mode never loads it, and gpusim cannot
# run the kernels it compiles. Prints how long it took. Exit 0 with the environment ready,
# non-zero when it could not be made (no network, a full disk): the caller decides to skip.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${GPUWHY_TORCH_VENV:-$root/.venv-torch}
# The build the simulated cuBLAS and the cudart exports were written against: torch's CUDA 13
# wheel, which links libcudart.so.13, as gpusim's runtime is.
torch_req=${GPUWHY_TORCH_REQ:-torch==2.15.0}
stamp=$venv/.gpuwhy-torch-env
start=$(date +%s)

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$torch_req" ] && [ -x "$venv/bin/python" ]; then
	echo "torch-env: reusing $venv ($torch_req), 0 s" >&2
	exit 0
fi

python=${PYTHON:-python3}
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet --no-deps "$torch_req"
# torch's own requirements (the CUDA libraries it is linked to), less Triton.
mapfile -t deps < <("$venv/bin/python" - <<'PY'
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
for line in requires('torch') or []:
    req = Requirement(line)
    if req.name.lower() == 'triton':
        continue
    if req.marker and not req.marker.evaluate({'extra': ''}):
        continue
    extras = '[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''
    print(f'{req.name}{extras}{req.specifier}')
PY
)
# pip warns that torch's Triton requirement is unmet: left out on purpose.
"${pip[@]}" install --quiet "${deps[@]}" numpy 2>&1 | grep -v -e "dependency resolver" -e "requires triton" >&2 || true
"$venv/bin/python" -c 'import torch; assert torch.version.cuda, "not a CUDA build"'
echo "$torch_req" >"$stamp"
echo "torch-env: created $venv ($torch_req, $(du -sh "$venv" | cut -f1)) in $(($(date +%s) - start)) s" >&2
