// RUN: mxfp4-opt %s -split-input-file -canonicalize="test-convergence" | FileCheck %s

// A rotation followed by its inverse folds away, in either order.
// CHECK-LABEL: func.func @fold_forward_then_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK-NOT: mxfp4.hadamard
// CHECK: return %[[X]]
func.func @fold_forward_then_inverse(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xf32>
  %y = mxfp4.hadamard inverse %h axis = 1 size = 16 : tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func.func @fold_inverse_then_forward
// CHECK-SAME: (%[[X:.*]]: tensor<64x8xbf16>)
// CHECK-NOT: mxfp4.hadamard
// CHECK: return %[[X]]
func.func @fold_inverse_then_forward(%x: tensor<64x8xbf16>) -> tensor<64x8xbf16> {
  %h = mxfp4.hadamard inverse %x axis = 0 size = 64 : tensor<64x8xbf16>
  %y = mxfp4.hadamard %h axis = 0 size = 64 : tensor<64x8xbf16>
  return %y : tensor<64x8xbf16>
}

// -----

// Random rotations cancel when seed and step are the same SSA values.
// CHECK-LABEL: func.func @fold_random_same_seed_and_step
// CHECK-SAME: (%[[X:.*]]: tensor<2x128xf32>
// CHECK-NOT: mxfp4.hadamard
// CHECK: return %[[X]], %[[X]]
func.func @fold_random_same_seed_and_step(%x: tensor<2x128xf32>, %seed: i64, %step: i64) -> (tensor<2x128xf32>, tensor<2x128xf32>) {
  %a = mxfp4.hadamard %x axis = 1 size = 128 kind = random_per_step seed(%seed) step(%step) : tensor<2x128xf32>
  %b = mxfp4.hadamard inverse %a axis = 1 size = 128 kind = random_per_step seed(%seed) step(%step) : tensor<2x128xf32>
  %c = mxfp4.hadamard %x axis = 1 size = 32 kind = random_fixed seed(%seed) : tensor<2x128xf32>
  %d = mxfp4.hadamard inverse %c axis = 1 size = 32 kind = random_fixed seed(%seed) : tensor<2x128xf32>
  return %b, %d : tensor<2x128xf32>, tensor<2x128xf32>
}

// -----

// A chain of three: the inner pair cancels, one rotation remains.
// CHECK-LABEL: func.func @fold_inner_pair
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK: %[[H:.*]] = mxfp4.hadamard %[[X]] axis = 1 size = 16
// CHECK-NOT: mxfp4.hadamard
// CHECK: return %[[H]]
func.func @fold_inner_pair(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %a = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xf32>
  %b = mxfp4.hadamard inverse %a axis = 1 size = 16 : tensor<4x64xf32>
  %c = mxfp4.hadamard %b axis = 1 size = 16 : tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}

// -----

// Nothing folds when the two rotations differ in any part of the matrix, or
// go in the same direction (H16 is self-inverse only in exact arithmetic, and
// two forward rotations are not the identity once signs are random).
// CHECK-LABEL: func.func @no_fold_different_rotation
// CHECK-COUNT-12: mxfp4.hadamard
// CHECK-NOT: mxfp4.hadamard
func.func @no_fold_different_rotation(%x: tensor<64x128xf32>, %s0: i64, %s1: i64) -> (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>) {
  // different size
  %a0 = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x128xf32>
  %a1 = mxfp4.hadamard inverse %a0 axis = 1 size = 32 : tensor<64x128xf32>
  // different axis
  %b0 = mxfp4.hadamard %x axis = 1 size = 64 : tensor<64x128xf32>
  %b1 = mxfp4.hadamard inverse %b0 axis = 0 size = 64 : tensor<64x128xf32>
  // different seed
  %c0 = mxfp4.hadamard %x axis = 1 size = 16 kind = random_fixed seed(%s0) : tensor<64x128xf32>
  %c1 = mxfp4.hadamard inverse %c0 axis = 1 size = 16 kind = random_fixed seed(%s1) : tensor<64x128xf32>
  // different step
  %d0 = mxfp4.hadamard %x axis = 1 size = 16 kind = random_per_step seed(%s0) step(%s0) : tensor<64x128xf32>
  %d1 = mxfp4.hadamard inverse %d0 axis = 1 size = 16 kind = random_per_step seed(%s0) step(%s1) : tensor<64x128xf32>
  // different kind
  %e0 = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x128xf32>
  %e1 = mxfp4.hadamard inverse %e0 axis = 1 size = 16 kind = random_fixed seed(%s0) : tensor<64x128xf32>
  // same direction twice
  %f0 = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x128xf32>
  %f1 = mxfp4.hadamard %f0 axis = 1 size = 16 : tensor<64x128xf32>
  return %a1, %b1, %c1, %d1, %e1, %f1 : tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// Quantization is lossy: neither composition with dequantize folds.
// CHECK-LABEL: func.func @no_fold_quantize_roundtrip
// CHECK: mxfp4.quantize
// CHECK: mxfp4.dequantize
// CHECK: mxfp4.quantize
func.func @no_fold_quantize_roundtrip(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x2xf8E8M0FNU>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  %v2, %s2 = mxfp4.quantize %d axis = 1 scale_rule = ceil : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return %d, %s2 : tensor<4x64xf32>, tensor<4x2xf8E8M0FNU>
}

// -----

// Unused mxfp4 ops are pure and disappear.
// CHECK-LABEL: func.func @dead_ops
// CHECK-NOT: mxfp4.
// CHECK: return
func.func @dead_ops(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xf32>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  %c = mxfp4.scaled_matmul %v scale %s, %v scale %s : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x4xf32>
  return
}
