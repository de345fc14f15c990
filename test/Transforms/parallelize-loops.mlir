// RUN: mxfp4-opt %s -split-input-file -mxfp4-parallelize-loops | FileCheck %s

// Only the outermost marked loop becomes parallel.
// CHECK-LABEL: func.func @marked
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[I]], %{{.*}}]
// CHECK:   } {mxfp4.parallel}
// CHECK-NOT: scf.parallel
func.func @marked(%m: memref<8x4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %v, %m[%i, %j] : memref<8x4xf32>
    } {mxfp4.parallel}
  } {mxfp4.parallel}
  return
}

// -----

// Unmarked loops and loops that still carry values stay sequential.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args
func.func @unmarked(%m: memref<8xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %v) -> f32 {
    %b = arith.addf %a, %v : f32
    scf.yield %b : f32
  } {mxfp4.parallel}
  return %s : f32
}
