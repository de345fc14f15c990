# scaled_dot_product_attention in a traced model: the causal calls become
# the mxfp4::causal_attention ops (mxfp4_fx.sdpa_as_composites, on while
# tracing) and import as calls of the attention composites, which the GPU
# pipelines replace by the fused kernels and the CPU inlines. A Hugging
# Face-style Llama written with SDPA (transformers' sdpa_attention_forward:
# causal, GQA in the call) trains to the same loss and gradients as the
# same weights with eager attention (softmax of masked scores, repeat_kv);
# a call the composites do not express (a mask) takes PyTorch's own path;
# the graph file of the SDPA model keeps the ops.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import mxfp4
import mxfp4_fx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from hf_llama import LlamaForCausalLM, causal_lm_loss  # noqa: E402

out = sys.argv[1]
torch.manual_seed(0)
shape = dict(vocab_size=256, hidden_size=64, intermediate_size=128,
             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
sdpa = LlamaForCausalLM(attn_implementation="sdpa", **shape)
eager = LlamaForCausalLM(attn_implementation="eager", **shape)
eager.load_state_dict(sdpa.state_dict())
ids = torch.randint(0, 256, (2, 32))

step = mxfp4.compile_training_step(sdpa, (ids,), causal_lm_loss)
calls = [str(n.target) for n in step.graph.graph.nodes
         if str(n.target).startswith("mxfp4.")]
# CHECK: traced: 2 x mxfp4.causal_attention.default, 2 x mxfp4.causal_attention_backward.default
print("traced:", ", ".join(f"{calls.count(c)} x {c}" for c in sorted(set(calls))))
# One composite of each kind (both layers share the shapes), two calls each.
# CHECK-NEXT: composites: 2 calls: 4
print("composites:", step.mlir.count("mxfp4.composite ="),
      "calls:", step.mlir.count("func.call @causal_attention"))

loss, grads = step.step(ids)
eager.zero_grad()
ref = causal_lm_loss(eager(ids), ids)
ref.backward()
worst = abs(float(loss - ref)) / float(ref)
for n, p in eager.named_parameters():
    worst = max(worst, float((grads[n] - p.grad).norm() / p.grad.norm()))
# CHECK-NEXT: against eager attention within 1e-5: True
print("against eager attention within 1e-5:", worst < 1e-5)


class Masked(torch.nn.Module):
    """SDPA with a mask: not a composite, PyTorch's own path."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 48)

    def forward(self, x):
        qkv = self.proj(x).view(2, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        mask = torch.ones(8, 8, dtype=torch.bool).triu()  # anti-causal
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


x, target = torch.randn(2, 8, 16), torch.randn(2, 2, 8, 8)
masked = mxfp4.compile_training_step(Masked(), (x, target), F.mse_loss)
m_loss, m_grads = masked.step(x, target)
with mxfp4_fx.sdpa_as_composites():  # PyTorch 1.13 has no SDPA of its own
    m_ref = F.mse_loss(masked.module(x), target)
# CHECK-NEXT: masked: 0 composites, loss as PyTorch's: True
print("masked:", masked.mlir.count("mxfp4.composite ="), "composites, loss as "
      "PyTorch's:", abs(float(m_loss) - float(m_ref)) < 1e-6)

path = os.path.join(out, "sdpa.npz")
mxfp4_fx.save(mxfp4_fx.trace_training_step(sdpa, (ids,), causal_lm_loss,
                                           state_arguments=False), path)
read = mxfp4.compile_graph_file(path)
graph = read.source
loss, grads = read.step(torch.from_numpy(graph.inputs[0]))
worst = max(float(np.linalg.norm(grads[n].numpy() - r) / np.linalg.norm(r))
            for n, r in zip(graph.grad_names, graph.references[1:]))
# CHECK-NEXT: graph file: 2 composites, references within 1e-5: True
print("graph file:", read.mlir.count("mxfp4.composite ="),
      "composites, references within 1e-5:", worst < 1e-5)
