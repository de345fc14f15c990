"""The aten op table (table.py) and its handlers, a module per kind of op.
Importing the package fills the table."""

from . import (attention, creation, elementwise, embedding, indexing, losses,
               matmul, reductions, shapes)
from .table import DECOMPOSE, HANDLERS, Call, supported_ops

# The handler modules, each registering the ops of its kind.
KINDS = (attention, creation, elementwise, embedding, indexing, losses,
         matmul, reductions, shapes)

SUPPORTED_OPS = supported_ops()

__all__ = ["DECOMPOSE", "HANDLERS", "KINDS", "SUPPORTED_OPS", "Call"]
