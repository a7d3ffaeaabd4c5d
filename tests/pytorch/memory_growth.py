# SPDX-License-Identifier: MIT
"""A loop that keeps a reference to a new tensor every step: device memory grows.

argv: steps mib. Each step allocates `mib` MiB that stays alive; each step is a range."""
import sys

import torch

steps, mib = (int(a) for a in sys.argv[1:3])
kept = []
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    kept.append(torch.empty(mib << 20, dtype=torch.uint8, device='cuda'))  # ALLOC_LINE
    kept[-1].fill_(1)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
