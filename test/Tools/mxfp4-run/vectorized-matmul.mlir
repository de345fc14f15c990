// Vectorized f32 matmuls (mxfp4-vectorize-matmuls) compute the product in
// every transposition form the recipes use, to f32 rounding.
// RUN: %PYTHON -c "import numpy as np; r = np.random.default_rng(1); [np.save('%t.%%s.npy' %% n, r.standard_normal(s).astype(np.float32)) for n, s in (('a', (64, 96)), ('b', (32, 96)), ('dy', (64, 32)))]"
// RUN: mxfp4-run exec %s --input=@%t.a.npy --input=@%t.b.npy --input=@%t.dy.npy --output=@%t.y.npy --output=@%t.dx.npy --output=@%t.dw.npy
// RUN: %PYTHON -c "import numpy as np; L = lambda n: np.load('%t.%%s.npy' %% n).astype(np.float64); a, b, dy = L('a'), L('b'), L('dy'); [np.testing.assert_allclose(L(n), want, rtol=1e-5, atol=1e-4) for n, want in (('y', a @ b.T), ('dx', dy @ b), ('dw', dy.T @ a))]"
func.func @forms(%x: tensor<64x96xf32>, %w: tensor<32x96xf32>, %dy: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x96xf32>, tensor<32x96xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<64x96xf32>, tensor<32x96xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<64x96xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<64x96xf32>) -> tensor<64x96xf32>
  %dx = linalg.matmul ins(%dy, %w : tensor<64x32xf32>, tensor<32x96xf32>) outs(%z1 : tensor<64x96xf32>) -> tensor<64x96xf32>
  %e2 = tensor.empty() : tensor<32x96xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<32x96xf32>) -> tensor<32x96xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %x : tensor<64x32xf32>, tensor<64x96xf32>) outs(%z2 : tensor<32x96xf32>) -> tensor<32x96xf32>
  return %y, %dx, %dw : tensor<64x32xf32>, tensor<64x96xf32>, tensor<32x96xf32>
}
// One core or all cores: the same bits.
// RUN: mxfp4-run exec %s --parallel=false --input=@%t.a.npy --input=@%t.b.npy --input=@%t.dy.npy --output=@%t.y1.npy --output=@%t.dx1.npy --output=@%t.dw1.npy
// RUN: %PYTHON -c "import numpy as np; [np.testing.assert_array_equal(np.load('%t.%%s.npy' %% n), np.load('%t.%%s1.npy' %% n)) for n in ('y', 'dx', 'dw')]"
