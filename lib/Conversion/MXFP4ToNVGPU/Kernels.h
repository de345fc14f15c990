//===- Kernels.h - sm_90a kernel generators ---------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The NVIDIA parts of convert-mxfp4-to-nvgpu: the GEMM on bf16 tensor cores.
// Quantize and dequantize are the shared kernels of ../MXFP4ToGPUCommon
// with guarded memory access and the CPU path's integer conversions.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TONVGPU_KERNELS_H
#define MXFP4_LIB_CONVERSION_MXFP4TONVGPU_KERNELS_H

#include "../MXFP4ToGPUCommon/Kernels.h"

namespace mlir::mxfp4::sm90 {

/// C[M, N] (+)= A[M, K] * B[N, K]^T on FP4 operands with canonical scales.
struct GemmConfig {
  int64_t m, n, k;
  Type resultType; // f32 or bf16
  Type accType;    // null, f32 or bf16
};

/// Builds `GemmConfig`'s kernel into `module` as `name`. Arguments:
/// (a, aScales, b, bScales, [acc], c), scales canonical. Grid: one block
/// per 128 x 128 tile of C, 1-D.
gpu::GPUFuncOp buildGemmKernel(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const GemmConfig &config);
int64_t gemmBlocks(const GemmConfig &config);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_MXFP4TONVGPU_KERNELS_H
