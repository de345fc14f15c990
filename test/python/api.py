# The Python module: compile, call with NumPy arrays, errors as exceptions,
# and the quantize/dequantize helpers against the NumPy reference.
# REQUIRES: python-bindings
# RUN: %PYTHON %s | FileCheck %s

import os

import numpy as np

import mx_reference as ref

import mxfp4

SOURCE = """
func.func @scale(%x: tensor<2x3xf32>, %s: f32) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.map ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>)
    (%v: f32, %o: f32) { %m = arith.mulf %v, %s : f32
                linalg.yield %m : f32 }
  return %r : tensor<2x3xf32>
}
"""

module = mxfp4.CpuModule(SOURCE)
# CHECK: [('scale', ['tensor<2x3xf32>', 'f32'], ['tensor<2x3xf32>'])]
print(module.functions)
(r,) = module.call("scale", np.arange(6, dtype=np.float32).reshape(2, 3), 2.0)
# CHECK-NEXT: {{\[\[ *0\. +2\. +4\.\]}}
# CHECK-NEXT: {{\[ *6\. +8\. +10\.\]\]}}
print(r)

# Located diagnostics become exceptions.
try:
    mxfp4.CpuModule("func.func @f(%x: tensor<4x48xf32>) {\n"
                    "  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x48xf32>"
                    " -> tensor<4x48xf4E2M1FN>, tensor<4x1xf8E8M0FNU>\n"
                    "  return\n}\n", "bad.mlir")
except mxfp4.Mxfp4Error as e:
    # CHECK-NEXT: error: bad.mlir:2:12: error: 'mxfp4.quantize' op dimension 1 (size 48) is not a multiple of the block size 32
    print("error:", str(e).splitlines()[1])
try:
    module.call("scale", np.zeros((3, 2), np.float32), 1.0)
except mxfp4.Mxfp4Error as e:
    # CHECK-NEXT: call error: argument #0 (ndarray): expected tensor<2x3xf32> (dtype float32, shape (2, 3)), got dtype float32 shape (3, 2)
    print("call error:", e)

# NumPy helpers run the compiled path and agree with the reference.
rng = np.random.default_rng(0)
x = (rng.standard_normal((64, 96)) * 3).astype(np.float32)
for rule in ("floor", "even", "ceil", "rceil"):
    codes, scales = mxfp4.quantize(x, axis=1, scale_rule=rule)
    want_codes, want_scales = ref.quantize(x, 1, scale_rule=rule)
    assert (codes == want_codes).all() and (scales == want_scales).all(), rule
codes, scales = mxfp4.quantize(x, axis=0, rounding="stochastic", seed=5,
                               counter=2)
want_codes, want_scales = ref.quantize(x, 0, rounding="stochastic", seed=5,
                                       counter=2)
assert (codes == want_codes).all() and (scales == want_scales).all()
back = mxfp4.dequantize(codes, scales, axis=0)
assert (back.view(np.uint32) == ref.dequantize(codes, scales, 0).view(np.uint32)).all()
# CHECK-NEXT: helpers agree with the reference
print("helpers agree with the reference")

# A study of two recipes on one linear layer, scripted from Python: both
# quantize, and their errors differ.
step = open(os.path.join(os.path.dirname(__file__), "..", "Recipes", "Inputs",
                         "linear_fwd_bwd.mlir")).read()
xs = rng.standard_normal((64, 64)).astype(np.float32)
xs[:, 5] *= 40
w = rng.standard_normal((32, 64)).astype(np.float32)
dy = rng.standard_normal((64, 32)).astype(np.float32)
errors = {}
for recipe in ("fp4-all", "fp4-all-dht16"):
    module = mxfp4.CpuModule(step, recipe=recipe)
    y, dx, dw = module.call("linear_fwd_bwd", xs, w, dy, 0)
    exact = xs.astype(np.float64) @ w.T
    errors[recipe] = np.linalg.norm(y - exact) / np.linalg.norm(exact)
assert 1e-3 < errors["fp4-all"] < 1 and 1e-3 < errors["fp4-all-dht16"] < 1, errors
assert errors["fp4-all"] != errors["fp4-all-dht16"], errors
try:
    mxfp4.CpuModule(step, recipe="fp4-everything")
except mxfp4.Mxfp4Error as e:
    # CHECK-NEXT: recipe error: recipe: unknown preset 'fp4-everything'
    print("recipe error:", [l for l in str(e).splitlines() if "recipe:" in l][0].split("error: ")[-1][:40])
