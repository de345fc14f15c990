// RUN: mxfp4-opt %s --convert-mxfp4-to-nvgpu | FileCheck %s

// A linear layer's Fprop: two fused quantize kernels (the activation's in
// both orientations from one read, for Fprop and Wgrad) and the FP4 GEMM on
// canonical scales, in one gpu.module for sm_90a.
// CHECK-LABEL: func.func @fprop(
// CHECK-SAME: %[[X:.*]]: memref<16384xf32> {mxfp4.tensor = tensor<128x128xf32>}
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_128x128_f32_r_h16d_evenvs_t_h16d_evenv
// CHECK-SAME: threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<16384xf32, #gpu.address_space<global>>
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_64x128_f32_r_h16d_evenvs
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[T:.*]], %{{.*}}, %{{.*}})
// CHECK: gpu.module @mxfp4_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// The quantize kernel: the CPU's integer conversion (no FP4 instructions on
// Hopper), the transposed job through shared memory, and, as 128 rows tile
// the source exactly, no guards: each phase's codes and scales gathered in
// shared memory and written as whole rows.
// CHECK: gpu.func @quantize_128x128_f32_r_h16d_evenvs_t_h16d_evenv
// CHECK-SAME: workgroup(%{{.*}} : memref<8704xf32, #gpu.address_space<workgroup>>, %[[GATHER:.*]] : memref<8704xi8, #gpu.address_space<workgroup>>)
// CHECK-COUNT-8: vector.load %{{.*}} : memref<16384xf32, #gpu.address_space<global>>, vector<4xf32>
// CHECK: gpu.barrier
// The rotation's normalization (1/4) is folded into the scaling: the block's
// amax times 1/4, then the magnitudes times two per-block factors,
// 2^(-2 - s) and 1 where the scale byte allows it, else 1/4 and 2^-s.
// CHECK: vector.reduction <maxsi>
// CHECK-NEXT: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: arith.mulf %{{.*}}, %[[QUARTER]] : f32
// CHECK: %[[FIRST:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[SECOND:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[F1:.*]] = vector.broadcast %[[FIRST]] : f32 to vector<32xf32>
// CHECK: %[[TIMES:.*]] = arith.mulf %{{.*}}, %[[F1]] : vector<32xf32>
// CHECK: %[[F2:.*]] = vector.broadcast %[[SECOND]] : f32 to vector<32xf32>
// CHECK: arith.mulf %[[TIMES]], %[[F2]] : vector<32xf32>
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[GATHER]][%{{.*}}] {alignment = 16 : i64} : memref<8704xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK: gpu.barrier
// CHECK-NOT: scf.if %{{[^ ]+}} {
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xi8, #gpu.address_space<global>>, vector<16xi8>
// CHECK: scf.if
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xi8>
// CHECK: vector.store %{{.*}} {alignment = 2 : i64} : memref<512xi8, #gpu.address_space<global>>, vector<2xi8>
// The second, 64 x 128, is not a band of four region rows: each lane
// stores its block's codes itself (unguarded: its four regions tile it).
// CHECK: gpu.func @quantize_64x128_f32_r_h16d_evenvs
// CHECK-SAME: workgroup(%{{.*}} : memref<8704xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.reduction <maxsi>
// CHECK-NOT: scf.if %{{[^ ]+}} {
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<4096xi8, #gpu.address_space<global>>, vector<16xi8>
// The GEMM, four warpgroups (a 256 x 128 tile of C), one block an SM
// (ptxas keeps to 128 registers): each thread loads one block (16 bytes)
// of a super step (four K steps; a row's four lanes read its 64 contiguous
// bytes) of two rows of A and one of B, with the rows' words of four
// scales. It expands them a word at a time
// (per code pair a mask, a multiply that spreads both codes, a mask, two
// bf16x2 multiplies: by 2^126, then by the scale): A's into the registers
// of its warpgroup's A fragments, B's into four core-matrix stages of B, a
// pair a store. wgmma (A from registers, inline PTX) multiplies one stage
// while the threads expand the next, four stages a super step, each waiting
// only for the previous stage's MMAs (`wait.group 1`); the next
// super step's rows are loaded in two halves (A's, then B's) during the
// first two, after their fences.
// CHECK: gpu.func @gemm_128x64x128_f32
// CHECK-SAME: workgroup(%[[BTILE:.*]] : memref<21504xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK: %[[AVALUES:.*]] = memref.view %{{.*}} : memref<8192xi8, #gpu.address_space<global>> to memref<2048xi32, #gpu.address_space<global>>
// CHECK: %[[ASCALES:.*]] = memref.view %{{.*}} : memref<512xi8, #gpu.address_space<global>> to memref<128xi32, #gpu.address_space<global>>
// CHECK: %[[BVALUES:.*]] = memref.view %{{.*}} : memref<4096xi8, #gpu.address_space<global>> to memref<1024xi32, #gpu.address_space<global>>
// CHECK: %[[BSCALES:.*]] = memref.view %{{.*}} : memref<256xi8, #gpu.address_space<global>> to memref<64xi32, #gpu.address_space<global>>
// CHECK-COUNT-2: vector.load %[[AVALUES]][%{{.*}}] {alignment = 16 : i64} : memref<2048xi32, #gpu.address_space<global>>, vector<4xi32>
// CHECK: vector.load %[[BVALUES]][%{{.*}}] {alignment = 16 : i64} : memref<1024xi32, #gpu.address_space<global>>, vector<4xi32>
// CHECK: scf.for
// CHECK-COUNT-2: vector.bitcast %{{.*}} : vector<1xi32> to vector<2xbf16>
// CHECK: %[[SCALE:.*]] = vector.bitcast %{{.*}} : vector<1xi32> to vector<2xbf16>
// CHECK: %[[TWO126:.*]] = vector.bitcast %{{.*}} : vector<1xi32> to vector<2xbf16>
// CHECK: %[[CODES:.*]] = arith.andi %{{.*}}, %c983055_i32 : i32
// CHECK: %[[SPREAD:.*]] = arith.muli %[[CODES]], %c4160_i32 : i32
// CHECK: arith.andi %[[SPREAD]], %c-2118090304_i32 : i32
// CHECK: %[[PAIR:.*]] = arith.mulf %{{.*}}, %[[TWO126]] : vector<2xbf16>
// CHECK: arith.mulf %[[PAIR]], %[[SCALE]] : vector<2xbf16>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[BTILE]][%{{.*}}] {alignment = 4 : i64} : memref<21504xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.fence.proxy
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 0;{{.*}}", "=f,{{.*}},0,1,{{.*}},63,r,r,r,r,l"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-COUNT-4: vector.store %{{.*}}, %[[BTILE]]
// CHECK: arith.mulf
// CHECK: nvvm.fence.proxy
// CHECK-COUNT-2: vector.load %[[AVALUES]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: llvm.inline_asm
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.fence.proxy
// CHECK: vector.load %[[BVALUES]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: llvm.inline_asm
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
// CHECK-COUNT-2: llvm.inline_asm
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// C's adjacent columns as one aligned 8-byte store each (not two).
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<8192xf32, #gpu.address_space<global>>, vector<2xf32>
func.func @fprop(%x: tensor<128x128xf32>, %w: tensor<64x128xf32>) -> (tensor<128x64xf32>, tensor<128x128xf4E2M1FN>) {
  %hx = mxfp4.hadamard %x axis = 1 size = 16 : tensor<128x128xf32>
  %xv, %xs = mxfp4.quantize %hx axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %e = tensor.empty() : tensor<128x128xf32>
  %t = linalg.transpose ins(%x : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) permutation = [1, 0]
  %ht = mxfp4.hadamard %t axis = 1 size = 16 : tensor<128x128xf32>
  %tv, %ts = mxfp4.quantize %ht axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %hw = mxfp4.hadamard %w axis = 1 size = 16 : tensor<64x128xf32>
  %wv, %ws = mxfp4.quantize %hw axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %y = mxfp4.scaled_matmul %xv scale %xs, %wv scale %ws : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  return %y, %tv : tensor<128x64xf32>, tensor<128x128xf4E2M1FN>
}
