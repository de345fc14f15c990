// Bad operandSegmentSizes: a negative segment size (1, -1, 1) that still sums to the operand count.
func.func @f(%x: tensor<4x64xf32>, %s: i64) {
  %h = "mxfp4.hadamard"(%x, %s) <{axis = 1 : i64, size = 16 : i64, operandSegmentSizes = array<i32: 1, -1, 1>}> : (tensor<4x64xf32>, i64) -> tensor<4x64xf32>
  return
}
