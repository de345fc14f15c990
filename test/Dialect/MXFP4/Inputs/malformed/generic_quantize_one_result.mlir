// Wrong result count: the generic quantize declares a single result instead of values and scales.
func.func @f(%x: tensor<4x64xf32>) {
  %v = "mxfp4.quantize"(%x) <{axis = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x64xf32>) -> tensor<4x64xf4E2M1FN>
  return
}
