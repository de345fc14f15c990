// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1},canonicalize))' | FileCheck %s

// A row max (softmax's): a warp a row, lanes striding the row from their
// lane index, a shuffle tree, and lane 0 combining with the output.
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c512,
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: %[[M:.*]] = scf.for %{{.*}} = %[[LANE]] to %c512 step %c32 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %[[M]], %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4096xf32>
func.func @row_max(%x: memref<4096x512xf32>, %y: memref<4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4096x512xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}
