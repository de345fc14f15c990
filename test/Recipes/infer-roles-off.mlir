// RUN: mxfp4-opt %s --mxfp4-apply-recipe="recipe=fp4-all,infer_roles=false" 2>&1 | FileCheck %s
// RUN: mxfp4-opt %s --mxfp4-apply-recipe="recipe=fp4-all,infer_roles=false require-roles=true" -verify-diagnostics

// With infer_roles=false only tags count: an untagged GEMM that inference
// would classify stays f32 and is reported (an error under require-roles);
// the tagged one is rewritten.
// CHECK: remark: contraction not classified as a linear layer's GEMM (untagged, and infer_roles=false; inference would make it the dgrad of "l"): left in high precision
// CHECK-LABEL: func.func @no_inference(
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "l">
// CHECK-NOT: mxfp4.scaled_matmul
// CHECK: linalg.matmul ins(%arg2, %arg1
func.func @no_inference(%x: tensor<64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}, %dy: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l">} ins(%x, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-error @+1 {{contraction not classified as a linear layer's GEMM (untagged, and infer_roles=false; inference would make it the dgrad of "l"): require-roles does not let it stay in high precision}}
  %dx = linalg.matmul ins(%dy, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%z1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %dx : tensor<64x32xf32>, tensor<64x64xf32>
}
