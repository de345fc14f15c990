"""The op table: one handler per aten op, keyed by the op's name.

A handler takes a `Call` (the FX node, its arguments with tensors as `Val`,
the result's shape) and returns the result: a `Val`, or a tuple of them for
an op with several results. Handlers register with `@handles("name")`, where
the name is the overload packet's (`mm`, `add_`, `_softmax`): adding an op
is adding one handler. Ops outside the table are an error that names the op
and the user's source line (`Importer.error`).

Composite ops in `DECOMPOSE` (the tracer's list, mxfp4_fx.DECOMPOSE)
never reach the table: the trace runs them through PyTorch's own
decompositions into ops that are in it.
"""

import torch
from mxfp4_fx import DECOMPOSE

# Aten op name -> handler.
HANDLERS = {}


def handles(*ops):
    """Registers the decorated function as the handler of the aten ops
    named `ops`."""
    def register(handler):
        for op in ops:
            if op in HANDLERS:
                raise AssertionError(f"two handlers for aten.{op}")
            HANDLERS[op] = handler
        return handler
    return register


def supported_ops():
    """The names of the ops the frontend imports, sorted: those with a
    handler and those traced through a decomposition."""
    return sorted(list(HANDLERS) + [str(op).split(".")[-1] + " (decomposed)"
                                    for op in DECOMPOSE])


class Call:
    """One call of an aten op, as its handler sees it. `args` and `kwargs`
    are the node's with tensors as `Val`s; `shape` is the result's shape
    (None for an op whose result is not one tensor)."""

    def __init__(self, importer, node, op, args, kwargs, shape, meta):
        self.importer = importer
        self.e = importer.e
        self.node, self.op = node, op
        self.args, self.kwargs, self.shape = args, kwargs, shape
        self.meta = meta

    def error(self, what):
        """Raises the frontend's error for this op: `what` is not
        supported."""
        self.importer.error(self.node, what)

    def unsupported(self):
        """Raises the error for an op without a lowering, for a handler
        that does not take this form of its op."""
        self.importer.unsupported(self.node)

    def dtype(self, i):
        """The torch dtype of argument `i` as traced (float32 for a
        scalar); tensors are all carried as f32."""
        return self.importer.dtype(self.node.args[i])

    @property
    def result_dtype(self):
        """The torch dtype of the result as traced."""
        return getattr(self.meta, "dtype", torch.float32)

    def rebind(self, i, value):
        """For an in-place op: later uses of argument `i` read `value`."""
        self.importer.env[self.node.args[i]] = value
