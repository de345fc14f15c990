// Truncated IR: the function body region is never closed with `}`.
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16> {
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xbf16>
  return %d : tensor<4x64xbf16>
