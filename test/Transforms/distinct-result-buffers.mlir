// RUN: mxfp4-opt %s -split-input-file -mxfp4-distinct-result-buffers | FileCheck %s

// CHECK-LABEL: func.func @repeated
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[C]]
// CHECK: return %[[A]], %[[B]], %[[C]], %{{.*}} :
func.func @repeated(%x: index) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, index) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a, %a, %x : memref<4xf32>, memref<4xf32>, memref<4xf32>, index
}

// -----

// Dynamic sizes are taken from the repeated buffer.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[M:.*]]: memref<?x8xf32>)
// CHECK: %[[D:.*]] = memref.dim %[[M]], %{{.*}}
// CHECK: %[[B:.*]] = memref.alloc(%[[D]]) : memref<?x8xf32>
// CHECK: return %[[M]], %[[B]]
func.func @dynamic(%m: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  return %m, %m : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Distinct results are left alone.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT: memref.copy
func.func @distinct(%a: memref<4xf32>, %b: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  return %a, %b : memref<4xf32>, memref<4xf32>
}
