// RUN: mxfp4-opt %s --mxfp4-outline-kernels | FileCheck %s
// RUN: mxfp4-opt %s --mxfp4-outline-kernels="ops=linalg.generic" | FileCheck %s --check-prefix=GENERIC

// Two layers' Fprops of one shape share a kernel; their tags do not matter.
// The fill and empty of each init move into the kernel with the matmul. The
// matmul of another shape occurs once: it stays in place.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[W0:.*]]: tensor<8x32xf32>, %[[W1:.*]]: tensor<8x32xf32>, %[[W2:.*]]: tensor<4x32xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[Y0:.*]] = call @__mxfp4_kernel_0(%[[X]], %[[W0]])
// CHECK: %[[Y1:.*]] = call @__mxfp4_kernel_0(%[[X]], %[[W1]])
// CHECK: linalg.fill
// CHECK: %[[Y2:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[W2]]
// CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
func.func @two_layers(%x: tensor<16x32xf32>, %w0: tensor<8x32xf32>,
                      %w1: tensor<8x32xf32>, %w2: tensor<4x32xf32>)
    -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %y0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "layers.0.up">} ins(%x, %w0 : tensor<16x32xf32>, tensor<8x32xf32>) outs(%z0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<16x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %y1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {mxfp4.gemm = #mxfp4.gemm<fprop, "layers.1.up">} ins(%x, %w1 : tensor<16x32xf32>, tensor<8x32xf32>) outs(%z1 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %e2 = tensor.empty() : tensor<16x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w2 : tensor<16x32xf32>, tensor<4x32xf32>) outs(%z2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y0, %y1, %y2 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>
}

// A quantize takes the rotation it absorbs into its kernel; two of one
// shape share it.
// CHECK-LABEL: func.func @rotated_quantize
// CHECK-NEXT: %[[Q:.*]]:2 = call @__mxfp4_kernel_1(%{{.*}}) : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
// CHECK-NEXT: %[[R:.*]]:2 = call @__mxfp4_kernel_1(%{{.*}}) : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
// CHECK-NEXT: return %[[Q]]#0, %[[Q]]#1, %[[R]]#0
func.func @rotated_quantize(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>)
    -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xf32>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  %hy = mxfp4.hadamard %y axis = 1 size = 16 : tensor<4x64xf32>
  %vy, %sy = mxfp4.quantize %hy axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return %v, %s, %vy : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>
}

// CHECK: func.func private @__mxfp4_kernel_0(%{{.*}}: tensor<16x32xf32>, %{{.*}}: tensor<8x32xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK-NOT: mxfp4.gemm
// CHECK-NOT: tensor<4x32xf32>) -> tensor<16x4xf32>
// CHECK: func.func private @__mxfp4_kernel_1(%{{.*}}: tensor<4x64xf32>)
// CHECK-NEXT: mxfp4.hadamard
// CHECK-NEXT: mxfp4.quantize

// A value a region captures becomes an argument; a scalar constant is cloned.
// GENERIC-LABEL: func.func @captured
// GENERIC: %[[S:.*]] = arith.addf
// GENERIC: call @__mxfp4_kernel_0(%{{.*}}, %[[S]])
// GENERIC: call @__mxfp4_kernel_0(%{{.*}}, %[[S]])
// GENERIC: func.func private @__mxfp4_kernel_0(%{{.*}}: tensor<8xf32>, %[[ARG:.*]]: f32) -> tensor<8xf32>
// GENERIC: %[[TWO:.*]] = arith.constant 2.0
// GENERIC: linalg.generic
// GENERIC: arith.mulf %{{.*}}, %[[ARG]]
// GENERIC: arith.addf %{{.*}}, %[[TWO]]
func.func @captured(%x: tensor<8xf32>, %a: f32) -> tensor<8xf32> {
  %two = arith.constant 2.0 : f32
  %s = arith.addf %a, %a : f32
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    %r = arith.addf %m, %two : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    %r = arith.addf %m, %two : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %z : tensor<8xf32>
}
