// RUN: mxfp4-opt %s -split-input-file -mxfp4-annotate-roles -verify-diagnostics

// The weight on the left is not the linear-layer convention.
func.func @weight_on_left(%w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}, %x: tensor<64x64xf32>) -> tensor<32x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{parameter 'l.weight' is the left operand; linear layers put the weight on the right (docs/Recipes.md), left in high precision}}
  %y = linalg.matmul ins(%w, %x : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

func.func @two_parameters(%a: tensor<32x64xf32> {mxfp4.parameter = "a.weight"}, %b: tensor<64x64xf32> {mxfp4.parameter = "b.weight"}) -> tensor<32x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{both operands are parameters; not a linear layer's GEMM, left in high precision}}
  %y = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// Shaped like a weight gradient, but no Fprop or Dgrad of that weight here.
func.func @orphan_wgrad(%w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}, %dy: tensor<128x32xf32>, %x: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{looks like a weight gradient (token-axis contraction shaped like a parameter) but its operands match no layer's Fprop input or Dgrad output gradient; left in high precision}}
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %x : tensor<128x32xf32>, tensor<128x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %dw : tensor<32x64xf32>
}
