// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-linalg-matmul-to-nvgpu,cse))" | FileCheck %s

// A linear layer's GEMM (weights [out, in], both operands K-major): the
// bf16 copies get TMA tensor maps on the host (boxes of 128 and 256 rows by
// 64 K, 128-byte swizzle), passed to the kernel as pointers. In the kernel a
// producer warpgroup gives up registers and one thread loads each K step of
// both operands under a `full` barrier once its `empty` barrier allows;
// the two consumer warpgroups take the registers, wait for a full stage,
// issue four m64n256k16 MMAs on swizzled descriptors, keep one group in
// flight and release the previous stage, and the item's last one after
// it. Blocks are persistent: each walks work items (here 8 tiles, 8
// blocks) with the ring's position carried from item to item.
//
// C is added to: it gets a tensor map of its own (f32, boxes of 64 rows by
// 32 columns) and each consumer warpgroup two 8 KiB staging boxes after the
// ring, each with an mbarrier. During the tile's first MMAs the consumer's
// first thread waits until the previous tile's stores have read the boxes
// and loads C's first two boxes. Per box the warpgroup waits for its load,
// adds the sum's pairs to C's at swizzled places, fences them for the async
// proxy and syncs on its named barrier (1 + consumer); the first
// thread issues the TMA store, waits until it has read the box and loads
// the box two ahead into it.
// CHECK-LABEL: func.func @linear
// CHECK: %[[XH:.*]] = memref.alloc() : memref<512x256xbf16>
// CHECK: %[[WH:.*]] = memref.alloc() : memref<512x256xbf16>
// CHECK: %[[XC:.*]] = memref.cast %[[XH]] : memref<512x256xbf16> to memref<*xbf16>
// CHECK: %[[XM:.*]] = nvgpu.tma.create.descriptor %[[XC]] box[%c128, %c64] : memref<*xbf16> -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[XP:.*]] = builtin.unrealized_conversion_cast %[[XM]] : {{.*}} to !llvm.ptr
// CHECK: %[[WC:.*]] = memref.cast %[[WH]] : memref<512x256xbf16> to memref<*xbf16>
// CHECK: %[[WM:.*]] = nvgpu.tma.create.descriptor %[[WC]] box[%c256, %c64]
// CHECK: %[[WP:.*]] = builtin.unrealized_conversion_cast %[[WM]] : {{.*}} to !llvm.ptr
// CHECK: %[[CC:.*]] = memref.cast %{{.*}} : memref<512x512xf32> to memref<*xf32>
// CHECK: %[[CM:.*]] = nvgpu.tma.create.descriptor %[[CC]] box[%c64, %c32] : memref<*xf32> -> <tensor = memref<64x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[CP:.*]] = builtin.unrealized_conversion_cast %[[CM]] : {{.*}} to !llvm.ptr
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c230496_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: gpu.barrier
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8 step %c8 iter_args
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[XP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[WP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[CP]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[CP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[CP]]
// CHECK-NOT: vector.load %{{.*}} : memref<512x512xf32>
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<512x256xf32>, %w: memref<512x256xf32>, %y: memref<512x512xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  return
}

// -----

// The same GEMM where C starts as zeros (the fill goes): the kernel writes C
// through a tensor map of its own (f32, boxes of 64 rows by 32 columns,
// clipped at the ragged edges), after the ring two 8 KiB boxes a consumer
// warpgroup. Per box of 32 columns its first thread waits until at most one
// earlier store still reads shared memory, the warpgroup syncs on its named
// barrier (1 + consumer), stores its pairs at swizzled places (chunk XOR row
// mod 8), fences them for the async proxy and syncs again; the first thread
// issues the TMA store and commits it. The MMAs of the next tile start while
// the stores drain; before the block ends its stores have read their boxes.
// CHECK-LABEL: func.func @linear_written
// CHECK-NOT: linalg.fill
// CHECK: %[[CC:.*]] = memref.cast %{{.*}} : memref<500x300xf32> to memref<*xf32>
// CHECK: %[[CM:.*]] = nvgpu.tma.create.descriptor %[[CC]] box[%c64, %c32] : memref<*xf32> -> <tensor = memref<64x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[CP:.*]] = builtin.unrealized_conversion_cast %[[CM]] : {{.*}} to !llvm.ptr
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %c230464_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %[[ID:.*]] number_of_threads = %c128_i32
// CHECK: arith.xori
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[CP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-7: nvvm.cp.async.bulk.tensor.global.shared.cta %[[CP]]
// CHECK-NOT: vector.store
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.terminator
func.func @linear_written(%x: memref<500x256xf32>, %w: memref<300x256xf32>, %y: memref<500x300xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<500x300xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<500x256xf32>, memref<300x256xf32>) outs(%y : memref<500x300xf32>)
  return
}

// -----

// Attention's P V (batched, V's rows contiguous: N-major): rank-3 maps with
// a batch box of 1; V's box is 64 rows by 64 K, and the MMAs read B
// transposed. N = 64 takes the 128-column tile; the 64 work items (4 tiles
// of each of 16 batches) take 64 blocks.
// CHECK-LABEL: func.func @pv
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c128, %c64] : memref<*xbf16> -> <tensor = memref<1x128x64xbf16
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c64, %c64] : memref<*xbf16> -> <tensor = memref<1x64x64xbf16
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c164960_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
func.func @pv(%p: memref<16x512x512xf32>, %v: memref<16x512x64xf32>, %o: memref<16x512x64xf32>) {
  linalg.batch_matmul ins(%p, %v : memref<16x512x512xf32>, memref<16x512x64xf32>) outs(%o : memref<16x512x64xf32>)
  return
}

// -----

// A weight gradient (both operands M- / N-major, K = tokens): 4 tiles cannot
// fill the device, so K splits 16 ways into a workspace (one block an SM:
// 64 work items) that a second launch adds to the output in split order.
// CHECK-LABEL: func.func @wgrad
// CHECK: %[[WS:.*]] = memref.alloc() : memref<16x1x256x512xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK: vector.store %{{.*}}, %[[WS]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<16x1x256x512xf32>, vector<2xf32>
// CHECK: gpu.launch
// CHECK-COUNT-16: vector.load %[[WS]]
func.func @wgrad(%dy: memref<8192x256xf32>, %x: memref<8192x512xf32>, %dw: memref<256x512xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : memref<8192x256xf32>, memref<8192x512xf32>) outs(%dw : memref<256x512xf32>)
  return
}

// -----

// A bf16 operand whose view starts 4 elements in: its address is not
// 16-byte aligned, so no tensor map can describe it and the register-staged
// kernel (matmul.mlir) takes the GEMM.
// CHECK-LABEL: func.func @unaligned
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>
func.func @unaligned(%x: memref<256x260xbf16>, %w: memref<256x256xbf16>, %y: memref<256x256xf32>) {
  %xs = memref.subview %x[0, 4] [256, 256] [1, 1] : memref<256x260xbf16> to memref<256x256xbf16, strided<[260, 1], offset: 4>>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xs, %w : memref<256x256xbf16, strided<[260, 1], offset: 4>>, memref<256x256xbf16>) outs(%y : memref<256x256xf32>)
  return
}
