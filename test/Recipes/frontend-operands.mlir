// RUN: mxfp4-opt %s --mxfp4-apply-recipe="recipe=fp4-all-dht16 require-roles=true" --mxfp4-check-rotations --canonicalize --cse | FileCheck %s

// More operand forms of frontend GEMMs (frontend-forms.mlir has whole
// layers): each Fprop below is found and becomes one scaled_matmul.

// bf16 operands widened to f32 inside the generic's body, as a bf16
// autocast graph writes them: quantized from bf16, accumulated in f32.
// CHECK-LABEL: func.func @bf16_generic(
// CHECK: mxfp4.quantize %{{.*}} axis = 1 : tensor<64x64xbf16> -> tensor<64x64xf4E2M1FN>
// CHECK: mxfp4.quantize %{{.*}} axis = 1 : tensor<32x64xbf16> -> tensor<32x64xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "a">{{.*}} -> tensor<64x32xf32>
// CHECK-NOT: linalg.generic
func.func @bf16_generic(%x: tensor<64x64xbf16>, %w: tensor<32x64xbf16> {mxfp4.parameter = "a.weight"}) -> tensor<64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xbf16>, tensor<32x64xbf16>) outs(%z0 : tensor<64x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a1 = arith.extf %a : bf16 to f32
    %b1 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a1, %b1 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// A weight transposed and broadcast over the batch by one copy generic
// (torch-mlir's expand of W^T for aten.bmm): the GEMM reads W itself, not
// the B copies.
// CHECK-LABEL: func.func @generic_broadcast(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x64x64xf32> into tensor<128x64xf32>
// CHECK: mxfp4.hadamard %[[X]] axis = 1 size = 16 : tensor<128x64xf32>
// CHECK: mxfp4.hadamard %arg1 axis = 1 size = 16 : tensor<32x64xf32>
// CHECK: %[[Y:.*]] = mxfp4.scaled_matmul {{.*}}<fprop, "c">{{.*}} -> tensor<128x32xf32>
// CHECK: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 64, 32]
// CHECK-NOT: linalg.generic
func.func @generic_broadcast(%x: tensor<2x64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "c.weight"}) -> tensor<2x64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<2x64x32xf32>
  %wb = linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (n, k)>, affine_map<(b, k, n) -> (b, k, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<32x64xf32>) outs(%eb : tensor<2x64x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x64x32xf32>
  %e0 = tensor.empty() : tensor<2x64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %y = linalg.batch_matmul ins(%x, %wb : tensor<2x64x64xf32>, tensor<2x64x32xf32>) outs(%z0 : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// A dynamic token count and a transposed result (Y^T) accumulated into an
// existing tensor: the accumulator is transposed in, the product out.
// CHECK-LABEL: func.func @dynamic_tokens(
// CHECK: %[[ACC:.*]] = linalg.transpose ins(%arg2 : tensor<32x?xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[Y:.*]] = mxfp4.scaled_matmul {{.*}} acc(%[[ACC]]) {mxfp4.gemm = #mxfp4.gemm<fprop, "b">} {{.*}} -> tensor<?x32xf32>
// CHECK: %[[YT:.*]] = linalg.transpose ins(%[[Y]] : tensor<?x32xf32>) {{.*}} permutation = [1, 0]
// CHECK: return %[[YT]]
func.func @dynamic_tokens(%x: tensor<?x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "b.weight"}, %init: tensor<32x?xf32>) -> tensor<32x?xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(n, m, k) -> (m, k)>, affine_map<(n, m, k) -> (n, k)>, affine_map<(n, m, k) -> (n, m)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x64xf32>, tensor<32x64xf32>) outs(%init : tensor<32x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x?xf32>
  return %y : tensor<32x?xf32>
}
