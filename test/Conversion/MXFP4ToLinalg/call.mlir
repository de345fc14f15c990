// RUN: mxfp4-opt %s -convert-mxfp4-to-linalg | FileCheck %s

// Calls between functions that pass quantized tensors are rewritten with the
// callee's converted signature.
// CHECK-LABEL: func.func private @consume(tensor<8x32xi8>, tensor<8x1xi8>) -> tensor<8x8xf32>
func.func private @consume(tensor<8x32xf4E2M1FN>, tensor<8x1xf8E8M0FNU>) -> tensor<8x8xf32>

// CHECK-LABEL: func.func @produce
// CHECK: %[[R:.*]] = call @consume(%{{.*}}, %{{.*}}) : (tensor<8x32xi8>, tensor<8x1xi8>) -> tensor<8x8xf32>
func.func @produce(%x: tensor<8x32xf32>) -> tensor<8x8xf32> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<8x32xf32> -> tensor<8x32xf4E2M1FN>, tensor<8x1xf8E8M0FNU>
  %r = call @consume(%v, %s) : (tensor<8x32xf4E2M1FN>, tensor<8x1xf8E8M0FNU>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
