// Truncated IR: the file ends in the middle of the generic-form property dictionary (`axis = 1 : i6`).
func.func @f(%x: tensor<4x64xf32>) {
  %v:2 = "mxfp4.quantize"(%x) <{axis = 1 : i6
