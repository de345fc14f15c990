// RUN: mxfp4-opt %s -mxfp4-to-gfx950-kernels="mixed=true gemm-precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: mxfp4-opt %s -mxfp4-to-gfx950-kernels="mixed=true" | FileCheck %s --check-prefix=F32

// gemm-precision=bf16: the f32 operands are rounded to bf16 on tensors
// (mxfp4-round-matmul-operands, shared with sm_90a), then the matmul runs
// on bf16 MFMAs (convert-linalg-matmul-to-amdgpu): the zero fill is gone,
// W (K not innermost) is packed K-major, X is read in place.
// BF16-LABEL: func.func @linear
// BF16-COUNT-4: gpu.launch_func
// BF16-NOT: gpu.launch_func
// BF16: gpu.module @mxfp4_kernels
// BF16-COUNT-2: arith.truncf %{{.*}} : f32 to bf16
// BF16: amdgpu.mfma 16x16x32
// The default keeps the CPU path's f32 numerics: one generic contraction
// kernel (the fill folded into it), no MFMA.
// F32-LABEL: func.func @linear
// F32-COUNT-1: gpu.launch_func
// F32-NOT: gpu.launch_func
// F32-NOT: amdgpu.mfma
func.func @linear(%x: tensor<300x256xf32>, %w: tensor<256x200xf32>) -> tensor<300x200xf32> {
  %e = tensor.empty() : tensor<300x200xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<300x200xf32>) -> tensor<300x200xf32>
  %y = linalg.matmul ins(%x, %w : tensor<300x256xf32>, tensor<256x200xf32>) outs(%z : tensor<300x200xf32>) -> tensor<300x200xf32>
  return %y : tensor<300x200xf32>
}
