// Wrong attribute value: hadamard size = 1 << 62, a power of two far beyond 128.
func.func @f(%x: tensor<4x64xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 4611686018427387904 : tensor<4x64xf32>
  return
}
