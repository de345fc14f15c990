// Wrong type: in the generic form the accumulator of mxfp4.scaled_matmul is bf16 while the result is f32.
func.func @f(%a: tensor<4x64xf4E2M1FN>, %as: tensor<4x2xf8E8M0FNU>, %b: tensor<4x64xf4E2M1FN>, %bs: tensor<4x2xf8E8M0FNU>, %acc: tensor<4x4xbf16>) {
  %c = "mxfp4.scaled_matmul"(%a, %as, %b, %bs, %acc) : (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x4xbf16>) -> tensor<4x4xf32>
  return
}
