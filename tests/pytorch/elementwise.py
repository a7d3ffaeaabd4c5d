# SPDX-License-Identifier: MIT
"""A block of small elementwise operations, one kernel each: what fusion (torch.compile) would
make one kernel.

argv: steps repeats size. Each step is a range of `repeats` times three in-place operations
(multiply, add, ReLU) on `size` floats."""
import sys

import torch

steps, repeats, size = (int(a) for a in sys.argv[1:4])
# made on the host and copied: no kernel of its own before the block's
x = torch.ones(size).cuda()
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    for i in range(repeats):
        x.mul_(1.0001)  # OP_LINE
        x.add_(0.5)
        x.relu_()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
