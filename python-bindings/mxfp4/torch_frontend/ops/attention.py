"""Attention's ops besides its products (`bmm`, in matmul.py): softmax and
its gradient, and the triangular masks of causal attention."""

from ..emitter import binary_body, unary_body
from .table import handles


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
