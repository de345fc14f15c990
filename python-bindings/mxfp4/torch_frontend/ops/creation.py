"""Ops that make a tensor from nothing but a shape: fills and `arange`.
Empty tensors are zeros."""

from ..emitter import Val, fconst
from .table import handles

# The fill value of each *_like op (None: an argument).
_LIKE = {"ones_like": 1.0, "zeros_like": 0.0, "full_like": None,
         "empty_like": 0.0}

# The fill value of each factory (None: an argument).
_FACTORY = {"zeros": 0.0, "ones": 1.0, "full": None, "scalar_tensor": None,
            "new_zeros": 0.0, "new_ones": 1.0, "new_full": None,
            "new_empty": 0.0, "empty": 0.0}


@handles(*_LIKE)
def like(call):
    value = _LIKE[call.op]
    if value is None:
        value = call.args[1]
    return call.e.filled(call.shape, value)


@handles("fill_")
def fill_(call):
    v = call.e.filled(call.shape, call.args[1])
    call.rebind(0, v)
    return v


@handles(*_FACTORY)
def factory(call):
    value = _FACTORY[call.op]
    if value is None:
        value = call.args[0] if call.op == "scalar_tensor" else call.args[-1]
    if isinstance(value, Val):
        call.error("a tensor fill value")
    return call.e.filled(call.shape, float(value))


@handles("arange")
def arange(call):
    nums = [a for a in call.args if not isinstance(a, Val)]
    start, step = 0, 1
    if len(nums) == 1:
        (end,) = nums
    elif len(nums) == 2:
        start, end = nums
    else:
        start, end, step = nums[:3]
    return call.e.generic(call.shape, [], lambda ar: ([
        "%ii = linalg.index 0 : index",
        "%i = arith.index_cast %ii : index to i64",
        "%f = arith.sitofp %i : i64 to f32",
        f"%st = arith.constant {fconst(step)} : f32",
        f"%s0 = arith.constant {fconst(start)} : f32",
        "%m = arith.mulf %f, %st : f32",
        "%r = arith.addf %m, %s0 : f32"], "%r"))
