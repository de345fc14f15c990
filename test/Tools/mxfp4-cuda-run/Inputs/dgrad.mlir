// A bf16 GEMM in the Dgrad layout (B [K, N], N contiguous) with edges that
// are not multiples of the tiles: tensor-maps.test.
func.func @dgrad(%dy: tensor<200x160xbf16>, %w: tensor<160x192xbf16>) -> tensor<200x192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x192xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<200x192xf32>) -> tensor<200x192xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %w : tensor<200x160xbf16>, tensor<160x192xbf16>) outs(%z : tensor<200x192xf32>) -> tensor<200x192xf32>
  return %r : tensor<200x192xf32>
}
