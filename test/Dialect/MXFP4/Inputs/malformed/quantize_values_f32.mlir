// Wrong type: mxfp4.quantize declares its values result as tensor of f32 instead of f4E2M1FN.
func.func @f(%x: tensor<4x64xf32>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf32>, tensor<4x2xf8E8M0FNU>
  return
}
