// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1},canonicalize))' | FileCheck %s
// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch,canonicalize))' | FileCheck %s --check-prefix=UNFUSED
// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch{warp-reductions=1 warp-size=64},canonicalize))' | FileCheck %s --check-prefix=WAVE

#rows = affine_map<(d0, d1) -> (d0)>
#cols = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// An RMSNorm's backward, its input gradient added in place to %dh: the
// gain gradient (a sum over rows), the rows' dot product and the input
// gradient run as one pass, a warp a 4-row slice (1024 warps), each lane
// two columns; the gain gradient's partials [64 columns, 1024 warps] are
// added by a second launch, a warp a column.
// CHECK-LABEL: func.func @norm_backward
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<64x1024xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128,
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK: %[[COL1:.*]] = arith.addi %[[LANE]], %c32 : index
// CHECK: %[[SUMS:.*]]:2 = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32) {
// Each operand element of the row is loaded first, once.
// CHECK-COUNT-2: memref.load %arg0[%[[ROW]], %{{.*}}] : memref<4096x64xf32>
// CHECK-COUNT-2: memref.load %arg1[%[[ROW]], %{{.*}}] : memref<4096x64xf32>
// CHECK-NEXT: memref.load %arg3[%[[ROW]]] : memref<4096xf32>
// CHECK-COUNT-2: memref.load %arg2[%{{.*}}] : memref<64xf32>
// CHECK-COUNT-2: memref.load %arg4[%[[ROW]], %{{.*}}] : memref<4096x64xf32>
// CHECK-NOT: memref.load %arg
// The dot product: the lane's two columns, then the shuffle tree.
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// The dot product starts from its fill's zero (the fill's launch is gone);
// nothing reads its buffer, so canonicalize drops the store.
// CHECK: %[[DOT:.*]] = arith.addf %{{.*}}, %[[ZERO:cst.*]] : f32
// CHECK-NOT: memref.load %arg
// The input gradient reads the dot product from the register.
// CHECK: arith.divf %[[DOT]], %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %arg4[%[[ROW]], %[[LANE]]] : memref<4096x64xf32>
// CHECK: memref.store %{{.*}}, %arg4[%[[ROW]], %[[COL1]]] : memref<4096x64xf32>
// CHECK: scf.yield
// CHECK: memref.store %[[SUMS]]#0, %[[PARTIAL]][%[[LANE]], %[[WARP]]] : memref<64x1024xf32>
// CHECK: memref.store %[[SUMS]]#1, %[[PARTIAL]][%[[COL1]], %[[WARP]]] : memref<64x1024xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8,
// CHECK-COUNT-32: memref.load %[[PARTIAL]]
// CHECK: gpu.shuffle  xor
// CHECK-NOT: memref.load %{{.*}} : memref<64xf32>
// CHECK: %[[DGAIN:.*]] = arith.addf %{{.*}}, %[[ZERO]] : f32
// CHECK: memref.store %[[DGAIN]], %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK-NOT: gpu.launch
// CHECK: return

// Without the option the three ops keep their own launches (four, the gain
// gradient split); the fills fold into them either way.
// UNFUSED-LABEL: func.func @norm_backward
// UNFUSED-COUNT-4: gpu.launch blocks
// UNFUSED-NOT: gpu.launch blocks
// UNFUSED: return

// On a 64-lane wave (gfx950) the group is still one pass over the rows, a
// wave taking 4096 / 256 rows, then the column partials, a wave a column.
// WAVE-LABEL: func.func @norm_backward
// WAVE: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// WAVE: arith.remui %{{.*}}, %c64 : index
// WAVE: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// WAVE: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16,
// WAVE: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// WAVE-NOT: gpu.launch
// WAVE: return
func.func @norm_backward(%dy: memref<4096x64xf32>, %x: memref<4096x64xf32>,
                         %gain: memref<64xf32>, %rstd: memref<4096xf32>,
                         %dh: memref<4096x64xf32>) -> memref<64xf32> {
  %n = arith.constant 6.400000e+01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %dgain = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%dgain : memref<64xf32>)
  linalg.generic {indexing_maps = [#all, #all, #rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x, %rstd : memref<4096x64xf32>, memref<4096x64xf32>, memref<4096xf32>)
      outs(%dgain : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %out: f32):
    %0 = arith.mulf %b, %r : f32
    %1 = arith.mulf %a, %0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  }
  %dot = memref.alloc() : memref<4096xf32>
  linalg.fill ins(%zero : f32) outs(%dot : memref<4096xf32>)
  linalg.generic {indexing_maps = [#all, #cols, #all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %gain, %x : memref<4096x64xf32>, memref<64xf32>, memref<4096x64xf32>)
      outs(%dot : memref<4096xf32>) {
  ^bb0(%a: f32, %g: f32, %b: f32, %out: f32):
    %0 = arith.mulf %a, %g : f32
    %1 = arith.mulf %0, %b : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.generic {indexing_maps = [#all, #all, #cols, #all, #rows, #rows, #all], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %dy, %gain, %x, %rstd, %dot : memref<4096x64xf32>, memref<4096x64xf32>, memref<64xf32>, memref<4096x64xf32>, memref<4096xf32>, memref<4096xf32>)
      outs(%dh : memref<4096x64xf32>) {
  ^bb0(%h: f32, %a: f32, %g: f32, %b: f32, %r: f32, %d: f32, %out: f32):
    %0 = arith.mulf %a, %g : f32
    %1 = arith.mulf %r, %r : f32
    %2 = arith.mulf %1, %r : f32
    %3 = arith.divf %d, %n : f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %r, %0 : f32
    %6 = arith.mulf %b, %4 : f32
    %7 = arith.subf %5, %6 : f32
    %8 = arith.addf %h, %7 : f32
    linalg.yield %8 : f32
  }
  return %dgain : memref<64xf32>
}

// A row sum and the elementwise op reading it, without column sums: a warp
// a row (256 warps), nothing carried across rows, no second launch.
// CHECK-LABEL: func.func @normalize_rows
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32,
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg2[%[[ROW]], %{{.*}}] : memref<256x32xf32>
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @normalize_rows(%x: memref<256x32xf32>, %sum: memref<256xf32>,
                          %y: memref<256x32xf32>) {
  linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x32xf32>) outs(%sum : memref<256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %out, %a : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #rows, #all], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<256x32xf32>, memref<256xf32>) outs(%y : memref<256x32xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.divf %a, %s : f32
    linalg.yield %0 : f32
  }
  return
}

// Not fused: an op between the row sum and its consumer writes what the
// consumer reads (the consumer must see it), a consumer reading the row
// sum at its columns, and rows whose width is not a multiple of 32.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-7: gpu.launch blocks
// CHECK-NOT: gpu.launch blocks
// CHECK: return
func.func @kept_apart(%x: memref<256x32xf32>, %sum: memref<256xf32>,
                      %y: memref<256x32xf32>, %z: memref<256x32xf32>,
                      %w: memref<32x32xf32>, %v: memref<32x32xf32>,
                      %s32: memref<32xf32>, %u: memref<64x48xf32>,
                      %s64: memref<64xf32>, %t: memref<64x48xf32>) {
  %one = arith.constant 1.000000e+00 : f32
  linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x32xf32>) outs(%sum : memref<256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %out, %a : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%one : f32) outs(%z : memref<256x32xf32>)
  linalg.generic {indexing_maps = [#all, #rows, #all], iterator_types = ["parallel", "parallel"]}
      ins(%z, %sum : memref<256x32xf32>, memref<256xf32>) outs(%y : memref<256x32xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.divf %a, %s : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%w : memref<32x32xf32>) outs(%s32 : memref<32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %out, %a : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #cols, #all], iterator_types = ["parallel", "parallel"]}
      ins(%w, %s32 : memref<32x32xf32>, memref<32xf32>) outs(%v : memref<32x32xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.divf %a, %s : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%u : memref<64x48xf32>) outs(%s64 : memref<64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %out, %a : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #rows, #all], iterator_types = ["parallel", "parallel"]}
      ins(%u, %s64 : memref<64x48xf32>, memref<64xf32>) outs(%t : memref<64x48xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.divf %a, %s : f32
    linalg.yield %0 : f32
  }
  return
}
