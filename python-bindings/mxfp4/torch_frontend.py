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

This module imports torch; `import mxfp4` does not.
"""

import math
import re

import numpy as np
import torch
from torch.fx.experimental import proxy_tensor
from torch.nn.utils import stateless
import torch._decomp

from ._mxfp4 import CpuModule, Mxfp4Error

__all__ = ["compile_training_step", "import_graph", "TrainingStep",
           "SUPPORTED_OPS"]

aten = torch.ops.aten

# Composite ops traced through PyTorch's own decompositions.
_DECOMPOSE = [aten.mse_loss, aten.mse_loss_backward, aten.silu_backward,
              aten.sigmoid_backward, aten.tanh_backward]


def _decomposition_table():
    table = {}
    wanted = {str(op) for op in _DECOMPOSE}
    for op, fn in torch._decomp.decomposition_table.items():
        if str(op.overloadpacket) in wanted and op._overloadname == "default":
            table[op] = fn
    return table


# --------------------------------------------------------------------------
# MLIR text emission


def _ttype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def _fconst(value):
    value = float(np.float32(value))
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return f"{value:.9e}"  # round-trips every float32


class _Val:
    """A tensor value: an SSA name and a shape. A 2-D transpose is kept
    lazy (`transposed_of`) so that `mm` can fold it into indexing maps."""

    def __init__(self, name, shape, transposed_of=None):
        self.name, self.shape = name, tuple(shape)
        self.transposed_of = transposed_of


class _Emitter:
    def __init__(self):
        self.lines = []
        self.counter = 0

    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, line):
        self.lines.append("  " + line)

    # Materializes a lazy transpose.
    def value(self, v):
        if v.transposed_of is None:
            return v
        src = self.value(v.transposed_of)
        return self.generic(v.shape, [src], lambda a: ([], a[0]),
                            in_maps=["(d0, d1) -> (d1, d0)"])

    def empty(self, shape):
        name = self.fresh("e")
        self.emit(f"{name} = tensor.empty() : {_ttype(shape)}")
        return name

    def filled(self, shape, scalar):
        empty = self.empty(shape)
        c, name = self.fresh("c"), self.fresh("f")
        self.emit(f"{c} = arith.constant {_fconst(scalar)} : f32")
        self.emit(f"{name} = linalg.fill ins({c} : f32) outs({empty} : "
                  f"{_ttype(shape)}) -> {_ttype(shape)}")
        return _Val(name, shape)

    def generic(self, shape, inputs, body, in_maps=None, out_shape=None,
                reduce_dims=(), init=None):
        """linalg.generic over the iteration space `shape`. `inputs` are
        _Val; their maps broadcast numpy-style (right-aligned, size-1 dims
        broadcast) unless `in_maps` is given. `body(args)` returns (lines,
        result) in terms of the block argument names; for a reduction the
        accumulator is the last argument."""
        rank = len(shape)
        dims = [f"d{i}" for i in range(rank)]
        head = f"({', '.join(dims)})"
        maps, operands = [], []
        for i, v in enumerate(inputs):
            v = self.value(v)
            if in_maps is not None:
                maps.append(in_maps[i])
                operands.append(v)
                continue
            v, m = self._broadcast_map(v, shape)
            maps.append(f"{head} -> ({', '.join(m)})")
            operands.append(v)
        out_dims = [d for i, d in enumerate(dims) if i not in reduce_dims]
        maps.append(f"{head} -> ({', '.join(out_dims)})")
        out_shape = tuple(s for i, s in enumerate(shape)
                          if i not in reduce_dims)
        iters = ", ".join('"reduction"' if i in reduce_dims else '"parallel"'
                          for i in range(rank))
        if reduce_dims:
            out = self.filled(out_shape, init).name
        else:
            out = self.empty(out_shape)
        args = [self.fresh("a") for _ in operands]
        acc = self.fresh("o")
        lines, result = body(args + [acc])
        name = self.fresh("g")
        ins = ""
        if operands:
            ins = (" ins(" + ", ".join(o.name for o in operands) + " : " +
                   ", ".join(_ttype(o.shape) for o in operands) + ")")
        amaps = ", ".join(f"affine_map<{m}>" for m in maps)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{amaps}], "
                  f"iterator_types = [{iters}]}}{ins} outs({out} : "
                  f"{_ttype(out_shape)}) {{")
        blk = ", ".join(f"{a}: f32" for a in args + [acc])
        self.emit(f"^bb0({blk}):")
        for line in lines:
            self.emit("  " + line)
        self.emit(f"  linalg.yield {result} : f32")
        self.emit(f"}} -> {_ttype(out_shape)}")
        return _Val(name, out_shape)

    def _broadcast_map(self, v, shape):
        """Returns (value, map results) broadcasting `v` to `shape`. Size-1
        dims that broadcast are collapsed away first so the map stays a
        projected permutation."""
        rank, vr = len(shape), len(v.shape)
        if vr > rank:
            raise Mxfp4Error(f"cannot broadcast {v.shape} to {shape}")
        keep = []
        for j, s in enumerate(v.shape):
            d = rank - vr + j
            if s == shape[d]:
                keep.append(j)
            elif s != 1:
                raise Mxfp4Error(f"cannot broadcast {v.shape} to {shape}")
        if len(keep) != vr:
            v = self.reshape(v, tuple(v.shape[j] for j in keep))
        return v, [f"d{rank - vr + j}" for j in keep]

    def reshape(self, v, shape):
        v = self.value(v)
        shape = tuple(shape)
        if v.shape == shape:
            return v
        if math.prod(v.shape) != math.prod(shape):
            raise Mxfp4Error(f"cannot reshape {v.shape} to {shape}")
        cur = v
        if len(cur.shape) > 1 or (len(cur.shape) == 1 and not shape):
            # collapse to 1-D (or to rank 0 from all-ones)
            target = (math.prod(cur.shape),) if shape else ()
            assoc = "[[" + ", ".join(str(i) for i in range(len(cur.shape))) \
                + "]]" if target else "[]"
            name = self.fresh("r")
            self.emit(f"{name} = tensor.collapse_shape {cur.name} {assoc} : "
                      f"{_ttype(cur.shape)} into {_ttype(target)}")
            cur = _Val(name, target)
        if cur.shape == shape:
            return cur
        if not cur.shape:
            assoc = "[]"
        else:
            assoc = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
        name = self.fresh("r")
        out = ", ".join(str(s) for s in shape)
        self.emit(f"{name} = tensor.expand_shape {cur.name} {assoc} "
                  f"output_shape [{out}] : {_ttype(cur.shape)} into "
                  f"{_ttype(shape)}")
        return _Val(name, shape)

    def _slice_attrs(self, shape, dim, start, size, step):
        offs, sizes, strides = [0] * len(shape), list(shape), \
            [1] * len(shape)
        offs[dim], sizes[dim], strides[dim] = start, size, step
        return (f"[{', '.join(map(str, offs))}] "
                f"[{', '.join(map(str, sizes))}] "
                f"[{', '.join(map(str, strides))}]"), tuple(sizes)

    def extract_slice(self, v, dim, start, size, step=1):
        """Elements start, start + step, ... (size of them) along `dim`."""
        v = self.value(v)
        attrs, sizes = self._slice_attrs(v.shape, dim, start, size, step)
        name = self.fresh("s")
        self.emit(f"{name} = tensor.extract_slice {v.name}{attrs} : "
                  f"{_ttype(v.shape)} to {_ttype(sizes)}")
        return _Val(name, sizes)

    def insert_slice(self, src, dest, dim, start, step=1):
        """`dest` with `src` written at start, start + step, ... along
        `dim` (the other dims of both are equal)."""
        src, dest = self.value(src), self.value(dest)
        attrs, _ = self._slice_attrs(dest.shape, dim, start, src.shape[dim],
                                     step)
        name = self.fresh("s")
        self.emit(f"{name} = tensor.insert_slice {src.name} into "
                  f"{dest.name}{attrs} : {_ttype(src.shape)} into "
                  f"{_ttype(dest.shape)}")
        return _Val(name, dest.shape)

    def matmul(self, a, b):
        """C = op(a) op(b) with 2-D lazy transposes folded into the maps."""
        def base(v):
            if v.transposed_of is not None and v.transposed_of.transposed_of \
                    is None:
                return v.transposed_of, True
            return self.value(v), False
        (a0, ta), (b0, tb) = base(a), base(b)
        m, n = a.shape[0], b.shape[1]
        amap = "(k, m)" if ta else "(m, k)"
        bmap = "(n, k)" if tb else "(k, n)"
        out = self.filled((m, n), 0.0).name
        name = self.fresh("mm")
        maps = ""
        if ta or tb:
            maps = (f" indexing_maps = [affine_map<(m, n, k) -> {amap}>, "
                    f"affine_map<(m, n, k) -> {bmap}>, "
                    "affine_map<(m, n, k) -> (m, n)>]")
        self.emit(f"{name} = linalg.matmul{maps} ins({a0.name}, {b0.name} : "
                  f"{_ttype(a0.shape)}, {_ttype(b0.shape)}) outs({out} : "
                  f"{_ttype((m, n))}) -> {_ttype((m, n))}")
        return _Val(name, (m, n))


def _transpose(v):
    """Lazy 2-D transpose; t(t(x)) is x."""
    if v.transposed_of is not None:
        return v.transposed_of
    return _Val(None, (v.shape[1], v.shape[0]), transposed_of=v)


# --------------------------------------------------------------------------
# aten op lowering

def _binary(op):
    def body(args, a_scalar=None, b_scalar=None):
        lines, ops_ = [], []
        it = iter(args[:-1])
        for s in (a_scalar, b_scalar):
            if s is None:
                ops_.append(next(it))
            else:
                c = f"%k{len(lines)}"
                lines.append(f"{c} = arith.constant {_fconst(s)} : f32")
                ops_.append(c)
        lines.append(f"%r = {op} {ops_[0]}, {ops_[1]} : f32")
        return lines, "%r"
    return body


def _unary(lines_fn):
    def body(args):
        return lines_fn(args[0]), "%r"
    return body


_UNARY = {
    "neg": lambda x: [f"%r = arith.negf {x} : f32"],
    "relu": lambda x: ["%z = arith.constant 0.0 : f32",
                       f"%r = arith.maximumf {x}, %z : f32"],
    "sigmoid": lambda x: ["%one = arith.constant 1.0 : f32",
                          f"%n = arith.negf {x} : f32",
                          "%e = math.exp %n : f32",
                          "%d = arith.addf %one, %e : f32",
                          "%r = arith.divf %one, %d : f32"],
    "silu": lambda x: ["%one = arith.constant 1.0 : f32",
                       f"%n = arith.negf {x} : f32",
                       "%e = math.exp %n : f32",
                       "%d = arith.addf %one, %e : f32",
                       f"%r = arith.divf {x}, %d : f32"],
    "exp": lambda x: [f"%r = math.exp {x} : f32"],
    "tanh": lambda x: [f"%r = math.tanh {x} : f32"],
    "sqrt": lambda x: [f"%r = math.sqrt {x} : f32"],
    "rsqrt": lambda x: [f"%r = math.rsqrt {x} : f32"],
    "abs": lambda x: [f"%r = math.absf {x} : f32"],
    "log": lambda x: [f"%r = math.log {x} : f32"],
    "cos": lambda x: [f"%r = math.cos {x} : f32"],
    "sin": lambda x: [f"%r = math.sin {x} : f32"],
    "reciprocal": lambda x: ["%one = arith.constant 1.0 : f32",
                             f"%r = arith.divf %one, {x} : f32"],
}

_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
           "div": "arith.divf"}

# Identity ops.
_IDENTITY = {"detach", "alias", "lift_fresh_copy", "clone", "contiguous"}

# Integer and boolean tensors (token ids, targets, masks, positions) are
# carried as f32 holding their values (bool: 0 or 1), exact below 2^24.
_CARRIED = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
            torch.int64)

# Comparisons: the arith.cmpf predicate.
_COMPARE = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq",
            "ne": "une"}

# Ops that create a tensor from nothing: the fill value (None: an argument).
_FACTORY = {"zeros": 0.0, "ones": 1.0, "full": None, "scalar_tensor": None,
            "new_zeros": 0.0, "new_ones": 1.0, "new_full": None,
            "new_empty": 0.0, "empty": 0.0}

SUPPORTED_OPS = sorted(
    ["t", "transpose", "permute", "mm", "addmm", "threshold_backward",
     "pow", "sum", "mean", "view", "_unsafe_view", "reshape",
     "_reshape_alias", "expand",
     "ones_like", "zeros_like", "full_like", "empty_like", "fill_",
     "rsub", "squeeze", "unsqueeze", "bmm", "_softmax",
     "_softmax_backward_data", "_log_softmax",
     "_log_softmax_backward_data", "slice", "slice_backward", "cat",
     "select", "select_backward", "getitem", "embedding",
     "embedding_dense_backward",
     "nll_loss_forward", "nll_loss_backward", "masked_fill",
     "masked_fill_", "where", "triu", "tril", "arange", "logical_not",
     "bitwise_not", "_to_copy"]
    + list(_UNARY) + [k + s for k in _BINARY for s in ("", "_")]
    + list(_COMPARE) + list(_FACTORY) + sorted(_IDENTITY)
    + [str(op).split(".")[-1] + " (decomposed)"
       for op in _DECOMPOSE])


def _source_location(node):
    """The innermost user frame (not in torch) of the FX node's recorded
    stack trace (innermost first), as 'file:line (in function)', or None
    when the trace reaches this file first (backward ops)."""
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace", None)
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', trace)
    for path, line, fn in frames:
        norm = path.replace("\\", "/")
        if norm.endswith("mxfp4/torch_frontend.py"):
            # Reached the traced step function without a user frame: the op
            # came from autograd, not from the user's code.
            return None
        if "/torch/" in norm or "/functorch/" in norm or \
                norm.startswith("<"):
            continue
        return f"{path}:{line} (in {fn})"
    return None


class _Importer:
    def __init__(self, graph_module, arg_names, arg_attrs, func_name):
        self.gm = graph_module
        self.arg_names = arg_names
        self.arg_attrs = arg_attrs
        self.func_name = func_name
        self.e = _Emitter()
        self.env = {}

    def error(self, node, what):
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
        value = self.gm
        for part in node.target.split("."):
            value = getattr(value, part)
        if not isinstance(value, torch.Tensor) or not (
                value.is_floating_point() or value.dtype in _CARRIED):
            raise Mxfp4Error(f"torch frontend: constant '{node.target}' of "
                             f"type {getattr(value, 'dtype', type(value))} "
                             "(only floating-point, integer and bool "
                             "tensors)")
        flat = value.detach().to(torch.float32).reshape(-1).tolist()
        shape = tuple(value.shape)
        name = self.e.fresh("k")
        if not shape:
            body = _fconst(flat[0])
        else:
            body = "[" + ", ".join(_fconst(v) for v in flat) + "]"
            if len(shape) > 1:
                flat_t = _ttype((len(flat),))
                self.e.emit(f"{name}f = arith.constant dense<{body}> : "
                            f"{flat_t}")
                return self.e.reshape(_Val(f"{name}f", (len(flat),)), shape)
        self.e.emit(f"{name} = arith.constant dense<{body}> : "
                    f"{_ttype(shape)}")
        return _Val(name, shape)

    def arg(self, x):
        if isinstance(x, torch.fx.Node):
            return self.env[x]
        if isinstance(x, (list, tuple)):
            return type(x)(self.arg(v) for v in x)
        return x

    def run(self):
        sig, placeholders = [], []
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                i = len(placeholders)
                placeholders.append(node)
                meta = node.meta.get("val", node.meta.get("tensor_meta"))
                shape = tuple(meta.shape)
                name = f"%{self.arg_names[i]}"
                self.env[node] = _Val(name, shape)
                attr = self.arg_attrs[i]
                sig.append(f"{name}: {_ttype(shape)}{attr}")
            elif node.op == "call_function":
                self.env[node] = self.lower(node)
            elif node.op == "get_attr":
                self.env[node] = self.constant(node)
            elif node.op == "output":
                outs = [self.e.value(self.env[o]) for o in node.args[0]]
            else:
                self.error(node, f"unexpected FX node kind {node.op}")
        sig.append("%step: i64 {mxfp4.step}")
        results = ", ".join(_ttype(o.shape) for o in outs)
        text = [f"func.func @{self.func_name}(\n    " + ",\n    ".join(sig) +
                f")\n    -> ({results}) {{"]
        text += self.e.lines
        text.append(f"  return {', '.join(o.name for o in outs)} : {results}")
        text.append("}")
        return "\n".join(text) + "\n", outs

    def lower(self, node):
        e = self.e
        name = getattr(node.target, "__name__", str(node.target))
        packet = name.split(".")[0]
        args = [self.arg(a) for a in node.args]
        kwargs = {k: self.arg(v) for k, v in node.kwargs.items()}
        meta = node.meta.get("val", node.meta.get("tensor_meta"))
        out_shape = None
        if hasattr(meta, "shape") and hasattr(meta, "dtype"):
            if meta.dtype != torch.float32 and meta.dtype not in _CARRIED:
                self.error(node, f"dtype {meta.dtype} (only float32 "
                                 "tensors, and integer or bool tensors "
                                 "carried as float32)")
            out_shape = tuple(meta.shape)

        if packet == "_to_copy" and isinstance(args[0], _Val):
            return self.to_copy(node, args[0], meta)
        if packet in _IDENTITY and isinstance(args[0], _Val):
            return args[0]
        if name == "getitem":
            return args[0][args[1]]
        if packet in ("t", "transpose", "permute"):
            x = args[0]
            if len(x.shape) < 2:
                return x
            if len(x.shape) != 2:
                rank = len(x.shape)
                if packet == "permute":
                    perm = [d % rank for d in args[1]]
                else:
                    perm = list(range(rank))
                    i, j = args[1] % rank, args[2] % rank
                    perm[i], perm[j] = perm[j], perm[i]
                src = [None] * rank
                for i, pi in enumerate(perm):
                    src[pi] = f"d{i}"
                dims = ", ".join(f"d{i}" for i in range(rank))
                return e.generic(out_shape, [x], lambda ar: ([], ar[0]),
                                 in_maps=[f"({dims}) -> ({', '.join(src)})"])
            if packet == "permute" and list(args[1]) in ([0, 1], [-2, -1]):
                return x
            if packet == "transpose" and \
                    args[1] % 2 == args[2] % 2:
                return x
            return _transpose(x)
        if packet == "mm":
            return e.matmul(args[0], args[1])
        if packet == "addmm":
            bias, a, b = args[:3]
            if kwargs.get("beta", 1) != 1 or kwargs.get("alpha", 1) != 1:
                self.error(node, "alpha/beta other than 1")
            prod = e.matmul(a, b)
            return e.generic(prod.shape, [prod, bias],
                             _binary("arith.addf"))
        if packet in ("view", "_unsafe_view", "reshape", "_reshape_alias"):
            return e.reshape(args[0], out_shape)
        if packet in ("squeeze", "unsqueeze"):
            return e.reshape(args[0], out_shape)
        if packet == "expand":
            return e.generic(out_shape, [args[0]], lambda a: ([], a[0]))
        if packet in ("ones_like", "zeros_like", "full_like", "empty_like"):
            value = {"ones_like": 1.0, "zeros_like": 0.0,
                     "empty_like": 0.0}.get(packet)
            if packet == "full_like":
                value = args[1]
            return e.filled(out_shape, value)
        if packet == "fill_":
            v = e.filled(out_shape, args[1])
            self.env[node.args[0]] = v
            return v
        if packet in _UNARY and len(args) == 1:
            fn = _UNARY[packet]
            return e.generic(out_shape, [args[0]], _unary(fn))
        base = packet.rstrip("_")
        if base in _BINARY or base == "rsub":
            a, b = args[0], args[1]
            alpha = kwargs.get("alpha", 1)
            if kwargs.get("rounding_mode") is not None:
                self.error(node, "div with a rounding mode")
            if base == "rsub":
                a, b, base = b, a, "sub"
            if alpha != 1:
                if not isinstance(b, _Val):
                    b = b * alpha
                else:
                    b = e.generic(b.shape, [b], lambda ar, al=alpha:
                                  _binary("arith.mulf")(ar, b_scalar=al))
            ins = [x for x in (a, b) if isinstance(x, _Val)]
            if not ins:
                self.error(node, "both operands are scalars")
            fn = _binary(_BINARY[base])
            sa = None if isinstance(a, _Val) else a
            sb = None if isinstance(b, _Val) else b
            r = e.generic(out_shape, ins,
                          lambda ar: fn(ar, a_scalar=sa, b_scalar=sb))
            if packet.endswith("_"):
                self.env[node.args[0]] = r
            return r
        if packet == "pow" and isinstance(args[0], _Val) and \
                not isinstance(args[1], _Val):
            p = float(args[1])
            if p == 1.0:
                return args[0]
            if p == int(p) and 0 < abs(p) <= 4:
                # Small integer powers by multiplication: exact for
                # negative bases, where powf's expansion is not.
                def body(ar, n=int(abs(p)), inv=p < 0):
                    lines, cur = [], ar[0]
                    for i in range(n - 1):
                        lines.append(f"%p{i} = arith.mulf {cur}, {ar[0]} : "
                                     "f32")
                        cur = f"%p{i}"
                    if inv:
                        lines += ["%one = arith.constant 1.0 : f32",
                                  f"%q = arith.divf %one, {cur} : f32"]
                        cur = "%q"
                    return lines, cur
            else:
                body = _unary(lambda x: [f"%k = arith.constant {_fconst(p)} "
                                         ": f32",
                                         f"%r = math.powf {x}, %k : f32"])
            return e.generic(out_shape, [args[0]], body)
        if packet == "threshold_backward":
            grad, x, thr = args
            return e.generic(out_shape, [grad, x], lambda ar: ([
                f"%t = arith.constant {_fconst(thr)} : f32",
                "%z = arith.constant 0.0 : f32",
                f"%c = arith.cmpf ule, {ar[1]}, %t : f32",
                f"%r = arith.select %c, %z, {ar[0]} : f32"], "%r"))
        if packet in ("sum", "mean"):
            x = args[0]
            rank = len(x.shape)
            dims = args[1] if len(args) > 1 and args[1] is not None \
                else list(range(rank))
            if isinstance(dims, int):
                dims = [dims]
            dims = sorted({d % rank for d in dims}) if rank else []
            if not dims and len(args) > 1 and rank:
                dims = list(range(rank))
            keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
            if kwargs.get("dtype") not in (None, torch.float32):
                self.error(node, "dtype argument")
            if not rank:
                return x
            red = self.reduce(x, dims, 0.0, "arith.addf")
            if packet == "mean":
                n = math.prod(x.shape[d] for d in dims)
                red = e.generic(red.shape, [red], lambda ar: (
                    [f"%k = arith.constant {_fconst(1.0 / n)} : f32",
                     f"%r = arith.mulf {ar[0]}, %k : f32"], "%r"))
            if keep:
                red = e.reshape(red, out_shape)
            return red
        if packet in ("_softmax", "_softmax_backward_data"):
            dim = args[2 if packet == "_softmax_backward_data" else 1]
            x = args[0]
            dim %= len(x.shape)
            if packet == "_softmax":
                mx = self.reduce(x, [dim], float("-inf"), "arith.maximumf",
                                 keep=True)
                ex = e.generic(x.shape, [x, mx], lambda ar: (
                    [f"%s = arith.subf {ar[0]}, {ar[1]} : f32",
                     "%r = math.exp %s : f32"], "%r"))
                den = self.reduce(ex, [dim], 0.0, "arith.addf", keep=True)
                return e.generic(x.shape, [ex, den], _binary("arith.divf"))
            grad, out = args[0], args[1]
            go = e.generic(x.shape, [grad, out], _binary("arith.mulf"))
            tot = self.reduce(go, [dim], 0.0, "arith.addf", keep=True)
            return e.generic(x.shape, [go, out, tot], lambda ar: (
                [f"%m = arith.mulf {ar[1]}, {ar[2]} : f32",
                 f"%r = arith.subf {ar[0]}, %m : f32"], "%r"))
        if packet == "bmm":
            a, b = e.value(args[0]), e.value(args[1])
            (bt, m, k), n = a.shape, b.shape[2]
            red = e.generic((bt, m, n, k), [a, b], lambda ar: (
                [f"%p = arith.mulf {ar[0]}, {ar[1]} : f32",
                 f"%r = arith.addf {ar[2]}, %p : f32"], "%r"),
                in_maps=["(d0, d1, d2, d3) -> (d0, d1, d3)",
                         "(d0, d1, d2, d3) -> (d0, d3, d2)"],
                reduce_dims={3}, init=0.0)
            return red
        r = self.lower_more(node, packet, args, kwargs, out_shape)
        if r is not None:
            return r
        self.error(node, "no lowering for this op (supported: " +
                   ", ".join(SUPPORTED_OPS) + ")")

    def dtype(self, x):
        """The torch dtype of an FX node argument (float32 for scalars)."""
        if isinstance(x, torch.fx.Node):
            meta = x.meta.get("val", x.meta.get("tensor_meta"))
            return getattr(meta, "dtype", torch.float32)
        return torch.float32

    def to_copy(self, node, x, meta):
        """A dtype conversion between the carried representations."""
        src = self.dtype(node.args[0])
        dst = getattr(meta, "dtype", torch.float32)
        if node.kwargs.get("dtype") is None or src == dst:
            return x
        if dst == torch.bool and src != torch.bool:
            return self.e.generic(x.shape, [x], lambda ar: ([
                "%z = arith.constant 0.0 : f32",
                "%one = arith.constant 1.0 : f32",
                f"%c = arith.cmpf une, {ar[0]}, %z : f32",
                "%r = arith.select %c, %one, %z : f32"], "%r"))
        if dst != torch.float32 and src == torch.float32:
            # float to integer truncates toward zero.
            return self.e.generic(x.shape, [x], _unary(lambda v: [
                f"%t = arith.fptosi {v} : f32 to i64",
                "%r = arith.sitofp %t : i64 to f32"]))
        return x  # integer/bool to float32 or a wider integer

    def lower_more(self, node, packet, args, kwargs, out_shape):
        """Slicing, concatenation, masks, factories, the embedding and the
        cross-entropy ops. Returns None for an op it does not know."""
        e = self.e
        if packet == "slice":
            x = args[0]
            rank = len(x.shape)
            dim = (args[1] if len(args) > 1 else 0) % rank
            start = args[2] if len(args) > 2 else None
            end = args[3] if len(args) > 3 else None
            step = args[4] if len(args) > 4 else 1
            n = x.shape[dim]
            start, end, step = slice(start, end, step).indices(n)
            size = out_shape[dim]
            if size == 0:
                self.error(node, "an empty slice")
            if (start, size, step) == (0, n, 1):
                return x
            return e.extract_slice(x, dim, start, size, step)
        if packet == "slice_backward":
            grad, sizes, dim, start, end, step = args[:6]
            dim %= len(sizes)
            start, end, step = slice(start, end, step).indices(sizes[dim])
            if tuple(grad.shape) == tuple(sizes):
                return grad
            return e.insert_slice(grad, e.filled(tuple(sizes), 0.0), dim,
                                  start, step)
        if packet == "select" and isinstance(args[0], _Val):
            # x[..., i, ...]: a slice of size 1, then the dim dropped.
            x, dim, index = args[0], args[1] % len(args[0].shape), args[2]
            index %= x.shape[dim]
            sl = e.extract_slice(x, dim, index, 1)
            return e.reshape(sl, out_shape)
        if packet == "select_backward":
            grad, sizes, dim, index = args[:4]
            dim %= len(sizes)
            index %= sizes[dim]
            shape = tuple(1 if i == dim else n for i, n in enumerate(sizes))
            return e.insert_slice(e.reshape(grad, shape),
                                  e.filled(tuple(sizes), 0.0), dim, index)
        if packet == "cat":
            tensors = [t for t in args[0] if math.prod(t.shape) > 0]
            dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
            dim %= len(out_shape)
            if len(tensors) == 1:
                return tensors[0]
            cur, offset = e.filled(out_shape, 0.0), 0
            for t in tensors:
                cur = e.insert_slice(t, cur, dim, offset)
                offset += t.shape[dim]
            return cur
        if packet in _COMPARE:
            a, b = args[0], args[1]
            pred = _COMPARE[packet]
            ins = [v for v in (a, b) if isinstance(v, _Val)]

            def body(ar, a=a, b=b):
                it, lines, ops_ = iter(ar[:-1]), [], []
                for i, v in enumerate((a, b)):
                    if isinstance(v, _Val):
                        ops_.append(next(it))
                    else:
                        lines.append(f"%k{'ab'[i]} = arith.constant "
                                     f"{_fconst(v)} : f32")
                        ops_.append(f"%k{'ab'[i]}")
                return lines + [
                    f"%c = arith.cmpf {pred}, {ops_[0]}, {ops_[1]} : f32",
                    "%z = arith.constant 0.0 : f32",
                    "%one = arith.constant 1.0 : f32",
                    "%r = arith.select %c, %one, %z : f32"], "%r"
            return e.generic(out_shape, ins, body)
        if packet in ("logical_not", "bitwise_not"):
            if self.dtype(node.args[0]) != torch.bool and \
                    packet == "bitwise_not":
                self.error(node, "bitwise_not of a non-bool tensor")
            return e.generic(out_shape, [args[0]], _unary(lambda x: [
                "%z = arith.constant 0.0 : f32",
                "%one = arith.constant 1.0 : f32",
                f"%c = arith.cmpf oeq, {x}, %z : f32",
                "%r = arith.select %c, %one, %z : f32"]))
        if packet in ("masked_fill", "masked_fill_", "where"):
            if packet == "where":
                if len(args) != 3:
                    self.error(node, "where with one argument")
                cond, a, b = args
            else:
                a, cond, b = args
            vals = [cond] + [v for v in (a, b) if isinstance(v, _Val)]

            def body(ar, a=a, b=b):
                it, lines, ops_ = iter(ar[1:-1]), [], []
                for i, v in enumerate((a, b)):
                    if isinstance(v, _Val):
                        ops_.append(next(it))
                    else:
                        lines.append(f"%k{'ab'[i]} = arith.constant "
                                     f"{_fconst(v)} : f32")
                        ops_.append(f"%k{'ab'[i]}")
                if packet != "where":  # masked_fill(x, mask, v): v where mask
                    ops_.reverse()
                return lines + [
                    "%z = arith.constant 0.0 : f32",
                    f"%c = arith.cmpf une, {ar[0]}, %z : f32",
                    f"%r = arith.select %c, {ops_[0]}, {ops_[1]} : f32"], \
                    "%r"
            r = e.generic(out_shape, vals, body)
            if packet.endswith("_"):
                self.env[node.args[0]] = r
            return r
        if packet in ("triu", "tril"):
            x = args[0]
            diag = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
            rank = len(x.shape)
            pred = "sge" if packet == "triu" else "sle"
            return e.generic(out_shape, [x], _unary(lambda v: [
                f"%ii = linalg.index {rank - 2} : index",
                f"%jj = linalg.index {rank - 1} : index",
                "%i = arith.index_cast %ii : index to i64",
                "%j = arith.index_cast %jj : index to i64",
                "%d = arith.subi %j, %i : i64",
                f"%kd = arith.constant {int(diag)} : i64",
                f"%c = arith.cmpi {pred}, %d, %kd : i64",
                "%z = arith.constant 0.0 : f32",
                f"%r = arith.select %c, {v}, %z : f32"]))
        if packet == "arange":
            nums = [a for a in args if not isinstance(a, _Val)]
            start, step = 0, 1
            if len(nums) == 1:
                (end,) = nums
            elif len(nums) == 2:
                start, end = nums
            else:
                start, end, step = nums[:3]
            return e.generic(out_shape, [], lambda ar: ([
                "%ii = linalg.index 0 : index",
                "%i = arith.index_cast %ii : index to i64",
                "%f = arith.sitofp %i : i64 to f32",
                f"%st = arith.constant {_fconst(step)} : f32",
                f"%s0 = arith.constant {_fconst(start)} : f32",
                "%m = arith.mulf %f, %st : f32",
                "%r = arith.addf %m, %s0 : f32"], "%r"))
        if packet in _FACTORY:
            value = _FACTORY[packet]
            if value is None:
                value = args[0] if packet == "scalar_tensor" else args[-1]
            if isinstance(value, _Val):
                self.error(node, "a tensor fill value")
            return e.filled(out_shape, float(value))
        if packet == "embedding":
            weight, ids = e.value(args[0]), e.value(args[1])
            if len(weight.shape) != 2:
                self.error(node, "a weight that is not 2-D")
            rank = len(out_shape)
            dims = ", ".join(f"d{i}" for i in range(rank))
            idx = ", ".join(f"d{i}" for i in range(rank - 1))
            return e.generic(out_shape, [ids], lambda ar: ([
                f"%ti = arith.fptosi {ar[0]} : f32 to i64",
                "%row = arith.index_cast %ti : i64 to index",
                f"%col = linalg.index {rank - 1} : index",
                f"%r = tensor.extract {weight.name}[%row, %col] : "
                f"{_ttype(weight.shape)}"], "%r"),
                in_maps=[f"({dims}) -> ({idx})"])
        if packet == "embedding_dense_backward":
            grad, ids, num_weights, padding_idx, by_freq = args[:5]
            if by_freq:
                self.error(node, "scale_grad_by_freq")
            n = math.prod(ids.shape)
            dim = grad.shape[-1]
            g = e.reshape(grad, (n, dim))
            i = e.reshape(ids, (n,))
            pad = [] if padding_idx is None or padding_idx < 0 else [
                f"%kp = arith.constant {int(padding_idx)} : i64",
                "%np = arith.cmpi ne, %ti, %kp : i64",
                "%c = arith.andi %eq, %np : i1"]
            cond = "%c" if pad else "%eq"
            # dW[v, d] = sum over tokens t with id v of dY[t, d]
            return e.generic((num_weights, dim, n), [g, i], lambda ar: ([
                "%vv = linalg.index 0 : index",
                "%v = arith.index_cast %vv : index to i64",
                f"%ti = arith.fptosi {ar[1]} : f32 to i64",
                "%eq = arith.cmpi eq, %ti, %v : i64"] + pad + [
                "%z = arith.constant 0.0 : f32",
                f"%s = arith.select {cond}, {ar[0]}, %z : f32",
                f"%r = arith.addf {ar[2]}, %s : f32"], "%r"),
                in_maps=["(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d2)"],
                reduce_dims={2}, init=0.0)
        if packet in ("_log_softmax", "_log_softmax_backward_data"):
            x = args[0]
            dim = args[1 if packet == "_log_softmax" else 2] % len(x.shape)
            if packet == "_log_softmax":
                mx = self.reduce(x, [dim], float("-inf"), "arith.maximumf",
                                 keep=True)
                sh = e.generic(x.shape, [x, mx], _binary("arith.subf"))
                ex = e.generic(x.shape, [sh], _unary(
                    lambda v: [f"%r = math.exp {v} : f32"]))
                den = self.reduce(ex, [dim], 0.0, "arith.addf", keep=True)
                return e.generic(x.shape, [sh, den], lambda ar: (
                    [f"%l = math.log {ar[1]} : f32",
                     f"%r = arith.subf {ar[0]}, %l : f32"], "%r"))
            grad, out = args[0], args[1]
            tot = self.reduce(grad, [dim], 0.0, "arith.addf", keep=True)
            return e.generic(x.shape, [grad, out, tot], lambda ar: (
                [f"%x = math.exp {ar[1]} : f32",
                 f"%m = arith.mulf %x, {ar[2]} : f32",
                 f"%r = arith.subf {ar[0]}, %m : f32"], "%r"))
        if packet in ("nll_loss_forward", "nll_loss_backward"):
            return self.nll_loss(node, packet, args, out_shape)
        return None

    def nll_loss(self, node, packet, args, out_shape):
        """nll_loss_forward(x, target, weight, reduction, ignore_index) ->
        (loss, total_weight) and nll_loss_backward(dy, x, target, weight,
        reduction, ignore_index, total_weight), for x of shape (N, C) or
        (C,), without class weights. reduction: 0 none, 1 mean, 2 sum."""
        e = self.e
        fwd = packet == "nll_loss_forward"
        if fwd:
            x, target, weight, reduction, ignore = args[:5]
        else:
            dy, x, target, weight, reduction, ignore, total = args[:7]
        if weight is not None:
            self.error(node, "class weights")
        if len(x.shape) not in (1, 2):
            self.error(node, f"input of rank {len(x.shape)} (only (N, C) "
                             "or (C,))")
        c = x.shape[-1]
        n = x.shape[0] if len(x.shape) == 2 else 1
        x2 = e.reshape(x, (n, c))
        t = e.reshape(target, (n,))
        # Whether class d1 is sample d0's target (and not ignored).
        hit = ["%ti = arith.fptosi {t} : f32 to i64",
               "%cc = linalg.index 1 : index",
               "%ci = arith.index_cast %cc : index to i64",
               "%eq = arith.cmpi eq, %ti, %ci : i64",
               f"%ki = arith.constant {int(ignore)} : i64",
               "%ok = arith.cmpi ne, %ti, %ki : i64",
               "%h = arith.andi %eq, %ok : i1",
               "%z = arith.constant 0.0 : f32"]
        if fwd:
            picked = e.generic((n, c), [x2, t], lambda ar: (
                [h.format(t=ar[1]) for h in hit] + [
                    f"%s = arith.select %h, {ar[0]}, %z : f32",
                    f"%r = arith.subf {ar[2]}, %s : f32"], "%r"),
                in_maps=["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
                reduce_dims={1}, init=0.0)
            valid = e.generic((n,), [t], lambda ar: ([
                f"%ti = arith.fptosi {ar[0]} : f32 to i64",
                f"%ki = arith.constant {int(ignore)} : i64",
                "%ok = arith.cmpi ne, %ti, %ki : i64",
                "%z = arith.constant 0.0 : f32",
                "%one = arith.constant 1.0 : f32",
                "%r = arith.select %ok, %one, %z : f32"], "%r"))
            total = self.reduce(valid, [0], 0.0, "arith.addf")
            if reduction == 0:
                return e.reshape(picked, x.shape[:-1]), total
            loss = self.reduce(picked, [0], 0.0, "arith.addf")
            if reduction == 1:
                loss = e.generic((), [loss, total], _binary("arith.divf"))
            return loss, total
        if reduction == 0:
            g = e.reshape(dy, (n,))
        else:
            g = e.reshape(dy, ())
            if reduction == 1:
                g = e.generic((), [g, total], _binary("arith.divf"))
        gmap = "(d0, d1) -> (d0)" if reduction == 0 else "(d0, d1) -> ()"
        grad = e.generic((n, c), [t, g], lambda ar: (
            [h.format(t=ar[0]) for h in hit] + [
                f"%ng = arith.negf {ar[1]} : f32",
                "%r = arith.select %h, %ng, %z : f32"], "%r"),
            in_maps=["(d0, d1) -> (d0)", gmap])
        return e.reshape(grad, x.shape)

    def reduce(self, x, dims, init, op, keep=False):
        """Reduces `x` over `dims` with the binary arith op `op`."""
        e = self.e
        x = e.value(x)
        rank = len(x.shape)
        ident = ", ".join(f"d{i}" for i in range(rank))
        red = e.generic(x.shape, [x], lambda ar: (
            [f"%r = {op} {ar[0]}, {ar[1]} : f32"], "%r"),
            in_maps=[f"({ident}) -> ({ident})"], reduce_dims=set(dims),
            init=init)
        if keep:
            red = e.reshape(red, tuple(1 if i in dims else s
                                       for i, s in enumerate(x.shape)))
        return red


def import_graph(graph_module, arg_names, arg_attrs, func_name="train_step"):
    """Imports an aten-level FX GraphModule (from make_fx) to MLIR text.
    Returns (text, number of results)."""
    text, outs = _Importer(graph_module, arg_names, arg_attrs, func_name).run()
    return text, len(outs)


# --------------------------------------------------------------------------
# Tracing and the training step


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _traced(x):
    """An example input or state tensor as traced: floating point as
    float32; integer and bool tensors keep their dtype (token ids,
    targets, masks), since ops like embedding need it."""
    x = torch.as_tensor(x).detach()
    if x.dtype in _CARRIED:
        return x
    return x.to(torch.float32)


def _carried(x, what):
    """A tensor as the float32 array the compiled function takes; integer
    and bool tensors are carried as float32, which is exact below 2^24."""
    x = torch.as_tensor(x).detach().cpu()
    if x.dtype in _CARRIED and x.dtype != torch.bool and x.numel() and \
            int(x.abs().max()) >= 1 << 24:
        raise Mxfp4Error(f"{what}: integer values of 2^24 or more are not "
                         "exact as float32")
    return np.ascontiguousarray(x.to(torch.float32).numpy())


class TrainingStep:
    """A compiled training step. `.mlir` is the imported module, `.step(
    *inputs, step=0)` returns (loss, {parameter name: gradient}).
    `.parameter_names` are the trainable parameters, in argument order;
    `.state_names` adds frozen parameters and buffers."""

    def __init__(self, module, mlir, state_names, grad_names,
                 input_shapes, recipe, func_name, graph):
        self.grad_names = list(grad_names)
        self.state_names = list(state_names)
        self.module = module
        self.mlir = mlir
        self.parameter_names = [n for n in grad_names
                                if n in set(state_names)]
        self.input_shapes = input_shapes
        self.recipe = recipe
        self.func_name = func_name
        self.graph = graph
        self._compiled = None

    @property
    def compiled(self):
        if self._compiled is None:
            self._compiled = CpuModule(self.mlir, name="<torch_frontend>",
                                       recipe=self.recipe)
        return self._compiled

    def step(self, *inputs, step=0):
        state = dict(self.module.named_parameters())
        state.update(self.module.named_buffers())
        arrays = [_carried(state[n], n) for n in self.state_names]
        for i, (x, shape) in enumerate(zip(inputs, self.input_shapes)):
            x = torch.as_tensor(x)
            if tuple(x.shape) != shape:
                raise Mxfp4Error(f"input shape {tuple(x.shape)} differs from "
                                 f"the traced {shape}")
            arrays.append(_carried(x, f"input {i}"))
        if len(inputs) != len(self.input_shapes):
            raise Mxfp4Error(f"expected {len(self.input_shapes)} inputs, got "
                             f"{len(inputs)}")
        results = self.compiled.call(self.func_name, *arrays, int(step))
        loss = torch.from_numpy(np.array(results[0], dtype=np.float32))
        grads = {n: torch.from_numpy(np.array(g, dtype=np.float32))
                 for n, g in zip(self.grad_names, results[1:])}
        return loss, grads


def compile_training_step(module, example_inputs, loss_fn, recipe="bf16",
                          func_name="train_step", input_grads=()):
    """Traces the training step `loss_fn(module(*inputs[:-1]), inputs[-1])`
    (the last example input is the target) and its gradients with respect
    to the module's parameters, imports it and compiles it under `recipe`
    (lazily, on the first `.step`). Returns a
    TrainingStep whose `.step(*inputs)` runs the compiled joint graph with
    the module's current parameters. `input_grads` lists indices of inputs
    whose gradients are also returned (as "input<i>"); without them the
    first layer's Dgrad is dead code and is not traced."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    names = [n for n, _ in named]
    # Frozen parameters and buffers are arguments too, without gradients.
    frozen = [n for n, p in module.named_parameters() if not p.requires_grad]
    buffers = [n for n, _ in module.named_buffers()]
    state = dict(module.named_parameters())
    state.update(module.named_buffers())
    params = [_traced(state[n]) for n in names + frozen + buffers]
    inputs = [_traced(x) for x in example_inputs]
    np_ = len(names) + len(frozen) + len(buffers)
    input_grads = tuple(int(i) for i in input_grads)
    grad_names = names + [f"input{i}" for i in input_grads]

    def call_loss(ps, ins):
        mapping = dict(zip(names + frozen + buffers, ps))
        out = stateless.functional_call(module, mapping, tuple(ins[:-1]))
        return loss_fn(out, ins[-1])

    def joint(*args):
        ps = list(args[:np_])
        ins = list(args[np_:])
        wrt = [p.requires_grad_() for p in ps[:len(names)]] + \
            [ins[i].requires_grad_() for i in input_grads]
        loss = call_loss(ps, ins)
        return (loss, *torch.autograd.grad(loss, wrt))

    tracer_cls = proxy_tensor.PythonKeyTracer
    old = tracer_cls.__dict__.get("record_stack_traces")
    tracer_cls.record_stack_traces = True
    try:
        gm = proxy_tensor.make_fx(joint, _decomposition_table())(
            *params, *inputs)
    finally:
        if old is None:
            del tracer_cls.record_stack_traces
        else:
            tracer_cls.record_stack_traces = old
    arg_names, seen = [], set()
    for n in [f"p_{_sanitize(n)}" for n in names + frozen] + \
            [f"b_{_sanitize(n)}" for n in buffers] + \
            [f"in{i}" for i in range(len(inputs))]:
        while n in seen:
            n += "_"
        seen.add(n)
        arg_names.append(n)
    arg_attrs = [f' {{mxfp4.parameter = "{n}"}}' for n in names + frozen] + \
        [""] * (len(buffers) + len(inputs))
    text, _ = import_graph(gm, arg_names, arg_attrs, func_name)
    return TrainingStep(module, text, names + frozen + buffers, grad_names,
                        [tuple(x.shape) for x in inputs], recipe, func_name,
                        gm)

