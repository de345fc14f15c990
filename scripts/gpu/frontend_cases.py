"""Prepares the frontend's GPU check (scripts/gpu/prepare.sh with CASES
including `frontend`): a small Hugging Face-style Llama
(test/python/Inputs/hf_llama.py) traced by the PyTorch frontend as a causal
LM and compiled for sm_90a with the optimizer in the step, under the `bf16`
recipe and under `fp4-all-dht16` (bf16 tensor-core GEMMs elsewhere), and
one run folder for both: the module's initial weights and token batches of
a small English-like corpus (test/Tools/mxfp4-run/Inputs/make_corpus.py).
scripts/gpu/frontend_check.py trains both on the GPU and compares their
loss curves with PyTorch's own training of the same module.

With GRAPH (a graph file of scripts/gpu/trace_transformers.py, e.g. its
llama-curve.npz: transformers' own LlamaForCausalLM of the same shape,
traced under PyTorch 2.x), the step is that graph's and the run starts from
its traced weights; frontend_check.py then trains transformers' module on
PyTorch's side.

Usage: frontend_cases.py OUT_DIR [GRAPH]
"""
import json
import os
import subprocess
import sys

import torch

import mxfp4

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "test", "python", "Inputs"))
from hf_llama import LlamaForCausalLM, causal_lm_loss  # noqa: E402

out = sys.argv[1]
# Attention through scaled_dot_product_attention, as transformers writes it:
# the frontend maps it onto the attention composites, so the fused kernels
# run (PyTorch's side runs its own SDPA kernels).
MODEL = dict(vocab_size=256, hidden_size=256, intermediate_size=704,
             num_hidden_layers=4, num_attention_heads=8,
             num_key_value_heads=4, attn_implementation="sdpa")
STEPS, BATCH, WINDOW = 300, 8, 256
OPTIMIZER = dict(lr=3e-3, min_lr_ratio=0.1, warmup_steps=30,
                 total_steps=STEPS, beta1=0.9, beta2=0.95, eps=1e-8,
                 weight_decay=0.1, clip_norm=1.0)

os.makedirs(out, exist_ok=True)
corpus = os.path.join(out, "corpus.txt")
subprocess.run([sys.executable, os.path.join(
    ROOT, "test", "Tools", "mxfp4-run", "Inputs", "make_corpus.py"), corpus,
    "20000"], check=True)
data = torch.tensor(list(open(corpus, "rb").read()), dtype=torch.int64)
generator = torch.Generator().manual_seed(1)
starts = torch.randint(0, len(data) - WINDOW, (STEPS, BATCH),
                       generator=generator)
batches = torch.stack([torch.stack([data[s:s + WINDOW] for s in row])
                       for row in starts])
os.remove(corpus)

graph = sys.argv[2] if len(sys.argv) > 2 else None
torch.manual_seed(0)
model = None if graph else LlamaForCausalLM(**MODEL)
for recipe in ("bf16", "fp4-all-dht16"):
    options = dict(recipe=recipe, target="sm_90a",
                   out_dir=os.path.join(out, recipe), optimizer=OPTIMIZER)
    if graph:
        step = mxfp4.compile_graph_file(graph, **options)
    else:
        step = mxfp4.compile_training_step(model, (batches[0],),
                                           causal_lm_loss, **options)
    for unused in ("kernels.mlir", "kernels.ptx", "host.so"):
        os.remove(os.path.join(out, recipe, unused))
name = "transformers-" + step.source.module_type if graph else \
    "hf_llama-" + "x".join(str(v) for v in MODEL.values())
step.export_run(os.path.join(out, "run"), batches, seed=0, model=name)
kernels = open(os.path.join(out, "fp4-all-dht16", "plan.txt")).read()
fused = sorted({w for w in kernels.split() if w.startswith("attention_")})
# With a graph file, PyTorch's side is transformers' module of the traced
# shape (trace_transformers.py's CURVE configuration).
config = {"model": MODEL, "optimizer": OPTIMIZER, "steps": STEPS}
if graph:
    # A graph traced with eager attention has no attention composites, so
    # no fused kernels: PyTorch's side then runs transformers' eager
    # attention too.
    config["model"] = dict(MODEL, attn_implementation="sdpa" if fused else "eager")
    config["transformers"] = dict(
        vocab_size=256, max_position_embeddings=1024, rms_norm_eps=1e-5,
        use_cache=False, attention_dropout=0.0, hidden_size=256,
        intermediate_size=704, num_hidden_layers=4, num_attention_heads=8,
        num_key_value_heads=4, tie_word_embeddings=False)
json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=2)
parameters = sum(v.size for v in step.source.state.values()) if graph else \
    sum(p.numel() for p in model.parameters())
print(f"frontend: {parameters} parameters, "
      f"{STEPS} steps of {BATCH} x {WINDOW} tokens, recipes bf16 and "
      f"fp4-all-dht16; fused attention kernels: {', '.join(fused) or 'none'}")
