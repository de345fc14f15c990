// Wrong type: mxfp4.quantize gets an unranked tensor<*xf32>.
func.func @f(%x: tensor<*xf32>) {
  %v, %s = mxfp4.quantize %x axis = 0 : tensor<*xf32> -> tensor<*xf4E2M1FN>, tensor<*xf8E8M0FNU>
  return
}
