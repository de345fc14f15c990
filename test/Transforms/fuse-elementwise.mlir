// RUN: mxfp4-opt %s --mxfp4-fuse-elementwise | FileCheck %s

#id = affine_map<(i) -> (i)>

// An elementwise chain becomes one generic; the matmul-like named op and a
// producer with a second user stay as they are.
// CHECK-LABEL: func.func @chain
// CHECK: %[[SHARED:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[FUSED:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>)
// CHECK: math.sqrt
// CHECK-NEXT: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: linalg.fill
// CHECK: return %[[FUSED]], %[[SHARED]]
func.func @chain(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  // Used twice: not fused.
  %shared = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  // Used once: fused into its consumer.
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%s, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%shared : tensor<8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %t, %shared, %u : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
