#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Occupancy as the hardware allocates it, end to end (tests/e2e/audit/occupancy_hw.cu).

The program runs on gpusim (a test double) under libgpuwhy.so. Its kernels' records carry
registers, shared memory, the carveout, a cluster and a context; each kernel's mean fill in
the report must be what the CUDA occupancy calculator's rules give for the simulated GPU
(compute capability 9.0, 132 SMs, 2048 threads, 32 blocks, 64 Ki registers and 228 KiB of
shared memory per SM), worked out here from the program's launch shapes. The rules that the
plain per-SM limits would miss are what each kernel is built to hit; fills depend on launch
shapes only, so host load cannot move them.
"""
import argparse
import math
import os
import sys
import tempfile

from checks import FAILS, expect, profile

SMS, WARPS, SLOTS, REGS, SMEM = 132, 64, 32, 65536, 228 * 1024


def blocks_per_sm(threads, regs=32, smem=0):
    """The calculator's rules on compute capability 9.0 (the Guide's "Occupancy Calculator"):
    registers per warp in units of 256, per sub-partition (4); shared memory with the 1 KiB a
    block reserves, in 128-byte units; warps; the 32 block slots."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = (REGS // 4 // per_warp) * 4 // warps
    per_block = -(-(smem + 1024) // 128) * 128
    return min(SLOTS, WARPS // warps, by_regs, SMEM // per_block)


def fill(blocks, per_sm, cluster=1, sms=SMS):
    """blocks / (waves x the device's slots), a wave of `sms` SMs in whole clusters."""
    per_wave = sms * per_sm // cluster * cluster
    return blocks / (math.ceil(blocks / per_wave) * SMS * per_sm)


def kernel(r, name):
    for k in r['kernels_top']:
        if k['name'].startswith(name):
            return k
    return None


def check(r, what, want):
    for name, (count, f) in want.items():
        k = kernel(r, name)
        expect(k is not None and k['count'] == count and abs(k['mean_fill'] - f) < 1e-6,
               f"{what}: {name} x{count}, fill {f:.6f} "
               f"(report: {k and (k['count'], round(k['mean_fill'], 6))})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--program', required=True)
    a = ap.parse_args()
    iters = 10
    regs_tile = blocks_per_sm(256, regs=33)  # 1280 a warp: 12 a sub-partition, 48 / 8 = 6
    smem_tile = blocks_per_sm(128, smem=16 * 1024)  # 233472 / 17408 = 13
    cluster_tile = blocks_per_sm(1024, regs=64)  # 65536 / (2048 x 32) = 1
    expect((regs_tile, smem_tile, cluster_tile) == (6, 13, 1),
           f'the rules give 6, 13 and 1 blocks per SM ({regs_tile}, {smem_tile}, {cluster_tile})')
    # The plain per-SM limits would give 7 (65536 / (33 x 256)) and 14 (233472 / 16384):
    # full waves by the hardware's rules look under-filled by those.
    env = {'GPUSIM_KERNEL_REGS': 'regs_tile=33,cluster_tile=64',
           'GPUSIM_KERNEL_US': 'regs_tile=20,smem_tile=20,cluster_tile=20'}
    with tempfile.TemporaryDirectory() as tmp:
        why, r, _ = profile(a.build, a.report, [a.program], os.path.join(tmp, 'a.trace.zst'),
                            env)
        if expect(why is None, f'the program runs under gpuwhy ({why})'):
            check(r, 'the whole device', {
                'regs_tile': (iters, fill(792, regs_tile)),  # 792 = 132 x 6: one full wave
                'smem_tile': (iters, fill(1716, smem_tile)),  # 1716 = 132 x 13
                # 264 blocks in clusters of 8: 16 clusters a wave, 3 waves
                'cluster_tile': (iters, fill(264, cluster_tile, cluster=8)),
            })
            expect(r['counts']['kernels'] == 3 * iters and r['counts']['launches'] == 3 * iters,
                   f"{3 * iters} kernels and launches ({r['counts']['kernels']}, "
                   f"{r['counts']['launches']})")
        # a green context of 33 SMs: waves of 33 SMs, a quarter of the device's slots at most
        env['GPUSIM_GREEN_SMS'] = '33'
        why, r, _ = profile(a.build, a.report, [a.program], os.path.join(tmp, 'b.trace.zst'),
                            env)
        if expect(why is None, f'the program runs in a green context ({why})'):
            check(r, 'a green context of 33 SMs', {
                'regs_tile': (iters, fill(792, regs_tile, sms=33)),
                'smem_tile': (iters, fill(1716, smem_tile, sms=33)),
                'cluster_tile': (iters, fill(264, cluster_tile, cluster=8, sms=33)),
            })
    print(f'{len(FAILS)} failures')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
