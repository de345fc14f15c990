// Bad operandSegmentSizes: the generic quantize claims 1 + 5 + 0 operands but has 1.
func.func @f(%x: tensor<4x64xf32>) {
  %v:2 = "mxfp4.quantize"(%x) <{axis = 1 : i64, operandSegmentSizes = array<i32: 1, 5, 0>}> : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}
