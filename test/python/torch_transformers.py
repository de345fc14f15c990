# Hugging Face transformers' LlamaForCausalLM as shipped, traced where
# transformers runs (PyTorch 2.11, transformers 5.17: scripts/gpu/
# trace_transformers.py wrote Inputs/transformers/llama-tiny-{eager,sdpa}.npz
# with PyTorch's loss and gradients on their batch), imported and compiled
# here (PyTorch 1.13, which cannot run transformers 5):
#  - both attention implementations reproduce PyTorch 2.11's loss and every
#    gradient within 1e-5 relative on the CPU path;
#  - `sdpa` imports as the attention composites (so the fused GPU kernels
#    apply), `eager` as its softmax and batched matmuls;
#  - under fp4-all-dht16 the recipe passes give every linear layer its three
#    roles; the tied LM head and attention stay high precision.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: %PYTHON %s %S/Inputs/transformers | FileCheck %s

import os
import subprocess
import sys

import numpy as np
import torch

import mxfp4

# CHECK: eager: traced by torch 2.11.0{{.*}}, LlamaForCausalLM, 20 parameters
# CHECK-NEXT: eager: loss and gradients within 1e-5 of PyTorch's: True
# CHECK-NEXT: eager: 0 attention composites
# CHECK-NEXT: roles: 42 tagged GEMMs, fprop/dgrad/wgrad of all 14 linear layers True, embedding or head tagged False
# CHECK-NEXT: sdpa: traced by torch 2.11.0{{.*}}, LlamaForCausalLM, 20 parameters
# CHECK-NEXT: sdpa: loss and gradients within 1e-5 of PyTorch's: True
# CHECK-NEXT: sdpa: 2 attention composites
# CHECK-NEXT: roles: 42 tagged GEMMs, fprop/dgrad/wgrad of all 14 linear layers True, embedding or head tagged False
inputs = sys.argv[1]
package = os.path.dirname(mxfp4.__file__)
opt = os.path.join(package, "..", "..", "bin", "mxfp4-opt")

for attn in ("eager", "sdpa"):
    path = os.path.join(inputs, f"llama-tiny-{attn}.npz")
    step = mxfp4.compile_graph_file(path)
    graph = step.source
    loss, grads = step.step(torch.from_numpy(graph.inputs[0]))
    worst = abs(float(loss) - float(graph.references[0])) / \
        abs(float(graph.references[0]))
    for name, ref in zip(graph.grad_names, graph.references[1:]):
        worst = max(worst, float(np.linalg.norm(grads[name].numpy() - ref) /
                                 np.linalg.norm(ref)))
    print(f"{attn}: traced by torch {graph.torch_version}, "
          f"{graph.module_type}, {len(graph.names)} parameters")
    print(f"{attn}: loss and gradients within 1e-5 of PyTorch's:",
          worst < 1e-5)
    print(f"{attn}:", step.mlir.count("mxfp4.composite ="),
          "attention composites")

    fp4 = mxfp4.compile_graph_file(path, recipe="fp4-all-dht16")
    roles = subprocess.run([opt, "--mxfp4-annotate-roles"], input=fp4.mlir,
                           capture_output=True, text=True,
                           check=True).stdout
    tags = [line.split("#mxfp4.gemm<")[1].split(">")[0]
            for line in roles.splitlines() if "#mxfp4.gemm<" in line]
    linear = sorted({n.rsplit(".", 1)[0] for n in graph.names
                     if n.endswith("_proj.weight")})
    complete = all(
        sorted(t.split(",")[0] for t in tags if f'"{layer}"' in t) ==
        ["dgrad", "fprop", "wgrad"] for layer in linear)
    print(f"roles: {len(tags)} tagged GEMMs, fprop/dgrad/wgrad of all "
          f"{len(linear)} linear layers {complete}, embedding or head tagged "
          f"{any('embed' in t or 'lm_head' in t for t in tags)}")
