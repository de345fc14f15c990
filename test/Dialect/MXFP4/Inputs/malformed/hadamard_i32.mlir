// Wrong type: mxfp4.hadamard on a tensor of i32.
func.func @f(%x: tensor<4x64xi32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xi32>
  return
}
