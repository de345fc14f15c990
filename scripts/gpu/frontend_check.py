"""The frontend's GPU check (on the GPU machine, after frontend_cases.py
here): trains the frontend-compiled Llama with mxfp4-cuda-run under each
compiled recipe, then the same module (test/python/Inputs/hf_llama.py) with
PyTorch from the same initial weights on the same batches, in bf16 autocast
with f32 master weights (AdamW in two groups, clip_grad_norm_, the same
warm-up and cosine schedule), and prints how far each loss curve is from
PyTorch's. The `bf16` recipe is the same arithmetic up to summation order
and kernels (bound: mean gap over the last 50 steps within 2 % of PyTorch's
loss); `fp4-all-dht16`'s gap is reported, not bounded. Every step's
losses go to CASE_DIR/curves.json.

Usage: frontend_check.py RUNTIME CASE_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

runtime, case = sys.argv[1], sys.argv[2]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "test", "python", "Inputs"))
from hf_llama import (LlamaForCausalLM, causal_lm_loss,  # noqa: E402
                      reference_adamw)

config = json.load(open(os.path.join(case, "config.json")))
opt, steps = config["optimizer"], config["steps"]
run = os.path.join(case, "run")
manifest = open(os.path.join(run, "run.txt")).read().splitlines()
names = [line.split()[2] for line in manifest if line.startswith("param ")]
batch = int(next(line.split()[1] for line in manifest
                 if line.startswith("batch ")))
window = int(next(line.split()[1] for line in manifest
                  if line.startswith("window ")))
tokens = np.fromfile(os.path.join(run, "batches.bin"), dtype=np.int32)
batches = torch.from_numpy(tokens.astype(np.int64)).view(steps, batch, window)


def losses_of(metrics):
    return [r["loss"] for r in map(json.loads, open(metrics)) if "loss" in r]


curves = {}
for recipe in ("bf16", "fp4-all-dht16"):
    folder = os.path.join(case, recipe)
    subprocess.run([runtime, "train", "plan.txt", "kernels.cubin",
                    "--run=../run", "--out=out", f"--recipe={recipe}"],
                   cwd=folder, check=True, stdout=subprocess.DEVNULL)
    curves[recipe] = losses_of(os.path.join(folder, "out", "metrics.jsonl"))

torch.manual_seed(0)
if "transformers" in config:
    # transformers' own module (a graph file traced it): logits from its
    # output, the same causal loss.
    import transformers
    tf_config = transformers.LlamaConfig(**config["transformers"])
    tf_config._attn_implementation = config["model"].get(
        "attn_implementation", "sdpa")
    hf = transformers.LlamaForCausalLM(tf_config).cuda()

    class Logits(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, ids):
            return self.inner(ids).logits
    model = hf
    forward = Logits(hf)
else:
    model = LlamaForCausalLM(**config["model"]).cuda()
    forward = model
state = dict(model.named_parameters())
with torch.no_grad():
    for i, name in enumerate(names):
        state[name].copy_(torch.from_numpy(
            np.load(os.path.join(run, f"param{i}.npy"))))
adamw, lr_at = reference_adamw(model, opt)

reference = []
for t in range(steps):
    for group in adamw.param_groups:
        group["lr"] = lr_at(t)
    adamw.zero_grad(set_to_none=True)
    ids = batches[t].cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = forward(ids)
    loss = causal_lm_loss(logits.float(), ids)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), opt["clip_norm"])
    adamw.step()
    reference.append(loss.item())

print(f"frontend: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
      f"{steps} steps of {batch} x {window} tokens")
print("step  pytorch-bf16  " + "  ".join(f"{r:>14}" for r in curves))
for t in sorted({0, 9, 49, 99, 149, 199, 249, steps - 1}):
    if t < steps:
        print(f"{t + 1:4d}  {reference[t]:12.4f}  " +
              "  ".join(f"{curves[r][t]:14.4f}" for r in curves))
# Every step's losses, for plots and the docs' tables.
json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
               pytorch_bf16=reference, **curves),
          open(os.path.join(case, "curves.json"), "w"))
ok = True
for recipe, curve in curves.items():
    gaps = [a - b for a, b in zip(curve, reference)]
    tail = sum(gaps[-50:]) / 50
    rel = tail / (sum(reference[-50:]) / 50)
    print(f"{recipe}: {len(curve)} steps; mean gap over the last 50 steps "
          f"{tail:+.4f} ({rel:+.2%} of PyTorch's), largest "
          f"{max(gaps, key=abs):+.4f}")
    if recipe == "bf16":
        ok = ok and len(curve) == steps and abs(rel) <= 0.02
print("frontend:", "ok (bf16 within 2 %)" if ok else "FAILED")
sys.exit(0 if ok else 1)
