// Wrong attribute value: block_size = 0 (a division by zero if not rejected).
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  %d = mxfp4.dequantize %v scale %s axis = 1 block_size = 0 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  return
}
