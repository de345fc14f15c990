// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-all,wgrad_input=forward_quantized" --mxfp4-check-rotations --canonicalize --cse | FileCheck %s --check-prefix=FWD
// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-all-dht16,wgrad_input=forward_quantized" --canonicalize --cse | FileCheck %s --check-prefix=FWDROT
// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-all,fprop.weight.rounding=stochastic,weight_cache=false" --canonicalize --cse | FileCheck %s --check-prefix=NOCACHE
// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-all,fprop.weight.rounding=stochastic" --canonicalize --cse | FileCheck %s --check-prefix=CACHE
// RUN: not mxfp4-opt %s --mxfp4-apply-recipe=recipe="fp4-fprop-dgrad,wgrad.precision=fp4,fprop.precision=high,wgrad_input=forward_quantized" 2>&1 | FileCheck %s --check-prefix=NOFWD

// wgrad_input=forward_quantized: X^T for Wgrad is the Fprop's MXFP4 copy of
// X, dequantized (and rotated back), transposed and quantized along tokens.
// FWD-LABEL: func.func @two_microbatches(
// FWD-SAME: %[[X:[a-z0-9]+]]: tensor<64x64xf32>
// FWD: %[[XV:.*]], %[[XS:.*]] = mxfp4.quantize %[[X]] axis = 1
// FWD: %[[XD:.*]] = mxfp4.dequantize %[[XV]] scale %[[XS]] axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
// FWD: %[[XT:.*]] = linalg.transpose ins(%[[XD]] : tensor<64x64xf32>)
// FWD: mxfp4.quantize %[[XT]] axis = 1
// FWD: mxfp4.scaled_matmul {{.*}}<wgrad
// FWDROT: %[[H:.*]] = mxfp4.hadamard %{{.*}} axis = 1 size = 16
// FWDROT: %[[XV:.*]], %[[XS:.*]] = mxfp4.quantize %[[H]] axis = 1
// FWDROT: %[[XD:.*]] = mxfp4.dequantize %[[XV]] scale %[[XS]]
// FWDROT: mxfp4.hadamard inverse %[[XD]] axis = 1 size = 16
// FWDROT: mxfp4.scaled_matmul {{.*}}<wgrad
// NOFWD: error: recipe cannot rewrite the wgrad GEMM of 'l0': wgrad_input=forward_quantized needs the layer's Fprop in MXFP4 in the same function, on the same activation

// Two micro-batches use one weight. With the weight cache (the default) its
// stochastic quantization draws the same bits for both, so CSE keeps one;
// without it every use draws its own.
// CACHE-LABEL: func.func @two_microbatches(
// CACHE-COUNT-1: rounding = stochastic
// CACHE-NOT: rounding = stochastic
// NOCACHE-LABEL: func.func @two_microbatches(
// NOCACHE-COUNT-2: rounding = stochastic
func.func @two_microbatches(%x: tensor<64x64xf32>, %x2: tensor<64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l0.weight"}, %dy: tensor<64x32xf32>, %step: i64 {mxfp4.step}) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} ins(%x, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} ins(%x2, %w : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<32x64xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<wgrad, "l0">} ins(%dy, %x : tensor<64x32xf32>, tensor<64x64xf32>) outs(%z2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y, %y2, %dw : tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>
}
