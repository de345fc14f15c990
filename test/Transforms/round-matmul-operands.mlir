// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(mxfp4-round-matmul-operands),cse)" | FileCheck %s

// Each f32 operand is rounded to bf16 once (CSE merges the roundings of %x
// read by two GEMMs); the matmuls keep their maps, f32 inits and results.
// CHECK-LABEL: func.func @qk
// CHECK: %[[XH:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[WQ:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<16x32xf32>) outs(%{{.*}} : tensor<16x32xbf16>)
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XH]], %[[WQ]] : tensor<64x32xbf16>, tensor<16x32xbf16>) outs(%{{.*}} : tensor<64x16xf32>)
// CHECK-NOT: ins(%arg0
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XH]], %{{.*}} : tensor<64x32xbf16>, tensor<16x32xbf16>)
func.func @qk(%x: tensor<64x32xf32>, %wq: tensor<16x32xf32>, %wk: tensor<16x32xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %q = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wq : tensor<64x32xf32>, tensor<16x32xf32>) outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
  %k = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wk : tensor<64x32xf32>, tensor<16x32xf32>) outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %q, %k : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// Batched, too.
// CHECK-LABEL: func.func @pv
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x8x8xbf16>, tensor<4x8x16xbf16>) outs(%arg2 : tensor<4x8x16xf32>)
func.func @pv(%p: tensor<4x8x8xf32>, %v: tensor<4x8x16xf32>, %o: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %r = linalg.batch_matmul ins(%p, %v : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%o : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %r : tensor<4x8x16xf32>
}

// -----

// A composite's body (the reference of a fused kernel) stays f32.
// CHECK-LABEL: func.func private @composite
// CHECK-NOT: bf16
func.func private @composite(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {mxfp4.composite = "causal_attention"} {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
