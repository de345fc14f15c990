// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg | FileCheck %s

// Operands are decoded once; each block dot product is a 32-lane multiply
// and reduction, scaled in f64 and added in increasing K order.
// CHECK-LABEL: func.func @scaled_matmul(
// CHECK-SAME: tensor<16x64xi8>, %{{.*}}: tensor<16x2xi8>, %{{.*}}: tensor<8x64xi8>, %{{.*}}: tensor<8x2xi8>) -> tensor<16x8xf32>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<16x64xi8>) outs(%{{.*}} : tensor<16x64xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xi8>) outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: vector.transfer_read %[[A]]
// CHECK: vector.transfer_read %[[B]]
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<32xf32> into f32
// CHECK: arith.mulf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: tensor.insert
func.func @scaled_matmul(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) -> tensor<16x8xf32> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

// A bf16 accumulator is extended first and the f32 result rounded at the end.
// CHECK-LABEL: func.func @scaled_matmul_bf16_acc
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: scf.for
// CHECK: arith.bitcast {{.*}} : i16 to bf16
func.func @scaled_matmul_bf16_acc(%a: tensor<16x32xf4E2M1FN>, %as: tensor<16x1xf8E8M0FNU>, %b: tensor<8x32xf4E2M1FN>, %bs: tensor<8x1xf8E8M0FNU>, %c: tensor<16x8xbf16>) -> tensor<16x8xbf16> {
  %d = mxfp4.scaled_matmul %a scale %as, %b scale %bs acc(%c) : tensor<16x32xf4E2M1FN>, tensor<16x1xf8E8M0FNU>, tensor<8x32xf4E2M1FN>, tensor<8x1xf8E8M0FNU> -> tensor<16x8xbf16>
  return %d : tensor<16x8xbf16>
}
