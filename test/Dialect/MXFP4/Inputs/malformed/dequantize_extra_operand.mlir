// Wrong operand count: the custom form of dequantize gets an extra operand after the scale.
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  %d = mxfp4.dequantize %v scale %s, %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  return
}
