// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1},canonicalize))' | FileCheck %s
// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1 warp-size=64},canonicalize))' | FileCheck %s --check-prefix=WAVE
// RUN: not mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1 warp-size=48}))' 2>&1 | FileCheck %s --check-prefix=BAD

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
// gfx950's wave: 64 lanes a row, a six-step tree.
// WAVE-LABEL: func.func @row_max
// WAVE: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024,
// WAVE: %[[LANE:.*]] = arith.remui %{{.*}}, %c64 : index
// WAVE: %[[M:.*]] = scf.for %{{.*}} = %[[LANE]] to %c512 step %c64 iter_args(%{{.*}} = %cst) -> (f32) {
// WAVE: gpu.shuffle  xor %[[M]], %c32_i32, %c64_i32 : f32
// WAVE: gpu.shuffle  xor %{{.*}}, %c1_i32, %c64_i32 : f32
// WAVE: scf.if

// BAD: error: convert-linalg-to-gpu-launch: warp-size must be a power of two from 2 to 64, got 48
func.func @row_max(%x: memref<4096x512xf32>, %y: memref<4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4096x512xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}

// A long row sum over many rows (an RMSNorm backward's per-token dot
// product of dy * gain and x): a warp a row, reading each row coalesced,
// rather than a work-item a token and slice of features.
// CHECK-LABEL: func.func @row_dot
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024,
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: scf.for %{{.*}} = %[[LANE]] to %c2048 step %c32 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK-NOT: gpu.launch
// CHECK: return
// Too few rows to fill the device a warp a row: slices of a work-item a row.
// CHECK-LABEL: func.func @few_long_rows
// CHECK: memref.alloc() : memref<128x1024xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
func.func @row_dot(%dy: memref<8192x2048xf32>, %g: memref<2048xf32>, %x: memref<8192x2048xf32>, %y: memref<8192xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %g, %x : memref<8192x2048xf32>, memref<2048xf32>, memref<8192x2048xf32>) outs(%y : memref<8192xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %c : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  }
  return
}

func.func @few_long_rows(%x: memref<1024x8192xf32>, %y: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x8192xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}
