// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(convert-attention-to-amdgpu,cse)" | FileCheck %s

// The forward composite (batch 2, two KV heads of two query heads each,
// seq 256, head dim 64): one launch of 4 blocks of 128 stacked query rows
// (4 waves of 32) for each of the 4 (batch, KV head) pairs, k (64 x 72) and
// v transposed (64 x 72) in LDS, 64-key steps on bf16 MFMAs with the
// online softmax: unmasked tiles, then the diagonal tiles with the causal
// mask. The composite (a stand-in body) goes once no call is left.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[Q:[^:]*]]: memref<2x256x4x64xf32>, %[[K:[^:]*]]: memref<2x256x2x64xf32>, %[[V:[^:]*]]: memref<2x256x2x64xf32>)
// CHECK-DAG: %[[O:.*]] = memref.alloc() : memref<2x256x4x64xf32>
// CHECK-DAG: %[[LSE:.*]] = memref.alloc() : memref<2x4x256xf32>
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s256_kv2x2_d64 blocks in (%c4, %c4, %c1) threads in (%c256, %c1, %c1)
// CHECK-SAME: args(%[[Q]] : memref<2x256x4x64xf32>, %[[K]] : memref<2x256x2x64xf32>, %[[V]] : memref<2x256x2x64xf32>, %[[O]] : memref<2x256x4x64xf32>, %[[LSE]] : memref<2x4x256xf32>)
// CHECK: return %[[O]], %[[LSE]]
// CHECK-NOT: call @
// CHECK-NOT: func.func private
// CHECK: gpu.module @mxfp4_kernels
// CHECK: gpu.func @attention_fwd_b2_s256_kv2x2_d64(%{{.*}}: memref<2x256x4x64xf32>, %{{.*}}: memref<2x256x2x64xf32>, %{{.*}}: memref<2x256x2x64xf32>, %[[KO:.*]]: memref<2x256x4x64xf32>, %[[KLSE:.*]]: memref<2x4x256xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 4, 1>, mxfp4.steady_iterations = 3.000000e+00 : f64} {
// CHECK: vector.load %{{.*}} : memref<2x256x4x64xf32>, vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: scf.for
// CHECK: amdgpu.mfma 16x16x32
// CHECK-NOT: arith.select
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2
// CHECK: amdgpu.mfma 16x16x32
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: amdgpu.mfma 16x16x32
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: vector.store %{{.*}}, %[[KO]]
// CHECK: math.log2
// CHECK: memref.store %{{.*}}, %[[KLSE]]
func.func @forward(%q: memref<2x256x4x64xf32>, %k: memref<2x256x2x64xf32>, %v: memref<2x256x2x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x4x256xf32>) {
  %o, %lse = call @attn(%q, %k, %v) : (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x4x256xf32>)
  return %o, %lse : memref<2x256x4x64xf32>, memref<2x4x256xf32>
}
func.func private @attn(%q: memref<2x256x4x64xf32>, %k: memref<2x256x2x64xf32>, %v: memref<2x256x2x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x4x256xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %o = memref.alloc() : memref<2x256x4x64xf32>
  %lse = memref.alloc() : memref<2x4x256xf32>
  return %o, %lse : memref<2x256x4x64xf32>, memref<2x4x256xf32>
}

// -----

// A head dim the kernels do not cover stays a call, for the inliner.
// CHECK-LABEL: func.func @wide_heads
// CHECK: call @attn_wide
// CHECK: func.func private @attn_wide
func.func @wide_heads(%q: memref<2x128x1x256xf32>, %k: memref<2x128x1x256xf32>, %v: memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>) {
  %o, %lse = call @attn_wide(%q, %k, %v) : (memref<2x128x1x256xf32>, memref<2x128x1x256xf32>, memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>)
  return %o, %lse : memref<2x128x1x256xf32>, memref<2x1x128xf32>
}
func.func private @attn_wide(%q: memref<2x128x1x256xf32>, %k: memref<2x128x1x256xf32>, %v: memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %o = memref.alloc() : memref<2x128x1x256xf32>
  %lse = memref.alloc() : memref<2x1x128xf32>
  return %o, %lse : memref<2x128x1x256xf32>, memref<2x1x128xf32>
}

// -----

// The backward composite (bf16 q, k, v and o, f32 dO and gradients): delta
// = rowsum(dO * o) into a [heads, stacked rows] buffer, then dq (a block of
// 2 waves a 64 stacked query rows) and dk, dv together (a block a 64 keys),
// no atomics. The kernels are named for their types, operands then
// results (h: bf16, f: f32); dq and dkdv stage their tiles in LDS.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[Q:[^:]*]]: memref<1x128x4x64xbf16>, %[[K:[^:]*]]: memref<1x128x2x64xbf16>, %[[V:[^:]*]]: memref<1x128x2x64xbf16>, %[[O:[^:]*]]: memref<1x128x4x64xbf16>, %[[LSE:[^:]*]]: memref<1x4x128xf32>, %[[DO:[^:]*]]: memref<1x128x4x64xf32>)
// CHECK-DAG: %[[DQ:.*]] = memref.alloc() : memref<1x128x4x64xf32>
// CHECK-DAG: %[[DK:.*]] = memref.alloc() : memref<1x128x2x64xf32>
// CHECK-DAG: %[[DV:.*]] = memref.alloc() : memref<1x128x2x64xf32>
// CHECK-DAG: %[[DELTA:.*]] = memref.alloc() : memref<2x256xf32>
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_delta_b1_s128_kv2x2_d64_hhhhfffff blocks in (%c1, %c16, %c2) threads in (%c128, %c1, %c1)
// CHECK-SAME: args(%[[O]] : memref<1x128x4x64xbf16>, %[[DO]] : memref<1x128x4x64xf32>, %[[DELTA]] : memref<2x256xf32>)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b1_s128_kv2x2_d64_hhhhfffff blocks in (%c2, %c4, %c1) threads in (%c128, %c1, %c1)
// CHECK-SAME: %[[DELTA]] : memref<2x256xf32>, %[[K]] : memref<1x128x2x64xbf16>, %[[V]] : memref<1x128x2x64xbf16>, %[[DQ]] : memref<1x128x4x64xf32>)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dkdv_b1_s128_kv2x2_d64_hhhhfffff blocks in (%c2, %c2, %c1) threads in (%c128, %c1, %c1)
// CHECK-SAME: %[[DELTA]] : memref<2x256xf32>, %[[DV]] : memref<1x128x2x64xf32>, %[[DK]] : memref<1x128x2x64xf32>)
// CHECK-NOT: gpu.launch
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// CHECK-NOT: func.func private
// CHECK: gpu.func @attention_bwd_delta_b1_s128_kv2x2_d64_hhhhfffff(
// CHECK: gpu.shuffle  xor
// CHECK: gpu.func @attention_bwd_dq_b1_s128_kv2x2_d64_hhhhfffff(
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 4, 1>, mxfp4.steady_iterations = 1.500000e+00 : f64} {
// CHECK: amdgpu.mfma 16x16x32
// CHECK: math.exp2
// CHECK: gpu.func @attention_bwd_dkdv_b1_s128_kv2x2_d64_hhhhfffff(
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 2, 1>, mxfp4.steady_iterations = 3.000000e+00 : f64} {
// CHECK: amdgpu.mfma 16x16x32
// CHECK: math.exp2
func.func @backward(%q: memref<1x128x4x64xbf16>, %k: memref<1x128x2x64xbf16>, %v: memref<1x128x2x64xbf16>, %o: memref<1x128x4x64xbf16>, %lse: memref<1x4x128xf32>, %do: memref<1x128x4x64xf32>) -> (memref<1x128x4x64xf32>, memref<1x128x2x64xf32>, memref<1x128x2x64xf32>) {
  %dq, %dk, %dv = call @attn_grad(%q, %k, %v, %o, %lse, %do) : (memref<1x128x4x64xbf16>, memref<1x128x2x64xbf16>, memref<1x128x2x64xbf16>, memref<1x128x4x64xbf16>, memref<1x4x128xf32>, memref<1x128x4x64xf32>) -> (memref<1x128x4x64xf32>, memref<1x128x2x64xf32>, memref<1x128x2x64xf32>)
  return %dq, %dk, %dv : memref<1x128x4x64xf32>, memref<1x128x2x64xf32>, memref<1x128x2x64xf32>
}
func.func private @attn_grad(%q: memref<1x128x4x64xbf16>, %k: memref<1x128x2x64xbf16>, %v: memref<1x128x2x64xbf16>, %o: memref<1x128x4x64xbf16>, %lse: memref<1x4x128xf32>, %do: memref<1x128x4x64xf32>) -> (memref<1x128x4x64xf32>, memref<1x128x2x64xf32>, memref<1x128x2x64xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  %dq = memref.alloc() : memref<1x128x4x64xf32>
  %dk = memref.alloc() : memref<1x128x2x64xf32>
  %dv = memref.alloc() : memref<1x128x2x64xf32>
  return %dq, %dk, %dv : memref<1x128x4x64xf32>, memref<1x128x2x64xf32>, memref<1x128x2x64xf32>
}

// -----

// A sequence that is not a multiple of 64 stays a call, backward too.
// CHECK-LABEL: func.func @short_backward
// CHECK: call @attn_short_grad
// CHECK-NOT: gpu.launch
// CHECK: func.func private @attn_short_grad
func.func @short_backward(%q: memref<1x96x2x64xf32>, %k: memref<1x96x2x64xf32>, %v: memref<1x96x2x64xf32>, %o: memref<1x96x2x64xf32>, %lse: memref<1x2x96xf32>, %do: memref<1x96x2x64xf32>) -> (memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>) {
  %dq, %dk, %dv = call @attn_short_grad(%q, %k, %v, %o, %lse, %do) : (memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x2x96xf32>, memref<1x96x2x64xf32>) -> (memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>)
  return %dq, %dk, %dv : memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>
}
func.func private @attn_short_grad(%q: memref<1x96x2x64xf32>, %k: memref<1x96x2x64xf32>, %v: memref<1x96x2x64xf32>, %o: memref<1x96x2x64xf32>, %lse: memref<1x2x96xf32>, %do: memref<1x96x2x64xf32>) -> (memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %q, %k, %v : memref<1x96x2x64xf32>, memref<1x96x2x64xf32>, memref<1x96x2x64xf32>
}
