// RUN: mxfp4-opt %s -mxfp4-apply-recipe=recipe="fp4-fprop,telemetry=true" -verify-diagnostics

// Telemetry adds a result; a private function may have callers, which the
// function pass cannot see, so it is refused rather than broken.
// expected-error @+1 {{telemetry adds a result to @helper, which is private and may have callers; apply it to public entry functions only}}
func.func private @helper(%x: tensor<64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l0.weight"}) -> tensor<64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} ins(%x, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
