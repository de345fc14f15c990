"""MLIR text emission: f32 tensor values and the ops the handlers build from
them (linalg.generic, fill, matmul, reshapes, slices).

Values are `Val`s: an SSA name and a static shape. The emitter numbers its
SSA names in the order it is asked for them, so the text is a deterministic
function of the order in which the handlers emit.
"""

import math

import numpy as np

from .._mxfp4 import Mxfp4Error


def ttype(shape):
    """The f32 tensor type of `shape`."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def fconst(value):
    """An f32 constant's literal: exact, and hex for NaN and infinities."""
    value = float(np.float32(value))
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return f"{value:.9e}"  # round-trips every float32


class Val:
    """A tensor value: an SSA name and a shape. A 2-D transpose is kept
    lazy (`transposed_of`) so that `mm` can fold it into indexing maps."""

    def __init__(self, name, shape, transposed_of=None):
        self.name, self.shape = name, tuple(shape)
        self.transposed_of = transposed_of


class Emitter:
    """The body of the function being imported, one line at a time."""

    def __init__(self):
        self.lines = []
        self.counter = 0

    def fresh(self, hint="v"):
        """A new SSA name."""
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, line):
        """Appends one line of the function body."""
        self.lines.append("  " + line)

    def value(self, v):
        """`v`, with a lazy transpose materialized."""
        if v.transposed_of is None:
            return v
        src = self.value(v.transposed_of)
        return self.generic(v.shape, [src], lambda a: ([], a[0]),
                            in_maps=["(d0, d1) -> (d1, d0)"])

    def empty(self, shape):
        """A tensor.empty of `shape`; returns its name."""
        name = self.fresh("e")
        self.emit(f"{name} = tensor.empty() : {ttype(shape)}")
        return name

    def filled(self, shape, scalar):
        """A tensor of `shape` filled with the f32 `scalar`."""
        empty = self.empty(shape)
        c, name = self.fresh("c"), self.fresh("f")
        self.emit(f"{c} = arith.constant {fconst(scalar)} : f32")
        self.emit(f"{name} = linalg.fill ins({c} : f32) outs({empty} : "
                  f"{ttype(shape)}) -> {ttype(shape)}")
        return Val(name, shape)

    def generic(self, shape, inputs, body, in_maps=None, out_shape=None,
                reduce_dims=(), init=None):
        """linalg.generic over the iteration space `shape`. `inputs` are
        Val; their maps broadcast numpy-style (right-aligned, size-1 dims
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
                   ", ".join(ttype(o.shape) for o in operands) + ")")
        amaps = ", ".join(f"affine_map<{m}>" for m in maps)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{amaps}], "
                  f"iterator_types = [{iters}]}}{ins} outs({out} : "
                  f"{ttype(out_shape)}) {{")
        blk = ", ".join(f"{a}: f32" for a in args + [acc])
        self.emit(f"^bb0({blk}):")
        for line in lines:
            self.emit("  " + line)
        self.emit(f"  linalg.yield {result} : f32")
        self.emit(f"}} -> {ttype(out_shape)}")
        return Val(name, out_shape)

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
        """`v` reshaped to `shape` (of as many elements): collapsed to 1-D
        (or rank 0), then expanded."""
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
                      f"{ttype(cur.shape)} into {ttype(target)}")
            cur = Val(name, target)
        if cur.shape == shape:
            return cur
        if not cur.shape:
            assoc = "[]"
        else:
            assoc = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
        name = self.fresh("r")
        out = ", ".join(str(s) for s in shape)
        self.emit(f"{name} = tensor.expand_shape {cur.name} {assoc} "
                  f"output_shape [{out}] : {ttype(cur.shape)} into "
                  f"{ttype(shape)}")
        return Val(name, shape)

    def _slice_attrs(self, shape, dim, start, size, step):
        """The offsets, sizes and strides of a slice along `dim`."""
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
                  f"{ttype(v.shape)} to {ttype(sizes)}")
        return Val(name, sizes)

    def insert_slice(self, src, dest, dim, start, step=1):
        """`dest` with `src` written at start, start + step, ... along
        `dim` (the other dims of both are equal)."""
        src, dest = self.value(src), self.value(dest)
        attrs, _ = self._slice_attrs(dest.shape, dim, start, src.shape[dim],
                                     step)
        name = self.fresh("s")
        self.emit(f"{name} = tensor.insert_slice {src.name} into "
                  f"{dest.name}{attrs} : {ttype(src.shape)} into "
                  f"{ttype(dest.shape)}")
        return Val(name, dest.shape)

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
                  f"{ttype(a0.shape)}, {ttype(b0.shape)}) outs({out} : "
                  f"{ttype((m, n))}) -> {ttype((m, n))}")
        return Val(name, (m, n))

    def reduce(self, x, dims, init, op, keep=False):
        """Reduces `x` over `dims` with the binary arith op `op`, from
        `init`; `keep` keeps the reduced dims with size 1."""
        x = self.value(x)
        rank = len(x.shape)
        ident = ", ".join(f"d{i}" for i in range(rank))
        red = self.generic(x.shape, [x], lambda ar: (
            [f"%r = {op} {ar[0]}, {ar[1]} : f32"], "%r"),
            in_maps=[f"({ident}) -> ({ident})"], reduce_dims=set(dims),
            init=init)
        if keep:
            red = self.reshape(red, tuple(1 if i in dims else s
                                          for i, s in enumerate(x.shape)))
        return red


def lazy_transpose(v):
    """Lazy 2-D transpose; t(t(x)) is x."""
    if v.transposed_of is not None:
        return v.transposed_of
    return Val(None, (v.shape[1], v.shape[0]), transposed_of=v)


# Block bodies for `Emitter.generic`: functions from the block argument names
# to (lines, result).

def binary_body(op):
    """`op` of the two operands, either of which may be a scalar instead
    (`a_scalar`, `b_scalar`: then one block argument fewer)."""
    def body(args, a_scalar=None, b_scalar=None):
        lines, ops_ = [], []
        it = iter(args[:-1])
        for s in (a_scalar, b_scalar):
            if s is None:
                ops_.append(next(it))
            else:
                c = f"%k{len(lines)}"
                lines.append(f"{c} = arith.constant {fconst(s)} : f32")
                ops_.append(c)
        lines.append(f"%r = {op} {ops_[0]}, {ops_[1]} : f32")
        return lines, "%r"
    return body


def unary_body(lines_fn):
    """The lines `lines_fn(x)` of the one operand `x`, defining `%r`."""
    def body(args):
        return lines_fn(args[0]), "%r"
    return body
