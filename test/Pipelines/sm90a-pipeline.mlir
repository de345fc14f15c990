// RUN: mxfp4-opt %s -mxfp4-to-sm90a="format=mlir mixed=true" | FileCheck %s

// A chain of elementwise ops (an activation times a gate, plus a residual)
// runs as one generic kernel, not one launch per op.
// CHECK-LABEL: func.func @swiglu_residual
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @swiglu_residual(%g: tensor<256x64xf32>, %u: tensor<256x64xf32>, %r: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %e = tensor.empty() : tensor<256x64xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<256x64xf32>) outs(%e : tensor<256x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %x : f32
    %y = arith.divf %a, %d : f32
    linalg.yield %y : f32
  } -> tensor<256x64xf32>
  %m = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%s, %u : tensor<256x64xf32>, tensor<256x64xf32>) outs(%e : tensor<256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.mulf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<256x64xf32>
  %t = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %r : tensor<256x64xf32>, tensor<256x64xf32>) outs(%e : tensor<256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<256x64xf32>
  return %t : tensor<256x64xf32>
}

// A GEMM fed by an elementwise op (a norm's scaling): the bf16 rounding of
// the operand fuses into that op's kernel, which writes bf16; the GEMM
// reads it, through TMA tensor maps of both bf16 buffers, and the weight's
// rounding is the only other kernel.
// RUN: mxfp4-opt %s -mxfp4-to-sm90a="format=mlir mixed=true" | FileCheck %s --check-prefix=ROUND
// ROUND-LABEL: func.func @scaled_linear
// ROUND: gpu.launch_func {{.*}} args(%[[XH:.*]] : memref<256x64xbf16>, %arg0 : memref<256x64xf32>, %arg1 : memref<256x64xf32>)
// ROUND: gpu.launch_func {{.*}} args(%[[WH:.*]] : memref<128x64xbf16>, %arg2 : memref<128x64xf32>)
// ROUND: %[[XC:.*]] = memref.cast %[[XH]] : memref<256x64xbf16> to memref<*xbf16>
// ROUND: %[[XM:.*]] = nvgpu.tma.create.descriptor %[[XC]] box[%{{.*}}, %{{.*}}]
// ROUND: %[[XP:.*]] = builtin.unrealized_conversion_cast %[[XM]] {{.*}} to !llvm.ptr
// ROUND: %[[WC:.*]] = memref.cast %[[WH]] : memref<128x64xbf16> to memref<*xbf16>
// ROUND: %[[WM:.*]] = nvgpu.tma.create.descriptor %[[WC]] box[%{{.*}}, %{{.*}}]
// ROUND: %[[WP:.*]] = builtin.unrealized_conversion_cast %[[WM]] {{.*}} to !llvm.ptr
// ROUND: gpu.launch_func {{.*}} threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%[[XP]] : !llvm.ptr, %[[WP]] : !llvm.ptr,
// ROUND-NOT: gpu.launch_func
func.func @scaled_linear(%x: tensor<256x64xf32>, %s: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %e = tensor.empty() : tensor<256x64xf32>
  %y = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<256x64xf32>, tensor<256x64xf32>) outs(%e : tensor<256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<256x64xf32>
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<256x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ce : tensor<256x128xf32>) -> tensor<256x128xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%y, %w : tensor<256x64xf32>, tensor<128x64xf32>) outs(%z : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}
