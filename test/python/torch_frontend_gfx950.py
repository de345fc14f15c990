# The PyTorch frontend for a GPU: a small Hugging Face-style Llama traced as
# a causal LM (one token input [batch, window]), compiled for gfx950 with
# the optimizer in the step (`target="gfx950"`), its weights, batches and
# a held-out batch exported as a run folder, trained by mxfp4-hip-run on
# the gfx950 emulator, and the checkpoint loaded back into the module.
# PyTorch trains a copy of the same module on the same batches (AdamW in
# two parameter groups, clip_grad_norm_, the same warm-up and cosine
# schedule): with the high-precision GEMMs in f32 (the CPU's numerics) the
# loss curves, the held-out losses (@loss) and the trained weights agree to
# f32 rounding (1e-5 relative is the bound). Then the errors a user meets.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t compile | FileCheck %s --check-prefix=COMPILE
# RUN: mxfp4-hip-run train %t/c/plan.txt %t/c/kernels.mlir --run=%t/run --out=%t/gpu --recipe=bf16 --target=gfx950-emulator | FileCheck %s --check-prefix=TRAIN
# RUN: %PYTHON %s %t check | FileCheck %s

import copy
import json
import os
import sys

import torch

import mxfp4
import mxfp4_fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from hf_llama import (LlamaForCausalLM, causal_lm_loss,  # noqa: E402
                      reference_adamw)

out, phase = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = LlamaForCausalLM(vocab_size=256, hidden_size=64,
                         intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2)
reference = copy.deepcopy(model)
STEPS, BATCH, WINDOW = 6, 2, 33
batches = torch.randint(0, 256, (STEPS, BATCH, WINDOW))
held_out = torch.randint(0, 256, (1, BATCH, WINDOW))
OPT = dict(lr=3e-3, min_lr_ratio=0.1, warmup_steps=2, total_steps=STEPS,
           beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1, clip_norm=1.0)

step = mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, recipe="bf16", target="gfx950",
    out_dir=f"{out}/c", optimizer=OPT, gemm_precision="f32")
n = len(step.parameter_names)
if phase == "compile":
    # COMPILE: compiled: compiled.json kernels.hsaco kernels.mlir kernels.s plan.txt
    print("compiled:", " ".join(sorted(os.listdir(f"{out}/c"))))
    plan = open(f"{out}/c/plan.txt").read()
    # 21 parameters, their two moments, the tokens and the step.
    # COMPILE-NEXT: train_step arguments: 65
    print("train_step arguments:",
          plan.split("function train_step ")[1].split()[0])
    step.export_run(f"{out}/run", batches, eval_batches=held_out,
                    eval_every=3)
    # COMPILE-NEXT: run: batches.bin eval.bin param0.npy {{.*}} param20.npy {{.*}} run.txt
    print("run:", " ".join(sorted(os.listdir(f"{out}/run"))))
    sys.exit(0)

# TRAIN: step 1: loss
# TRAIN: step 3: eval loss
# TRAIN: step 6: loss
# TRAIN: step 6: eval loss
# TRAIN: checkpoint: {{.*}}gpu/checkpoint

# PyTorch's own training of the same module on the same batches.
adamw, lr_at = reference_adamw(reference, OPT)
torch_losses, torch_evals = [], []
for t in range(STEPS):
    for group in adamw.param_groups:
        group["lr"] = lr_at(t)
    adamw.zero_grad()
    loss = causal_lm_loss(reference(batches[t]), batches[t])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), OPT["clip_norm"])
    adamw.step()
    torch_losses.append(float(loss))
    if t + 1 in (3, 6):
        with torch.no_grad():
            torch_evals.append(float(causal_lm_loss(reference(held_out[0]),
                                                    held_out[0])))
records = list(map(json.loads, open(f"{out}/gpu/metrics.jsonl")))
ours = [r["loss"] for r in records if "loss" in r]
evals = [r["eval_loss"] for r in records if "eval_loss" in r]
worst = max(abs(a - b) / abs(b) for a, b in zip(ours, torch_losses))
# CHECK: losses: 6 steps, within 1e-5 of PyTorch's: True
print(f"losses: {len(ours)} steps, within 1e-5 of PyTorch's: "
      f"{len(ours) == STEPS and worst < 1e-5}")
worst = max(abs(a - b) / abs(b) for a, b in zip(evals, torch_evals))
# CHECK-NEXT: held-out losses (@loss): 2, within 1e-5 of PyTorch's: True
print(f"held-out losses (@loss): {len(evals)}, within 1e-5 of PyTorch's: "
      f"{len(evals) == 2 and worst < 1e-5}")

step.load_checkpoint(f"{out}/gpu/checkpoint")
trained = dict(reference.named_parameters())
worst = max(float((p - trained[n]).norm() / trained[n].norm())
            for n, p in model.named_parameters())
# CHECK-NEXT: weights after load_checkpoint within 1e-5 of PyTorch's: True
print(f"weights after load_checkpoint within 1e-5 of PyTorch's: "
      f"{worst < 1e-5}")


def error(fn):
    try:
        fn()
    except mxfp4.Mxfp4Error as e:
        return str(e).splitlines()[0]
    return "no error"


# CHECK-NEXT: target 'sm_80' is not one of cpu, sm_90a, gfx950
print(error(lambda: mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, target="sm_80")))
# CHECK-NEXT: target 'gfx950' needs out_dir, the folder its runtime runs from
print(error(lambda: mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, target="gfx950")))
# CHECK-NEXT: optimizer: unknown key 'momentum' (lr, min_lr_ratio, warmup_steps, total_steps, beta1, beta2, eps, weight_decay, clip_norm)
print(error(lambda: mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, target="gfx950",
    out_dir=f"{out}/bad", optimizer={"momentum": 0.9})))
# CHECK-NEXT: optimizer: want 0 <= warmup_steps <= total_steps and total_steps >= 1, got 10 and 6
print(error(lambda: mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, target="gfx950",
    out_dir=f"{out}/bad", optimizer={"warmup_steps": 10, "total_steps": 6})))
# CHECK-NEXT: train step from @loss_and_grads: no parameter 'norm.bias' (given without weight decay)
print(error(lambda: mxfp4.compile_training_step(
    model, (batches[0],), causal_lm_loss, target="gfx950",
    out_dir=f"{out}/bad", no_decay=["norm.bias"])))
# CHECK-NEXT: export_run: the runtimes train a step of one token input [batch, window]; this step takes [(2, 33)] and the batches are (6, 2, 32)
print(error(lambda: step.export_run(f"{out}/bad", batches[:, :, :32])))
# CHECK-NEXT: load_checkpoint: '{{.*}}empty.safetensors' has no embed_tokens.weight
other = copy.deepcopy(model)
trace_other = mxfp4_fx.Trace(other, None, ["embed_tokens.weight"], [], [],
                             [batches[0]], ())
step_other = mxfp4.torch_frontend.GpuTrainingStep(trace_other, "", "gfx950",
                                                  out)
open(f"{out}/empty.safetensors", "wb").write(
    (2).to_bytes(8, "little") + b"{}")
print(error(lambda: step_other.load_checkpoint(f"{out}/empty.safetensors")))
# CHECK-NOT: no error
