// One linear layer's Fprop, Dgrad and Wgrad under fp4-all-dht16 on gfx950:
// each of X, W and dY is read by ONE fused Hadamard+quantize kernel that
// writes both its row-wise copy and its transposed copy (with pre-shuffled
// scales for the GEMMs), then three scaled-MFMA GEMMs.
// RUN: mxfp4-opt %S/../../Recipes/Inputs/linear_fwd_bwd.mlir --mxfp4-apply-recipe=recipe=fp4-all-dht16 \
// RUN:   | mxfp4-opt --mxfp4-to-gfx950-kernels | FileCheck %s

// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @linear_fwd_bwd(%{{.*}}: memref<4096xf32> {mxfp4.tensor = tensor<64x64xf32>}, %{{.*}}: memref<2048xf32> {mxfp4.parameter = "layers.0.mlp.up_proj.weight", mxfp4.tensor = tensor<32x64xf32>}, %{{.*}}: memref<2048xf32> {mxfp4.tensor = tensor<64x32xf32>}, %{{.*}}: i64 {mxfp4.step})
// CHECK-SAME: -> (memref<2048xf32> {mxfp4.tensor = tensor<64x32xf32>}, memref<4096xf32> {mxfp4.tensor = tensor<64x64xf32>}, memref<2048xf32> {mxfp4.tensor = tensor<32x64xf32>})
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_64x64_f32_r_h16d_evenvp_t_h16d_evenvp blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[C256:.*]], %{{.*}}, %{{.*}})
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_32x64_f32_r_h16d_evenvp_t_h16d_evenvp
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_64x32x64_t64x64_f32
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize_64x32_f32_r_h16d_evenvp_t_h16d_evenvp
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_64x64x32_t64x64_f32
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_32x64x64_t64x64_f32
// CHECK-NOT: gpu.launch_func
// CHECK: return

// CHECK: gpu.module @mxfp4_kernels [#rocdl.target<O = 3, chip = "gfx950", abi = "500">]
// The quantize kernel: one load of the source, row-wise blocks in
// registers, the transposed blocks through LDS.
// CHECK-LABEL: gpu.func @quantize_64x64_f32_r_h16d_evenvp_t_h16d_evenvp(
// CHECK-SAME: workgroup(%{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: amdgpu.fat_raw_buffer_cast
// CHECK-COUNT-1: vector.load %{{.*}} : memref<4096xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<32xf32>
// CHECK: vector.reduction <maxsi>
// CHECK-COUNT-16: amdgpu.packed_scaled_trunc
// CHECK: vector.store %{{.*}} : memref<2048xi8, #amdgpu.address_space<fat_raw_buffer>>, vector<16xi8>
// CHECK: vector.store %{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>, vector<32xf32>
// CHECK: gpu.barrier
// CHECK-COUNT-16: amdgpu.packed_scaled_trunc
// CHECK: gpu.return

// The GEMM: direct-to-LDS copies, one scale dword per 2 subtiles x 2 K
// steps, 16x16x128 MFMAs with the scale byte picked per K step and subtile.
// CHECK-LABEL: gpu.func @gemm_64x32x64_t64x64_f32(
// CHECK-SAME: workgroup(%{{.*}} : memref<32768xi8, #gpu.address_space<workgroup>>)
// CHECK: amdgpu.gather_to_lds {{.*}} : vector<4xi32>, memref<2048xi8, #amdgpu.address_space<fat_raw_buffer>>, memref<32768xi8, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.*}} : memref<512xi8, #amdgpu.address_space<fat_raw_buffer>>, vector<4xi8>
// CHECK: amdgpu.memory_counter_wait load(0)
// CHECK: gpu.barrier
// CHECK: amdgpu.scaled_mfma 16x16x128 (%{{.*}}[0] * %{{.*}}) * (%{{.*}}[0] * %{{.*}}) + %{{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
// CHECK: amdgpu.scaled_mfma 16x16x128 (%{{.*}}[1] * %{{.*}}) * (%{{.*}}[0] * %{{.*}})
// CHECK: amdgpu.scaled_mfma 16x16x128 (%{{.*}}[0] * %{{.*}}) * (%{{.*}}[1] * %{{.*}})
// CHECK: amdgpu.scaled_mfma 16x16x128 (%{{.*}}[1] * %{{.*}}) * (%{{.*}}[1] * %{{.*}})
// CHECK: amdgpu.scaled_mfma 16x16x128 (%{{.*}}[2] * %{{.*}}) * (%{{.*}}[2] * %{{.*}})
// CHECK: vector.store %{{.*}} : memref<2048xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<4xf32>
