// Only Hopper's bf16 tensor cores are targeted.
// RUN: not mxfp4-opt %s --convert-mxfp4-to-nvgpu=chip=sm_80 2>&1 | FileCheck %s
// CHECK: error: convert-mxfp4-to-nvgpu: chip 'sm_80' is not supported; the kernels use sm_90 (Hopper: H100/H200) bf16 tensor cores

func.func @q(%x: tensor<64x64xf32>) -> tensor<64x2xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  return %s : tensor<64x2xf8E8M0FNU>
}
