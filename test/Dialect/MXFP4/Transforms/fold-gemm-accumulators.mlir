// RUN: mxfp4-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(mxfp4-fold-gemm-accumulators))' | FileCheck %s

// A residual add, x + C with C an f32 GEMM's only reader: the GEMM with
// acc(x), and no sum.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<128x64xf32>
// CHECK: %[[Y:.*]] = mxfp4.scaled_matmul %{{.*}} scale %{{.*}}, %{{.*}} scale %{{.*}} acc(%[[X]])
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @residual(%x: tensor<128x64xf32>, %av: tensor<128x128xf4E2M1FN>, %as: tensor<128x4xf8E8M0FNU>, %bv: tensor<64x128xf4E2M1FN>, %bs: tensor<64x4xf8E8M0FNU>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %mm = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mm : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// A sum of three GEMMs added from the left, (p + q) + r: q's GEMM takes p
// (which exists before it), r's takes that.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @three_gemms(
// CHECK: %[[P:.*]] = mxfp4.scaled_matmul %{{[^ ]*}} scale %{{[^ ]*}}, %{{[^ ]*}} scale %{{[^ ]*}} :
// CHECK: %[[Q:.*]] = mxfp4.scaled_matmul {{.*}} acc(%[[P]])
// CHECK: %[[R:.*]] = mxfp4.scaled_matmul {{.*}} acc(%[[Q]])
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @three_gemms(%av: tensor<128x128xf4E2M1FN>, %as: tensor<128x4xf8E8M0FNU>, %bv: tensor<64x128xf4E2M1FN>, %bs: tensor<64x4xf8E8M0FNU>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %p = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %q = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %r = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %q, %r : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// (C + x) + z with z no GEMM: C's GEMM takes x, and the rest of the sum,
// C' + z, stays an elementwise sum.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @rest(
// CHECK-SAME: %[[X:[^:]*]]: tensor<128x64xf32>, %[[Z:[^:]*]]: tensor<128x64xf32>
// CHECK: %[[C:.*]] = mxfp4.scaled_matmul {{.*}} acc(%[[X]])
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[Z]] : tensor<128x64xf32>, tensor<128x64xf32>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[L]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[Y]]
func.func @rest(%x: tensor<128x64xf32>, %z: tensor<128x64xf32>, %av: tensor<128x128xf4E2M1FN>, %as: tensor<128x4xf8E8M0FNU>, %bv: tensor<64x128xf4E2M1FN>, %bs: tensor<64x4xf8E8M0FNU>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %mm = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %x, %z : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// Kept: an addend computed after the GEMM (the GEMM could not read it), a
// sum with fast-math flags (not the GEMM's addition), a C read twice, and
// a bf16 C (rounded before the sum).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: acc(
// CHECK: return
func.func @kept(%x: tensor<128x64xf32>, %xb: tensor<128x64xbf16>, %av: tensor<128x128xf4E2M1FN>, %as: tensor<128x4xf8E8M0FNU>, %bv: tensor<64x128xf4E2M1FN>, %bs: tensor<64x4xf8E8M0FNU>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xbf16>) {
  %e = tensor.empty() : tensor<128x64xf32>
  %m1 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %late = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %o: f32):
    %s = arith.mulf %l, %l : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%late, %m1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %m2 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %m3 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %eb = tensor.empty() : tensor<128x64xbf16>
  %m4 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xbf16>
  %y4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%xb, %m4 : tensor<128x64xbf16>, tensor<128x64xbf16>) outs(%eb : tensor<128x64xbf16>) {
  ^bb0(%l: bf16, %r: bf16, %o: bf16):
    %s = arith.addf %l, %r : bf16
    linalg.yield %s : bf16
  } -> tensor<128x64xbf16>
  return %y1, %y2, %y3, %m3, %y4 : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xbf16>
}
