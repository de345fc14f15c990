// Wrong attribute value: hadamard size = -16.
func.func @f(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = -16 : tensor<4x64xf32>
  return
}
