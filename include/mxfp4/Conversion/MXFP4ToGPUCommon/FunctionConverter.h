//===- FunctionConverter.h - mxfp4 functions to kernel launches -*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host side that convert-mxfp4-to-amdgpu and convert-mxfp4-to-nvgpu
// share: which ops a function may hold, how quantizations of one source are
// grouped into one kernel, device buffers and launches. A target supplies
// its GEMM and its conversion instructions through `KernelTarget`.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOGPUCOMMON_FUNCTIONCONVERTER_H
#define MXFP4_CONVERSION_MXFP4TOGPUCOMMON_FUNCTIONCONVERTER_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/Kernels.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::mxfp4::kernels {

/// A kernel and how to launch it: a grid of blocks x 1 x gridZ, 1-D blocks.
struct KernelLaunch {
  gpu::GPUFuncOp kernel;
  int64_t blocks;
  int64_t threads = kWorkgroupSize;
  int64_t gridZ = 1;
};

/// How a GEMM runs: one launch, or where `addSplits` is set, K split among
/// `gemm`'s grid z: `gemm` takes (a, aScales, b, bScales, workspace) and
/// writes split s's f32 partial C to workspace[s][m][n], then `addSplits`
/// takes (workspace, [acc], c) and finishes C.
struct GemmLaunch {
  KernelLaunch gemm;
  std::optional<KernelLaunch> addSplits = std::nullopt;
  /// `gemm` takes (b, bScales, a, aScales, ...): it computes C transposed.
  bool swapOperands = false;
  /// Where set, runs first on (b, bScales, expanded), a buffer of
  /// `expandedElements` bf16, and `gemm` takes (a, aScales, expanded, ...).
  std::optional<KernelLaunch> expandB = std::nullopt;
  int64_t expandedElements = 0;
};

/// C[m, n] (+)= A[m, k] * B[n, k]^T on FP4 operands with E8M0 scales.
struct GemmShape {
  int64_t m, n, k;
  Type resultType; // f32 or bf16
  Type accType;    // null, f32 or bf16
};

/// What the shared host-side conversion needs from a target.
struct KernelTarget {
  /// The prefix of diagnostics ("gfx950", "sm_90a").
  std::string name;
  BoundsMode bounds = BoundsMode::guarded;
  /// Whether the quantize kernel stages its reads and writes in workgroup
  /// memory (QuantizeConfig::staged).
  bool stageQuantize = false;
  BlockConverter convertBlock;
  BlockExpander expandBlock;
  /// The layout the GEMM reads scales in, if not the canonical one
  /// (gfx950: pre-shuffled).
  ScaleLayout gemmScaleLayout;
  /// Finds or builds the GEMM kernels for `shape` in `module`. Arguments:
  /// (a, aScales, b, bScales, [acc], c), unless K is split (`GemmLaunch`).
  std::function<GemmLaunch(OpBuilder &, Location, gpu::GPUModuleOp,
                           const GemmShape &)>
      gemm;
  /// With `gemmScaleLayout`: finds or builds the kernel that rewrites
  /// canonical scales [rows, kBlocks] into that layout.
  std::function<KernelLaunch(OpBuilder &, Location, gpu::GPUModuleOp,
                             int64_t rows, int64_t kBlocks)>
      convertScales;
};

/// Converts every function of `module` that holds mxfp4 ops, putting the
/// kernels in a new `gpu.module` with `targetAttr`. Strict mode: functions
/// made only of mxfp4 ops (and the transposes and rotations feeding them)
/// become flat host functions of device buffers. Mixed mode: mxfp4 ops
/// become launches on buffers bridged from the surrounding tensor code.
LogicalResult convertMXFP4Functions(ModuleOp module, const KernelTarget &target,
                                    Attribute targetAttr, bool mixed);

} // namespace mlir::mxfp4::kernels

#endif // MXFP4_CONVERSION_MXFP4TOGPUCOMMON_FUNCTIONCONVERTER_H
