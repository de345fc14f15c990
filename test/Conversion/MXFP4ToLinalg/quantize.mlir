// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg | FileCheck %s

// Codes and scales become i8 tensors, at the function boundary too. The
// blocked axis is split into [blocks, 32]; one generic takes the max of the
// magnitude bits per block, one turns it into the E8M0 byte, one rounds.
// CHECK-LABEL: func.func @quantize_even(
// CHECK-SAME: %[[X:.*]]: tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x2xi8>)
// CHECK: %[[B:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xbf16> into tensor<4x2x32xbf16>
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[B]] : tensor<4x2x32xbf16>) outs(%{{.*}} : tensor<4x2xi32>)
// CHECK: arith.extf
// CHECK: arith.andi
// CHECK: arith.maxsi
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<4x2xi32>) outs(%{{.*}} : tensor<4x2xi8>)
// The EVEN rule adds half a mantissa bit before taking the exponent.
// CHECK: arith.constant 2097152 : i32
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[S]] : tensor<4x2x32xbf16>, tensor<4x2xi8>) outs(%{{.*}} : tensor<4x2x32xi8>)
// CHECK-NOT: arith.mului_extended
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0], [1, 2]] : tensor<4x2x32xi8> into tensor<4x64xi8>
// CHECK: return %[[V]], %[[S]] : tensor<4x64xi8>, tensor<4x2xi8>
func.func @quantize_even(%x: tensor<4x64xbf16>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xbf16> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return %v, %s : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// -----

// Blocking along axis 0 splits dimension 0.
// CHECK-LABEL: func.func @quantize_axis0
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 32, 3] : tensor<64x3xf32> into tensor<2x32x3xf32>
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
func.func @quantize_axis0(%x: tensor<64x3xf32>) -> tensor<2x3xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 0 scale_rule = floor : tensor<64x3xf32> -> tensor<64x3xf4E2M1FN>, tensor<2x3xf8E8M0FNU>
  return %s : tensor<2x3xf8E8M0FNU>
}

// -----

// Stochastic rounding draws Philox words from the seed and counter operands.
// CHECK-LABEL: func.func @quantize_stochastic
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: i64, %[[CTR:[a-z0-9]+]]: i64
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.index
// CHECK-COUNT-20: arith.mului_extended
// CHECK: linalg.yield
func.func @quantize_stochastic(%x: tensor<2x32xf32>, %seed: i64, %ctr: i64) -> tensor<2x32xf4E2M1FN> {
  %v, %s = mxfp4.quantize %x axis = 1 rounding = stochastic seed(%seed) counter(%ctr) : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  return %v : tensor<2x32xf4E2M1FN>
}

// -----

// Dynamic leading dimensions stay dynamic.
// CHECK-LABEL: func.func @quantize_dynamic(
// CHECK-SAME: tensor<?x32xf32>) -> tensor<?x1xi8>
// CHECK: tensor.dim
// CHECK: tensor.expand_shape {{.*}} : tensor<?x32xf32> into tensor<?x1x32xf32>
func.func @quantize_dynamic(%x: tensor<?x32xf32>) -> tensor<?x1xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<?x32xf32> -> tensor<?x32xf4E2M1FN>, tensor<?x1xf8E8M0FNU>
  return %s : tensor<?x1xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @dequantize_bf16(
// CHECK-SAME: %[[V:.*]]: tensor<4x64xi8>, %[[S:.*]]: tensor<4x2xi8>) -> tensor<4x64xbf16>
// CHECK: %[[B:.*]] = tensor.expand_shape %[[V]]
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[S]] : tensor<4x2x32xi8>, tensor<4x2xi8>) outs(%{{.*}} : tensor<4x2x32xbf16>)
// The bf16 result is rounded with integer arithmetic, not arith.truncf.
// CHECK-NOT: arith.truncf
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: arith.bitcast {{.*}} : i16 to bf16
// CHECK: tensor.collapse_shape
func.func @dequantize_bf16(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16> {
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xbf16>
  return %x : tensor<4x64xbf16>
}
