// Split K where the tiles cannot fill the 256 CUs (one 128 x 128 tile, K =
// 4096: 16 steps of 256, 4 splits of 4 steps, the most whose workspace
// traffic stays within the operands' bytes): the GEMM runs the splits in
// grid z, each from zero over its own K steps, and writes f32 partial tiles
// to a [4][128][128] workspace (a loop of 4 steps whatever the split); a second kernel adds the accumulator and
// then the splits in split order and converts to bf16. A GEMM whose tiles
// fill the device stays one launch.
// RUN: mxfp4-opt %s --convert-mxfp4-to-amdgpu | FileCheck %s

// CHECK-LABEL: func.func @wgrad
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x128x4096_t128x128_split4 blocks in (%{{.*}}, %{{.*}}, %c4) threads in
// CHECK-SAME: args({{.*}} : memref<65536xf32, #gpu.address_space<global>>)
// CHECK: gpu.launch_func @mxfp4_kernels::@add_splits_4x128x128_bf16_accbf16 blocks in
// CHECK-SAME: args(%{{.*}} : memref<65536xf32, {{.*}}>, %{{.*}} : memref<16384xbf16, {{.*}}>, %{{.*}} : memref<16384xbf16, {{.*}}>)

// CHECK-LABEL: func.func @fprop
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_4096x4096x512_t256x256_f32 blocks in
// CHECK-NOT: add_splits
// CHECK: return

// CHECK: gpu.func @gemm_128x128x4096_t128x128_split4(
// CHECK-SAME: %{{.*}}: memref<65536xf32, #gpu.address_space<global>>)
// CHECK: %[[SPLIT:.*]] = gpu.block_id  z
// CHECK: %[[FIRST:.*]] = arith.muli %[[SPLIT]], %{{.*}} : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c4{{.*}} step
// CHECK: arith.addi %[[FIRST]], %[[I]] : index
// CHECK-COUNT-32: amdgpu.scaled_mfma 16x16x128
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store {{.*}} : memref<65536xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<4xf32>
// CHECK: gpu.return

// CHECK: gpu.func @add_splits_4x128x128_bf16_accbf16(
// CHECK: vector.load {{.*}} vector<4xbf16>
// CHECK: %[[ACC:.*]] = arith.extf {{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK: %[[S0:.*]] = vector.load {{.*}} vector<4xf32>
// CHECK: %[[SUM0:.*]] = arith.addf %[[ACC]], %[[S0]]
// CHECK: %[[S1:.*]] = vector.load {{.*}} vector<4xf32>
// CHECK: %[[SUM1:.*]] = arith.addf %[[SUM0]], %[[S1]]
// CHECK: %[[S2:.*]] = vector.load {{.*}} vector<4xf32>
// CHECK: %[[SUM2:.*]] = arith.addf %[[SUM1]], %[[S2]]
// CHECK: %[[S3:.*]] = vector.load {{.*}} vector<4xf32>
// CHECK: %[[SUM3:.*]] = arith.addf %[[SUM2]], %[[S3]]
// CHECK: %[[OUT:.*]] = arith.truncf %[[SUM3]] : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[OUT]]

func.func @wgrad(%a: tensor<128x4096xf4E2M1FN>, %sa: tensor<128x128xf8E8M0FNU>, %b: tensor<128x4096xf4E2M1FN>, %sb: tensor<128x128xf8E8M0FNU>, %c0: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb acc(%c0) : tensor<128x4096xf4E2M1FN>, tensor<128x128xf8E8M0FNU>, tensor<128x4096xf4E2M1FN>, tensor<128x128xf8E8M0FNU> -> tensor<128x128xbf16>
  return %c : tensor<128x128xbf16>
}

func.func @fprop(%a: tensor<4096x512xf4E2M1FN>, %sa: tensor<4096x16xf8E8M0FNU>, %b: tensor<4096x512xf4E2M1FN>, %sb: tensor<4096x16xf8E8M0FNU>) -> tensor<4096x4096xf32> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<4096x512xf4E2M1FN>, tensor<4096x16xf8E8M0FNU>, tensor<4096x512xf4E2M1FN>, tensor<4096x16xf8E8M0FNU> -> tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
