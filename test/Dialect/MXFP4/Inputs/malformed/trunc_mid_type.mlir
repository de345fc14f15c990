// Truncated IR: the file ends in the middle of a tensor type (`tensor<4x64x`).
func.func @f(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64x
