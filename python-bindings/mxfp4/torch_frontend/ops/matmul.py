"""Matrix products. `mm` and `addmm` are the linear layers: linalg.matmul,
with 2-D transposes folded into its indexing maps so that the recipe passes
see the canonical Fprop, Dgrad and Wgrad forms. `bmm` (attention's
products) is a linalg.generic, which the recipes leave alone."""

from ..emitter import binary_body
from .table import handles


@handles("mm")
def mm(call):
    return call.e.matmul(call.args[0], call.args[1])


@handles("addmm")
def addmm(call):
    """bias + a b, for alpha = beta = 1."""
    e = call.e
    bias, a, b = call.args[:3]
    if call.kwargs.get("beta", 1) != 1 or call.kwargs.get("alpha", 1) != 1:
        call.error("alpha/beta other than 1")
    prod = e.matmul(a, b)
    return e.generic(prod.shape, [prod, bias], binary_body("arith.addf"))


@handles("bmm")
def bmm(call):
    e = call.e
    a, b = e.value(call.args[0]), e.value(call.args[1])
    (bt, m, k), n = a.shape, b.shape[2]
    return e.generic((bt, m, n, k), [a, b], lambda ar: (
        [f"%p = arith.mulf {ar[0]}, {ar[1]} : f32",
         f"%r = arith.addf {ar[2]}, %p : f32"], "%r"),
        in_maps=["(d0, d1, d2, d3) -> (d0, d1, d3)",
                 "(d0, d1, d2, d3) -> (d0, d3, d2)"],
        reduce_dims={3}, init=0.0)
