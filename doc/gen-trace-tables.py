#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Generates the record tables of doc/trace-format.md from the X-macros of trace-format.h.
"""usage: gen-trace-tables.py HEADER DOC [--check]

Replaces the text between the '<!-- records:begin -->' and '<!-- records:end -->' markers of
DOC with one table per record type, read from HEADER's GW_RECORDS and GW_FIELDS_* lists.
With --check, changes nothing and exits 1 when DOC is not up to date."""
import re
import sys

BEGIN, END = '<!-- records:begin -->', '<!-- records:end -->'


def macro_bodies(text):
    """name -> body of every '#define NAME(X) body' (continuation lines joined)."""
    joined = re.sub(r'\\\n', ' ', text)
    out = {}
    for m in re.finditer(r'^#define\s+(\w+)\((\w+)\)\s*(.*)$', joined, re.M):
        out[m.group(1)] = m.group(3)
    return out


def comment_before_define(text, name):
    """The /* ... */ comment right above '#define NAME(F)', without its markers."""
    m = re.search(r'/\*((?:(?!\*/).)*)\*/\s*\n#define\s+' + name + r'\(', text, re.S)
    if not m:
        return ''
    # continuation lines start with ' * ': drop the star, keep the words
    lines = (re.sub(r'^\s*\*(?=\s|$)', '', line) for line in m.group(1).splitlines())
    return ' '.join(' '.join(lines).split())


def fields(body):
    """[(kind, name, comment)] of a GW_FIELDS_* body."""
    out = []
    for m in re.finditer(r'F\((\w+),\s*(\w+)\)\s*(/\*(.*?)\*/)?', body):
        out.append((m.group(1), m.group(2), ' '.join((m.group(4) or '').split())))
    return out


def tables(header_text):
    macros = macro_bodies(header_text)
    lines = []
    for m in re.finditer(r'R\((\w+),\s*(\w+),\s*(\d+),\s*(\d+)\)', macros['GW_RECORDS']):
        upper, lower, tid, ver = m.groups()
        lines.append('### %s (type %s, version %s)' % (upper, tid, ver))
        lines.append('')
        purpose = comment_before_define(header_text, 'GW_FIELDS_' + lower)
        if purpose:
            lines.append(purpose)
            lines.append('')
        lines.append('| # | field | kind | meaning |')
        lines.append('|---|-------|------|---------|')
        for i, (kind, name, comment) in enumerate(fields(macros['GW_FIELDS_' + lower])):
            lines.append('| %d | `%s` | %s | %s |' % (i, name, kind, comment.replace('|', '\\|')))
        lines.append('')
    return '\n'.join(lines)


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != '--check'):
        sys.stderr.write(__doc__ + '\n')
        return 2
    header = open(argv[1], encoding='utf-8').read()
    doc = open(argv[2], encoding='utf-8').read()
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    new = doc[:start] + '\n' + tables(header) + '\n' + doc[end:]
    if len(argv) == 4:
        if new != doc:
            sys.stderr.write('%s: record tables differ from %s; run %s %s %s\n'
                             % (argv[2], argv[1], argv[0], argv[1], argv[2]))
            return 1
        return 0
    if new != doc:
        open(argv[2], 'w', encoding='utf-8').write(new)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
