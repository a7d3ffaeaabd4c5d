# SPDX-License-Identifier: MIT
"""A training step with torch.cuda.synchronize() between the forward and the backward pass,
where nothing needs it (left over from timing code).

argv: steps width batch. Each step is a range."""
import sys

import torch

steps, width, batch = (int(a) for a in sys.argv[1:4])
model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                            torch.nn.Linear(width, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, width, device='cuda')
y = torch.randint(0, 10, (batch,), device='cuda')
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    loss = torch.nn.functional.cross_entropy(model(x), y)
    torch.cuda.synchronize()  # SYNC_LINE
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
