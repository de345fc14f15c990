// Elementwise arith and math on whole tensors run too: exp and tanh through
// LLVM intrinsics, erf through the C library.
// RUN: %PYTHON -c "import numpy as np; np.save('%t.x.npy', np.array([[-1.0, 0.0], [0.5, 2.0]], np.float32))"
// RUN: mxfp4-run exec %s --input=@%t.x.npy --output=@%t.y.npy
// RUN: %PYTHON -c "import numpy as np, math; x = np.load('%t.x.npy'); y = np.load('%t.y.npy'); want = np.vectorize(lambda v: math.exp(v) + math.tanh(v) * math.erf(v) + v * v)(x); assert np.allclose(y, want, rtol=1e-6, atol=1e-6), (y, want)"
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = math.exp %x : tensor<2x2xf32>
  %t = math.tanh %x : tensor<2x2xf32>
  %r = math.erf %x : tensor<2x2xf32>
  %tr = arith.mulf %t, %r : tensor<2x2xf32>
  %sq = arith.mulf %x, %x : tensor<2x2xf32>
  %a = arith.addf %e, %tr : tensor<2x2xf32>
  %b = arith.addf %a, %sq : tensor<2x2xf32>
  return %b : tensor<2x2xf32>
}
