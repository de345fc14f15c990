// Bad operandSegmentSizes: the generic hadamard has none at all.
func.func @f(%x: tensor<4x64xf32>) {
  %h = "mxfp4.hadamard"(%x) <{axis = 1 : i64, size = 16 : i64}> : (tensor<4x64xf32>) -> tensor<4x64xf32>
  return
}
