// Unknown enum keyword: `kind = random` is not a Hadamard kind.
func.func @f(%x: tensor<4x64xf32>, %seed: i64) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 kind = random seed(%seed) : tensor<4x64xf32>
  return
}
