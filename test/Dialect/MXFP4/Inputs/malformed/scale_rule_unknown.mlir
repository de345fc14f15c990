// Unknown enum keyword: `scale_rule = round` is not a scale rule.
func.func @f(%x: tensor<4x64xf32>) {
  %v, %s = mxfp4.quantize %x axis = 1 scale_rule = round : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}
