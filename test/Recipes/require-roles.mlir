// RUN: mxfp4-opt %s -split-input-file --mxfp4-apply-recipe="recipe=fp4-all require-roles=true" -verify-diagnostics
// Without require-roles the same contractions get remarks and stay f32,
// while the rest of the function is rewritten.
// RUN: mxfp4-opt %s -split-input-file --mxfp4-apply-recipe=recipe=fp4-all 2>/dev/null | FileCheck %s --check-prefix=IR
// RUN: mxfp4-opt %s -split-input-file --mxfp4-apply-recipe=recipe=fp4-all 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The error is located at the contraction, and the pass fails.
// RUN: not mxfp4-opt %s -split-input-file --mxfp4-apply-recipe="recipe=fp4-all require-roles=true" 2>&1 | FileCheck %s --check-prefix=ERROR

// A weight read in a layout no linear layer has. The pass stops before it
// rewrites anything, the classified Fprop included.
// IR-LABEL: func.func @reshaped_weight(
// IR: mxfp4.scaled_matmul {{.*}}<fprop, "l">
// IR: linalg.matmul {{.*}} ins(%arg0, %expanded
// REMARK: require-roles.mlir:[[# @LINE + 12]]:8: remark: contraction not classified as a linear layer's GEMM (reads parameter "l.weight" but contracts neither exactly its dimension 1 (an Fprop) nor exactly its dimension 0 (a Dgrad)): left in high precision
// ERROR: require-roles.mlir:[[# @LINE + 11]]:8: error: contraction not classified as a linear layer's GEMM (reads parameter "l.weight" but contracts neither exactly its dimension 1 (an Fprop) nor exactly its dimension 0 (a Dgrad)): require-roles does not let it stay in high precision
func.func @reshaped_weight(%x: tensor<64x32xf32>, %xl: tensor<64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}) -> (tensor<64x32xf32>, tensor<64x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%xl, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %flat = tensor.collapse_shape %w [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
  %w2 = tensor.expand_shape %flat [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-error @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "l.weight" but contracts neither exactly its dimension 1 (an Fprop) nor exactly its dimension 0 (a Dgrad)): require-roles does not let it stay in high precision}}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %r : tensor<64x32xf32>, tensor<64x64xf32>
}

// -----

// A weight gradient of no layer of this function, and a Wgrad whose layer
// is found: only the first is an error.
// IR-LABEL: func.func @orphan_wgrad(
// IR: mxfp4.scaled_matmul {{.*}}<fprop, "a">
// IR: mxfp4.scaled_matmul {{.*}}<wgrad, "a">
// IR: linalg.matmul {{.*}} ins(%arg4, %arg0
// REMARK: require-roles.mlir:[[# @LINE + 14]]:10: remark: contraction not classified as a linear layer's GEMM (shaped like parameter "b.weight", but its operands are no layer's Fprop input or Dgrad output gradient): left in high precision
// ERROR: require-roles.mlir:[[# @LINE + 13]]:10: error: contraction not classified as a linear layer's GEMM (shaped like parameter "b.weight"
func.func @orphan_wgrad(%x: tensor<64x64xf32>, %a: tensor<32x64xf32> {mxfp4.parameter = "a.weight"}, %b: tensor<16x64xf32> {mxfp4.parameter = "b.weight"}, %dy: tensor<64x32xf32>, %g: tensor<64x16xf32>) -> (tensor<64x32xf32>, tensor<32x64xf32>, tensor<16x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %a : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dya = linalg.transpose ins(%dy : tensor<64x32xf32>) outs(%e1 : tensor<32x64xf32>) permutation = [1, 0]
  %dwa = linalg.matmul ins(%dya, %x : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  // expected-error @+1 {{contraction not classified as a linear layer's GEMM (shaped like parameter "b.weight", but its operands are no layer's Fprop input or Dgrad output gradient): require-roles does not let it stay in high precision}}
  %dwb = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%g, %x : tensor<64x16xf32>, tensor<64x64xf32>) outs(%z2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y, %dwa, %dwb : tensor<64x32xf32>, tensor<32x64xf32>, tensor<16x64xf32>
}
