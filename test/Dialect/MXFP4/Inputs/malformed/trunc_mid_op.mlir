// Truncated IR: the file ends in the middle of an mxfp4.quantize op, right after `axis =`.
func.func @f(%x: tensor<4x64xf32>) {
  %v, %s = mxfp4.quantize %x axis =
