// Huge dimension: a dimension that does not fit in 64 bits.
func.func @f(%x: tensor<4x99999999999999999999999xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x99999999999999999999999xf32>
  return
}
