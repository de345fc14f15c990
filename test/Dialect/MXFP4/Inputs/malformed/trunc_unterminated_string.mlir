// Truncated IR: the generic op name string "mxfp4.quantize... is never closed.
func.func @f(%x: tensor<4x64xf32>) {
  %v:2 = "mxfp4.quantize(%x) <{axis = 1 : i64}> : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}
