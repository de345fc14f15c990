// Wrong type: mxfp4.dequantize returns f16, which is neither f32 nor bf16.
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf16>
  return
}
