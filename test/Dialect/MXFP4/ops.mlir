// RUN: mxfp4-opt %s | FileCheck %s
// Printing and re-parsing gives the same IR (custom and generic forms).
// RUN: mxfp4-opt %s | mxfp4-opt | FileCheck %s
// RUN: mxfp4-opt %s --mlir-print-op-generic | mxfp4-opt | FileCheck %s

// CHECK-LABEL: func.func @quantize_defaults
// CHECK: mxfp4.quantize %{{.*}} axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
func.func @quantize_defaults(%x: tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return %v, %s : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// Default-valued attributes spelled out are elided when printed.
// CHECK-LABEL: func.func @quantize_explicit_defaults
// CHECK: mxfp4.quantize %{{.*}} axis = 0 : tensor<64x3xbf16>
// CHECK-NOT: block_size
func.func @quantize_explicit_defaults(%x: tensor<64x3xbf16>) -> tensor<2x3xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 0 block_size = 32 scale_rule = even rounding = nearest_even : tensor<64x3xbf16> -> tensor<64x3xf4E2M1FN>, tensor<2x3xf8E8M0FNU>
  return %s : tensor<2x3xf8E8M0FNU>
}

// CHECK-LABEL: func.func @quantize_scale_rules
// CHECK: mxfp4.quantize %{{.*}} axis = 1 scale_rule = floor :
// CHECK: mxfp4.quantize %{{.*}} axis = 1 :
// CHECK: mxfp4.quantize %{{.*}} axis = 1 scale_rule = ceil :
// CHECK: mxfp4.quantize %{{.*}} axis = 1 scale_rule = rceil :
func.func @quantize_scale_rules(%x: tensor<2x32xf32>) {
  %v0, %s0 = mxfp4.quantize %x axis = 1 scale_rule = floor : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  %v1, %s1 = mxfp4.quantize %x axis = 1 scale_rule = even : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  %v2, %s2 = mxfp4.quantize %x axis = 1 scale_rule = ceil : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  %v3, %s3 = mxfp4.quantize %x axis = 1 scale_rule = rceil : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  return
}

// CHECK-LABEL: func.func @quantize_stochastic
// CHECK-SAME: (%[[X:.*]]: tensor<3x5x64xf32>, %[[SEED:.*]]: i64, %[[CTR:.*]]: i64)
// CHECK: mxfp4.quantize %[[X]] axis = 2 scale_rule = rceil rounding = stochastic seed(%[[SEED]]) counter(%[[CTR]]) : tensor<3x5x64xf32> -> tensor<3x5x64xf4E2M1FN>, tensor<3x5x2xf8E8M0FNU>
func.func @quantize_stochastic(%x: tensor<3x5x64xf32>, %seed: i64, %ctr: i64) -> tensor<3x5x64xf4E2M1FN> {
  %v, %s = mxfp4.quantize %x axis = 2 scale_rule = rceil rounding = stochastic seed(%seed) counter(%ctr) : tensor<3x5x64xf32> -> tensor<3x5x64xf4E2M1FN>, tensor<3x5x2xf8E8M0FNU>
  return %v : tensor<3x5x64xf4E2M1FN>
}

// Non-blocked dimensions may be dynamic.
// CHECK-LABEL: func.func @quantize_dynamic_rows
// CHECK: mxfp4.quantize %{{.*}} axis = 1 : tensor<?x96xf32> -> tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>
func.func @quantize_dynamic_rows(%x: tensor<?x96xf32>) -> tensor<?x3xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<?x96xf32> -> tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>
  return %s : tensor<?x3xf8E8M0FNU>
}

// CHECK-LABEL: func.func @dequantize
// CHECK: mxfp4.dequantize %{{.*}} scale %{{.*}} axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xbf16>
// CHECK: mxfp4.dequantize %{{.*}} scale %{{.*}} axis = 0 : tensor<32x7xf4E2M1FN>, tensor<1x7xf8E8M0FNU> -> tensor<32x7xf32>
func.func @dequantize(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>, %w: tensor<32x7xf4E2M1FN>, %t: tensor<1x7xf8E8M0FNU>) -> (tensor<4x64xbf16>, tensor<32x7xf32>) {
  %0 = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xbf16>
  %1 = mxfp4.dequantize %w scale %t axis = 0 block_size = 32 : tensor<32x7xf4E2M1FN>, tensor<1x7xf8E8M0FNU> -> tensor<32x7xf32>
  return %0, %1 : tensor<4x64xbf16>, tensor<32x7xf32>
}

// CHECK-LABEL: func.func @hadamard_forms
// CHECK-SAME: (%[[X:.*]]: tensor<128x256xbf16>, %[[SEED:.*]]: i64, %[[STEP:.*]]: i64)
// CHECK: %[[A:.*]] = mxfp4.hadamard %[[X]] axis = 1 size = 16 : tensor<128x256xbf16>
// CHECK: %[[B:.*]] = mxfp4.hadamard %[[A]] axis = 1 size = 32 kind = random_fixed seed(%[[SEED]]) : tensor<128x256xbf16>
// CHECK: %[[C:.*]] = mxfp4.hadamard %[[B]] axis = 0 size = 64 kind = random_per_step seed(%[[SEED]]) step(%[[STEP]]) : tensor<128x256xbf16>
// CHECK: mxfp4.hadamard inverse %[[C]] axis = 0 size = 128 : tensor<128x256xbf16>
func.func @hadamard_forms(%x: tensor<128x256xbf16>, %seed: i64, %step: i64) -> tensor<128x256xbf16> {
  %a = mxfp4.hadamard %x axis = 1 size = 16 kind = deterministic : tensor<128x256xbf16>
  %b = mxfp4.hadamard %a axis = 1 size = 32 kind = random_fixed seed(%seed) : tensor<128x256xbf16>
  %c = mxfp4.hadamard %b axis = 0 size = 64 kind = random_per_step seed(%seed) step(%step) : tensor<128x256xbf16>
  %d = mxfp4.hadamard inverse %c axis = 0 size = 128 : tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// CHECK-LABEL: func.func @scaled_matmul
// CHECK: %[[C:.*]] = mxfp4.scaled_matmul %{{.*}} scale %{{.*}}, %{{.*}} scale %{{.*}} : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xf32>
// CHECK: mxfp4.scaled_matmul %{{.*}} scale %{{.*}}, %{{.*}} scale %{{.*}} acc(%[[C]]) : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xf32>
// CHECK: mxfp4.scaled_matmul {{.*}} -> tensor<128x64xbf16>
func.func @scaled_matmul(%a: tensor<128x256xf4E2M1FN>, %as: tensor<128x8xf8E8M0FNU>, %b: tensor<64x256xf4E2M1FN>, %bs: tensor<64x8xf8E8M0FNU>) -> (tensor<128x64xf32>, tensor<128x64xbf16>) {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xf32>
  %d = mxfp4.scaled_matmul %a scale %as, %b scale %bs acc(%c) : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xf32>
  %e = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xbf16>
  return %d, %e : tensor<128x64xf32>, tensor<128x64xbf16>
}

// CHECK-LABEL: func.func @scaled_matmul_dynamic_rows
// CHECK: mxfp4.scaled_matmul {{.*}} -> tensor<?x?xbf16>
func.func @scaled_matmul_dynamic_rows(%a: tensor<?x64xf4E2M1FN>, %as: tensor<?x2xf8E8M0FNU>, %b: tensor<?x64xf4E2M1FN>, %bs: tensor<?x2xf8E8M0FNU>, %c: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %d = mxfp4.scaled_matmul %a scale %as, %b scale %bs acc(%c) : tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>, tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU> -> tensor<?x?xbf16>
  return %d : tensor<?x?xbf16>
}

// The three GEMMs of a linear layer in canonical form (docs/Rationale.md).
// CHECK-LABEL: func.func @linear_layer_wgrad
// CHECK-COUNT-2: linalg.transpose
// CHECK-COUNT-2: mxfp4.hadamard
// CHECK-COUNT-2: mxfp4.quantize
// CHECK: mxfp4.scaled_matmul {{.*}} -> tensor<64x128xf32>
func.func @linear_layer_wgrad(%x: tensor<256x128xbf16>, %dy: tensor<256x64xbf16>) -> tensor<64x128xf32> {
  %e0 = tensor.empty() : tensor<64x256xbf16>
  %dyt = linalg.transpose ins(%dy : tensor<256x64xbf16>) outs(%e0 : tensor<64x256xbf16>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<128x256xbf16>
  %xt = linalg.transpose ins(%x : tensor<256x128xbf16>) outs(%e1 : tensor<128x256xbf16>) permutation = [1, 0]
  %hdy = mxfp4.hadamard %dyt axis = 1 size = 16 : tensor<64x256xbf16>
  %hx = mxfp4.hadamard %xt axis = 1 size = 16 : tensor<128x256xbf16>
  %a, %as = mxfp4.quantize %hdy axis = 1 : tensor<64x256xbf16> -> tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU>
  %b, %bs = mxfp4.quantize %hx axis = 1 : tensor<128x256xbf16> -> tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>
  %dw = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU>, tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU> -> tensor<64x128xf32>
  return %dw : tensor<64x128xf32>
}
