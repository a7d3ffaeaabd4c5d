# SPDX-License-Identifier: MIT
"""The e2e scripts' shared check: print each result, keep the failures for the exit status."""

FAILS = []


def expect(cond, what):
    if not cond:
        FAILS.append(what)
        print('FAIL', what)
    else:
        print('ok  ', what)
    return cond
