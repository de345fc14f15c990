"""Reductions: `sum` and `mean` over all dims or some, with `keepdim`."""

import math

import torch

from ..emitter import fconst
from .table import handles


def _sum(call, mean):
    """The sum (or with `mean`, the mean) over the dims of the call."""
    e, args, kwargs = call.e, call.args, call.kwargs
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
        call.error("dtype argument")
    if not rank:
        return x
    red = e.reduce(x, dims, 0.0, "arith.addf")
    if mean:
        n = math.prod(x.shape[d] for d in dims)
        red = e.generic(red.shape, [red], lambda ar: (
            [f"%k = arith.constant {fconst(1.0 / n)} : f32",
             f"%r = arith.mulf {ar[0]}, %k : f32"], "%r"))
    if keep:
        red = e.reshape(red, call.shape)
    return red


@handles("sum")
def sum_(call):
    return _sum(call, mean=False)


@handles("mean")
def mean(call):
    return _sum(call, mean=True)
