// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(convert-attention-to-nvgpu,cse)" | FileCheck %s

// The forward composite (batch 2, two KV heads of two query heads each,
// seq 256, head dim 64; token-major operands, read in place): one launch
// of 8 blocks of 64 stacked query rows for each of the 4 (batch, KV head)
// pairs, the pairs along x (dispatched first), with
// two tiles (64 x (64 + 8) bf16) in shared memory: k's (where q is staged
// before the loop) and v's; keys in steps of
// 64 with the online softmax; o and the log-sum-exp written. The composite
// (here with a stand-in body) goes once no call is left. The pass outlines
// the launch itself into a kernel named for what it computes and its shape.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[Q:[^:]*]]: memref<2x256x4x64xf32>, %[[K:[^:]*]]: memref<2x256x2x64xf32>, %[[V:[^:]*]]: memref<2x256x2x64xf32>)
// CHECK-DAG: %[[O:.*]] = memref.alloc() : memref<2x256x4x64xf32>
// CHECK-DAG: %[[LSE:.*]] = memref.alloc() : memref<2x4x256xf32>
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s256_kv2x2_d64 blocks in (%c4, %c8, %c1) threads in (%c128, %c1, %c1)
// CHECK-SAME: args(%[[Q]] : memref<2x256x4x64xf32>, %[[K]] : memref<2x256x2x64xf32>, %[[V]] : memref<2x256x2x64xf32>, %[[O]] : memref<2x256x4x64xf32>, %[[LSE]] : memref<2x4x256xf32>)
// CHECK: return %[[O]], %[[LSE]]
// CHECK-NOT: call @
// CHECK-NOT: func.func private
// CHECK: gpu.module @mxfp4_kernels
// CHECK: gpu.func @attention_fwd_b2_s256_kv2x2_d64(%{{.*}}: memref<2x256x4x64xf32>, %{{.*}}: memref<2x256x2x64xf32>, %{{.*}}: memref<2x256x2x64xf32>, %[[KO:.*]]: memref<2x256x4x64xf32>, %[[KLSE:.*]]: memref<2x4x256xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 8, 1>} {
// CHECK: vector.load %{{.*}} : memref<2x256x4x64xf32>, vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: scf.for
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: arith.select
// CHECK: gpu.shuffle  xor
// CHECK: math.exp
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: vector.store %{{.*}}, %[[KO]]
// CHECK: math.log
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

// bf16 operands at head dim 64: warpgroup MMAs on TMA tiles. The host
// makes tensor maps of q (64 rows a box), k and v (128 keys a box), 128-byte
// swizzled; the kernel takes them as pointers, with q's tile, two stages of
// k and v and five mbarriers in dynamic shared memory (1024 + 8192 +
// 4 * 16384 + 5 * 8 bytes). Thread 0 loads q and the first stage; each step
// issues the next block's loads into the other stage after a barrier, waits
// for its k, computes the scores (m64n128k16 from shared memory), masks
// only the diagonal block (an scf.if) and takes the online softmax, then
// waits for its v and accumulates o += P v with P in registers and v read
// transposed (imm-trans-b 1).
// CHECK-LABEL: func.func @forward_bf16(
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c64, %c1, %c64] {{.*}}swizzle = swizzle_128b
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c128, %c1, %c64] {{.*}}swizzle = swizzle_128b
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c128, %c1, %c64] {{.*}}swizzle = swizzle_128b
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b1_s128_kv1x2_d64_hhhhf blocks in (%c1, %c4, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c74792_i32 args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr,
// CHECK-LABEL: gpu.func @attention_fwd_b1_s128_kv1x2_d64_hhhhf(
// CHECK-SAME: %[[QM:[^:]*]]: !llvm.ptr, %[[KM:[^:]*]]: !llvm.ptr, %[[VM:[^:]*]]: !llvm.ptr, %{{[^:]*}}: memref<1x128x2x64xbf16>
// CHECK: gpu.dynamic_shared_memory
// CHECK-COUNT-5: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QM]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VM]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for %[[BLOCK:[^ ]*]] = %c0
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VM]]
// CHECK: }
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: %[[DIAGONAL:.*]] = arith.cmpi eq, %[[BLOCK]]
// CHECK: scf.if %[[DIAGONAL]] -> (vector<4xf32>
// CHECK: arith.select
// CHECK: } else {
// CHECK: gpu.shuffle  xor
// CHECK: math.fma
// CHECK: math.exp2
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
func.func @forward_bf16(%q: memref<1x128x2x64xbf16>, %k: memref<1x128x1x64xbf16>, %v: memref<1x128x1x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x2x128xf32>) {
  %o, %lse = call @attn_bf16(%q, %k, %v) : (memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x2x128xf32>)
  return %o, %lse : memref<1x128x2x64xbf16>, memref<1x2x128xf32>
}
func.func private @attn_bf16(%q: memref<1x128x2x64xbf16>, %k: memref<1x128x1x64xbf16>, %v: memref<1x128x1x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x2x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = memref.alloc() : memref<1x2x128xf32>
  return %q, %lse : memref<1x128x2x64xbf16>, memref<1x2x128xf32>
}

// -----

// The bf16 backward at head dim 64, on warpgroup MMAs over TMA tiles of 64
// rows. The query kernel loads q and dO once and walks two stages of k and
// v: scores and dP from shared memory (m64n64k16), then dq += dS k with dS
// in registers and k read transposed. The key kernel loads k and v once
// and walks two stages of q and dO tiles with their lse and delta vectors
// (bulk copies of 256 bytes from the buffers' 64-bit pointers) under one
// mbarrier a stage; dv += P^T dO and dk += dS^T q take the walked tiles
// transposed. It is held to three blocks an SM.
// CHECK-LABEL: func.func @backward_bf16(
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_delta_b1_s128_kv1x2_d64_hhhhfhhhh
// CHECK-COUNT-4: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c64, %c1, %c64] {{.*}}swizzle = swizzle_128b
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b1_s128_kv1x2_d64_hhhhfhhhh blocks in (%c1, %c4, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c50216_i32
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dkdv_b1_s128_kv1x2_d64_hhhhfhhhh blocks in (%c1, %c2, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c51224_i32
// CHECK-LABEL: gpu.func @attention_bwd_dq_b1_s128_kv1x2_d64_hhhhfhhhh(
// CHECK-SAME: %[[QM:[^:]*]]: !llvm.ptr, %[[DOM:[^:]*]]: !llvm.ptr, %[[KM:[^:]*]]: !llvm.ptr, %[[VM:[^:]*]]: !llvm.ptr,
// CHECK-COUNT-5: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[DOM]]
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VM]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: math.exp2
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-LABEL: gpu.func @attention_bwd_dkdv_b1_s128_kv1x2_d64_hhhhfhhhh(
// CHECK-SAME: %[[KM:[^:]*]]: !llvm.ptr, %[[VM:[^:]*]]: !llvm.ptr, %[[QM:[^:]*]]: !llvm.ptr, %[[DOM:[^:]*]]: !llvm.ptr, %[[LSE:[^:]*]]: memref<1x2x128xf32>, %[[DELTA:[^:]*]]: memref<1x256xf32>,
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK-COUNT-3: nvvm.mbarrier.init
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VM]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16896_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QM]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[DOM]]
// CHECK: builtin.unrealized_conversion_cast %[[LSE]] : memref<1x2x128xf32> to !llvm.struct<(ptr, ptr, i32, array<3 x i32>, array<3 x i32>)>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c256_i32
// CHECK: builtin.unrealized_conversion_cast %[[DELTA]] : memref<1x256xf32> to !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c256_i32
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QM]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @backward_bf16(%q: memref<1x128x2x64xbf16>, %k: memref<1x128x1x64xbf16>, %v: memref<1x128x1x64xbf16>, %o: memref<1x128x2x64xbf16>, %lse: memref<1x2x128xf32>, %do: memref<1x128x2x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>) {
  %dq, %dk, %dv = call @attn_bf16_grad(%q, %k, %v, %o, %lse, %do) : (memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x2x64xbf16>, memref<1x2x128xf32>, memref<1x128x2x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>)
  return %dq, %dk, %dv : memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>
}
func.func private @attn_bf16_grad(%q: memref<1x128x2x64xbf16>, %k: memref<1x128x1x64xbf16>, %v: memref<1x128x1x64xbf16>, %o: memref<1x128x2x64xbf16>, %lse: memref<1x2x128xf32>, %do: memref<1x128x2x64xbf16>) -> (memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %q, %k, %v : memref<1x128x2x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>
}

// -----

// The grid is (a section of heads, the blocks of a head, the sections),
// dispatched x first: within a section every head's longest block starts
// before any head's next. At llama3.2-1b's shape (8 pairs of batch and KV
// head, 4 query heads each, seq 8192) the key kernel's longest block walks
// 512 steps, 77% of a block slot's share: one section of all 8 pairs. The
// forward's longest walk is 19% of a share (sections of 2), the query
// kernel's 26% (4); the row-dot kernel's blocks are alike (sections of 1).
// CHECK-LABEL: func.func @sections(
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b1_s8192_kv8x4_d64_hhhhf blocks in (%c2, %c512, %c4)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_delta_b1_s8192_kv8x4_d64_hhhhfhhhh blocks in (%c1, %c2048, %c8)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b1_s8192_kv8x4_d64_hhhhfhhhh blocks in (%c4, %c512, %c2)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dkdv_b1_s8192_kv8x4_d64_hhhhfhhhh blocks in (%c8, %c128, %c1)
// A block's head is z * section + x:
// CHECK-LABEL: gpu.func @attention_bwd_dq_b1_s8192_kv8x4_d64_hhhhfhhhh(
// CHECK-SAME: known_grid_size = array<i32: 4, 512, 2>
// CHECK: %[[X:.*]] = gpu.block_id  x
// CHECK: %[[Z:.*]] = gpu.block_id  z
// CHECK: %[[ZS:.*]] = arith.muli %[[Z]], %c4 : index
// CHECK: arith.addi %[[ZS]], %[[X]] : index
func.func @sections(%q: memref<1x8192x32x64xbf16>, %k: memref<1x8192x8x64xbf16>, %v: memref<1x8192x8x64xbf16>, %do: memref<1x8192x32x64xbf16>) -> (memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>) {
  %o, %lse = call @attn_1b(%q, %k, %v) : (memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>) -> (memref<1x8192x32x64xbf16>, memref<1x32x8192xf32>)
  %dq, %dk, %dv = call @attn_1b_grad(%q, %k, %v, %o, %lse, %do) : (memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x32x64xbf16>, memref<1x32x8192xf32>, memref<1x8192x32x64xbf16>) -> (memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>)
  return %dq, %dk, %dv : memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>
}
func.func private @attn_1b(%q: memref<1x8192x32x64xbf16>, %k: memref<1x8192x8x64xbf16>, %v: memref<1x8192x8x64xbf16>) -> (memref<1x8192x32x64xbf16>, memref<1x32x8192xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = memref.alloc() : memref<1x32x8192xf32>
  return %q, %lse : memref<1x8192x32x64xbf16>, memref<1x32x8192xf32>
}
func.func private @attn_1b_grad(%q: memref<1x8192x32x64xbf16>, %k: memref<1x8192x8x64xbf16>, %v: memref<1x8192x8x64xbf16>, %o: memref<1x8192x32x64xbf16>, %lse: memref<1x32x8192xf32>, %do: memref<1x8192x32x64xbf16>) -> (memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %q, %k, %v : memref<1x8192x32x64xbf16>, memref<1x8192x8x64xbf16>, memref<1x8192x8x64xbf16>
}

// -----

// The backward composite: delta = rowsum(dO * o) (8 threads a row, 16 rows
// a block, added up with shuffles), the
// query kernel (dq; q and dO staged in the buffers of k and v) and the key
// kernel (dk, dv; 4 blocks of 64 keys, k and v staged in the buffers of q
// and dO, walking the query rows of both groups, with their lse and delta
// in shared memory). No atomics: every output element has one writer.
// CHECK-LABEL: func.func @backward
// CHECK-DAG: %[[DQ:.*]] = memref.alloc() : memref<2x256x4x64xf32>
// CHECK-DAG: %[[DK:.*]] = memref.alloc() : memref<2x256x2x64xf32>
// CHECK-DAG: %[[DV:.*]] = memref.alloc() : memref<2x256x2x64xf32>
// CHECK-DAG: %[[DELTA:.*]] = memref.alloc() : memref<4x512xf32>
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_delta_b2_s256_kv2x2_d64 blocks in (%c1, %c32, %c4) threads in (%c128, %c1, %c1)
// CHECK-SAME: %[[DELTA]] : memref<4x512xf32>)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b2_s256_kv2x2_d64 blocks in (%c4, %c8, %c1)
// CHECK-SAME: %[[DQ]] : memref<2x256x4x64xf32>)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dkdv_b2_s256_kv2x2_d64 blocks in (%c4, %c4, %c1)
// CHECK-SAME: %[[DV]] : memref<2x256x2x64xf32>, %[[DK]] : memref<2x256x2x64xf32>)
// CHECK-NOT: gpu.launch
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// CHECK: gpu.func @attention_bwd_delta_b2_s256_kv2x2_d64(
// CHECK-SAME: %[[KDELTA:[^:]*]]: memref<4x512xf32>)
// CHECK: vector.fma
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[KDELTA]]
// CHECK: gpu.func @attention_bwd_dq_b2_s256_kv2x2_d64(
// CHECK-SAME: %[[KDELTA:[^:]*]]: memref<4x512xf32>, %{{.*}}: memref<2x256x2x64xf32>, %{{.*}}: memref<2x256x2x64xf32>, %[[KDQ:[^:]*]]: memref<2x256x4x64xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>) kernel
// CHECK: memref.load %[[KDELTA]]
// CHECK: scf.for
// CHECK: math.exp
// CHECK: vector.store %{{.*}}, %[[KDQ]]
// CHECK: gpu.func @attention_bwd_dkdv_b2_s256_kv2x2_d64(
// CHECK-SAME: %[[KDELTA:[^:]*]]: memref<4x512xf32>, %[[KDV:[^:]*]]: memref<2x256x2x64xf32>, %[[KDK:[^:]*]]: memref<2x256x2x64xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.for
// CHECK: memref.load %[[KDELTA]]
// CHECK: math.exp
// CHECK: vector.store %{{.*}}, %[[KDV]]
// CHECK: vector.store %{{.*}}, %[[KDK]]
func.func @backward(%q: memref<2x256x4x64xf32>, %k: memref<2x256x2x64xf32>, %v: memref<2x256x2x64xf32>, %o: memref<2x256x4x64xf32>, %lse: memref<2x4x256xf32>, %do: memref<2x256x4x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>) {
  %dq, %dk, %dv = call @attn_grad(%q, %k, %v, %o, %lse, %do) : (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>, memref<2x256x4x64xf32>, memref<2x4x256xf32>, memref<2x256x4x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>)
  return %dq, %dk, %dv : memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>
}
func.func private @attn_grad(%q: memref<2x256x4x64xf32>, %k: memref<2x256x2x64xf32>, %v: memref<2x256x2x64xf32>, %o: memref<2x256x4x64xf32>, %lse: memref<2x4x256xf32>, %do: memref<2x256x4x64xf32>) -> (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  %dk = memref.alloc() : memref<2x256x2x64xf32>
  %dv = memref.alloc() : memref<2x256x2x64xf32>
  return %o, %dk, %dv : memref<2x256x4x64xf32>, memref<2x256x2x64xf32>, memref<2x256x2x64xf32>
}

// -----

// Heads of 128: two tiles of 64 x (128 + 8) bf16 (34 KiB) a kernel; the
// backward's key kernel is two, one accumulating dv and one, recomputing
// the probabilities, dk (both accumulators and both operands' fragments
// would not fit in registers together). The forward tells ptxas that two
// blocks share an SM (`nvvm.minctasm`): it then gives the kernel 254
// registers, not 182 (docs/performance.md).
// CHECK-LABEL: func.func @heads_128
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s128_kv1x1_d128
// CHECK: return
// CHECK-LABEL: func.func @heads_128_backward
// CHECK: memref.alloc() : memref<2x128x1x128xf32>
// CHECK: %[[DK:.*]] = memref.alloc() : memref<2x128x1x128xf32>
// CHECK: %[[DV:.*]] = memref.alloc() : memref<2x128x1x128xf32>
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_delta_b2_s128_kv1x1_d128
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b2_s128_kv1x1_d128
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dv_b2_s128_kv1x1_d128
// CHECK-SAME: %[[DV]] : memref<2x128x1x128xf32>)
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dk_b2_s128_kv1x1_d128
// CHECK-SAME: %[[DK]] : memref<2x128x1x128xf32>)
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK: gpu.func @attention_fwd_b2_s128_kv1x1_d128(
// CHECK-SAME: workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 2, 1>, nvvm.minctasm = 2 : i32} {
// CHECK: gpu.func @attention_bwd_dv_b2_s128_kv1x1_d128(
// CHECK-SAME: %[[KDV:[^:]*]]: memref<2x128x1x128xf32>)
// CHECK-SAME: %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 2, 1>} {
// CHECK: vector.store %{{.*}}, %[[KDV]]
// CHECK: gpu.func @attention_bwd_dk_b2_s128_kv1x1_d128(
// CHECK-SAME: %[[KDK:[^:]*]]: memref<2x128x1x128xf32>)
// CHECK-SAME: %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: vector.store %{{.*}}, %[[KDK]]
func.func @heads_128(%q: memref<2x128x1x128xf32>, %k: memref<2x128x1x128xf32>, %v: memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x1x128xf32>) {
  %o, %lse = call @attn_128(%q, %k, %v) : (memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x1x128xf32>)
  return %o, %lse : memref<2x128x1x128xf32>, memref<2x1x128xf32>
}
func.func private @attn_128(%q: memref<2x128x1x128xf32>, %k: memref<2x128x1x128xf32>, %v: memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x1x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = memref.alloc() : memref<2x1x128xf32>
  return %q, %lse : memref<2x128x1x128xf32>, memref<2x1x128xf32>
}
func.func @heads_128_backward(%q: memref<2x128x1x128xf32>, %k: memref<2x128x1x128xf32>, %v: memref<2x128x1x128xf32>, %o: memref<2x128x1x128xf32>, %lse: memref<2x1x128xf32>, %do: memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>) {
  %dq, %dk, %dv = call @attn_128_grad(%q, %k, %v, %o, %lse, %do) : (memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x1x128xf32>, memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>)
  return %dq, %dk, %dv : memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>
}
func.func private @attn_128_grad(%q: memref<2x128x1x128xf32>, %k: memref<2x128x1x128xf32>, %v: memref<2x128x1x128xf32>, %o: memref<2x128x1x128xf32>, %lse: memref<2x1x128xf32>, %do: memref<2x128x1x128xf32>) -> (memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %q, %k, %v : memref<2x128x1x128xf32>, memref<2x128x1x128xf32>, memref<2x128x1x128xf32>
}

// -----

// Heads of 256 are not covered (the accumulators would not fit in
// registers at 16 rows a warp): the call stays for the inliner, and so
// does its composite.
// CHECK-LABEL: func.func @wide_heads
// CHECK: call @attn_wide
// CHECK-NOT: gpu.launch
// CHECK: func.func private @attn_wide
// CHECK-NOT: gpu.module
func.func @wide_heads(%q: memref<2x128x1x256xf32>, %k: memref<2x128x1x256xf32>, %v: memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>) {
  %o, %lse = call @attn_wide(%q, %k, %v) : (memref<2x128x1x256xf32>, memref<2x128x1x256xf32>, memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>)
  return %o, %lse : memref<2x128x1x256xf32>, memref<2x1x128xf32>
}
func.func private @attn_wide(%q: memref<2x128x1x256xf32>, %k: memref<2x128x1x256xf32>, %v: memref<2x128x1x256xf32>) -> (memref<2x128x1x256xf32>, memref<2x1x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = memref.alloc() : memref<2x1x128xf32>
  return %q, %lse : memref<2x128x1x256xf32>, memref<2x1x128xf32>
}

// -----

// bf16 q, k, v and o (mxfp4-round-attention-io) at head dim 96, on
// `mma.sync` (the warpgroup kernels take 64 and 128): the tiles are
// stored as loaded, and o is rounded and stored 4 values a thread
// (neighbouring threads trade pairs), in a kernel named for its types (h:
// bf16, f: f32); lse stays f32.
// CHECK-LABEL: func.func @forward_bf16
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s256_kv2x2_d96_hhhhf
// CHECK-SAME: args(%{{.*}} : memref<2x256x4x96xbf16>, %{{.*}} : memref<2x256x2x96xbf16>, %{{.*}} : memref<2x256x2x96xbf16>, %{{.*}} : memref<2x256x4x96xbf16>, %{{.*}} : memref<2x4x256xf32>)
// CHECK: gpu.func @attention_fwd_b2_s256_kv2x2_d96_hhhhf
// CHECK-NOT: arith.truncf
// CHECK: %[[TILE:.*]] = vector.load %{{.*}} : memref<2x256x4x96xbf16>, vector<8xbf16>
// CHECK-NOT: arith.truncf
// CHECK: vector.store %[[TILE]], %{{.*}} : memref<6656xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: gpu.shuffle  xor %{{.*}}, %c1
// CHECK: %[[OH:.*]] = vector.bitcast %{{.*}} : vector<2xi32> to vector<4xbf16>
// CHECK: vector.store %[[OH]], %{{.*}} {alignment = 8 : i64} : memref<2x256x4x96xbf16>, vector<4xbf16>
func.func @forward_bf16(%q: memref<2x256x4x96xbf16>, %k: memref<2x256x2x96xbf16>, %v: memref<2x256x2x96xbf16>) -> (memref<2x256x4x96xbf16>, memref<2x4x256xf32>) {
  %o, %lse = call @attn(%q, %k, %v) : (memref<2x256x4x96xbf16>, memref<2x256x2x96xbf16>, memref<2x256x2x96xbf16>) -> (memref<2x256x4x96xbf16>, memref<2x4x256xf32>)
  return %o, %lse : memref<2x256x4x96xbf16>, memref<2x4x256xf32>
}
func.func private @attn(%q: memref<2x256x4x96xbf16>, %k: memref<2x256x2x96xbf16>, %v: memref<2x256x2x96xbf16>) -> (memref<2x256x4x96xbf16>, memref<2x4x256xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %o = memref.alloc() : memref<2x256x4x96xbf16>
  %lse = memref.alloc() : memref<2x4x256xf32>
  return %o, %lse : memref<2x256x4x96xbf16>, memref<2x4x256xf32>
}

// -----

// bf16 at head dim 128 on warpgroup MMAs: 64 keys a forward step (its
// tiles 1024 + 16384 + 4 * 16384 + 40 bytes), each tile two TMA boxes of
// 64 d; the scores are m64n64 over 8 k16 slices, o m64n128. The backward's
// key kernel accumulates dv and dk (m64n128 each) in one kernel.
// CHECK-LABEL: func.func @wide_bf16(
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_fwd_b1_s128_kv1x2_d128_hhhhf {{.*}} dynamic_shared_memory_size %c82984_i32
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dq_b1_s128_kv1x2_d128_hhhhfhhhh
// CHECK: gpu.launch_func @mxfp4_kernels::@attention_bwd_dkdv_b1_s128_kv1x2_d128_hhhhfhhhh
// CHECK-LABEL: gpu.func @attention_fwd_b1_s128_kv1x2_d128_hhhhf(
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-LABEL: gpu.func @attention_bwd_dkdv_b1_s128_kv1x2_d128_hhhhfhhhh(
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;
func.func @wide_bf16(%q: memref<1x128x2x128xbf16>, %k: memref<1x128x1x128xbf16>, %v: memref<1x128x1x128xbf16>, %do: memref<1x128x2x128xbf16>) -> (memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>) {
  %o, %lse = call @attn_wide_bf16(%q, %k, %v) : (memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>) -> (memref<1x128x2x128xbf16>, memref<1x2x128xf32>)
  %dq, %dk, %dv = call @attn_wide_bf16_grad(%q, %k, %v, %o, %lse, %do) : (memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x2x128xbf16>, memref<1x2x128xf32>, memref<1x128x2x128xbf16>) -> (memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>)
  return %dq, %dk, %dv : memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>
}
func.func private @attn_wide_bf16(%q: memref<1x128x2x128xbf16>, %k: memref<1x128x1x128xbf16>, %v: memref<1x128x1x128xbf16>) -> (memref<1x128x2x128xbf16>, memref<1x2x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = memref.alloc() : memref<1x2x128xf32>
  return %q, %lse : memref<1x128x2x128xbf16>, memref<1x2x128xf32>
}
func.func private @attn_wide_bf16_grad(%q: memref<1x128x2x128xbf16>, %k: memref<1x128x1x128xbf16>, %v: memref<1x128x1x128xbf16>, %o: memref<1x128x2x128xbf16>, %lse: memref<1x2x128xf32>, %do: memref<1x128x2x128xbf16>) -> (memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %q, %k, %v : memref<1x128x2x128xbf16>, memref<1x128x1x128xbf16>, memref<1x128x1x128xbf16>
}
