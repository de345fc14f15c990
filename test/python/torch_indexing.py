# The PyTorch frontend on indexing as Hugging Face models write it: position
# ids from a padded attention mask (`cumsum(-1) - 1`, then `masked_fill_`),
# a learned position table read with `index_select` (its gradient traces to
# `index_add_`), target log-probabilities picked with `gather` (gradient:
# `scatter_add_`), and an LM head tied to the token embedding (one
# parameter used twice). The loss and every gradient match PyTorch's
# autograd under `bf16` (f32 on the CPU) to 1e-5 relative.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: %PYTHON %s | FileCheck %s

import torch
from torch import nn
import torch.nn.functional as F

import mxfp4

torch.manual_seed(0)


class Indexed(nn.Module):
    def __init__(self, vocab=64, dim=32, positions=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(0.1 * torch.randn(positions, dim))
        self.proj = nn.Linear(dim, dim, bias=False)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight  # tied

    def forward(self, ids, mask):
        # transformers' position ids for a left-padded batch.
        positions = mask.long().cumsum(-1) - 1
        positions.masked_fill_(mask == 0, 1)
        b, s = ids.shape
        x = self.embed(ids) + self.pos.index_select(
            0, positions.reshape(-1)).reshape(b, s, -1)
        return self.lm_head(F.silu(self.proj(x)))


def loss_fn(logits, targets):
    logp = F.log_softmax(logits, dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()


model = Indexed()
ids = torch.randint(0, 64, (2, 16))
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, :5] = 0  # left padding
targets = torch.randint(0, 64, (2, 16))

ref_loss = loss_fn(model(ids, mask), targets)
ref = dict(zip([n for n, _ in model.named_parameters()],
               torch.autograd.grad(ref_loss, list(model.parameters()))))

step = mxfp4.compile_training_step(model, (ids, mask, targets), loss_fn,
                                   recipe="bf16")
# The tied LM head is the embedding's parameter.
# CHECK: parameters: pos embed.weight proj.weight
print("parameters:", " ".join(step.parameter_names))
ops = step.mlir
# CHECK-NEXT: traced: cumsum index_select index_add gather scatter_add
names = [n for n in ("cumsum", "index_select", "index_add", "gather",
                     "scatter_add") if any(n in str(node.target)
                                           for node in step.graph.graph.nodes)]
print("traced:", " ".join(names))
loss, grads = step.step(ids, mask, targets)


def rel(a, b):
    return float((a - b).norm() / b.norm())


worst = max([rel(loss, ref_loss.detach())] +
            [rel(grads[n], ref[n]) for n in step.parameter_names])
# CHECK-NEXT: loss and 3 gradients within 1e-5 of PyTorch's: True
print(f"loss and {len(grads)} gradients within 1e-5 of PyTorch's: "
      f"{worst < 1e-5}")
