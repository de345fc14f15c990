# The PyTorch frontend on bf16 autocast regions: bf16 tensors in the traced
# graph are carried as f32 holding bf16 values, each op with a bf16 result
# computing in f32 and rounding once. An MLP and a Hugging Face-style Llama
# whose forward runs under torch.autocast("cpu", dtype=torch.bfloat16):
# loss and gradients match PyTorch running the same traced graph with the
# same semantics (each op in f32, a bf16 result rounded; an FX
# interpreter) far closer than f32 training does, so a bf16 value the
# import kept in f32 would show. PyTorch 1.13's own bf16 CPU kernels round
# inside some ops (silu: x / (1 + exp(-x)) with each step rounded), so
# their gap is printed, not bounded.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: %PYTHON %s | FileCheck %s

import os
import sys

import torch
import torch.nn.functional as F

import mxfp4

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from hf_llama import LlamaForCausalLM, causal_lm_loss  # noqa: E402

torch.manual_seed(0)


class Autocast(torch.nn.Module):
    """`inner`'s forward under bf16 autocast, its result as f32."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *args):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.inner(*args).float()


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 96)
        self.fc2 = torch.nn.Linear(96, 32)

    def forward(self, x):
        return self.fc2(F.silu(self.fc1(x)))


def reference(model, loss_fn, inputs):
    model.zero_grad()
    if len(inputs) == 1:
        loss = loss_fn(model(inputs[0]), inputs[0])
    else:
        loss = loss_fn(model(*inputs[:-1]), inputs[-1])
    loss.backward()
    return loss.detach(), {n: p.grad.clone()
                           for n, p in model.named_parameters()}


class RoundOnce(torch.fx.Interpreter):
    """Runs a traced graph with each op computed in f32 from its operands'
    values and a bf16 result rounded once."""

    def run_node(self, node):
        if node.op != "call_function":
            return super().run_node(node)
        args, kwargs = self.fetch_args_kwargs_from_env(node)
        wide = (lambda v: v.float() if isinstance(v, torch.Tensor) and
                v.dtype == torch.bfloat16 else v)
        args = torch.fx.node.map_aggregate(args, wide)
        kwargs = {k: (torch.float32 if v == torch.bfloat16 else wide(v))
                  for k, v in kwargs.items()}
        result = node.target(*args, **kwargs)
        meta = node.meta.get("tensor_meta")
        if isinstance(result, torch.Tensor) and \
                getattr(meta, "dtype", None) == torch.bfloat16:
            result = result.bfloat16()
        return result


def round_once(step, inputs):
    """The traced step's (loss, grads) under RoundOnce."""
    trace = step.source
    state = trace.state()
    results = RoundOnce(trace.graph_module).run(
        *[state[n].detach() for n in trace.state_names], *inputs)
    return results[0].float(), {n[len("inner."):]: g.float() for n, g in
                                zip(trace.names, results[1:])}


def gap(a, b, names=None):
    """Worst relative difference of the losses and the gradients `names`
    (default all)."""
    (la, ga), (lb, gb) = a, b
    worst = abs(float(la - lb)) / abs(float(lb))
    for n in gb if names is None else names:
        worst = max(worst, float((ga[n] - gb[n]).norm() / gb[n].norm()))
    return worst


def check(label, model, loss_fn, inputs, bounded=None):
    """Prints the gaps; bounds those of the loss and the gradients
    `bounded` (default all)."""
    wrapped = Autocast(model)
    step = mxfp4.compile_training_step(wrapped, inputs, loss_fn)
    ours = step.step(*inputs)
    ours = (ours[0], {n[len("inner."):]: g for n, g in ours[1].items()})
    torch_bf16 = reference(wrapped, loss_fn, inputs)
    torch_bf16 = (torch_bf16[0], {n[len("inner."):]: g
                                  for n, g in torch_bf16[1].items()})
    torch_f32 = reference(model, loss_fn, inputs)
    once = round_once(step, inputs)
    narrow = sum(line.count("arith.truncf") for line in step.mlir.split("\n"))
    close, far = gap(ours, once, bounded), gap(torch_f32, once, bounded)
    print(f"{label}: {narrow} roundings to bf16; against the graph rounded "
          f"once {close:.1e} (all gradients {gap(ours, once):.1e}), f32 "
          f"against it {far:.1e}, PyTorch 1.13's autocast against it "
          f"{gap(torch_bf16, once):.1e}")
    print(f"{label}: within 1e-4 and 10x closer than f32:",
          close < 1e-4 and close * 10 < far)


x, target = torch.randn(64, 64), torch.randn(64, 32)
# CHECK: mlp: {{[0-9]+}} roundings to bf16
# CHECK: mlp: within 1e-4 and 10x closer than f32: True
check("mlp", MLP(), F.mse_loss, (x, target))

llama = LlamaForCausalLM(vocab_size=256, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2)
ids = torch.randint(0, 256, (2, 32))
# Bounded: the loss and the gradients nearest it. Further back a summation
# order that differs from PyTorch's (the GEMMs') flips a bf16 rounding now
# and then, and the flips multiply through the backward pass's 180
# roundings (the first layer's gradients differ by up to 4e-3 for some
# seeds, as two PyTorch builds would).
# CHECK: llama: {{[0-9]+}} roundings to bf16
# CHECK: llama: within 1e-4 and 10x closer than f32: True
check("llama", llama, causal_lm_loss, (ids,),
      bounded=["lm_head.weight", "norm.weight"])


class Double(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(x).double().sum(-1).float()


# A dtype the import cannot carry exactly is an error, not a cast.
# CHECK: unsupported aten op 'aten._to_copy.default' at {{.*}}torch_autocast.py:{{[0-9]+}} (in forward): dtype torch.float64 (only float32, bfloat16 and float16 tensors, and integer or bool tensors, all carried as float32)
try:
    mxfp4.compile_training_step(Double(), (x, target[:, 0]), F.mse_loss)
    print("no error")
except mxfp4.Mxfp4Error as e:
    print(e)
