// Wrong attribute kind: the generic form gives rounding as an i32 integer instead of #mxfp4.rounding.
func.func @f(%x: tensor<4x64xf32>) {
  %v:2 = "mxfp4.quantize"(%x) <{axis = 1 : i64, rounding = 7 : i32, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}
