#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the structured seeds of fuzz-analysis (tests/fuzz/corpus-analysis/seed-*).

An input of fuzz-analysis is a program for its record generator (fuzz-analysis.c): a mode
byte (the options), then per record an op byte (op % 22 picks the record) and that record's
bytes. A 0 byte mostly picks the realistic default (device 0, 132 SMs, stream 0, one block),
so each seed below spells out only what it is about.
usage: gen-corpus-analysis.py DIR
"""
import os
import random
import sys

DEVICE, STRING, API, KERNEL, MEMCPY, MEMSET, MEMORY, FOOTER, TRACE, REPEAT = (
    0, 1, 4, 7, 10, 11, 12, 19, 20, 21)
# names[] of fuzz-analysis.c, by index: what a STRING's text byte (< 0x80) picks
GEMM, ELEMENTWISE, TRANSPOSE, NCCL, RNN_STEP = 0, 1, 2, 3, 4


def device():
    # device id, sm count, memory, threads, blocks, registers, shared memory, warp, name
    return bytes([DEVICE]) + bytes(9)


def string(sid, name):
    # id, kind (1: kernel), text (a byte < 0x80 picks names[])
    return bytes([STRING, sid, 1, name])


def us(n):
    """A time or duration of n microseconds (n < 256): after the clock, or as a length."""
    return bytes([0x40, n])


def kernel(stream, corr, name, blocks=0x41, threads=0x81, start_us=20, run_us=50):
    # time, device, stream, correlation, duration, name, grid x (0x41: 2 blocks), grid y, z,
    # block x (0x81: 128 threads), registers, static and dynamic shared memory, graph
    return (bytes([KERNEL]) + us(start_us) + bytes([0, stream, corr]) + us(run_us)
            + bytes([name, blocks, 0, 0, threads, 0, 0, 0, 0]))


def api(corr, category, sync_kind=0, kname=0, start_us=1, run_us=4):
    # time, tid, duration, correlation, category, sync kind, name, stack, device, stream,
    # bytes, dst, copy kind, kernel name, grid, block
    return (bytes([API]) + us(start_us) + bytes([0]) + us(run_us)
            + bytes([corr, category, sync_kind, 0, 0, 0, 0, 0, 0, 0, kname, 0x41, 0x81]))


def memory(op, address, kib4):
    # time, op (1 alloc, 2 free), kind (1 device), tid, correlation, device, address,
    # bytes (a selector < 0x80, then 2 bytes of 4 KiB pages), stream, stack
    return (bytes([MEMORY]) + us(3) + bytes([op, 1, 0, 0, 0, address, 0])
            + kib4.to_bytes(2, 'big') + bytes([0, 0]))


def repeat(period, reps, name0, blocks=0x41, kernel_us=5):
    # period - 1, reps - 1, stream, grid (0x41: 2 blocks), kernel time, first name id
    return bytes([REPEAT, period - 1, reps - 1, 0, blocks]) + us(kernel_us) + bytes([name0])


def seeds():
    s = {}
    # 40 steps of a 2-kernel under-filled loop on one stream: a dependency chain
    s['chain'] = (bytes([0]) + device() + string(5, RNN_STEP) + string(6, TRANSPOSE)
                  + repeat(2, 40, 5))
    # the same loop with a full grid (0xbf: 63 x 128 blocks) and 2 us kernels: tiny launches
    s['tiny-launches'] = (bytes([0]) + device() + string(3, ELEMENTWISE) + string(4, GEMM)
                          + repeat(2, 40, 3, blocks=0xbf, kernel_us=2) * 3)
    body = string(1, GEMM)
    for i in range(12):
        body += api(i + 1, 1, kname=1) + kernel(i % 2, i + 1, 1, start_us=2, run_us=30)
        body += api(100 + i, 7, sync_kind=1, start_us=1, run_us=40)
    s['syncs'] = bytes([0]) + device() + body
    mem = b''
    for i in range(8):
        mem += memory(2 if i % 3 == 2 else 1, i % 4, 256 * (i + 1))
    s['memory'] = bytes([0]) + device() + mem + kernel(0, 1, 1)
    # a copy (31 bytes, pageable source), a memset and an NCCL kernel
    s['copies'] = (bytes([0]) + device() + string(2, NCCL)
                   + bytes([MEMCPY]) + us(5) + bytes([0, 0, 3]) + us(80) + bytes([0x3f, 1, 1, 3, 0])
                   + bytes([MEMSET]) + us(5) + bytes([0, 1, 4]) + us(10) + bytes([0x3f, 1])
                   + kernel(0, 1, 2))
    s['two-traces'] = (bytes([0]) + device() + string(1, GEMM) + kernel(0, 1, 1)
                       + bytes([TRACE, 1, 0]) + device() + string(1, TRANSPOSE)
                       + kernel(0, 1, 1) + bytes([FOOTER, 0]) + us(9) + bytes([0, 0]))
    s['html'] = bytes([0x50]) + s['syncs'][1:] + s['chain'][1 + 10:]
    # 12 steps (names 8-15 make each repetition an NVTX range "step"), a slow one between
    s['steps'] = (bytes([0]) + device() + string(8, GEMM) + string(9, ELEMENTWISE)
                  + repeat(2, 6, 8, blocks=0xbf, kernel_us=40)
                  + api(200, 7, sync_kind=1, start_us=90, run_us=200)
                  + repeat(2, 6, 8, blocks=0xbf, kernel_us=40))
    # a device of 2^64-1 SMs and huge limits, a kernel of 2^64-1 blocks, one reversed
    s['extremes'] = (bytes([0x2d]) + bytes([DEVICE, 0, 0xff, 0xc0, 0xff, 0xc0, 0, 0, 0, 0, 0, 0])
                     + bytes([KERNEL]) + us(1) + bytes([0, 0, 1]) + us(9)
                     + bytes([0, 0xff, 0xc0, 0, 0, 0x81, 0, 0, 0, 0])
                     + bytes([KERNEL, 0xdf, 0, 0, 2, 0xc0]) + bytes(10))
    # Regressions, found by fuzzing (tests/fuzz/README.md):
    # a lone kernel, no sync event anywhere: the sweep took NULL + 0 (UBSan under clang)
    s['regress-no-sync'] = bytes([0]) + kernel(0, 1, 1)
    # a kernel name that is not UTF-8 (names[15]: overlong, surrogate, past U+10FFFF) went
    # into the JSON report as raw bytes
    s['regress-json-utf8'] = bytes([0]) + string(1, 15) + kernel(0, 1, 1)
    # kernel durations of 2^63 ns (0xc0: a raw value; 0xff: 1 << 63) wrapped the sum of
    # kernel time below the unclassified part: an unclassified share above 1
    big = bytes([0xc0, 0xff])
    s['regress-kernel-ns-wrap'] = (
        bytes([0]) + string(1, GEMM) + string(2, RNN_STEP)
        + bytes([KERNEL]) + us(1) + bytes([0, 0, 1]) + big + bytes([2, 0x41, 0, 0, 0x81]) + bytes(4)
        + bytes([KERNEL]) + us(1) + bytes([0, 1, 2]) + big + bytes([1, 0x41, 0, 0, 0x81]) + bytes(4)
        + kernel(0, 3, 1, run_us=1))
    every = b''
    for op in range(22):
        every += bytes([op]) + bytes([0x21, 0x42, 0x05, 0x80, 0x03, 0x11, 0x07, 0x60]) * 3
    s['every-record'] = bytes([0]) + every
    rng = random.Random(20261129)
    for i in range(6):
        s[f'random-{i}'] = bytes(rng.randrange(256) for _ in range(rng.randrange(64, 2048)))
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(sys.argv[1], 'seed-' + name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
