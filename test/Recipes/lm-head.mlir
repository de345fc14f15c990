// RUN: mxfp4-opt %s -mxfp4-annotate-roles | FileCheck %s --check-prefix=DEFAULT
// RUN: mxfp4-opt %s -mxfp4-annotate-roles=lm-head | FileCheck %s --check-prefix=ASKED
// DEFAULT-NOT: mxfp4.gemm
// ASKED: {mxfp4.gemm = #mxfp4.gemm<fprop, "lm_head">}
func.func @lm_head(%x: tensor<64x64xf32>, %w: tensor<128x64xf32> {mxfp4.parameter = "lm_head.weight"}) -> tensor<64x128xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<64x64xf32>, tensor<128x64xf32>) outs(%z : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
