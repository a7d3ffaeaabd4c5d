# SPDX-License-Identifier: MIT
"""A convolution, through cuDNN (argv[1] == 'cudnn': gpusim refuses it, saying what to do) or
through PyTorch's own implementation (im2col and a GEMM a sample, which gpusim runs).

argv: cudnn|native batch."""
import sys

import torch

torch.backends.cudnn.enabled = sys.argv[1] == 'cudnn'
batch = int(sys.argv[2])
conv = torch.nn.Conv2d(3, 8, 3).cuda()
y = conv(torch.randn(batch, 3, 16, 16, device='cuda'))
torch.cuda.synchronize()
