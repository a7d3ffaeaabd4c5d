#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks doc/causes.md against analysis/buckets.def: one section per bucket, in the table's
# order, headed by its key (and its cause number), whose remedy opens with the table's short
# remedy, the words the report prints when a bucket has no longer advice.
"""usage: check-causes.py BUCKETS.DEF CAUSES.MD"""
import re
import sys


def buckets(text):
    """[(key, cause, remedy)] of the B(...) rows, C string pieces joined."""
    out = []
    for m in re.finditer(r'^B\(\w+,\s*(\w+),\s*"(?:[^"\\]|\\.)*",\s*(\d+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)',
                         text, re.M):
        remedy = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(3)))
        out.append((m.group(1), int(m.group(2)), remedy))
    return out


def sections(text):
    """{key: (heading, body)} of the '## key' sections, and their keys in order."""
    order, found = [], {}
    parts = re.split(r'^## ', text, flags=re.M)[1:]
    for p in parts:
        heading, _, body = p.partition('\n')
        key = heading.split()[0]
        order.append(key)
        found[key] = (heading, body)
    return order, found


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    table = buckets(open(sys.argv[1]).read())
    order, found = sections(open(sys.argv[2]).read())
    errors = []
    if not table:
        errors.append('no B(...) row read from %s' % sys.argv[1])
    keys = [k for k, _, _ in table]
    if [k for k in order if k in keys] != keys:
        errors.append('sections %s are not the buckets %s in order' % (order, keys))
    for key, cause, remedy in table:
        if key not in found:
            continue
        heading, body = found[key]
        want = '%s — cause %d' % (key, cause) if cause else key
        if heading.strip() != want:
            errors.append('## %s: the heading should read "%s"' % (heading.strip(), want))
        m = re.search(r'\*\*Remedy\.\*\*\s+(.*?)(?:\n\*\*|\n\n|$)', body, re.S)
        text = ' '.join(m.group(1).split()) if m else ''
        if not text.startswith(remedy[0].upper() + remedy[1:]):
            errors.append('%s: the remedy should open with "%s", reads "%s"' %
                          (key, remedy[0].upper() + remedy[1:], text[:len(remedy) + 10]))
    for e in errors:
        print(e)
    print('%d buckets checked, %d problems' % (len(table), len(errors)))
    return 1 if errors else 0


sys.exit(main())
