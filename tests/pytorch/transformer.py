# SPDX-License-Identifier: MIT
"""A small transformer language-model step (embedding, attention, layer norm, GELU, dropout,
cross-entropy, AdamW, gradient clipping) and a few index, scan and sort operations: many of
PyTorch's kernel families, for the class tables.

argv: steps. Each step is a range."""
import sys

import torch

steps = int(sys.argv[1])
vocab, dim = 1000, 128
emb = torch.nn.Embedding(vocab, dim).cuda()
layer = torch.nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.1, batch_first=True,
                                         activation='gelu').cuda()
head = torch.nn.Linear(dim, vocab).cuda()
params = list(emb.parameters()) + list(layer.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
for step in range(steps):
    torch.cuda.nvtx.range_push('step')
    tok = torch.randint(0, vocab, (8, 32), device='cuda')
    logits = head(layer(emb(tok)))
    loss = torch.nn.functional.cross_entropy(logits.view(-1, vocab), tok.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    stats = torch.cumsum(logits, -1).amax(-1).sum() + torch.sort(tok, -1).values.float().mean()
    top = torch.where(tok > 5, tok, 0).topk(3).values
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
