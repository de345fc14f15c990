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

#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"
#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/Kernels.h"

namespace mlir::mxfp4::sm90 {

/// C[M, N] (+)= A[M, K] * B[N, K]^T on FP4 operands with canonical scales.
struct GemmConfig {
  int64_t m, n, k;
  Type resultType; // f32 or bf16
  Type accType;    // null, f32 or bf16
  /// Split K only: the kernel computes this config's C, which is the GEMM's
  /// C transposed (its A and B are the GEMM's B and A), and writes its
  /// partials transposed, to the GEMM's workspace[s][N][M] in this
  /// config's terms. The add-splits kernel is the same either way.
  bool transposedC = false;
  /// Unsplit GEMMs with many row tiles: B is expanded to bf16 once, by
  /// `buildExpandBKernel`, in the GEMM's shared-memory layout, and the GEMM
  /// takes it (a, aScales, expandedB, [acc], c) and bulk-copies its stages
  /// instead of expanding B in every block.
  bool expandedB = false;
};

/// The config whose tiles and splits finish `config`'s GEMM sooner: itself,
/// or where K is split, its transposition (B * A^T) if that leaves fewer
/// super steps to the slowest block (weight gradients whose M is not a
/// multiple of the tile's 256 rows but N is: 1408 x 512 runs as 512 x 1408,
/// 22 whole tiles in 6 splits on the 132 SMs, not 24 in 5); unsplit, with
/// B expanded once where A has at least 8 row tiles and B takes at most
/// 16 MiB as bf16.
GemmConfig chooseGemmVariant(const GemmConfig &config);

/// The MXFP4 GEMM's main-loop unit (a super step): four K steps, one
/// 16-byte load a row and lane; and its B buffers in shared memory, one a
/// K step.
constexpr int64_t kGemmSuperStepK = 4 * kWgStepK;
constexpr int64_t kGemmBStages = 4;
/// An expanded B's stage (`GemmConfig::expandedB`), bytes: 128 rows of 32
/// bf16.
constexpr int64_t kExpandedBStageBytes = kTile * kWgStepK * 2;

/// The GEMM's warpgroups a block (each 64 rows of C's block tile) and
/// threads a block: four on one B tile, each expanding a quarter of it;
/// where B comes expanded, two, and two blocks an SM, so that one block's
/// epilogue (which idles its warpgroups' tensor cores) overlaps the other's
/// MMAs.
int64_t gemmWarpgroups(const GemmConfig &config);
inline int64_t gemmThreads(const GemmConfig &config) {
  return 128 * gemmWarpgroups(config);
}

/// How `config`'s K is split among the GEMM's grid z (TensorCore.h).
KSplit gemmSplit(const GemmConfig &config);

/// Builds `GemmConfig`'s kernel into `module` as `name`. Arguments:
/// (a, aScales, b, bScales, [acc], c), scales canonical. Grid: `gemmBlocks`
/// in x, each looping over the (64 x `gemmWarpgroups`) x 128 tiles of C
/// `gemmBlocks` apart; z:
/// `gemmSplit`'s splits. Split K, the
/// arguments are (a, aScales, b, bScales, workspace): split s writes its
/// f32 partial C to workspace[s][M][N], and the add-splits kernel finishes.
gpu::GPUFuncOp buildGemmKernel(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const GemmConfig &config);
/// C's block tiles, and the blocks that loop over them: one a tile, at
/// most as many as the device keeps resident.
int64_t gemmTiles(const GemmConfig &config);
int64_t gemmBlocks(const GemmConfig &config);

/// Builds the kernel that expands an `expandedB` GEMM's B, (b, bScales,
/// expandedB), to [N tiles][super steps][4 stages] of 128 x 32 bf16 in
/// wgmma's unpadded core-matrix layout (zeros past N and K). 1-D grid.
gpu::GPUFuncOp buildExpandBKernel(OpBuilder &b, Location loc,
                                  gpu::GPUModuleOp module, StringRef name,
                                  const GemmConfig &config);
int64_t expandBBlocks(const GemmConfig &config);
/// The elements of the expanded B.
int64_t expandedBElements(const GemmConfig &config);

/// Builds the kernel that finishes a split GEMM: (workspace, [acc], c),
/// C = (split 0 + split 1 + ...) (+ acc), summed in split order in f32 and
/// then converted to C's type. 1-D grid.
gpu::GPUFuncOp buildAddSplitsKernel(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    const GemmConfig &config);
int64_t addSplitsBlocks(const GemmConfig &config);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_MXFP4TONVGPU_KERNELS_H
