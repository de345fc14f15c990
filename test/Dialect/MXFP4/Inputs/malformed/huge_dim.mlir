// Huge dimension: tensor<9223372036854775807x32xf32> blocked along its INT64_MAX-sized axis 0.
func.func @f(%x: tensor<9223372036854775807x32xf32>) {
  %v, %s = mxfp4.quantize %x axis = 0 : tensor<9223372036854775807x32xf32> -> tensor<9223372036854775807x32xf4E2M1FN>, tensor<288230376151711744x32xf8E8M0FNU>
  return
}
