#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks one workload run against tests/workloads/workloads.json: counts and cause from
# `gpuwhy-report --json`, and counts recounted from the raw records of `gpuwhy-report --dump`.
"""usage: wlcheck.py WORKLOADS_JSON NAME [--arg KEY=VALUE]... [--report R.json] [--dump D.txt]
                  [--sim] [--out RESULT.json]

Prints one line per check ("PASS|FAIL|SKIP|INFO what: expected X, got Y") and exits 1 if
any check failed. Expected values are the workload's formulas evaluated at its default args
overridden by --arg. Keys listed in the workload's sim_only hold on the simulated GPU (with
its env) only: without --sim they are reported (INFO), not judged.
"""
import argparse
import json
import sys

# enum gw_api_category and enum gw_sync_kind of include/gpuwhy/trace-format.h
CATEGORY = {'1': 'launches', '2': 'graph_launches', '3': 'memcpy', '4': 'memset',
            '5': 'allocations', '6': 'frees'}
SYNC_KIND = {'1': 'syncs_explicit', '2': 'syncs_copy', '3': 'syncs_implicit'}


def evaluate(formula, variables):
    if isinstance(formula, int):
        return formula
    return int(eval(formula, {'__builtins__': {}}, dict(variables)))


def counts_from_dump(path):
    """Counts from the trace's own records, independent of the report's analysis."""
    c = {k: 0 for k in list(CATEGORY.values()) + list(SYNC_KIND.values())}
    c['kernels'] = 0
    with open(path, errors='replace') as f:
        for line in f:
            kind, _, rest = line.partition(' ')
            if kind == 'KERNEL':
                c['kernels'] += 1
            elif kind == 'API':
                fields = dict(kv.split('=', 1) for kv in rest.split() if '=' in kv)
                cat = CATEGORY.get(fields.get('category'))
                if cat:
                    c[cat] += 1
                sk = SYNC_KIND.get(fields.get('sync_kind'))
                if sk:
                    c[sk] += 1
    c['host_syncs'] = c['syncs_explicit'] + c['syncs_copy'] + c['syncs_implicit']
    return c


def resolve_args(spec, overrides):
    """The workload's default args with KEY=VALUE overrides ('-' in KEY read as '_')."""
    args = dict(spec['args'])
    for kv in overrides:
        k, _, v = kv.partition('=')
        k = k.lstrip('-').replace('-', '_')
        if k not in args:
            raise KeyError(f'{spec["name"]} has no argument {k}')
        args[k] = int(v) if v.lstrip('-').isdigit() else v
    return args


def argv_of(args):
    """The command-line arguments that pass args to the workload."""
    out = []
    for k, v in args.items():
        out += ['--' + k.replace('_', '-'), str(v)]
    return out


def check_run(spec, args, report=None, dump=None, sim=False, child=False, counts_only=False):
    """Checks of one run: a list of {check, expected, got, status}. report is the parsed
    --json output (or None), dump the path of the --dump output (or None). Counts are
    always judged; the cause and quadrant too (unless counts_only: args other than the
    defaults may change them); sim_only keys only when sim."""
    variables = {k: v for k, v in args.items() if isinstance(v, int)}
    if report and report.get('devices'):
        variables['memory_total_bytes'] = report['devices'][0].get('memory_total_bytes', 0)
    checks = []

    def check(what, want, got, judged=True):
        if got is None:
            status = 'SKIP'
        elif not judged:
            status = 'INFO'
        else:
            status = 'PASS' if want == got else 'FAIL'
        checks.append({'check': what, 'expected': want, 'got': got, 'status': status})

    counts = spec['child_counts'] if child else spec['counts']
    sim_only = set(spec.get('sim_only', []))
    dump_counts = counts_from_dump(dump) if dump else None
    for key, formula in counts.items():
        want = evaluate(formula, variables)
        judged = sim or key not in sim_only
        if report is not None and key in report.get('counts', {}):
            check(f'report counts.{key}', want, report['counts'][key], judged)
        if dump_counts is not None and key in dump_counts:
            check(f'trace {key}', want, dump_counts[key], judged)
    if counts_only:
        return checks
    if report is not None and spec.get('cause') and not child:
        field = spec['cause_field']
        check(field, spec['cause'], report.get(field))
        floor = spec.get('cause_min_fraction')
        share = report.get('breakdown', {}).get(spec['cause'])
        if floor is not None and share is not None:
            # the floor is made for gpusim with the workload's env; elsewhere it is a figure
            checks.append({'check': 'breakdown.%s >= %s' % (spec['cause'], floor),
                           'expected': floor, 'got': round(share, 4),
                           'status': ('PASS' if share >= floor else 'FAIL') if sim else 'INFO'})
    if report is not None and 'memory' in spec and not child:
        mem = report.get('memory', {})
        for key, formula in spec['memory'].items():
            if key == 'growth':
                got = mem.get('growth_bytes_per_s')
                check('memory growth > 0', True, None if got is None else got > 0)
            else:
                check(f'memory.{key}', evaluate(formula, variables), mem.get(key))
    if report is not None and 'quadrant' in spec and not child:
        for key, want in spec['quadrant'].items():
            check(f'quadrant.{key}', want, report.get('quadrant', {}).get(key))
    return checks


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('workloads_json')
    ap.add_argument('name')
    ap.add_argument('--arg', action='append', default=[])
    ap.add_argument('--report')
    ap.add_argument('--dump')
    ap.add_argument('--sim', action='store_true')
    ap.add_argument('--child', action='store_true', help='use child_counts (forker)')
    ap.add_argument('--out')
    a = ap.parse_args()

    spec = {w['name']: w for w in json.load(open(a.workloads_json))['workloads']}[a.name]
    try:
        args = resolve_args(spec, a.arg)
    except KeyError as e:
        sys.exit(f'wlcheck: {e.args[0]}')
    report = json.load(open(a.report)) if a.report else None
    checks = check_run(spec, args, report, a.dump, a.sim, a.child)
    for c in checks:
        print(f'{c["status"]} {a.name} {c["check"]}: expected {c["expected"]}, got {c["got"]}')
    failed = [c for c in checks if c['status'] == 'FAIL']
    if a.out:
        with open(a.out, 'w') as f:
            json.dump({'workload': a.name, 'args': args, 'checks': checks,
                       'breakdown': report.get('breakdown') if report else None,
                       'passed': not failed}, f, indent=1)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
