// RUN: mxfp4-opt %s --split-input-file --convert-mxfp4-to-nvgpu=mixed=true | FileCheck %s

// An elementwise producer whose result only quantizations read is computed
// inside their kernel: SwiGLU's output, quantized in both orientations, is
// never written. The kernel takes the producer's two inputs in place of the
// source and runs its ops on each element it reads.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @swiglu(
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch_func @mxfp4_kernels::@[[K:quantize_128x128_f32_fused[0-9a-f]+_r_h16d_evenvs_t_evenvs]] blocks
// CHECK-SAME: args(%{{.*}} : memref<16384xf32, #gpu.address_space<global>>, %{{.*}} : memref<16384xf32, #gpu.address_space<global>>, %{{.*}} : memref<8192xi8, #gpu.address_space<global>>
// CHECK-NOT: linalg.generic
// CHECK: gpu.func @[[K]](%[[G:.*]]: memref<16384xf32, #gpu.address_space<global>>, %[[U:.*]]: memref<16384xf32, #gpu.address_space<global>>, %{{.*}}: memref<8192xi8
// CHECK: %[[GQ:.*]] = vector.load %[[G]][%{{.*}}] {alignment = 16 : i64} : memref<16384xf32, #gpu.address_space<global>>, vector<4xf32>
// CHECK: %[[UQ:.*]] = vector.load %[[U]][%{{.*}}] {alignment = 16 : i64} : memref<16384xf32, #gpu.address_space<global>>, vector<4xf32>
// CHECK: %[[A:.*]] = vector.extract %[[GQ]][0]
// CHECK: %[[B:.*]] = vector.extract %[[UQ]][0]
// CHECK: %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK: %[[X:.*]] = math.exp %[[N]] : f32
// CHECK: %[[D:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.divf %[[A]], %[[D]] : f32
// CHECK: arith.mulf %[[S]], %[[B]] : f32
// CHECK: vector.from_elements %{{.*}} : vector<4xf32>
// CHECK: gpu.barrier
func.func @swiglu(%g: tensor<128x128xf32>, %u: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %u : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.negf %a : f32
    %x = math.exp %n : f32
    %d = arith.addf %x, %one : f32
    %s = arith.divf %a, %d : f32
    %r = arith.mulf %s, %b : f32
    linalg.yield %r : f32
  } -> tensor<128x128xf32>
  %rot = mxfp4.hadamard %h axis = 1 size = 16 : tensor<128x128xf32>
  %v, %s = mxfp4.quantize %rot axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %t = linalg.transpose ins(%h : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) permutation = [1, 0]
  %vt, %st = mxfp4.quantize %t axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU> -> tensor<128x128xf32>
  %dt = mxfp4.dequantize %vt scale %st axis = 1 : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU> -> tensor<128x128xf32>
  return %d, %dt : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// A norm's output: one input per element, one per row (the statistic, a
// scalar load) and one per column (the gain). 96 columns do not tile the
// 64-wide regions: reads past the end are guarded, and the producer's value
// there (of zero inputs, not necessarily zero) is replaced by zeros.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @norm(
// CHECK: gpu.launch_func @mxfp4_kernels::@[[K:quantize_64x96_f32_fused[0-9a-f]+_r_evenvs]] blocks
// CHECK-SAME: args(%{{.*}} : memref<6144xf32, #gpu.address_space<global>>, %{{.*}} : memref<64xf32, #gpu.address_space<global>>, %{{.*}} : memref<96xf32, #gpu.address_space<global>>, %{{.*}} : memref<3072xi8
// CHECK: gpu.func @[[K]](%[[X:.*]]: memref<6144xf32, {{.*}}>, %[[MS:.*]]: memref<64xf32, {{.*}}>, %[[GAIN:.*]]: memref<96xf32, {{.*}}>,
// CHECK: vector.load %[[X]]
// CHECK: memref.load %[[MS]]
// CHECK: vector.load %[[GAIN]]
// CHECK: math.rsqrt
// CHECK: %[[FROM:.*]] = vector.from_elements %{{.*}} : vector<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: arith.select %{{.*}}, %[[FROM]], %[[ZERO]] : vector<4xf32>
func.func @norm(%x: tensor<64x96xf32>, %ms: tensor<64xf32>, %gain: tensor<96xf32>) -> tensor<64x96xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ms, %gain : tensor<64x96xf32>, tensor<64xf32>, tensor<96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%a: f32, %m: f32, %w: f32, %o: f32):
    %p = arith.addf %m, %eps : f32
    %r = math.rsqrt %p : f32
    %n = arith.mulf %a, %r : f32
    %g = arith.mulf %w, %n : f32
    linalg.yield %g : f32
  } -> tensor<64x96xf32>
  %v, %s = mxfp4.quantize %y axis = 1 : tensor<64x96xf32> -> tensor<64x96xf4E2M1FN>, tensor<64x3xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<64x96xf4E2M1FN>, tensor<64x3xf8E8M0FNU> -> tensor<64x96xf32>
  return %d : tensor<64x96xf32>
}

// -----

// Producers of the same computation share one kernel (the layers of a
// model); another constant makes another kernel.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @shared(
// CHECK: gpu.launch_func @mxfp4_kernels::@[[A:quantize_64x64_f32_fused[0-9a-f]+_r_evenvs]] blocks
// CHECK: gpu.launch_func @mxfp4_kernels::@[[A]] blocks
// CHECK: gpu.launch_func @mxfp4_kernels::@[[B:quantize_64x64_f32_fused[0-9a-f]+_r_evenvs]] blocks
// CHECK: gpu.func @[[A]](
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: gpu.func @[[B]](
// CHECK: arith.constant 3.000000e+00 : f32
func.func @shared(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %three : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %v0, %s0 = mxfp4.quantize %0 axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %v1, %s1 = mxfp4.quantize %1 axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %v2, %s2 = mxfp4.quantize %2 axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %d0 = mxfp4.dequantize %v0 scale %s0 axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  %d1 = mxfp4.dequantize %v1 scale %s1 axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  %d2 = mxfp4.dequantize %v2 scale %s2 axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  return %d0, %d1, %d2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Inputs at other indices: the rotary embedding's gradient reads each
// pair's halves at constant indices (d2 = 0 and 1) and selects by
// `linalg.index`, and its [4, 16, 2, 32] result is quantized as [64, 64]
// rows through a reshape. The kernel finds the loop indices of a row (4 x
// 16) and of a column (2 x 32), reads both halves and the tables as vectors
// along the innermost loop, and runs the body with the index.
#x0 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#x1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 1, d3)>
#tab = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rope(
// CHECK-NOT: linalg.generic
// CHECK-NOT: collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3]]
// CHECK: gpu.launch_func @mxfp4_kernels::@[[K:quantize_64x64_f32_fused[0-9a-f]+_r_evenvs]] blocks
// CHECK-SAME: args(%{{.*}} : memref<4096xf32, #gpu.address_space<global>>, %{{.*}} : memref<4096xf32, #gpu.address_space<global>>, %{{.*}} : memref<512xf32, #gpu.address_space<global>>, %{{.*}} : memref<512xf32, #gpu.address_space<global>>, %{{.*}} : memref<2048xi8
// CHECK: gpu.func @[[K]](%[[X0:[^:]*]]: memref<4096xf32, {{.*}}>, %[[X1:[^:]*]]: memref<4096xf32, {{.*}}>, %[[COS:[^:]*]]: memref<512xf32, {{.*}}>, %[[SIN:[^:]*]]: memref<512xf32, {{.*}}>,
// CHECK: vector.load %[[X0]]{{.*}} vector<4xf32>
// CHECK: vector.load %[[X1]]{{.*}} vector<4xf32>
// CHECK: vector.load %[[COS]]{{.*}} vector<4xf32>
// CHECK: vector.load %[[SIN]]{{.*}} vector<4xf32>
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: vector.from_elements %{{.*}} : vector<4xf32>
func.func @rope(%x: tensor<4x16x2x32xf32>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x16x2x32xf32>
  %r = linalg.generic {indexing_maps = [#x0, #x1, #tab, #tab, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %x, %cos, %sin : tensor<4x16x2x32xf32>, tensor<4x16x2x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) outs(%e : tensor<4x16x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %s: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %bs = arith.mulf %b, %s : f32
    %first = arith.subf %ac, %bs : f32
    %bc = arith.mulf %b, %c : f32
    %as = arith.mulf %a, %s : f32
    %second = arith.addf %bc, %as : f32
    %half = linalg.index 2 : index
    %isFirst = arith.cmpi eq, %half, %c0 : index
    %y = arith.select %isFirst, %first, %second : f32
    linalg.yield %y : f32
  } -> tensor<4x16x2x32xf32>
  %rows = tensor.collapse_shape %r [[0, 1], [2, 3]] : tensor<4x16x2x32xf32> into tensor<64x64xf32>
  %v, %sc = mxfp4.quantize %rows axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %sc axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// An input read transposed has no run along the innermost loop: it is
// read element by element (scalar loads), the other input as vectors.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_input(
// CHECK-NOT: linalg.generic
// CHECK: gpu.func @quantize_64x64_f32_fused{{[0-9a-f]+}}_r_evenvs(%[[A:[^:]*]]: memref<4096xf32, {{.*}}>, %[[B:[^:]*]]: memref<4096xf32, {{.*}}>,
// CHECK: vector.load %[[A]]{{.*}} vector<4xf32>
// CHECK-COUNT-4: memref.load %[[B]]
func.func @transposed_input(%x: tensor<64x64xf32>, %t: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %t : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %v, %s = mxfp4.quantize %y axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// Not fused: the producer's result has another reader (it must exist), or
// an input is read at an index that is neither a loop nor a constant.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-LABEL: func.func @kept(
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: bufferization.to_buffer %[[Y]]
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_64x64_f32_r_evenvs blocks
// CHECK: %[[Z:.*]] = linalg.generic
// CHECK: bufferization.to_buffer %[[Z]]
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_64x64_f32_r_evenvs blocks
// CHECK: return %{{.*}}, %[[Y]]
func.func @kept(%x: tensor<64x64xf32>, %h: tensor<64x32xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %v, %s = mxfp4.quantize %y axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %z = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<64x32xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %vz, %sz = mxfp4.quantize %z axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %s axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  %dz = mxfp4.dequantize %vz scale %sz axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf32>
  return %d, %y, %dz : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
