// Missing required attribute: the generic dequantize has no axis.
func.func @f(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  %d = "mxfp4.dequantize"(%v, %s) : (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) -> tensor<4x64xf32>
  return
}
