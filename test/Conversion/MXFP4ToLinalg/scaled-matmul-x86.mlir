// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg="x86-avx512-bf16" | FileCheck %s

// Operands are padded to the 4x32 register tile, decoded into bf16 pairs and
// multiplied with vdpbf16ps; a runtime check of the scale range picks the
// fused multiply-add epilogue or the exact one.
// CHECK-LABEL: func.func @scaled_matmul_x86(
// CHECK-SAME: -> tensor<6x40xbf16>
// CHECK: tensor.pad %{{.*}} low[0, 0] high[2, 0]
// CHECK: tensor.pad %{{.*}} low[0, 0] high[24, 0]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x32xi32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x32x16xi32>)
// CHECK: arith.constant 354 : i32
// CHECK: arith.constant 154 : i32
// CHECK: scf.if %{{.*}} -> (tensor<8x64xf32>)
// CHECK-COUNT-128: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: vector.fma
// CHECK: } else {
// CHECK-COUNT-128: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [6, 40] [1, 1] : tensor<8x64xf32> to tensor<6x40xf32>
// CHECK: arith.bitcast {{.*}} : i16 to bf16
func.func @scaled_matmul_x86(%a: tensor<6x64xf4E2M1FN>, %as: tensor<6x2xf8E8M0FNU>, %b: tensor<40x64xf4E2M1FN>, %bs: tensor<40x2xf8E8M0FNU>) -> tensor<6x40xbf16> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<6x64xf4E2M1FN>, tensor<6x2xf8E8M0FNU>, tensor<40x64xf4E2M1FN>, tensor<40x2xf8E8M0FNU> -> tensor<6x40xbf16>
  return %c : tensor<6x40xbf16>
}

// -----

// Dynamic shapes keep the reference loops.
// CHECK-LABEL: func.func @scaled_matmul_dynamic
// CHECK-NOT: x86vector
// CHECK: vector.reduction
func.func @scaled_matmul_dynamic(%a: tensor<?x32xf4E2M1FN>, %as: tensor<?x1xf8E8M0FNU>, %b: tensor<8x32xf4E2M1FN>, %bs: tensor<8x1xf8E8M0FNU>) -> tensor<?x8xf32> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<?x32xf4E2M1FN>, tensor<?x1xf8E8M0FNU>, tensor<8x32xf4E2M1FN>, tensor<8x1xf8E8M0FNU> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
