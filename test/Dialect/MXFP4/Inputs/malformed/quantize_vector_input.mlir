// Wrong type: mxfp4.quantize gets a vector instead of a ranked tensor.
func.func @f(%x: vector<4x64xf32>) {
  %v, %s = mxfp4.quantize %x axis = 1 : vector<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}
