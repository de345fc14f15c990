// The GEMM's K loop (K = 1024: 4 steps of 256, double-buffered): wait for
// this step's copies, read every fragment from LDS, then issue the next
// step's copies (only if there is one) and prefetch its scales, then the
// MFMAs; accumulators and scale dwords are loop-carried.
// RUN: mxfp4-opt %s --mxfp4-to-gfx950-kernels=tile=64 | FileCheck %s

// CHECK-LABEL: gpu.func @gemm_64x64x1024_t64x64_f32
// CHECK-SAME: workgroup(%[[LDS:.*]] : memref<32768xi8, #gpu.address_space<workgroup>>)
// CHECK: amdgpu.gather_to_lds
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xi8>, vector<4xi8>)
// CHECK: amdgpu.memory_counter_wait load(0)
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: vector.load %[[LDS]]
// CHECK: scf.if
// CHECK-COUNT-4: amdgpu.gather_to_lds
// CHECK: }
// CHECK-COUNT-2: vector.load {{.*}} vector<4xi8>
// CHECK-COUNT-8: amdgpu.scaled_mfma 16x16x128
// CHECK: scf.yield

func.func @mm(%a: tensor<64x1024xf4E2M1FN>, %sa: tensor<64x32xf8E8M0FNU>, %b: tensor<64x1024xf4E2M1FN>, %sb: tensor<64x32xf8E8M0FNU>) -> tensor<64x64xf32> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<64x1024xf4E2M1FN>, tensor<64x32xf8E8M0FNU>, tensor<64x1024xf4E2M1FN>, tensor<64x32xf8E8M0FNU> -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
