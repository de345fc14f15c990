"""mxfp4_fx: the pure-Python half of the PyTorch frontend. It traces a
module's training step at the aten level (`trace_training_step`, with
PyTorch 1.13's or 2.x's make_fx) and writes it as a graph file (`save`),
which `mxfp4.torch_frontend.compile_graph_file` imports and compiles where
the compiler is built. It needs torch (and NumPy), not the native module:
on a machine with PyTorch 2.x and transformers but no MLIR,
`PYTHONPATH=python-bindings` is enough.
"""

from .attention import causal_attention, sdpa_as_composites
from .graph_file import GraphFile, GraphFileError, load, save
from .tracing import DECOMPOSE, INTEGER, Trace, aliases, trace_training_step

__all__ = ["trace_training_step", "Trace", "save", "load", "GraphFile",
           "GraphFileError", "DECOMPOSE", "INTEGER", "aliases",
           "causal_attention", "sdpa_as_composites"]
