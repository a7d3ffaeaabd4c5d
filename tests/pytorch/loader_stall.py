# SPDX-License-Identifier: MIT
"""A training loop fed by a DataLoader whose samples take long to make (a stalled input
pipeline: the GPU waits for the host).

argv: steps stall_ms batch. Each sample sleeps stall_ms / batch; each step is a range."""
import sys
import time

import torch

steps, stall_ms, batch = (int(a) for a in sys.argv[1:4])


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return steps * batch

    def __getitem__(self, i):
        time.sleep(stall_ms / 1000.0 / batch)  # STALL_LINE
        return torch.ones(64), i % 10


model = torch.nn.Linear(64, 10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(Slow(), batch_size=batch, num_workers=0)
it = iter(loader)
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    xb, yb = next(it)
    loss = torch.nn.functional.cross_entropy(model(xb.cuda()), yb.cuda())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
