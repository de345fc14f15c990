// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(mxfp4-read-only-arguments))' | FileCheck %s

// A public function's tensor arguments become read-only (scalars and
// private functions keep theirs): one-shot bufferization then copies an
// argument before an op whose destination it is writes it.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg0: tensor<4xf32> {bufferization.writable = false},
// CHECK-SAME: %arg1: tensor<4xf32> {bufferization.writable = false},
// CHECK-SAME: %arg2: f32)
func.func @step(%w: tensor<4xf32>, %g: tensor<4xf32>, %lr: f32) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%w : tensor<4xf32>) {
  ^bb0(%gi: f32, %wi: f32):
    %d = arith.mulf %gi, %lr : f32
    %n = arith.subf %wi, %d : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: %arg0: tensor<4xf32>) -> tensor<4xf32>
func.func private @helper(%w: tensor<4xf32>) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}
