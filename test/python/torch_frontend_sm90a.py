# The PyTorch frontend for an H100/H200: the small Hugging Face-style Llama
# traced as a causal LM and compiled for sm_90a with the optimizer in the
# step and bf16 tensor-core GEMMs writes what `mxfp4-run compile --out-dir`
# writes (kernels, the host plan mxfp4-cuda-run trains from, host.so,
# compiled.json), and export_run the run folder mxfp4-cuda-run reads. (The
# gfx950 test trains such a step on the emulator; scripts/gpu trains this
# one on an H100/H200.)
# REQUIRES: python-bindings
# REQUIRES: torch
# REQUIRES: cuda
# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# RUN: FileCheck %s --check-prefix=ORIGIN < %t/c/compiled.json
# ORIGIN: "gemm_precision": "bf16",
# ORIGIN: "program": "<torch_frontend: LlamaForCausalLM>",
# ORIGIN: "recipe": "fp4-all-dht16",
# ORIGIN: "target": "sm_90a"

import os
import sys

import torch

import mxfp4

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from hf_llama import LlamaForCausalLM, causal_lm_loss  # noqa: E402

out = sys.argv[1]
torch.manual_seed(0)
model = LlamaForCausalLM(vocab_size=256, hidden_size=64,
                         intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2)
batches = torch.randint(0, 256, (4, 2, 64))
step = mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, recipe="fp4-all-dht16",
    target="sm_90a", out_dir=f"{out}/c", optimizer={"total_steps": 4})
# CHECK: compiled: compiled.json host.so kernels.cubin kernels.mlir kernels.ptx plan.txt
print("compiled:", " ".join(sorted(os.listdir(f"{out}/c"))))
plan = open(f"{out}/c/plan.txt").read()
# CHECK-NEXT: functions: loss_and_grads loss train_step
print("functions:", " ".join(line.split()[1] for line in plan.splitlines()
                             if line.startswith("function ")))
# CHECK-NEXT: train_step arguments: 65
print("train_step arguments:",
      plan.split("function train_step ")[1].split()[0])
# The linear layers' GEMMs are MXFP4 kernels (gemm_MxNxK_<C type>).
# CHECK-NEXT: MXFP4 GEMM kernels: True
print("MXFP4 GEMM kernels:",
      "llvm.func @gemm_128x128x64_" in open(f"{out}/c/kernels.mlir").read())
step.export_run(f"{out}/run", batches)
# CHECK-NEXT: run.txt: steps 4 batch 2 window 64
manifest = open(f"{out}/run/run.txt").read().split("\n")
print("run.txt:", " ".join(manifest[1:4]))

# The same model written with scaled_dot_product_attention: its calls become
# the attention composites, which the sm_90a pipeline replaces by the fused
# attention kernels (forward, and the backward's row-dot, dq and dk-dv).
sdpa = LlamaForCausalLM(vocab_size=256, hidden_size=64, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, attn_implementation="sdpa")
mxfp4.compile_training_step(
    sdpa, (batches[0],), causal_lm_loss, recipe="fp4-all-dht16",
    target="sm_90a", out_dir=f"{out}/sdpa", optimizer={"total_steps": 4})
words = open(f"{out}/sdpa/plan.txt").read().split()
# CHECK-NEXT: fused attention: attention_bwd_delta_b2_s64_kv2x2_d16_hhhhfhhhh attention_bwd_dkdv_b2_s64_kv2x2_d16_hhhhfhhhh attention_bwd_dq_b2_s64_kv2x2_d16_hhhhfhhhh attention_fwd_b2_s64_kv2x2_d16_hhhhf
print("fused attention:", " ".join(sorted({w for w in words
                                           if w.startswith("attention_")})))
