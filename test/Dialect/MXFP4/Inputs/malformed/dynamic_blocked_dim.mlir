// Dynamic blocked dimension: tensor<4x?xf32> quantized along axis 1.
func.func @f(%x: tensor<4x?xf32>) {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x?xf32> -> tensor<4x?xf4E2M1FN>, tensor<4x?xf8E8M0FNU>
  return
}
