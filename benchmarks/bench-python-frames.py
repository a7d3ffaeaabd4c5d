#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost of one stack capture with 30 Python frames, beside the same capture without Python
frames (GPUWHY_PYTHON=0): gpuwhy's real gw_stack_capture, called from a ctypes module 30
Python frames deep (bench-python-frames.c). Target: at most 1 us added. Times are the calling
thread's CPU time: on a shared machine wall time counts other tenants' turns too.

usage: bench-python-frames.py MODULE [PYTHON...] [--quick]
  MODULE: build/benchmarks/libbench-python-frames.so; each PYTHON (default: this one) is run
  with and without Python frames, alternately, three times."""
import ctypes
import os
import subprocess
import sys

DEPTH = 30


def child(module, n):
    lib = ctypes.CDLL(module)
    lib.bench_capture.restype = ctypes.c_double
    lib.bench_capture.argtypes = [ctypes.c_uint]
    if lib.bench_setup() < 0:
        sys.exit('bench-python-frames: setup failed')

    lib.bench_merge_only.restype = ctypes.c_double
    lib.bench_merge_only.argtypes = [ctypes.c_uint]

    def deep(k):
        if k > 1:
            return deep(k - 1)
        return (lib.bench_python_words(), lib.bench_capture(n),
                sorted(lib.bench_merge_only(n) for _ in range(9))[4])

    # deep() 27 times, child(), main() and <module>: 30 frames
    words, ns, merge_ns = deep(DEPTH - 3)
    lib.bench_stop()
    print(words, f'{ns:.1f}', f'{merge_ns:.1f}')


def main():
    args = [a for a in sys.argv[1:] if a != '--quick']
    if len(args) >= 2 and args[0] == '--child':
        child(args[1], int(args[2]))
        return
    module, pythons = args[0], args[1:] or [sys.executable]
    n = 2000 if '--quick' in sys.argv else 20000
    for py in pythons:
        with_ns, without_ns, merge_ns, words = [], [], [], 0
        for _ in range(3):
            for on in (True, False):
                env = dict(os.environ, GPUWHY_PYTHON='1' if on else '0')
                out = subprocess.run([py, __file__, '--child', module, str(n)], env=env,
                                     capture_output=True, text=True, check=True).stdout.split()
                (with_ns if on else without_ns).append(float(out[1]))
                if on:
                    words = int(out[0])
                    merge_ns.append(float(out[2]))
        version = subprocess.run([py, '-c', 'import sys; print(sys.version.split()[0])'],
                                 capture_output=True, text=True).stdout.strip()
        w, wo, m = sorted(with_ns)[1], sorted(without_ns)[1], sorted(merge_ns)[1]
        print(f'CPython {version} ({py}): a stack capture {words} Python frames deep: '
              f'{w:.0f} ns with its Python frames, {wo:.0f} ns without: {w - wo:+.0f} ns; '
              f'the Python frames alone (walk and merge) {m:.0f} ns (ns of the thread\'s CPU '
              f'time; medians of 3 runs, each the median of 9 rounds of {n})')


if __name__ == '__main__':
    main()
