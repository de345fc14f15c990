// RUN: mxfp4-opt %s -split-input-file -mxfp4-apply-recipe=recipe=fp4-all-sr -verify-diagnostics

// Stochastic rounding needs the step counter.
func.func @no_step(%x: tensor<64x64xf32>, %w: tensor<32x64xf32>, %dy: tensor<64x32xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-error @+1 {{recipe cannot rewrite the dgrad GEMM of 'l0': stochastic rounding and random_per_step rotations need an i64 function argument marked {mxfp4.step}}}
  %dx = linalg.matmul {mxfp4.gemm = #mxfp4.gemm<dgrad, "l0">} ins(%dy, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %dx : tensor<64x64xf32>
}

// -----

// MXFP4 needs the reduction axis in whole blocks.
func.func @ragged(%x: tensor<64x48xf32>, %w: tensor<32x48xf32>, %step: i64 {mxfp4.step}) -> tensor<64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  // expected-error @+1 {{recipe cannot rewrite the fprop GEMM of 'l0': the reduction dimension (48) is not a multiple of the MXFP4 block size 32}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} ins(%x, %w : tensor<64x48xf32>, tensor<32x48xf32>) outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
