#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks that every workload kernel name falls in the class workloads.json expects for it,
# by the rules of analysis/kernel-classes.def (first case-insensitive substring wins).
import json
import re
import sys
from pathlib import Path

here = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
table = Path(sys.argv[2]) if len(sys.argv) > 2 else here / '../../analysis/kernel-classes.def'

rules = re.findall(r'^K\((\w+),\s*"([^"]+)"\)', table.read_text(), re.M)
if not rules:
    sys.exit(f'{table}: no K(...) rules found')


def classify(name):
    low = name.lower()
    for bucket, needle in rules:
        if needle in low:
            return bucket.lower()
    return 'compute'


expected = json.loads((here / 'workloads.json').read_text())['kernel_classes']
found = {}
for src in sorted(here.glob('*.cu')) + [here / 'common.h']:
    # macro bodies (lines ending in a backslash) define kernels through their arguments
    text = re.sub(r'^.*\\\n', '', src.read_text(), flags=re.M)
    for name in re.findall(r'__global__\s+void\s+(\w+)\s*\(', text):
        found[name] = src.name
    for name in re.findall(r'^FC_KERNEL\((\w+),', text, re.M):
        found[name] = src.name

bad = 0
for name, src in sorted(found.items()):
    got = classify(name)
    want = expected.get(name)
    if want != got:
        print(f'{src}: kernel {name}: class {got}, workloads.json expects {want}')
        bad += 1
for name in sorted(set(expected) - set(found)):
    print(f'workloads.json: kernel {name} is in no workload source')
    bad += 1
print(f'{len(found)} kernels checked, {bad} problems')
sys.exit(1 if bad else 0)
