// Wrong type: mxfp4.scaled_matmul gets a 3-D lhs; operands must be 2-D.
func.func @f(%a: tensor<2x4x64xf4E2M1FN>, %as: tensor<4x2xf8E8M0FNU>, %b: tensor<4x64xf4E2M1FN>, %bs: tensor<4x2xf8E8M0FNU>) {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<2x4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x4xf32>
  return
}
