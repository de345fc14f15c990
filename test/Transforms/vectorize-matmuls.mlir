// RUN: mxfp4-opt %s -split-input-file -mxfp4-vectorize-matmuls | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for {{.*}} step %c32
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.transfer_read {{.*}} : tensor<8x16xf32>, vector<8x16xf32>
// CHECK-COUNT-128: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: tensor<64x48xf32>, %b: tensor<48x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// -----

// The Fprop form (B transposed) vectorizes too.
// CHECK-LABEL: func.func @matmul_transpose_b
// CHECK: vector.fma
// CHECK-NOT: linalg.matmul
func.func @matmul_transpose_b(%a: tensor<32x64xf32>, %b: tensor<32x64xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<32x64xf32>, tensor<32x64xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
// CHECK: scf.for {{.*}} step %c1
// CHECK: vector.fma
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: tensor<4x16x32xf32>, %b: tensor<4x32x32xf32>, %c: tensor<4x16x32xf32>) -> tensor<4x16x32xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x32xf32>) outs(%c : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}

// -----

// Shapes that are not tile multiples, and bf16, stay linalg for the loops.
// CHECK-LABEL: func.func @untouched
// CHECK: linalg.matmul ins(%{{.*}} : tensor<10x16xf32>
// CHECK: linalg.matmul ins(%{{.*}} : tensor<8x16xbf16>
// CHECK-NOT: vector.fma
func.func @untouched(%a: tensor<10x16xf32>, %b: tensor<16x32xf32>, %c: tensor<10x32xf32>, %d: tensor<8x16xbf16>, %e: tensor<16x32xbf16>, %f: tensor<8x32xbf16>) -> (tensor<10x32xf32>, tensor<8x32xbf16>) {
  %r = linalg.matmul ins(%a, %b : tensor<10x16xf32>, tensor<16x32xf32>) outs(%c : tensor<10x32xf32>) -> tensor<10x32xf32>
  %s = linalg.matmul ins(%d, %e : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<8x32xbf16>) -> tensor<8x32xbf16>
  return %r, %s : tensor<10x32xf32>, tensor<8x32xbf16>
}
