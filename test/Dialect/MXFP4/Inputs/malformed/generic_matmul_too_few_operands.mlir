// Wrong operand count: the generic scaled_matmul has 3 operands, it needs 4 (or 5 with acc).
func.func @f(%a: tensor<4x64xf4E2M1FN>, %as: tensor<4x2xf8E8M0FNU>, %b: tensor<4x64xf4E2M1FN>) {
  %c = "mxfp4.scaled_matmul"(%a, %as, %b) : (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>) -> tensor<4x4xf32>
  return
}
