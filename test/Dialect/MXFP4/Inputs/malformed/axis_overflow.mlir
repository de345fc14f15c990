// Wrong attribute value: axis does not fit in 64 bits.
func.func @f(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 99999999999999999999999 size = 16 : tensor<4x64xf32>
  return
}
