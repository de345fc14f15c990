// Wrong type: mxfp4.quantize declares its scales result as tensor of i8 instead of f8E8M0FNU.
func.func @f(%x: tensor<4x64xf32>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xi8>
  return
}
