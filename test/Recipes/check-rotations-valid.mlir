// RUN: mxfp4-opt %s -mxfp4-check-rotations | FileCheck %s
// RUN: mxfp4-opt %s -mxfp4-check-rotations=allow-external-operands | FileCheck %s

// Identical rotations (same SSA seed and step) cancel; the pass is silent.
// CHECK-LABEL: func.func @cancel
// CHECK: mxfp4.scaled_matmul
func.func @cancel(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>, %seed: i64, %step: i64) -> tensor<16x8xf32> {
  %ha = mxfp4.hadamard %a axis = 1 size = 32 kind = random_per_step seed(%seed) step(%step) : tensor<16x64xf32>
  %hb = mxfp4.hadamard %b axis = 1 size = 32 kind = random_per_step seed(%seed) step(%step) : tensor<8x64xf32>
  %qa, %sa = mxfp4.quantize %ha axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %hb axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}
