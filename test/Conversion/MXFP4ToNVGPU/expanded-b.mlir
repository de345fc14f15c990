// RUN: mxfp4-opt %s --convert-mxfp4-to-nvgpu | FileCheck %s

// Fprop of a pilot layer: 128 row tiles of A read the same 512 x 512 B. B
// is expanded to bf16 once (512 KiB), in the GEMM's shared-memory layout,
// and the GEMM bulk-copies its 8 KiB stages instead of expanding B's FP4
// codes in every block. Its blocks are two warpgroups (128 x 128 tiles of
// C), two an SM: 264 blocks, so that one block's epilogue overlaps the
// other's MMAs.
// CHECK-LABEL: func.func @fprop(
// CHECK-SAME: %[[A:[^:]*]]: memref<8388608xi8>
// CHECK-SAME: %[[SA:[^:]*]]: memref<524288xi8>
// CHECK-SAME: %[[B:[^:]*]]: memref<131072xi8>
// CHECK-SAME: %[[SB:[^:]*]]: memref<8192xi8>
// CHECK: %[[C:.*]] = memref.alloc() : memref<16777216xbf16>
// CHECK: %[[X:.*]] = memref.alloc() : memref<262144xbf16>
// CHECK: %[[B_G:.*]] = memref.memory_space_cast %[[B]]
// CHECK: %[[SB_G:.*]] = memref.memory_space_cast %[[SB]]
// CHECK: %[[X_G:.*]] = memref.memory_space_cast %[[X]]
// CHECK: gpu.launch_func @mxfp4_kernels::@expand_b_32768x512x512 blocks in (%c32, {{.*}}) args(%[[B_G]] : {{.*}}, %[[SB_G]] : {{.*}}, %[[X_G]] : memref<262144xbf16, #gpu.address_space<global>>)
// CHECK: %[[A_G:.*]] = memref.memory_space_cast %[[A]]
// CHECK: %[[SA_G:.*]] = memref.memory_space_cast %[[SA]]
// CHECK: %[[X_G2:.*]] = memref.memory_space_cast %[[X]]
// CHECK: %[[C_G:.*]] = memref.memory_space_cast %[[C]]
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_32768x512x512_bf16_expanded_b blocks in (%c264, {{.*}}) threads in (%c256{{.*}}, {{.*}}) args(%[[A_G]] : {{.*}}, %[[SA_G]] : {{.*}}, %[[X_G2]] : memref<262144xbf16, #gpu.address_space<global>>, %[[C_G]] : memref<16777216xbf16, #gpu.address_space<global>>)

// The GEMM: the expanded B's 64-bit address from its argument (kernels
// index with 32 bits), four "full" barriers (one bulk copy each) and four
// "empty" ones (the two warpgroups' releases); ptxas is told of 256
// threads and two blocks an SM (128 registers a thread).
// CHECK: gpu.func @gemm_32768x512x512_bf16_expanded_b(
// CHECK-SAME: workgroup(%[[TILE:[^:]*]] : memref<16384xbf16, #gpu.address_space<workgroup>>, %[[BARS:[^:]*]] : memref<8xi64, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32
// CHECK: llvm.inline_asm "{{.*}}ld.param.u64 t, [gemm_32768x512x512_bf16_expanded_b_param_2];{{.*}}cvta.to.global.u64
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c2_i32
// CHECK: gpu.barrier
// Thread 0 copies the first tile's first two stages.
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// Each thread loads two rows (of A) a super step, and the tile loop carries
// the parity of the block's super steps.
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xi32>, vector<4xi32>, i32, i32, i32)
// CHECK: scf.for
// A stage waits for its copy, not for a block barrier; no thread stores B.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield

// The expansion: lane 4 r + t reads 16 bytes of row r, block t of a super
// step, and stores the pairs of its word j into stage j, K 8 p + 2 t.
// CHECK: gpu.func @expand_b_32768x512x512(
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<32768xi32, #gpu.address_space<global>>, vector<4xi32>
// CHECK: memref.load %{{.*}} : memref<8192xi8, #gpu.address_space<global>>
// CHECK-COUNT-16: vector.store %{{.*}} {alignment = 4 : i64} : memref<262144xbf16, #gpu.address_space<global>>, vector<2xbf16>
func.func @fprop(%a: tensor<32768x512xf4E2M1FN>, %sa: tensor<32768x16xf8E8M0FNU>, %b: tensor<512x512xf4E2M1FN>, %sb: tensor<512x16xf8E8M0FNU>) -> tensor<32768x512xbf16> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<32768x512xf4E2M1FN>, tensor<32768x16xf8E8M0FNU>, tensor<512x512xf4E2M1FN>, tensor<512x16xf8E8M0FNU> -> tensor<32768x512xbf16>
  return %c : tensor<32768x512xbf16>
}
