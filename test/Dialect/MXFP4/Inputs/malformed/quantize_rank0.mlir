// Wrong type: mxfp4.quantize on a 0-d tensor, which has no axis to block.
func.func @f(%x: tensor<f32>) {
  %v, %s = mxfp4.quantize %x axis = 0 : tensor<f32> -> tensor<f4E2M1FN>, tensor<f8E8M0FNU>
  return
}
