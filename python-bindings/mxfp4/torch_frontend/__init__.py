"""PyTorch frontend: trace a training step of an nn.Module and run it here.

`compile_training_step(module, example_inputs, loss_fn, recipe)` traces the
joint forward and backward graph at the aten level with
`torch.fx.experimental.proxy_tensor.make_fx` (PyTorch 1.13) over the pure
function

    f(*params, *inputs) = (loss, *torch.autograd.grad(loss, params))

where the module is applied functionally (`torch.nn.utils.stateless`). The
FX graph is imported into MLIR text (f32 tensors, static shapes; linalg ops),
parameters marked `{mxfp4.parameter = "<name>"}` and a trailing
`%step: i64 {mxfp4.step}` argument, then compiled with `mxfp4.CpuModule`
under the recipe. Transposes feeding `aten.mm` are folded into the matmul's
indexing maps, so the recipe passes see the canonical Fprop, Dgrad and Wgrad
forms and infer the linear-layer roles.

Integer and bool tensors (token ids, targets, positions, masks) are traced
with their dtype but carried in the IR and at the call as f32 tensors
holding their values (bool: 0 or 1), exact below 2^24; the embedding and
nll_loss ops turn indices back into integers with `arith.fptosi`. A Hugging
Face-style Llama (embedding, RMSNorm, rotate-half RoPE, grouped-query
attention with a causal mask, SwiGLU, LM head, cross-entropy) imports.

The package:
  capture.py   tracing (make_fx) and the compiled `TrainingStep`
  importer.py  the FX graph walk: each node through the op table
  ops/         the op table (table.py: one handler per aten op) and the
               handlers by kind: elementwise, matmul, reductions, shapes,
               creation, attention, embedding, losses
  emitter.py   MLIR text emission

This package imports torch; `import mxfp4` does not.
"""

from .capture import (GpuTrainingStep, TrainingStep, compile_graph_file,
                      compile_training_step)
from .importer import import_graph
from .ops import SUPPORTED_OPS

__all__ = ["compile_training_step", "compile_graph_file", "import_graph",
           "TrainingStep",
           "GpuTrainingStep", "SUPPORTED_OPS"]
