"""The compiled CPU path behind the NumPy reference's interface.

`install(module)` replaces quantize, dequantize, hadamard and scaled_matmul of
`module` (mx_reference) by calls into the compiled code through the `mxfp4`
Python package, so a script written against the reference (the hand-checked
vectors) checks the compiler with the same literals.
"""

import numpy as np

import mxfp4


def _seed(v):
    # The reference reads seeds as i64 two's complement; so does the runner.
    return int(np.array(v if v is not None else 0, dtype=np.uint64).view(np.int64))


def quantize(x, axis, scale_rule="even", rounding="nearest_even", seed=None,
             counter=None, block_size=32, bf16=False):
    assert block_size == 32
    x = np.asarray(x, dtype=np.uint16 if bf16 else np.float32)
    return mxfp4.quantize(x, axis, scale_rule, rounding, _seed(seed),
                          _seed(counter))


def dequantize(codes, scales, axis, out="f32"):
    return mxfp4.dequantize(codes, scales, axis, bf16=out == "bf16")


def hadamard(x, axis, size, kind="deterministic", seed=None, step=None,
             inverse=False, bf16=False):
    x = np.asarray(x, dtype=np.uint16 if bf16 else np.float32)
    return mxfp4.hadamard(x, axis, size, kind, _seed(seed), _seed(step),
                          inverse)


def scaled_matmul(a_codes, a_scales, b_codes, b_scales, acc=None, out="f32",
                  acc_bf16=False):
    if acc is not None and out == "bf16" and not acc_bf16:
        raise NotImplementedError("f32 accumulator with a bf16 result")
    return mxfp4.scaled_matmul(a_codes, a_scales, b_codes, b_scales, acc=acc,
                               bf16=out == "bf16")


def install(module):
    for name in ("quantize", "dequantize", "hadamard", "scaled_matmul"):
        setattr(module, name, globals()[name])
