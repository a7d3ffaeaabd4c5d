#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks that workloads.json's default args are the programs' own defaults (from --help), so
# that formulas evaluated at 'args' describe a run without arguments.
import json
import re
import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
bindir = Path(sys.argv[1])
bad = 0
for w in json.loads((here / 'workloads.json').read_text())['workloads']:
    out = subprocess.run([str(bindir / w['name']), '--help'], capture_output=True, text=True,
                         check=True).stdout
    got = {m.group(1).replace('-', '_'): m.group(2)
           for m in re.finditer(r'--(\S+)\s.*\(default ([^,)]+)', out)}
    want = {k: str(v) for k, v in w['args'].items()}
    if got != want:
        print(f'{w["name"]}: --help says {got}, workloads.json says {want}')
        bad += 1
    if set(w.get('alt_args', {})) - set(want):
        print(f'{w["name"]}: alt_args names unknown args')
        bad += 1
print(f'{bad} workloads disagree')
sys.exit(1 if bad else 0)
