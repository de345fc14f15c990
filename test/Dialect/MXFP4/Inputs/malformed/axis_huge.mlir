// Wrong attribute value: axis = INT64_MAX on a rank-2 tensor.
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  %d = mxfp4.dequantize %v scale %s axis = 9223372036854775807 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  return
}
