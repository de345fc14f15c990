// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg | FileCheck %s

// Codes and scales become i8 tensors, at the function boundary too. One loop
// nest reads each 32-element block once, reduces its magnitude bits, derives
// the E8M0 byte and writes 32 codes and one scale.
// CHECK-LABEL: func.func @quantize_even(
// CHECK-SAME: %[[X:.*]]: tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x2xi8>)
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (tensor<4x64xi8>, tensor<4x2xi8>)
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: vector.transfer_read %[[X]]{{.*}} : tensor<4x64xbf16>, vector<32xbf16>
// CHECK: arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK: vector.reduction <maxsi>, %{{.*}} : vector<32xi32> into i32
// The EVEN rule adds half a mantissa bit before taking the exponent.
// CHECK: arith.constant 2097152 : i32
// CHECK: vector.transfer_write {{.*}} : vector<32xi8>, tensor<4x64xi8>
// CHECK: tensor.insert {{.*}} : tensor<4x2xi8>
// CHECK-NOT: arith.mului_extended
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<4x64xi8>, tensor<4x2xi8>
func.func @quantize_even(%x: tensor<4x64xbf16>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xbf16> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return %v, %s : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// -----

// Blocking along axis 0 reads each block through a permutation map.
// CHECK-LABEL: func.func @quantize_axis0
// CHECK: vector.transfer_read {{.*}} permutation_map = #{{.*}}} : tensor<64x3xf32>, vector<32xf32>
func.func @quantize_axis0(%x: tensor<64x3xf32>) -> tensor<2x3xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 0 scale_rule = floor : tensor<64x3xf32> -> tensor<64x3xf4E2M1FN>, tensor<2x3xf8E8M0FNU>
  return %s : tensor<2x3xf8E8M0FNU>
}

// -----

// Stochastic rounding draws one Philox call per 4 lanes (10 rounds of two
// 32x32->64 multiplies on vectors) from the seed and counter operands.
// CHECK-LABEL: func.func @quantize_stochastic
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: i64, %[[CTR:[a-z0-9]+]]: i64
// CHECK: scf.for
// CHECK-COUNT-20: arith.mului_extended {{.*}} : vector<32xi32>
// CHECK: vector.transfer_write
func.func @quantize_stochastic(%x: tensor<2x32xf32>, %seed: i64, %ctr: i64) -> tensor<2x32xf4E2M1FN> {
  %v, %s = mxfp4.quantize %x axis = 1 rounding = stochastic seed(%seed) counter(%ctr) : tensor<2x32xf32> -> tensor<2x32xf4E2M1FN>, tensor<2x1xf8E8M0FNU>
  return %v : tensor<2x32xf4E2M1FN>
}

// -----

// A rotation along the quantized axis is absorbed: the loop reads the
// rotation's input, runs the butterflies in registers, rounds to bf16 as the
// rotation's result would be, and quantizes: one pass over memory.
// CHECK-LABEL: func.func @hadamard_quantize(
// CHECK-SAME: %[[X:.*]]: tensor<8x64xbf16>)
// CHECK: scf.for
// CHECK: scf.for
// The bf16 pairs become the even and the odd elements as f32 with a shift
// and a mask; the codes come back to element order as 16-bit pairs.
// CHECK: %[[READ:.*]] = vector.transfer_read %[[X]]
// CHECK: %[[PAIRS:.*]] = vector.bitcast %[[READ]] : vector<32xbf16> to vector<16xi32>
// CHECK: arith.shli %[[PAIRS]]
// CHECK: arith.andi %[[PAIRS]]
// CHECK-COUNT-4: vector.fma
// CHECK: arith.constant dense<-65536> : vector<32xi32>
// CHECK: vector.reduction <maxsi>
// CHECK: arith.trunci {{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: vector.bitcast {{.*}} : vector<16xi16> to vector<32xi8>
// CHECK: vector.transfer_write
// CHECK-NOT: scf.for
// CHECK: return
func.func @hadamard_quantize(%x: tensor<8x64xbf16>) -> (tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<8x64xbf16>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<8x64xbf16> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  return %v, %s : tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
}

// -----

// A 64-wide rotation covers two blocks per loaded vector. An f32 source
// rotates in element order.
// CHECK-LABEL: func.func @hadamard64_quantize
// CHECK: scf.for {{.*}} step %c64
// CHECK: vector.transfer_read {{.*}} : tensor<2x128xf32>, vector<64xf32>
// CHECK-COUNT-2: vector.extract_strided_slice {{.*}} {offsets = [{{0|32}}], sizes = [32], strides = [1]}
func.func @hadamard64_quantize(%x: tensor<2x128xf32>, %seed: i64) -> tensor<2x4xf8E8M0FNU> {
  %h = mxfp4.hadamard %x axis = 1 size = 64 kind = random_fixed seed(%seed) : tensor<2x128xf32>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<2x128xf32> -> tensor<2x128xf4E2M1FN>, tensor<2x4xf8E8M0FNU>
  return %s : tensor<2x4xf8E8M0FNU>
}

// -----

// Dynamic leading dimensions stay dynamic.
// CHECK-LABEL: func.func @quantize_dynamic(
// CHECK-SAME: tensor<?x32xf32>) -> tensor<?x1xi8>
// CHECK: tensor.dim
// CHECK: tensor.empty(%{{.*}}) : tensor<?x1xi8>
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
