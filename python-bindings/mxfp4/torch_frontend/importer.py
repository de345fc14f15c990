"""The FX graph importer: walks an aten-level FX graph (from make_fx, or
read back from a graph file) and emits one func.func, each call through its op's handler in the op table
(ops/table.py). An op outside the table, or a form of an op that its handler
does not take, raises Mxfp4Error naming the op and the user's source line
from the node's recorded stack trace.
"""

import re

import torch
from mxfp4_fx import INTEGER, graph_file

from .._mxfp4 import Mxfp4Error
from .emitter import Emitter, Val, fconst, ttype
from .ops import HANDLERS, SUPPORTED_OPS, Call

# Integer and boolean tensors (token ids, targets, masks, positions) are
# carried as f32 holding their values (bool: 0 or 1), exact below 2^24.
CARRIED = INTEGER

# Narrow float tensors (bf16 autocast regions) are carried as f32 holding
# their values: every op whose result is narrow rounds it to that type, as
# PyTorch computes such an op in f32 and rounds once.
ROUNDED = {torch.bfloat16: "bf16", torch.float16: "f16"}

# Ops whose result holds values of their operand as they are: a narrow
# result needs no rounding.
VALUE_PRESERVING = {
    "alias", "clone", "contiguous", "detach", "expand", "permute",
    "_reshape_alias", "reshape", "select", "slice", "squeeze", "t",
    "transpose", "unsqueeze", "_unsafe_view", "view", "cat", "getitem",
    "lift_fresh_copy"}

# Ops whose result views their operand's storage in PyTorch.
VIEWS = {"alias", "as_strided", "diagonal", "expand", "permute",
         "_reshape_alias", "select", "slice", "squeeze", "t", "transpose",
         "unsqueeze", "unfold", "view"}

# The node types the importer walks: traced ones and read ones.
NODES = (torch.fx.Node, graph_file.Node)


class FxGraph:
    """A traced GraphModule as the importer reads it: `nodes` and
    `constant(target)` (a graph_file.GraphFile reads the same)."""

    def __init__(self, graph_module):
        self.gm = graph_module
        self.nodes = list(graph_module.graph.nodes)

    def constant(self, target):
        value = self.gm
        for part in target.split("."):
            value = getattr(value, part)
        return value


def _source_location(node):
    """The innermost user frame (not in torch) of the FX node's recorded
    stack trace (innermost first), as 'file:line (in function)', or None
    when the trace reaches the traced step function (mxfp4_fx) first:
    backward ops."""
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace", None)
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', trace)
    for path, line, fn in frames:
        norm = path.replace("\\", "/")
        if norm.endswith("mxfp4_fx/tracing.py"):
            # Reached the traced step function without a user frame: the op
            # came from autograd, not from the user's code.
            return None
        if "/torch/" in norm or "/functorch/" in norm or \
                norm.startswith("<"):
            continue
        return f"{path}:{line} (in {fn})"
    return None


class Importer:
    """One graph's import: the emitter and the value of each node."""

    def __init__(self, graph, arg_names, arg_attrs, func_name):
        self.graph = graph
        self.arg_names = arg_names
        self.arg_attrs = arg_attrs
        self.func_name = func_name
        self.e = Emitter()
        self.env = {}
        # Functions the imported one calls (attention composites), by name.
        self.functions = {}

    def error(self, node, what):
        """Raises the frontend's error for `node`'s op, located at the
        user's source line where the trace recorded one."""
        loc = _source_location(node)
        if loc:
            where = f" at {loc}"
        elif node.meta.get("stack_trace"):
            # Backward ops have no user frame: autograd's engine ran them.
            where = (f" (graph node '{node.name}', from autograd's backward "
                     "pass)")
        else:
            where = f" (graph node '{node.name}', no recorded source line)"
        raise Mxfp4Error(f"torch frontend: unsupported aten op "
                         f"'{node.target}'{where}: {what}")

    def constant(self, node):
        """A tensor the trace captured as a constant (get_attr)."""
        value = self.graph.constant(node.target)
        if not isinstance(value, torch.Tensor) or not (
                value.is_floating_point() or value.dtype in CARRIED):
            raise Mxfp4Error(f"torch frontend: constant '{node.target}' of "
                             f"type {getattr(value, 'dtype', type(value))} "
                             "(only floating-point, integer and bool "
                             "tensors)")
        flat = value.detach().to(torch.float32).reshape(-1).tolist()
        shape = tuple(value.shape)
        name = self.e.fresh("k")
        if not shape:
            body = fconst(flat[0])
        else:
            body = "[" + ", ".join(fconst(v) for v in flat) + "]"
            if len(shape) > 1:
                flat_t = ttype((len(flat),))
                self.e.emit(f"{name}f = arith.constant dense<{body}> : "
                            f"{flat_t}")
                return self.e.reshape(Val(f"{name}f", (len(flat),)), shape)
        self.e.emit(f"{name} = arith.constant dense<{body}> : "
                    f"{ttype(shape)}")
        return Val(name, shape)

    def arg(self, x):
        """A node argument with the nodes in it replaced by their values."""
        if isinstance(x, NODES):
            return self.env[x]
        if isinstance(x, (list, tuple)):
            return type(x)(self.arg(v) for v in x)
        return x

    def run(self):
        """Imports the graph; returns (text, result values)."""
        sig, placeholders = [], []
        for node in self.graph.nodes:
            if node.op == "placeholder":
                i = len(placeholders)
                placeholders.append(node)
                meta = node.meta.get("val", node.meta.get("tensor_meta"))
                shape = tuple(meta.shape)
                name = f"%{self.arg_names[i]}"
                self.env[node] = Val(name, shape)
                attr = self.arg_attrs[i]
                sig.append(f"{name}: {ttype(shape)}{attr}")
            elif node.op == "call_function":
                self.env[node] = self.lower(node)
            elif node.op == "get_attr":
                self.env[node] = self.constant(node)
            elif node.op == "output":
                outs = [self.e.value(self.env[o]) for o in node.args[0]]
            else:
                self.error(node, f"unexpected FX node kind {node.op}")
        sig.append("%step: i64 {mxfp4.step}")
        results = ", ".join(ttype(o.shape) for o in outs)
        text = [f"func.func @{self.func_name}(\n    " + ",\n    ".join(sig) +
                f")\n    -> ({results}) {{"]
        text += self.e.lines
        text.append(f"  return {', '.join(o.name for o in outs)} : {results}")
        text.append("}")
        text += self.functions.values()
        return "\n".join(text) + "\n", outs

    def lower(self, node):
        """The value of a call_function node, from its op's handler."""
        op = op_name(node.target)
        args = [self.arg(a) for a in node.args]
        kwargs = {k: self.arg(v) for k, v in node.kwargs.items()}
        meta = node.meta.get("val", node.meta.get("tensor_meta"))
        shape = None
        if hasattr(meta, "shape") and hasattr(meta, "dtype"):
            if meta.dtype != torch.float32 and meta.dtype not in CARRIED \
                    and meta.dtype not in ROUNDED:
                self.error(node, f"dtype {meta.dtype} (only float32, "
                                 "bfloat16 and float16 tensors, and integer "
                                 "or bool tensors, all carried as float32)")
            shape = tuple(meta.shape)
        handler = HANDLERS.get(op)
        if handler is None:
            self.unsupported(node)
        if op.endswith("_") and node.args and isinstance(node.args[0], NODES) \
                and node.args[0].op == "call_function" \
                and op_name(node.args[0].target) in VIEWS:
            # The importer's values are not aliased: writing through a
            # view would not reach the tensor it views.
            self.error(node, "an in-place op on a view (of "
                             f"'{op_name(node.args[0].target)}'); write the "
                             "value out of place (torch.where, torch.cat)")
        try:
            result = handler(Call(self, node, op, args, kwargs, shape, meta))
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) \
                as error:
            if isinstance(error, Mxfp4Error):
                raise
            self.error(node, f"arguments of a form the importer does not "
                             f"take ({type(error).__name__}: {error})")
        if op in VALUE_PRESERVING:
            return result
        return self.round(result, meta)

    def round(self, result, meta):
        """`result` rounded to the narrow float type `meta` records, where
        it records one (each of a tuple's)."""
        if isinstance(result, tuple) and isinstance(meta, (list, tuple)) \
                and not hasattr(meta, "shape"):
            return tuple(self.round(r, m) for r, m in zip(result, meta))
        narrow = ROUNDED.get(getattr(meta, "dtype", None))
        if narrow is None or not isinstance(result, Val):
            return result
        return self.e.generic(result.shape, [result], lambda ar: ([
            f"%n = arith.truncf {ar[0]} : f32 to {narrow}",
            f"%r = arith.extf %n : {narrow} to f32"], "%r"))

    def unsupported(self, node):
        """Raises the error for an op without a lowering."""
        self.error(node, "no lowering for this op (supported: " +
                   ", ".join(SUPPORTED_OPS) + ")")

    def dtype(self, x):
        """The torch dtype of an FX node argument (float32 for scalars)."""
        if isinstance(x, NODES):
            meta = x.meta.get("val", x.meta.get("tensor_meta"))
            return getattr(meta, "dtype", torch.float32)
        return torch.float32


def op_name(target):
    """The overload packet's name of a call's target: 'mm' for the op
    aten.mm.default, traced (an OpOverload) or read ('aten.mm.default')."""
    name = getattr(target, "__name__", None)
    if name is not None:
        return name.split(".")[0]
    parts = str(target).split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def import_graph(graph, arg_names, arg_attrs, func_name="train_step"):
    """Imports an aten-level FX graph to MLIR text: a GraphModule (from
    make_fx) or a graph file read back (graph_file.GraphFile). Returns
    (text, number of results)."""
    if isinstance(graph, torch.fx.GraphModule):
        graph = FxGraph(graph)
    text, outs = Importer(graph, arg_names, arg_attrs, func_name).run()
    return text, len(outs)

