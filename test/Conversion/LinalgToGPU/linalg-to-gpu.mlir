// RUN: mxfp4-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch,canonicalize))' | FileCheck %s

// Elementwise: one work-item per element, 256 a workgroup, guarded tail.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1000xf32>
// CHECK: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK: memref.store %[[E]], %{{.*}}[%{{.*}}] : memref<1000xf32>
// CHECK: gpu.terminator
func.func @elementwise(%a: memref<1000xf32>, %b: memref<1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<1000xf32>) outs(%b : memref<1000xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row reduction: one work-item per row, the reduction dimension a loop
// carrying the accumulator (read from the output first).
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch
// CHECK-NOT: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<512xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<512x64xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK: scf.yield %[[NEW]] : f32
// CHECK: memref.store %[[SUM]], %{{.*}}[%{{.*}}] : memref<512xf32>
func.func @row_sum(%a: memref<512x64xf32>, %b: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<512x64xf32>) outs(%b : memref<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Named ops are generalized; a batch matmul gets one work-item per output
// element and a K loop. memref.copy becomes a copy kernel.
// CHECK-LABEL: func.func @named
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<2x16x8xf32>
// CHECK: memref.store %{{.*}} : memref<2x16x8xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
func.func @named(%a: memref<2x16x32xf32>, %b: memref<2x32x8xf32>, %c: memref<2x16x8xf32>, %d: memref<2x16x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x16x32xf32>, memref<2x32x8xf32>) outs(%c : memref<2x16x8xf32>)
  memref.copy %c, %d : memref<2x16x8xf32> to memref<2x16x8xf32>
  return
}

// -----

// A scalar read from memory and used by a later kernel (the global gradient
// norm) is computed by a one-work-item launch and passed through a 0-d
// buffer.
// CHECK-LABEL: func.func @device_scalar
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1
// CHECK: %[[N:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[S:.*]] = math.sqrt %[[N]] : f32
// CHECK: memref.store %[[S]], %[[SLOT]][] : memref<f32>
// CHECK: gpu.launch
// CHECK: %[[R:.*]] = memref.load %[[SLOT]][] : memref<f32>
// CHECK: arith.divf %{{.*}}, %[[R]] : f32
func.func @device_scalar(%norm: memref<f32>, %g: memref<64xf32>, %out: memref<64xf32>) {
  %n = memref.load %norm[] : memref<f32>
  %s = math.sqrt %n : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%g : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %q = arith.divf %x, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Every intermediate is freed after its last use (through its views); what
// the function returns is not.
// CHECK-LABEL: func.func @lifetimes
// CHECK: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<64xf32>
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: memref.dealloc %[[T]] : memref<64xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return %[[R]]
func.func @lifetimes(%a: memref<64xf32>) -> memref<64xf32> {
  %t = memref.alloc() : memref<64xf32>
  %r = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  %v = memref.expand_shape %t [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  %w = memref.collapse_shape %v [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w : memref<64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.log %x : f32
    linalg.yield %e : f32
  }
  return %r : memref<64xf32>
}
