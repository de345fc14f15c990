# The Llama training API from Python: configs, the step's IR, a training run
# and a study of two recipes scripted from Python.
#
# REQUIRES: python-bindings
# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %S/../Tools/mxfp4-run/Inputs/make_corpus.py %t/corpus.txt
# RUN: %PYTHON %s %t | FileCheck %s

import json
import os
import sys

import mxfp4

work = sys.argv[1]
micro = json.load(open(os.path.join(os.path.dirname(__file__), "..", "Tools",
                                    "mxfp4-run", "Inputs", "micro.json")))

# CHECK: tiny: dim 256, 4 layers, vocab 256, byte
tiny = mxfp4.llama_config("tiny")
print(f"tiny: dim {tiny['dim']}, {tiny['num_layers']} layers, "
      f"vocab {tiny['vocab_size']}, {tiny['tokenizer']}")
# CHECK-NEXT: micro: dim 64, 2 layers
config = mxfp4.llama_config(micro)
print(f"micro: dim {config['dim']}, {config['num_layers']} layers")
# CHECK-NEXT: error: <dict>: unknown key 'layers'
try:
    mxfp4.llama_config({"layers": 3})
except mxfp4.Mxfp4Error as error:
    print("error:", error)

# The step's IR under a recipe: every linear GEMM became a scaled_matmul.
# CHECK-NEXT: scaled_matmul: 98, quantize: 196
source = mxfp4.llama_step_source(micro, "fp4-all-dht16")
print(f"scaled_matmul: {source.count('mxfp4.scaled_matmul')}, "
      f"quantize: {source.count('mxfp4.quantize')}")

# CHECK-NEXT: train: 20 steps, loss falls: True, checkpoint: True
report = mxfp4.train(micro, recipe="fp4-all-dht16", steps=20, eval_every=10,
                     data=os.path.join(work, "corpus.txt"),
                     out=os.path.join(work, "run"))
losses = [s["loss"] for s in report["steps"]]
print(f"train: {len(losses)} steps, loss falls: {losses[-1] < losses[0] - 1}, "
      f"checkpoint: {os.path.isdir(report['checkpoint'])}")

# CHECK-NEXT: study: bf16, fp4-all
# CHECK-NEXT: fp4-all: Fprop, Dgrad and Wgrad telemetry: True
# CHECK: | fp4-all |
result = mxfp4.study(micro, recipes=["bf16", "fp4-all"], seeds=[1], steps=20,
                     data=os.path.join(work, "corpus.txt"),
                     out=os.path.join(work, "study"))
print("study:", ", ".join(row["recipe"] for row in result["rows"]))
fp4 = result["rows"][1]
print(f"fp4-all: Fprop, Dgrad and Wgrad telemetry: "
      f"{sorted(fp4['telemetry']) == ['dgrad', 'fprop', 'wgrad']}")
print(result["table"])
