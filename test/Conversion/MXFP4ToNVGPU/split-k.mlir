// RUN: mxfp4-opt %s --split-input-file --convert-mxfp4-to-nvgpu | FileCheck %s

// A weight gradient (8 tiles of 256 x 128 of C, K = 32768 tokens): too
// few tiles for the H200's 132 SMs (one block an SM), so K is split 16 ways
// (64 K steps, 16 super steps of four, each) along grid z.
// The splits' f32 partial products go to a workspace [16][512][512], and a
// second launch adds them in split order, then the accumulator (bf16,
// widened), and rounds to bf16.
// CHECK-LABEL: func.func @wgrad(
// CHECK-SAME: %[[A:[^:]*]]: memref<8388608xi8> {mxfp4.tensor = tensor<512x32768xf4E2M1FN>}
// CHECK-SAME: %[[ACC:[^:]*]]: memref<262144xbf16> {mxfp4.tensor = tensor<512x512xbf16>}
// CHECK: %[[C:.*]] = memref.alloc() : memref<262144xbf16>
// CHECK: %[[WS:.*]] = memref.alloc() : memref<4194304xf32>
// CHECK: %[[A_G:.*]] = memref.memory_space_cast %[[A]]
// CHECK: %[[WS_G:.*]] = memref.memory_space_cast %[[WS]]
// CHECK: %[[X:.*]] = arith.constant 8 : index
// CHECK: %[[Z:.*]] = arith.constant 16 : index
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_512x512x32768_split16 blocks in (%[[X]], %{{.*}}, %[[Z]]) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[A_G]] : {{.*}}, %[[WS_G]] : memref<4194304xf32, #gpu.address_space<global>>)
// CHECK: %[[WS_G2:.*]] = memref.memory_space_cast %[[WS]]
// CHECK: %[[ACC_G:.*]] = memref.memory_space_cast %[[ACC]]
// CHECK: %[[C_G:.*]] = memref.memory_space_cast %[[C]]
// CHECK: %[[BLOCKS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @mxfp4_kernels::@add_splits_16x512x512_bf16_accbf16 blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[WS_G2]] : memref<4194304xf32, #gpu.address_space<global>>, %[[ACC_G]] : memref<262144xbf16, #gpu.address_space<global>>, %[[C_G]] : memref<262144xbf16, #gpu.address_space<global>>)
// CHECK: return %[[C]]
// The GEMM: split z sums super steps [16 z, 16 z + 16) and stores its f32
// partial tile at z * 512 * 512 in the workspace.
// CHECK: gpu.func @gemm_512x512x32768_split16(%{{.*}}, %[[OUT:[^:]*]]: memref<4194304xf32, #gpu.address_space<global>>)
// CHECK: %[[SPLIT:.*]] = gpu.block_id  z
// CHECK: %[[FIRST:.*]] = arith.muli %[[SPLIT]], %c16
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %c16
// CHECK: %[[LAST:.*]] = arith.minui %[[END]], %c256
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[LAST]]
// CHECK: llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async
// CHECK: scf.yield
// CHECK: %[[SLICE:.*]] = arith.muli %[[SPLIT]], %c262144
// CHECK: %[[AT:.*]] = arith.addi %[[SLICE]], %{{.*}}
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[AT]]] {alignment = 8 : i64} : memref<4194304xf32, #gpu.address_space<global>>, vector<2xf32>
// The ordered add: four elements a thread, the 16 splits, the accumulator,
// the rounding to bf16.
// CHECK: gpu.func @add_splits_16x512x512_bf16_accbf16(%[[W:[^:]*]]: memref<4194304xf32, #gpu.address_space<global>>, %[[P:[^:]*]]: memref<262144xbf16, #gpu.address_space<global>>, %[[R:[^:]*]]: memref<262144xbf16, #gpu.address_space<global>>)
// CHECK: %[[S0:.*]] = vector.load %[[W]][%[[I:.*]]] {alignment = 16 : i64} : memref<4194304xf32, #gpu.address_space<global>>, vector<4xf32>
// CHECK: %[[S1:.*]] = vector.load %[[W]]
// CHECK: %[[SUM:.*]] = arith.addf %[[S0]], %[[S1]] : vector<4xf32>
// CHECK-COUNT-14: vector.load %[[W]]
// CHECK: %[[PRIOR:.*]] = vector.load %[[P]][%[[I]]] {alignment = 8 : i64} : memref<262144xbf16, #gpu.address_space<global>>, vector<4xbf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[PRIOR]] : vector<4xbf16> to vector<4xf32>
// CHECK: %[[TOTAL:.*]] = arith.addf %[[WIDE]], %{{.*}} : vector<4xf32>
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[TOTAL]] : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[ROUNDED]], %[[R]][%[[I]]] {alignment = 8 : i64} : memref<262144xbf16, #gpu.address_space<global>>, vector<4xbf16>
func.func @wgrad(%a: tensor<512x32768xf4E2M1FN>, %sa: tensor<512x1024xf8E8M0FNU>, %b: tensor<512x32768xf4E2M1FN>, %sb: tensor<512x1024xf8E8M0FNU>, %acc: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb acc(%acc) : tensor<512x32768xf4E2M1FN>, tensor<512x1024xf8E8M0FNU>, tensor<512x32768xf4E2M1FN>, tensor<512x1024xf8E8M0FNU> -> tensor<512x512xbf16>
  return %c : tensor<512x512xbf16>
}

// -----

// 1408 x 512 would be 24 tiles (the sixth row of 256 half empty): 5
// splits fill 120 of the 132 block slots, 52 super steps a split. Its
// transposition, C^T = B * A^T, is 512 x 1408: 22 whole tiles, 6 splits
// fill all 132, 43 super steps a split. So the kernel takes B's operands
// first and writes its partials transposed, at C's [1408][512] places in
// the workspace; the add-splits kernel is the same.
// CHECK-LABEL: func.func @wgrad_ragged_splits(
// CHECK-SAME: %[[A:[^:]*]]: memref<23068672xi8>
// CHECK-SAME: %[[SA:[^:]*]]: memref<1441792xi8>
// CHECK-SAME: %[[B:[^:]*]]: memref<8388608xi8>
// CHECK-SAME: %[[SB:[^:]*]]: memref<524288xi8>
// CHECK: memref.alloc() : memref<4325376xf32>
// CHECK: %[[B_G:.*]] = memref.memory_space_cast %[[B]]
// CHECK: %[[SB_G:.*]] = memref.memory_space_cast %[[SB]]
// CHECK: %[[A_G:.*]] = memref.memory_space_cast %[[A]]
// CHECK: %[[SA_G:.*]] = memref.memory_space_cast %[[SA]]
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_512x1408x32768_split6_transposed blocks in (%c22, %{{.*}}, %c6) threads in (%{{.*}}) args(%[[B_G]] : {{.*}}, %[[SB_G]] : {{.*}}, %[[A_G]] : {{.*}}, %[[SA_G]] : {{.*}}, %{{.*}} : memref<4325376xf32, #gpu.address_space<global>>)
// CHECK: gpu.launch_func @mxfp4_kernels::@add_splits_6x1408x512_f32
// CHECK: gpu.func @gemm_512x1408x32768_split6_transposed(%{{.*}}, %[[OUT:[^:]*]]: memref<4325376xf32, #gpu.address_space<global>>)
// CHECK: arith.muli %{{.*}}, %c43
// CHECK: arith.minui
// C^T's element (row, col) goes to col * 512 + row of the split's slice:
// one f32 at a time.
// CHECK: scf.yield
// CHECK: %[[COL:.*]] = arith.muli %{{.*}}, %c512
// CHECK: %[[AT:.*]] = arith.addi %[[COL]], %{{.*}}
// CHECK: %[[SLOT:.*]] = arith.addi %{{.*}}, %[[AT]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[SLOT]]] : memref<4325376xf32, #gpu.address_space<global>>
func.func @wgrad_ragged_splits(%a: tensor<1408x32768xf4E2M1FN>, %sa: tensor<1408x1024xf8E8M0FNU>, %b: tensor<512x32768xf4E2M1FN>, %sb: tensor<512x1024xf8E8M0FNU>) -> tensor<1408x512xf32> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<1408x32768xf4E2M1FN>, tensor<1408x1024xf8E8M0FNU>, tensor<512x32768xf4E2M1FN>, tensor<512x1024xf8E8M0FNU> -> tensor<1408x512xf32>
  return %c : tensor<1408x512xf32>
}

// -----

// An unsplit GEMM (1024 tiles) whose B is too large to expand once (32 MiB
// as bf16; expanded-b.mlir): one launch that sums all of K in order, as the
// CPU does (no workspace, no second launch). One block an SM (132) loops
// over the tiles, carrying the next tile's first super step (three rows'
// codes, then their words of four steps' scales) into each tile's loop over
// K's eight super steps.
// CHECK-LABEL: func.func @unsplit(
// CHECK-NOT: memref<{{[0-9]+}}xf32>
// CHECK: %[[BLOCKS:.*]] = arith.constant 132 : index
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_2048x16384x1024_bf16 blocks in (%[[BLOCKS]], %[[ONE:[^,]*]], %[[ONE]]) threads
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @gemm_2048x16384x1024_bf16
// CHECK-NOT: gpu.block_id  z
// CHECK: %[[X:.*]] = gpu.block_id  x
// CHECK: scf.for %{{.*}} = %[[X]] to %c1024 step %c132 iter_args({{.*}}) -> (vector<4xi32>, vector<4xi32>, vector<4xi32>, i32, i32, i32)
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8
// Whole tiles: the loads are unguarded, the last super step's prefetch
// clamped to the last one.
// CHECK-NOT: arith.select
// CHECK: arith.minui %{{.*}}, %{{.*}} : index
// C in 16-byte chunks: each quad of lanes transposes its pairs in two
// exchanges, and a lane stores eight adjacent bf16.
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<33554432xbf16, #gpu.address_space<global>>, vector<8xbf16>
// CHECK-NOT: add_splits
func.func @unsplit(%a: tensor<2048x1024xf4E2M1FN>, %sa: tensor<2048x32xf8E8M0FNU>, %b: tensor<16384x1024xf4E2M1FN>, %sb: tensor<16384x32xf8E8M0FNU>) -> tensor<2048x16384xbf16> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<2048x1024xf4E2M1FN>, tensor<2048x32xf8E8M0FNU>, tensor<16384x1024xf4E2M1FN>, tensor<16384x32xf8E8M0FNU> -> tensor<2048x16384xbf16>
  return %c : tensor<2048x16384xbf16>
}
