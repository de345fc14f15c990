// Wrong attribute kind: axis is a string in the generic form instead of an i64 integer.
func.func @f(%x: tensor<4x64xf32>) {
  %v:2 = "mxfp4.quantize"(%x) <{axis = "one", operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}
