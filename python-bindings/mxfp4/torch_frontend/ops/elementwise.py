"""Elementwise ops: one linalg.generic each, its operands broadcast
numpy-style. Scalar operands become constants in the block. Comparisons
and masks give and take f32 0 or 1; dtype conversions act on the carried
f32 values."""

import torch

from ..emitter import Val, binary_body, fconst, unary_body
from .table import handles

# Unary ops: the block body's lines for the operand x, defining %r.
UNARY = {
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

# Binary arithmetic: the arith op. Each has an in-place form (add_, ...).
_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
           "div": "arith.divf"}

# Comparisons: the arith.cmpf predicate.
_COMPARE = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq",
            "ne": "une"}


def _unary_handler(lines):
    def handler(call):
        if len(call.args) != 1:
            call.unsupported()
        return call.e.generic(call.shape, [call.args[0]], unary_body(lines))
    return handler


for _op, _lines in UNARY.items():
    handles(_op)(_unary_handler(_lines))


@handles(*_BINARY, *(op + "_" for op in _BINARY), "rsub")
def binary(call):
    """a op b (rsub: b - a), with `alpha` scaling b; tensor-tensor or
    tensor-scalar."""
    e = call.e
    a, b = call.args[0], call.args[1]
    base = call.op.rstrip("_")
    alpha = call.kwargs.get("alpha", 1)
    if call.kwargs.get("rounding_mode") is not None:
        call.error("div with a rounding mode")
    if base == "rsub":
        a, b, base = b, a, "sub"
    if alpha != 1:
        if not isinstance(b, Val):
            b = b * alpha
        else:
            b = e.generic(b.shape, [b], lambda ar, al=alpha:
                          binary_body("arith.mulf")(ar, b_scalar=al))
    ins = [x for x in (a, b) if isinstance(x, Val)]
    if not ins:
        call.error("both operands are scalars")
    fn = binary_body(_BINARY[base])
    sa = None if isinstance(a, Val) else a
    sb = None if isinstance(b, Val) else b
    r = e.generic(call.shape, ins,
                  lambda ar: fn(ar, a_scalar=sa, b_scalar=sb))
    if call.op.endswith("_"):
        call.rebind(0, r)
    return r


@handles("pow")
def pow_(call):
    """A tensor to a scalar power."""
    x, p = call.args[0], call.args[1]
    if not isinstance(x, Val) or isinstance(p, Val):
        call.unsupported()
    p = float(p)
    if p == 1.0:
        return x
    if p == int(p) and 0 < abs(p) <= 4:
        # Small integer powers by multiplication: exact for negative bases,
        # where powf's expansion is not.
        def body(ar, n=int(abs(p)), inv=p < 0):
            lines, cur = [], ar[0]
            for i in range(n - 1):
                lines.append(f"%p{i} = arith.mulf {cur}, {ar[0]} : f32")
                cur = f"%p{i}"
            if inv:
                lines += ["%one = arith.constant 1.0 : f32",
                          f"%q = arith.divf %one, {cur} : f32"]
                cur = "%q"
            return lines, cur
    else:
        body = unary_body(lambda v: [f"%k = arith.constant {fconst(p)} : f32",
                                     f"%r = math.powf {v}, %k : f32"])
    return call.e.generic(call.shape, [x], body)


@handles("threshold_backward")
def threshold_backward(call):
    """ReLU's gradient: zero where the input is at most the threshold."""
    grad, x, thr = call.args
    return call.e.generic(call.shape, [grad, x], lambda ar: ([
        f"%t = arith.constant {fconst(thr)} : f32",
        "%z = arith.constant 0.0 : f32",
        f"%c = arith.cmpf ule, {ar[1]}, %t : f32",
        f"%r = arith.select %c, %z, {ar[0]} : f32"], "%r"))


def _operands(ar, values):
    """The block operands of `values` (tensors: the block arguments `ar`, in
    order; scalars: constants %ka, %kb by position) and the lines making the
    constants."""
    it, lines, ops = iter(ar), [], []
    for i, v in enumerate(values):
        if isinstance(v, Val):
            ops.append(next(it))
        else:
            lines.append(f"%k{'ab'[i]} = arith.constant {fconst(v)} : f32")
            ops.append(f"%k{'ab'[i]}")
    return lines, ops


@handles(*_COMPARE)
def compare(call):
    """1 where the comparison holds, else 0."""
    a, b = call.args[0], call.args[1]
    pred = _COMPARE[call.op]
    ins = [v for v in (a, b) if isinstance(v, Val)]

    def body(ar):
        lines, ops = _operands(ar[:-1], (a, b))
        return lines + [
            f"%c = arith.cmpf {pred}, {ops[0]}, {ops[1]} : f32",
            "%z = arith.constant 0.0 : f32",
            "%one = arith.constant 1.0 : f32",
            "%r = arith.select %c, %one, %z : f32"], "%r"
    return call.e.generic(call.shape, ins, body)


@handles("logical_not")
def logical_not(call):
    return call.e.generic(call.shape, [call.args[0]], unary_body(lambda x: [
        "%z = arith.constant 0.0 : f32",
        "%one = arith.constant 1.0 : f32",
        f"%c = arith.cmpf oeq, {x}, %z : f32",
        "%r = arith.select %c, %one, %z : f32"]))


@handles("bitwise_not")
def bitwise_not(call):
    """The logical not of a bool tensor."""
    if call.dtype(0) != torch.bool:
        call.error("bitwise_not of a non-bool tensor")
    return logical_not(call)


def _select(call, cond, a, b, swap):
    """a where cond is nonzero, else b (`swap`: the other way round); a and
    b are tensors or scalars."""
    vals = [cond] + [v for v in (a, b) if isinstance(v, Val)]

    def body(ar):
        lines, ops = _operands(ar[1:-1], (a, b))
        if swap:
            ops.reverse()
        return lines + [
            "%z = arith.constant 0.0 : f32",
            f"%c = arith.cmpf une, {ar[0]}, %z : f32",
            f"%r = arith.select %c, {ops[0]}, {ops[1]} : f32"], "%r"
    return call.e.generic(call.shape, vals, body)


@handles("where")
def where(call):
    if len(call.args) != 3:
        call.error("where with one argument")
    cond, a, b = call.args
    return _select(call, cond, a, b, swap=False)


@handles("masked_fill", "masked_fill_")
def masked_fill(call):
    """masked_fill(x, mask, v): v where mask, else x."""
    x, mask, value = call.args
    r = _select(call, mask, x, value, swap=True)
    if call.op.endswith("_"):
        call.rebind(0, r)
    return r


@handles("_to_copy")
def to_copy(call):
    """A dtype conversion between the carried representations (a narrow
    float result is rounded by the importer, importer.ROUNDED)."""
    x = call.args[0]
    if not isinstance(x, Val):
        call.unsupported()
    src, dst = call.dtype(0), call.result_dtype
    if call.kwargs.get("dtype") is None or src == dst:
        return x
    if dst == torch.bool and src != torch.bool:
        return call.e.generic(x.shape, [x], lambda ar: ([
            "%z = arith.constant 0.0 : f32",
            "%one = arith.constant 1.0 : f32",
            f"%c = arith.cmpf une, {ar[0]}, %z : f32",
            "%r = arith.select %c, %one, %z : f32"], "%r"))
    if not dst.is_floating_point and src.is_floating_point:
        # float to integer truncates toward zero.
        return call.e.generic(x.shape, [x], unary_body(lambda v: [
            f"%t = arith.fptosi {v} : f32 to i64",
            "%r = arith.sitofp %t : i64 to f32"]))
    return x  # integer/bool to float or a wider integer; float to float
