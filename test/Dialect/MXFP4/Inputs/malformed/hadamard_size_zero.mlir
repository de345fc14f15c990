// Wrong attribute value: hadamard size = 0 (a division by zero if not rejected).
func.func @f(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 0 : tensor<4x64xf32>
  return
}
