// RUN: mxfp4-opt %s --convert-mxfp4-to-amdgpu=mixed=true | FileCheck %s

// gfx950 shares the quantize kernel and its producer fusion with Hopper:
// SwiGLU rounded to bf16, read only by its quantization, is computed from
// its two f32 inputs where the kernel reads its source (each lane's 32
// values through the buffer descriptors) and never written. The rounding
// to bf16 is the producer's own op; the kernel widens the block back. The
// regions cover gfx950's 256-row scale layout, past the source: there the
// producer's value (of zero inputs) is replaced by zeros.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @swiglu(
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch_func @mxfp4_kernels::@[[K:quantize_64x64_bf16_fused[0-9a-f]+_r_evenvs]] blocks
// CHECK-SAME: args(%{{.*}} : memref<4096xf32, #gpu.address_space<global>>, %{{.*}} : memref<4096xf32, #gpu.address_space<global>>, %{{.*}} : memref<2048xi8
// CHECK: gpu.func @[[K]](
// CHECK: %[[G:.*]] = vector.load %{{.*}} : memref<4096xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<32xf32>
// CHECK: %[[U:.*]] = vector.load %{{.*}} : memref<4096xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<32xf32>
// CHECK: vector.extract %[[G]][0]
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[BLOCK:.*]] = vector.from_elements %{{.*}} : vector<32xbf16>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<32xbf16>
// CHECK: %[[VALID:.*]] = arith.select %{{.*}}, %[[BLOCK]], %[[ZERO]] : vector<32xbf16>
// CHECK: arith.extf %[[VALID]] : vector<32xbf16> to vector<32xf32>
// CHECK: vector.reduction <maxsi>
func.func @swiglu(%g: tensor<64x64xf32>, %u: tensor<64x64xf32>) -> tensor<64x64xbf16> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x64xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %u : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xbf16>) {
  ^bb0(%a: f32, %b: f32, %o: bf16):
    %n = arith.negf %a : f32
    %x = math.exp %n : f32
    %d = arith.addf %x, %one : f32
    %s = arith.divf %a, %d : f32
    %r = arith.mulf %s, %b : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %v, %sc = mxfp4.quantize %h axis = 1 : tensor<64x64xbf16> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  %d = mxfp4.dequantize %v scale %sc axis = 1 : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}
