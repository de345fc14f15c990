"""Attention's ops besides its products (`bmm`, in matmul.py): softmax and
its gradient, the triangular masks of causal attention, and the mxfp4 ops
that scaled_dot_product_attention traces to (mxfp4_fx.attention), which
become calls of the attention composites, so the fused GPU kernels apply."""

from ..._mxfp4 import attention_composite
from ..emitter import Val, binary_body, ttype, unary_body
from .table import handles


def _call_composite(call, kind, operands, results):
    """`results` (shapes) of a call of the composite `kind` on `operands`;
    the composite's function is added to the module once."""
    e = call.e
    operands = [e.value(x) for x in operands]
    q, k = operands[0].shape, operands[1].shape
    if len(q) != 4 or len(k) != 4:
        call.error(f"{kind} of q {q} and k {k} (want [B, S, H, D] and "
                   "[B, S, KVH, D])")
    text = attention_composite(kind, list(q), list(k))
    name = text.split("@", 1)[1].split("(", 1)[0]
    call.importer.functions.setdefault(name, text)
    out = e.fresh("attn")
    types = ", ".join(ttype(x.shape) for x in operands)
    result_types = ", ".join(ttype(r) for r in results)
    e.emit(f"{out}:{len(results)} = func.call @{name}("
           f"{', '.join(x.name for x in operands)}) : ({types}) -> "
           f"({result_types})")
    return tuple(Val(f"{out}#{i}", r) for i, r in enumerate(results))


@handles("causal_attention")
def causal_attention(call):
    """mxfp4::causal_attention(q, k, v) -> (o, lse): the causal_attention
    composite."""
    q = call.args[0]
    b, s, h, _ = q.shape
    return _call_composite(call, "causal_attention", call.args[:3],
                           [q.shape, (b, h, s)])


@handles("causal_attention_backward")
def causal_attention_backward(call):
    """mxfp4::causal_attention_backward(q, k, v, o, lse, dO) -> (dq, dk,
    dv): the causal_attention_backward composite."""
    q, k, v = call.args[:3]
    return _call_composite(call, "causal_attention_backward", call.args[:6],
                           [q.shape, k.shape, v.shape])


@handles("_softmax")
def softmax(call):
    """exp(x - max) / sum exp(x - max) along the dim."""
    e = call.e
    x, dim = call.args[0], call.args[1]
    dim %= len(x.shape)
    mx = e.reduce(x, [dim], float("-inf"), "arith.maximumf", keep=True)
    ex = e.generic(x.shape, [x, mx], lambda ar: (
        [f"%s = arith.subf {ar[0]}, {ar[1]} : f32",
         "%r = math.exp %s : f32"], "%r"))
    den = e.reduce(ex, [dim], 0.0, "arith.addf", keep=True)
    return e.generic(x.shape, [ex, den], binary_body("arith.divf"))


@handles("_softmax_backward_data")
def softmax_backward(call):
    """dx = y (dy - sum(dy y)) along the dim, for the softmax's output y."""
    e = call.e
    grad, out, dim = call.args[0], call.args[1], call.args[2]
    dim %= len(grad.shape)
    go = e.generic(grad.shape, [grad, out], binary_body("arith.mulf"))
    tot = e.reduce(go, [dim], 0.0, "arith.addf", keep=True)
    return e.generic(grad.shape, [go, out, tot], lambda ar: (
        [f"%m = arith.mulf {ar[1]}, {ar[2]} : f32",
         f"%r = arith.subf {ar[0]}, %m : f32"], "%r"))


def _triangle(call, pred):
    """x where (column - row) `pred` the diagonal, else 0, over the last two
    dims."""
    x = call.args[0]
    diag = call.args[1] if len(call.args) > 1 else \
        call.kwargs.get("diagonal", 0)
    rank = len(x.shape)
    return call.e.generic(call.shape, [x], unary_body(lambda v: [
        f"%ii = linalg.index {rank - 2} : index",
        f"%jj = linalg.index {rank - 1} : index",
        "%i = arith.index_cast %ii : index to i64",
        "%j = arith.index_cast %jj : index to i64",
        "%d = arith.subi %j, %i : i64",
        f"%kd = arith.constant {int(diag)} : i64",
        f"%c = arith.cmpi {pred}, %d, %kd : i64",
        "%z = arith.constant 0.0 : f32",
        f"%r = arith.select %c, {v}, %z : f32"]))


@handles("triu")
def triu(call):
    return _triangle(call, "sge")


@handles("tril")
def tril(call):
    return _triangle(call, "sle")
