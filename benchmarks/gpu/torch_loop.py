#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Real-GPU check: a small PyTorch training loop, plain, under gpuwhy (LD_PRELOAD) or under
# torch.profiler, printing its own step times and (profiled) kernel count as JSON.
"""usage: torch_loop.py [--configs small-item,small,large-item,large] [--steps N]
                     [--warmup N] [--profile none|torch|window] [--trace FILE] [--json FILE]

Each config trains a 4-layer MLP (1024-4096-4096-1024, AdamW, cross-entropy) for warmup +
steps iterations; 'small' is batch 8, 'large' batch 2048; '-item' reads loss.item() every
step (a host sync), without it the loss is read once at the end. Step time is the median
of the timed steps' wall time, each ended by the next step's launch (or a final
synchronize). With --profile torch, everything (model creation included) runs inside one
torch.profiler.profile(CPU, CUDA) and the Chrome trace's kernel events are counted.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

BATCH = {'small': 8, 'large': 2048}


def run_config(name, steps, warmup, device):
    size, _, item = name.partition('-')
    batch = BATCH[size]
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024), torch.nn.GELU(),
        torch.nn.Linear(1024, 1000)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, 1024, device=device)
    y = torch.randint(0, 1000, (batch,), device=device)
    times, losses = [], []
    for i in range(warmup + steps):
        if i == warmup:
            torch.cuda.synchronize() if device == 'cuda' else None
            t_start = time.perf_counter()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if item:
            losses.append(loss.item())
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    if device == 'cuda':
        torch.cuda.synchronize()
    total = time.perf_counter() - t_start
    if not item:
        losses.append(loss.item())
    return {'batch': batch, 'item': bool(item), 'steps': steps,
            'loop_s': total, 'step_ms': 1e3 * total / steps,
            'median_step_call_ms': 1e3 * statistics.median(times), 'final_loss': losses[-1]}


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--configs', default='small-item,small,large-item,large')
    ap.add_argument('--steps', type=int, default=40)
    ap.add_argument('--warmup', type=int, default=5)
    ap.add_argument('--profile', choices=['none', 'torch', 'window'], default='none',
                    help='window: the first config plain, the second inside a torch.profiler '
                    'window, the rest plain again (a profiler opened in the middle of a run)')
    ap.add_argument('--trace')
    ap.add_argument('--json')
    ap.add_argument('--device', default='cuda')
    a = ap.parse_args()

    out = {'torch': torch.__version__, 'cuda': torch.version.cuda, 'profile': a.profile,
           'gpuwhy_preloaded': 'libgpuwhy' in os.environ.get('LD_PRELOAD', ''),
           'configs': {}}
    if a.device == 'cuda':
        out['gpu'] = torch.cuda.get_device_name(0)
    configs = a.configs.split(',')
    if a.profile == 'torch':
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if a.device == 'cuda' else [])
        with profile(activities=acts) as prof:
            for c in configs:
                out['configs'][c] = run_config(c, a.steps, a.warmup, a.device)
        trace = a.trace or 'torch_loop.trace.json'
        t0 = time.perf_counter()
        prof.export_chrome_trace(trace)
        out['export_s'] = time.perf_counter() - t0
        with open(trace) as f:
            events = json.load(f).get('traceEvents', [])
        out['profiler_kernels'] = sum(1 for e in events if e.get('cat') == 'kernel')
        out['profiler_memcpy'] = sum(1 for e in events if e.get('cat') == 'gpu_memcpy')
        out['profiler_memset'] = sum(1 for e in events if e.get('cat') == 'gpu_memset')
        out['trace_bytes'] = os.path.getsize(trace)
    elif a.profile == 'window':
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        for i, c in enumerate(configs):
            if i == 1:
                with profile(activities=acts) as prof:
                    out['configs'][c] = run_config(c, a.steps, a.warmup, a.device)
                out['profiler_kernels'] = sum(1 for e in prof.events()
                                              if e.device_type.name == 'CUDA')
            else:
                out['configs'][c] = run_config(c, a.steps, a.warmup, a.device)
    else:
        for c in configs:
            out['configs'][c] = run_config(c, a.steps, a.warmup, a.device)
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, 'w') as f:
            f.write(text)
    print(text)


if __name__ == '__main__':
    sys.exit(main())
