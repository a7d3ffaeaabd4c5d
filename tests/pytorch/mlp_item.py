# SPDX-License-Identifier: MIT
"""An eager MLP training loop that reads the loss with .item() every step (a host sync).

argv: steps layers width batch. Each step is an NVTX range "step"."""
import sys

import torch

steps, layers, width, batch = (int(a) for a in sys.argv[1:5])
dims = [width] * layers + [10]
blocks = []
for i in range(layers):
    blocks.append(torch.nn.Linear(dims[i], dims[i + 1]))
    if i + 1 < layers:
        blocks.append(torch.nn.ReLU())
model = torch.nn.Sequential(*blocks).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, width, device='cuda')
y = torch.randint(0, 10, (batch,), device='cuda')
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(step, loss.item())  # ITEM_LINE
    torch.cuda.nvtx.range_pop()
