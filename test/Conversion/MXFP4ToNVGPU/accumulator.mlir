// RUN: mxfp4-opt %s --split-input-file --convert-mxfp4-to-nvgpu=mixed=true | FileCheck %s

// The Hopper GEMM adds its accumulator to the finished sum (C = acc + A*B^T,
// one f32 addition): `acc` is a buffer the GEMM kernel reads (a residual
// add that mxfp4-fold-gemm-accumulators moved into the GEMM).
// CHECK-LABEL: func.func @residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<128x64xf32>
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]]
// CHECK: %[[XF:.*]] = memref.collapse_shape %[[XB]]
// CHECK: %[[XG:.*]] = memref.memory_space_cast %[[XF]]
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK-SAME: %[[XG]] : memref<8192xf32, #gpu.address_space<global>>
// CHECK: return
func.func @residual(%x: tensor<128x64xf32>, %a: tensor<128x128xf32>, %b: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %y = mxfp4.scaled_matmul %av scale %as, %bv scale %bs acc(%x) : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// A chain (Dgrad through two weights): the second GEMM accumulates onto the
// first's C, which it reads from the first launch's buffer.
// CHECK-LABEL: func.func @two_gemms(
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32 blocks
// CHECK-SAME: %{{.*}} : memref<8192xf32, #gpu.address_space<global>>)
// CHECK: %[[P:.*]] = bufferization.to_tensor
// CHECK: %[[PB:.*]] = bufferization.to_buffer %[[P]]
// CHECK: %[[PF:.*]] = memref.collapse_shape %[[PB]]
// CHECK: %[[PG:.*]] = memref.memory_space_cast %[[PF]]
// CHECK: gpu.launch_func @mxfp4_kernels::@gemm_128x64x128_f32_accf32 blocks
// CHECK-SAME: %[[PG]] : memref<8192xf32, #gpu.address_space<global>>
// CHECK: return
func.func @two_gemms(%a: tensor<128x128xf32>, %b: tensor<64x128xf32>, %c: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %av, %as = mxfp4.quantize %a axis = 1 : tensor<128x128xf32> -> tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>
  %bv, %bs = mxfp4.quantize %b axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %cv, %cs = mxfp4.quantize %c axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %p = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  %y = mxfp4.scaled_matmul %av scale %as, %cv scale %cs acc(%p) : tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}
