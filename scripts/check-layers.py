#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""usage: check-layers.py SOURCE_ROOT ANALYSIS_OBJECT_DIR

Checks the architecture doc/design.md draws, so that it stays true:
  - folders include only the folders below them (the table below: what each may include);
  - the analysis stages call no earlier stage: a stage's object file references functions
    of its own file, of the later stages and of the shared services (model.c, util.c,
    classify.c, kinds.c, symbolize.c), never of a stage before it (from `nm`);
  - no two files of analysis/ call each other.
Prints what it found and exits 1 on a violation."""
import os
import re
import subprocess
import sys

# Folder -> the folders of the tree its sources may include (besides its own and include/).
MAY_INCLUDE = {
    'capture': set(),
    'hooks': {'capture'},
    'lib': {'capture', 'hooks'},
    'sources': set(),
    'analysis': {'sources'},
    'report': {'analysis', 'sources'},
    'tools': {'capture', 'sources', 'analysis', 'report'},
}
# The analysis stages in the order the driver runs them; the rest of analysis/ are services
# every stage may call (and the driver, which calls all).
STAGES = ['collect', 'join', 'counters', 'runs', 'steps', 'attribute', 'memory', 'results', 'sites', 'advice', 'view']
SERVICES = {'model', 'util', 'classify', 'kinds', 'symbolize'}


def headers_of(root):
    """header file name -> folder, for the folders of MAY_INCLUDE."""
    out = {}
    for d in MAY_INCLUDE:
        for n in os.listdir(os.path.join(root, d)):
            if n.endswith(('.h', '.def')):
                out.setdefault(n, set()).add(d)
    return out


def check_includes(root, errors):
    owner = headers_of(root)
    n = 0
    for d, allowed in MAY_INCLUDE.items():
        for name in sorted(os.listdir(os.path.join(root, d))):
            if not name.endswith(('.c', '.h', '.def')):
                continue
            for line in open(os.path.join(root, d, name), errors='replace'):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                n += 1
                inc = os.path.basename(m.group(1))
                homes = owner.get(inc, set())
                if d in homes or not homes:
                    continue  # its own folder, include/, or a generated file
                if not homes & allowed:
                    errors.append('%s/%s includes %s of %s/' % (d, name, inc,
                                                               ', '.join(sorted(homes))))
    return n


def symbols(obj):
    """(defined, undefined) function symbols of an object file."""
    out = subprocess.run(['nm', obj], stdout=subprocess.PIPE, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TW':
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            undefined.add(parts[1])
    return defined, undefined


def check_stages(objdir, errors):
    defs, uses = {}, {}
    for name in os.listdir(objdir):
        if name.endswith('.c.o'):
            stem = name[:-4]
            defs[stem], uses[stem] = symbols(os.path.join(objdir, name))
    where = {s: stem for stem, ds in defs.items() for s in ds}
    calls = {stem: {where[s] for s in u if s in where and where[s] != stem}
             for stem, u in uses.items()}
    for i, stage in enumerate(STAGES):
        for callee in sorted(calls.get(stage, ())):
            if callee in STAGES[:i]:
                errors.append('stage %s calls back into the earlier stage %s' % (stage, callee))
    for a, cs in calls.items():
        for b in cs:
            if a < b and a in calls.get(b, ()):
                errors.append('%s.c and %s.c call each other' % (a, b))
    for s in SERVICES:
        for callee in calls.get(s, ()):
            if callee in STAGES:
                errors.append('service %s calls the stage %s' % (s, callee))
    return calls


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    errors = []
    n = check_includes(sys.argv[1], errors)
    calls = check_stages(sys.argv[2], errors)
    for stage in STAGES:
        print('%-10s calls %s' % (stage, ', '.join(sorted(calls.get(stage, ()))) or '-'))
    for e in errors:
        print('FAIL ' + e)
    print('%d includes and %d analysis files checked, %d problems' % (n, len(calls), len(errors)))
    return 1 if errors else 0


sys.exit(main())
