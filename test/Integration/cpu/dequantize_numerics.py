# Bit-exact comparison of the compiled mxfp4.dequantize (f32 and bf16 results)
# with the NumPy reference: every code under every scale byte, including
# 0x00 (2^-127), 0xFD..0xFE (overflow to Inf) and 0xFF (NaN), along each axis.
# RUN: %PYTHON %s mxfp4-run %t

import sys

import numpy as np

import harness
import mx_reference as ref

SHAPES = [((16, 32 * 256), 1), ((64, 5), 0), ((2, 3, 96), 2), ((3, 64, 2), 1)]


def module(shape, axis):
    sshape = list(shape)
    sshape[axis] //= 32
    v = harness.tensor_type(shape, "f4E2M1FN")
    s = harness.tensor_type(sshape, "f8E8M0FNU")
    f = harness.tensor_type(shape, "f32")
    b = harness.tensor_type(shape, "bf16")
    return f"""func.func @d(%v: {v}, %s: {s}) -> ({f}, {b}) {{
  %f = mxfp4.dequantize %v scale %s axis = {axis} : {v}, {s} -> {f}
  %b = mxfp4.dequantize %v scale %s axis = {axis} : {v}, {s} -> {b}
  return %f, %b : {f}, {b}
}}
"""


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    runner = harness.Runner(tool, workdir)
    check = harness.Checker("dequantize")
    rng = np.random.default_rng(7)
    for n, (shape, axis) in enumerate(SHAPES):
        sshape = list(shape)
        sshape[axis] //= 32
        codes = rng.integers(0, 16, size=shape).astype(np.uint8)
        if n == 0:
            # Every one of the 256 scale bytes, each over all 16 codes.
            scales = np.tile(np.arange(256, dtype=np.uint8), (16, 1))
            codes = np.tile(np.repeat(np.arange(16, dtype=np.uint8), 2),
                            (16, 256))
        else:
            scales = rng.integers(0, 256, size=sshape).astype(np.uint8)
        f, b = runner.run(module(shape, axis), "d", [codes, scales], 2)
        label = f"{shape} axis {axis}"
        check.same_bits(label + " f32", f, ref.dequantize(codes, scales, axis))
        check.same_bits(label + " bf16", b,
                        ref.dequantize(codes, scales, axis, out="bf16"))
    check.finish()


main()
