// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-all-rht16-fixed,wgrad_input=forward_quantized" --mxfp4-check-rotations | FileCheck %s

// Two layers read one activation (as q/k/v_proj read the normed input). Under
// a random rotation their Fprop copies of X differ (each layer has its own
// rotation seed), and each Wgrad must take its own layer's copy back.
// CHECK-LABEL: func.func @shared_input(
// CHECK: %[[HA:.*]] = mxfp4.hadamard %arg0 axis = 1 size = 16 kind = random_fixed seed(%[[SA:.*]])
// CHECK: %[[QA:.*]], %[[SCA:.*]] = mxfp4.quantize %[[HA]] axis = 1
// CHECK: %[[HB:.*]] = mxfp4.hadamard %arg0 axis = 1 size = 16 kind = random_fixed seed(%[[SB:.*]])
// CHECK: %[[QB:.*]], %[[SCB:.*]] = mxfp4.quantize %[[HB]] axis = 1
// CHECK: %[[DA:.*]] = mxfp4.dequantize %[[QA]] scale %[[SCA]]
// CHECK: mxfp4.hadamard inverse %[[DA]] axis = 1 size = 16 kind = random_fixed seed(%[[SA]])
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "a">
// CHECK: %[[DB:.*]] = mxfp4.dequantize %[[QB]] scale %[[SCB]]
// CHECK: mxfp4.hadamard inverse %[[DB]] axis = 1 size = 16 kind = random_fixed seed(%[[SB]])
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "b">
func.func @shared_input(%x: tensor<64x64xf32>, %wa: tensor<32x64xf32> {mxfp4.parameter = "a.weight"}, %wb: tensor<32x64xf32> {mxfp4.parameter = "b.weight"}, %dya: tensor<64x32xf32>, %dyb: tensor<64x32xf32>, %step: i64 {mxfp4.step}) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %ya = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "a">} ins(%x, %wa : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %yb = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "b">} ins(%x, %wb : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dwa = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<wgrad, "a">} ins(%dya, %x : tensor<64x32xf32>, tensor<64x64xf32>) outs(%z1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dwb = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<wgrad, "b">} ins(%dyb, %x : tensor<64x32xf32>, tensor<64x64xf32>) outs(%z1 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %ya, %yb, %dwa, %dwb : tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}
