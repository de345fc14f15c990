# Graph files: a training step traced by mxfp4_fx (here with PyTorch 1.13's
# make_fx), written with mxfp4_fx.save, read back and compiled with
# mxfp4.compile_graph_file. The read graph imports to the same MLIR as the
# live trace, and its compiled step reproduces the references PyTorch
# computed when it was written (loss and gradients within 1e-5 relative).
# Broken files are located errors.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s

import os
import sys
import zipfile

import numpy as np
import torch

import mxfp4
import mxfp4_fx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from hf_llama import LlamaForCausalLM, causal_lm_loss  # noqa: E402

out = sys.argv[1]
torch.manual_seed(0)
model = LlamaForCausalLM(vocab_size=256, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2)
ids = torch.randint(0, 256, (2, 33))
trace = mxfp4_fx.trace_training_step(model, (ids,), causal_lm_loss,
                                     state_arguments=False)
path = os.path.join(out, "llama.npz")
mxfp4_fx.save(trace, path)

graph = mxfp4_fx.load(path)
# CHECK: read: 21 parameters, 1 input (2, 33) int64, 22 references
print(f"read: {len(graph.names)} parameters, {len(graph.inputs)} input "
      f"{graph.inputs[0].shape} {graph.inputs[0].dtype}, "
      f"{len(graph.references)} references")

live = mxfp4.compile_training_step(model, (ids,), causal_lm_loss)
read = mxfp4.compile_graph_file(path)
# The graph read back imports to the same function as the trace itself.
# CHECK-NEXT: same MLIR as the live trace: True
print("same MLIR as the live trace:", read.mlir == mxfp4.torch_frontend.import_graph(
    trace.graph_module, *mxfp4.torch_frontend.capture.argument_names(trace),
    "train_step")[0])

loss, grads = read.step(torch.from_numpy(graph.inputs[0]))
worst = abs(float(loss) - float(graph.references[0])) / \
    abs(float(graph.references[0]))
for name, ref in zip(graph.grad_names, graph.references[1:]):
    worst = max(worst, float(np.linalg.norm(grads[name].numpy() - ref) /
                             np.linalg.norm(ref)))
# CHECK-NEXT: references within 1e-5: True
print("references within 1e-5:", worst < 1e-5)
live_loss, _ = live.step(ids)
# CHECK-NEXT: same loss as the live trace: True
print("same loss as the live trace:", float(live_loss) == float(loss))


def error(thunk):
    try:
        thunk()
    except (mxfp4.Mxfp4Error, mxfp4_fx.GraphFileError) as e:
        return str(e).replace(out, "OUT")
    return "no error"


# CHECK-NEXT: OUT/missing.npz: not a graph file ({{.*}}No such file{{.*}})
print(error(lambda: mxfp4.compile_graph_file(f"{out}/missing.npz")))
np.savez(f"{out}/plain.npz", x=np.zeros(3))
# CHECK-NEXT: OUT/plain.npz: no graph.json entry
print(error(lambda: mxfp4.compile_graph_file(f"{out}/plain.npz")))
np.savez(f"{out}/other.npz", **{"graph.json": np.frombuffer(
    b'{"format": "other", "version": 1}', dtype=np.uint8)})
# CHECK-NEXT: OUT/other.npz: format 'other' version 1, expected 'mxfp4-fx-graph' 1
print(error(lambda: mxfp4.compile_graph_file(f"{out}/other.npz")))
# A file missing one parameter's values.
with zipfile.ZipFile(path) as src, \
        zipfile.ZipFile(f"{out}/partial.npz", "w") as dst:
    for item in src.namelist():
        if item != "state/norm.weight.npy":
            dst.writestr(item, src.read(item))
# CHECK-NEXT: OUT/partial.npz: no entry 'state/norm.weight'
print(error(lambda: mxfp4.compile_graph_file(f"{out}/partial.npz")))
open(f"{out}/text.npz", "w").write("not a zip archive")
# CHECK-NEXT: OUT/text.npz: not a graph file
print(error(lambda: mxfp4.compile_graph_file(f"{out}/text.npz")))
# CHECK-NOT: no error
