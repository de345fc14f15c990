"""The ops of the cross-entropy loss: `_log_softmax` and `nll_loss`, with
their gradients (`F.cross_entropy` traces to these). Targets are carried as
f32 and turned back into integers with arith.fptosi."""

from ..emitter import binary_body, unary_body
from .table import handles


@handles("_log_softmax")
def log_softmax(call):
    """(x - max) - log sum exp(x - max) along the dim."""
    e = call.e
    x = call.args[0]
    dim = call.args[1] % len(x.shape)
    mx = e.reduce(x, [dim], float("-inf"), "arith.maximumf", keep=True)
    sh = e.generic(x.shape, [x, mx], binary_body("arith.subf"))
    ex = e.generic(x.shape, [sh], unary_body(
        lambda v: [f"%r = math.exp {v} : f32"]))
    den = e.reduce(ex, [dim], 0.0, "arith.addf", keep=True)
    return e.generic(x.shape, [sh, den], lambda ar: (
        [f"%l = math.log {ar[1]} : f32",
         f"%r = arith.subf {ar[0]}, %l : f32"], "%r"))


@handles("_log_softmax_backward_data")
def log_softmax_backward(call):
    """dx = dy - exp(y) sum(dy) along the dim, for the output y."""
    e = call.e
    grad, out = call.args[0], call.args[1]
    dim = call.args[2] % len(grad.shape)
    tot = e.reduce(grad, [dim], 0.0, "arith.addf", keep=True)
    return e.generic(grad.shape, [grad, out, tot], lambda ar: (
        [f"%x = math.exp {ar[1]} : f32",
         f"%m = arith.mulf %x, {ar[2]} : f32",
         f"%r = arith.subf {ar[0]}, %m : f32"], "%r"))


# Block lines: whether class d1 is sample d0's target {t} (and not ignored),
# as %h; also %z = 0.
_HIT = ["%ti = arith.fptosi {t} : f32 to i64",
        "%cc = linalg.index 1 : index",
        "%ci = arith.index_cast %cc : index to i64",
        "%eq = arith.cmpi eq, %ti, %ci : i64",
        "%ki = arith.constant {ignore} : i64",
        "%ok = arith.cmpi ne, %ti, %ki : i64",
        "%h = arith.andi %eq, %ok : i1",
        "%z = arith.constant 0.0 : f32"]


def _hit(t, ignore):
    return [h.format(t=t, ignore=int(ignore)) for h in _HIT]


def _samples(call, x, target, weight):
    """x as (N, C) and the target as (N,), for x of shape (N, C) or (C,)
    without class weights."""
    e = call.e
    if weight is not None:
        call.error("class weights")
    if len(x.shape) not in (1, 2):
        call.error(f"input of rank {len(x.shape)} (only (N, C) or (C,))")
    c = x.shape[-1]
    n = x.shape[0] if len(x.shape) == 2 else 1
    return n, c, e.reshape(x, (n, c)), e.reshape(target, (n,))


@handles("nll_loss_forward")
def nll_loss_forward(call):
    """nll_loss_forward(x, target, weight, reduction, ignore_index) ->
    (loss, total_weight). reduction: 0 none, 1 mean, 2 sum."""
    e = call.e
    x, target, weight, reduction, ignore = call.args[:5]
    n, c, x2, t = _samples(call, x, target, weight)
    picked = e.generic((n, c), [x2, t], lambda ar: (
        _hit(ar[1], ignore) + [
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
    total = e.reduce(valid, [0], 0.0, "arith.addf")
    if reduction == 0:
        return e.reshape(picked, x.shape[:-1]), total
    loss = e.reduce(picked, [0], 0.0, "arith.addf")
    if reduction == 1:
        loss = e.generic((), [loss, total], binary_body("arith.divf"))
    return loss, total


@handles("nll_loss_backward")
def nll_loss_backward(call):
    """nll_loss_backward(dy, x, target, weight, reduction, ignore_index,
    total_weight): -dy (over total_weight for the mean) at each target."""
    e = call.e
    dy, x, target, weight, reduction, ignore, total = call.args[:7]
    n, c, x2, t = _samples(call, x, target, weight)
    if reduction == 0:
        g = e.reshape(dy, (n,))
    else:
        g = e.reshape(dy, ())
        if reduction == 1:
            g = e.generic((), [g, total], binary_body("arith.divf"))
    gmap = "(d0, d1) -> (d0)" if reduction == 0 else "(d0, d1) -> ()"
    grad = e.generic((n, c), [t, g], lambda ar: (
        _hit(ar[0], ignore) + [
            f"%ng = arith.negf {ar[1]} : f32",
            "%r = arith.select %h, %ng, %z : f32"], "%r"),
        in_maps=["(d0, d1) -> (d0)", gmap])
    return e.reshape(grad, x.shape)
