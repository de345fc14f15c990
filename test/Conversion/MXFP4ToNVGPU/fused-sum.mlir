// RUN: mxfp4-opt %s --split-input-file --convert-mxfp4-to-nvgpu=mixed=true | FileCheck %s

// The Hopper GEMM adds its accumulator to the finished sum (C = acc + A*B^T,
// one f32 addition), so an elementwise `x + C` that is C's only reader
// becomes the GEMM's accumulator, with the same bits: a residual add.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<128x64xf32>
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]]
// CHECK: %[[XF:.*]] = memref.collapse_shape %[[XB]]
// CHECK: %[[XG:.*]] = memref.memory_space_cast %[[XF]]
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK-SAME: %[[XG]] : memref<8192xf32, #gpu.address_space<global>>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @residual(%x: tensor<128x64xf32>, %a: tensor<128x128xf32>, %b: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %mm = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mm : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// A sum of two GEMMs (Dgrad through two weights): the second GEMM
// accumulates onto the first's C, which exists before it.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @two_gemms(
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32 blocks
// CHECK-SAME: %{{.*}} : memref<8192xf32, #gpu.address_space<global>>)
// CHECK: %[[FIRST:.*]] = bufferization.to_tensor
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @two_gemms(%a: tensor<128x128xf32>, %b: tensor<64x128xf32>, %c: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %cv, %cs = mxfp4.quantize %c axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %p = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %q = mxfp4.scaled_matmul %av scale %as, %cv scale %cs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %q : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// A sum of three GEMMs, added from the left ((p + q) + r: Dgrad through the
// q, k and v projections): the second GEMM computes p + q, the third adds
// that.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @three_gemms(
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32 blocks
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @three_gemms(%a: tensor<128x128xf32>, %b: tensor<64x128xf32>, %c: tensor<64x128xf32>, %d: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %cv, %cs = mxfp4.quantize %c axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %dv, %ds = mxfp4.quantize %d axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %p = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %q = mxfp4.scaled_matmul %av scale %as, %cv scale %cs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %r = mxfp4.scaled_matmul %av scale %as, %dv scale %ds : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %q, %r : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %m: f32, %n: f32, %o: f32):
    %s = arith.addf %l, %m : f32
    %t = arith.addf %s, %n : f32
    linalg.yield %t : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// Kept: an addend computed after the GEMM (its launch could not read it),
// a sum with fast-math flags (not the GEMM's addition), and a C read twice.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: _accf32
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: _accf32
// CHECK: return
func.func @kept(%x: tensor<128x64xf32>, %a: tensor<128x128xf32>, %b: tensor<64x128xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) {
  %e = tensor.empty() : tensor<128x64xf32>
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %c0 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %late = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %o: f32):
    %m = arith.mulf %l, %l : f32
    linalg.yield %m : f32
  } -> tensor<128x64xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%late, %c0 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %c1 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %c1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %c2 = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %c2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y0, %y1, %y2, %c2 : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>
}
