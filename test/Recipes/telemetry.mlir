// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-fprop,telemetry=true" | FileCheck %s

// Each quantization's statistics become a row of one more result, a
// [quantizations x 8] table; function attributes name rows and columns.
// CHECK-LABEL: func.func @fprop(
// CHECK-SAME: -> (tensor<64x32xf32>, tensor<2x8xf32>)
// CHECK-SAME: mxfp4.telemetry = ["l0/fprop/input", "l0/fprop/weight"]
// CHECK-SAME: mxfp4.telemetry_fields = ["elements", "clipped", "flushed", "sqnr_db", "scale_exp_min", "scale_exp_max", "scale_exp_mean", "nan_blocks"]
// CHECK: %[[V:.*]], %[[S:.*]] = mxfp4.quantize
// CHECK: mxfp4.dequantize %[[V]] scale %[[S]]
// CHECK: arith.constant dense<6.000000e+00> : tensor<64x64xf4E2M1FN>
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: math.log10
// CHECK: tensor.from_elements {{.*}} : tensor<8xf32>
// CHECK: mxfp4.scaled_matmul
// CHECK: %[[T:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<2x8xf32>
// CHECK: return %{{.*}}, %[[T]] : tensor<64x32xf32>, tensor<2x8xf32>
func.func @fprop(%x: tensor<64x64xf32>, %w: tensor<32x64xf32>) -> tensor<64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} ins(%x, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
