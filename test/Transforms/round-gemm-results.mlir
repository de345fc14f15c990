// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(mxfp4-round-gemm-results))" | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>

// Read only by elementwise ops (SwiGLU and one of its gradients): the GEMM
// writes bf16 and each reader widens its element where it reads it.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[G:.*]] = mxfp4.scaled_matmul {{.*}} -> tensor<64x96xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[G]], %arg4 : tensor<64x96xbf16>, tensor<64x96xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: bf16, %[[U:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: arith.negf %[[XW]] : f32
// CHECK: arith.mulf %{{.*}}, %[[U]] : f32
// CHECK: linalg.generic {{.*}} ins(%arg4, %[[G]] : tensor<64x96xf32>, tensor<64x96xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[Y:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf %[[Y]] : bf16 to f32
func.func @swiglu(%a: tensor<64x128xf4E2M1FN>, %as: tensor<64x4xf8E8M0FNU>, %b: tensor<96x128xf4E2M1FN>, %bs: tensor<96x4xf8E8M0FNU>, %u: tensor<64x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf32>) {
  %g = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %e = tensor.empty() : tensor<64x96xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %u : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %n = arith.negf %x : f32
    %m = arith.mulf %n, %y : f32
    linalg.yield %m : f32
  } -> tensor<64x96xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%u, %g : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<64x96xf32>
  return %h, %d : tensor<64x96xf32>, tensor<64x96xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A term of a sum (it becomes the GEMM's accumulator), a result also
// returned, one with an accumulator, and one a reduction reads: all f32.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: bf16
func.func @kept(%a: tensor<64x128xf4E2M1FN>, %as: tensor<64x4xf8E8M0FNU>, %b: tensor<96x128xf4E2M1FN>, %bs: tensor<96x4xf8E8M0FNU>, %x: tensor<64x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf32>, tensor<64xf32>) {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %e = tensor.empty() : tensor<64x96xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %c : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  %r = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %t = mxfp4.scaled_matmul %a scale %as, %b scale %bs acc(%x) : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%t, %t : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  %w = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %n = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%w : tensor<64x96xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %sum, %r, %sq, %n : tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf32>, tensor<64xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Read twice by one generic: both of its arguments widen.
// CHECK-LABEL: func.func @square
// CHECK: ins(%[[C:.*]], %[[C]] : tensor<64x96xbf16>, tensor<64x96xbf16>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: bf16, %[[Q:.*]]: bf16, %{{.*}}: f32):
// CHECK-DAG: arith.extf %[[P]] : bf16 to f32
// CHECK-DAG: arith.extf %[[Q]] : bf16 to f32
func.func @square(%a: tensor<64x128xf4E2M1FN>, %as: tensor<64x4xf8E8M0FNU>, %b: tensor<96x128xf4E2M1FN>, %bs: tensor<96x4xf8E8M0FNU>) -> tensor<64x96xf32> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %e = tensor.empty() : tensor<64x96xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %c : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %sq : tensor<64x96xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Read only by a rounding to bf16 (attention's v): the rounding goes, the
// GEMM's bf16 result takes its place.
// CHECK-LABEL: func.func @rounded
// CHECK: %[[C:.*]] = mxfp4.scaled_matmul {{.*}} -> tensor<64x96xbf16>
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]] : tensor<64x96xbf16>
func.func @rounded(%a: tensor<64x128xf4E2M1FN>, %as: tensor<64x4xf8E8M0FNU>, %b: tensor<96x128xf4E2M1FN>, %bs: tensor<96x4xf8E8M0FNU>) -> tensor<64x96xbf16> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %e = tensor.empty() : tensor<64x96xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<64x96xf32>) outs(%e : tensor<64x96xbf16>) {
  ^bb0(%p: f32, %o: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  return %h : tensor<64x96xbf16>
}

// -----

// Through reshapes (the rotary embedding reads the query projection as
// [B, S, H, 2, D/2], at two indices): they are retyped.
// CHECK-LABEL: func.func @rotary
// CHECK: %[[C:.*]] = mxfp4.scaled_matmul {{.*}} -> tensor<64x96xbf16>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[C]] {{.*}} : tensor<64x96xbf16> into tensor<64x3x2x16xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[R]], %[[R]] : tensor<64x3x2x16xbf16>, tensor<64x3x2x16xbf16>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: bf16, %[[Q:.*]]: bf16, %{{.*}}: f32):
// CHECK-DAG: arith.extf %[[P]] : bf16 to f32
// CHECK-DAG: arith.extf %[[Q]] : bf16 to f32
func.func @rotary(%a: tensor<64x128xf4E2M1FN>, %as: tensor<64x4xf8E8M0FNU>, %b: tensor<96x128xf4E2M1FN>, %bs: tensor<96x4xf8E8M0FNU>) -> tensor<64x3x2x16xf32> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<96x128xf4E2M1FN>, tensor<96x4xf8E8M0FNU> -> tensor<64x96xf32>
  %r = tensor.expand_shape %c [[0], [1, 2, 3]] output_shape [64, 3, 2, 16] : tensor<64x96xf32> into tensor<64x3x2x16xf32>
  %e = tensor.empty() : tensor<64x3x2x16xf32>
  %rot = linalg.generic {indexing_maps = [affine_map<(i, h, p, j) -> (i, h, p, j)>, affine_map<(i, h, p, j) -> (i, h, 1, j)>, affine_map<(i, h, p, j) -> (i, h, p, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %r : tensor<64x3x2x16xf32>, tensor<64x3x2x16xf32>) outs(%e : tensor<64x3x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x3x2x16xf32>
  return %rot : tensor<64x3x2x16xf32>
}
