//===- Kernels.h - gfx950 kernel generators ---------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Generators of the gfx950 kernels that convert-mxfp4-to-amdgpu launches.
// Each builds one `gpu.func` for fully static shapes. Kernel arguments are
// 1-D memrefs in the global address space (one pointer each with the
// bare-pointer calling convention); the data ABI is in docs/gfx950.md:
//
//   FP4 values   [rows][cols / 2] bytes, element 2j in the low nibble
//   E8M0 scales  [rows][cols / 32] bytes (canonical), plus the pre-shuffled
//                copy the GEMM reads: Triton's layout for 16x16x128 MFMAs,
//                gfx950::getShuffledScaleOffset(m16n16k128, ...) in
//                mxfp4/Target/GFX950/LaneLayout.h, one dword per lane
//                feeding 2 row subtiles x 2 K steps
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H
#define MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"
#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::mxfp4::gfx950 {

/// Threads per workgroup of every kernel: 4 waves of 64.
constexpr int64_t kWorkgroupSize = 256;

/// C[M, N] (+)= A[M, K] * B[N, K]^T on FP4 operands.
struct GemmConfig {
  int64_t m, n, k;
  /// Workgroup tile of C; 4 waves in a 2 x 2 grid.
  int64_t tileM = 256, tileN = 256;
  Type resultType;       // f32 or bf16
  Type accType;          // null, f32 or bf16
  /// Tests only: a deliberate bug ("lds-swizzle", "scale-byte",
  /// "fragment-row") that the emulation tests must catch.
  std::string testMutation;
};

/// Builds `GemmConfig`'s kernel into `module` as `name`. Arguments:
/// (a, aScalesShuffled, b, bScalesShuffled, [acc], c). Grid: one workgroup
/// per tile, 1-D.
gpu::GPUFuncOp buildGemmKernel(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const GemmConfig &config);
int64_t gemmWorkgroups(const GemmConfig &config);

/// The rotation a quantize kernel applies before quantizing.
struct RotationConfig {
  int64_t size = 0; // 0: none
  HadamardKind kind = HadamardKind::deterministic;
  bool inverse = false;
  bool roundToBF16 = false; // the hadamard's result type is bf16
};

/// One quantization of the source: along rows (each row's columns blocked
/// by 32) or of its transpose (each column's rows blocked).
struct QuantizeJob {
  bool transposed = false;
  RotationConfig rotation;
  ScaleRule rule = ScaleRule::even;
  /// Stochastic rounding with the CPU's Philox words (seed and counter are
  /// kernel arguments), instead of the conversion instruction's RNE.
  bool stochastic = false;
  bool values = true, scales = true, shuffledScales = false;
};

/// Quantizes a [rows, cols] source (f32 or bf16) with one or two jobs (at
/// most one per orientation) in one read of the source. Arguments: source,
/// then per job its outputs in order values, scales, shuffledScales (those
/// enabled), then for each job with a random rotation its seed and, for
/// `random_per_step`, its step (i64): the signs are drawn in the kernel;
/// then for each stochastic job its seed and counter (i64).
struct QuantizeConfig {
  int64_t rows, cols;
  Type sourceType;
  SmallVector<QuantizeJob, 2> jobs;
};
gpu::GPUFuncOp buildQuantizeKernel(OpBuilder &b, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const QuantizeConfig &config);
int64_t quantizeWorkgroups(const QuantizeConfig &config);

/// Expands [rows, cols] FP4 values with canonical scales to f32 or bf16.
struct DequantizeConfig {
  int64_t rows, cols;
  Type resultType;
};
gpu::GPUFuncOp buildDequantizeKernel(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const DequantizeConfig &config);
int64_t dequantizeWorkgroups(const DequantizeConfig &config);

/// Rewrites canonical scales [rows, kBlocks] into the pre-shuffled layout
/// (for scales that come from outside the function).
gpu::GPUFuncOp buildShuffleScalesKernel(OpBuilder &b, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        int64_t rows, int64_t kBlocks);
int64_t shuffleScalesWorkgroups(int64_t rows, int64_t kBlocks);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H
