//===- Kernels.h - gfx950 kernel generators ---------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gfx950 parts of convert-mxfp4-to-amdgpu: the scaled-MFMA GEMM, the
// scale shuffle, and the conversion instructions the shared quantize and
// dequantize kernels (../MXFP4ToGPUCommon) use. The GEMM reads E8M0 scales
// pre-shuffled into Triton's layout for 16x16x128 MFMAs,
// gfx950::getShuffledScaleOffset(m16n16k128, ...) in
// mxfp4/Target/GFX950/LaneLayout.h: one dword per lane feeding 2 row
// subtiles x 2 K steps.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H
#define MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/Kernels.h"

#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::mxfp4::gfx950 {

using kernels::kWorkgroupSize;

/// C[M, N] (+)= A[M, K] * B[N, K]^T on FP4 operands.
struct GemmConfig {
  int64_t m, n, k;
  /// Workgroup tile of C; 4 waves in a 2 x 2 grid.
  int64_t tileM = 256, tileN = 256;
  Type resultType;       // f32 or bf16
  Type accType;          // null, f32 or bf16
  /// K split among grid z (AMDGPUCommon's splitK): split s sums K steps
  /// [s * stepsPerSplit, min((s + 1) * stepsPerSplit, K / 256)).
  int64_t splits = 1, stepsPerSplit = 0;
  /// Tests only: a deliberate bug ("lds-swizzle", "scale-byte",
  /// "fragment-row") that the emulation tests must catch.
  std::string testMutation;
};

/// Builds `GemmConfig`'s kernel into `module` as `name`. Arguments:
/// (a, aScalesShuffled, b, bScalesShuffled, [acc], c). Grid: one workgroup
/// per tile in x; split K, `splits` in z and the arguments (a,
/// aScalesShuffled, b, bScalesShuffled, workspace): split s writes its f32
/// partial C to workspace[s][M][N], and the add-splits kernel finishes.
gpu::GPUFuncOp buildGemmKernel(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const GemmConfig &config);
int64_t gemmWorkgroups(const GemmConfig &config);

/// Builds the kernel that finishes a split GEMM: (workspace, [acc], c),
/// C = ((acc + split 0) + split 1) + ... in f32, then converted to C's
/// type; 4 elements a work-item where M N allows. 1-D grid.
gpu::GPUFuncOp buildAddSplitsKernel(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    const GemmConfig &config);
int64_t addSplitsWorkgroups(const GemmConfig &config);

/// Converts one block (vector<32xf32>) to FP4 with 16
/// `v_cvt_scalef32_pk_fp4_f32` (ties to even, saturating): the packed codes
/// (vector<16xi8>) and the scale byte (i32).
std::pair<Value, Value> convertBlock(OpBuilder &b, Location loc, Value block,
                                     ScaleRule rule);

/// Expands one block's packed codes (vector<16xi8>) with 16
/// `v_cvt_scalef32_pk_f32_fp4` under scale byte `byte` (i32 in [1, 254]).
Value expandBlock(OpBuilder &b, Location loc, Value codes, Value byte);

/// The pre-shuffled layout as the shared kernels see it: its size, and the
/// store of one scale byte (padding gets the neutral scale 2^0).
kernels::ScaleLayout getShuffledScaleLayout();

/// The offset of scale (row, kBlock) in the pre-shuffled layout of a scale
/// matrix with `kBlocks` K blocks, as IR: LaneLayout's
/// getShuffledScaleOffset(m16n16k128, ...).
Value emitShuffledScaleOffset(kernels::KernelBuilder &kb, Value row,
                              Value kBlock, int64_t kBlocks);

/// Rewrites canonical scales [rows, kBlocks] into the pre-shuffled layout
/// (for scales that come from outside the function).
gpu::GPUFuncOp buildShuffleScalesKernel(OpBuilder &b, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        int64_t rows, int64_t kBlocks);
int64_t shuffleScalesWorkgroups(int64_t rows, int64_t kBlocks);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELS_H
