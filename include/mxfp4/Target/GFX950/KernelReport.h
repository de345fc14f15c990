//===- KernelReport.h - gfx950 kernel report from assembly ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the gfx950 assembly that gpu-module-to-binary{format=isa} writes and
// reports, per kernel: the register, spill, scratch, LDS and kernarg numbers
// of the code-object metadata; the occupancy they allow; the instruction mix
// of the steady-state loop (the innermost loop containing MFMAs); and what a
// simple issue model predicts for the matrix-core utilisation and the
// throughput. The model and its assumptions are documented in
// docs/gfx950.md, "Kernel report and issue model"; every constant is a field
// of IssueModel.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TARGET_GFX950_KERNELREPORT_H
#define MXFP4_TARGET_GFX950_KERNELREPORT_H

#include "mxfp4/Target/GFX950/CodeObject.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mxfp4::gfx950 {

/// The constants of the issue model. The defaults describe an MI355X.
struct IssueModel {
  // Machine.
  int64_t computeUnits = 256;
  int64_t simdsPerCu = 4;
  /// Peak engine clock (10.07 PF = 256 CU x 16384 FLOP/clk x 2.4 GHz).
  double clockGHz = 2.4;
  /// The clock that reproduces AMD's best measured MXFP4 GEMM: ~94 %
  /// MFMA-busy at ~5.8 PF means 5.8 PF / (0.94 x 256 x 16384 FLOP/clk).
  double sustainedClockGHz = 1.47;
  /// The unified VGPR+AGPR file: registers per lane per SIMD, the
  /// allocation granule, and the wave slots per SIMD.
  int64_t vgprsPerLane = 512;
  int64_t vgprGranule = 8;
  int64_t maxWavesPerSimd = 8;
  /// Workgroups of more than one wave need a barrier; a CU has this many.
  int64_t maxBarrierWorkgroupsPerCu = 16;
  int64_t ldsBytesPerCu = 160 * 1024;

  // Matrix-core occupancy per MFMA with FP4/FP6 operands; either operand in
  // FP8/BF8 multiplies it by fp8Factor.
  int64_t mfma16x16x128Cycles = 16;
  int64_t mfma32x32x64Cycles = 32;
  int64_t fp8Factor = 2;
  /// Other MFMAs by their M dimension (exact for the gfx950 f16/bf16/fp8
  /// shapes, optimistic for f32/f64 ones).
  int64_t otherMfma32Cycles = 32;
  int64_t otherMfma16Cycles = 16;
  int64_t otherMfma4Cycles = 8;

  // Issue cycles (per wave64 instruction) on the SIMD.
  int64_t mfmaIssueCycles = 4;
  int64_t valuCycles = 4;
  int64_t transcendentalCycles = 16;
  int64_t saluCycles = 1;
  int64_t memoryIssueCycles = 1; ///< VMEM, LDS, SMEM
  int64_t waitCycles = 1;        ///< s_waitcnt: latency assumed hidden
  int64_t branchCycles = 1;
  int64_t barrierCycles = 1;

  // Bandwidths per CU.
  double l2BytesPerCycle = 64;
  double ldsBytesPerCycle = 128;

  /// Latency a wave exposes at each barrier of the steady state: the
  /// barrier's synchronization plus the first LDS read after it (ds_read_b128
  /// ~120 cycles) before its MFMAs can start. Other waves on the SIMD hide
  /// it with their MFMAs; with one wave per SIMD nothing does.
  int64_t barrierLatencyCycles = 200;
};

/// The instruction mix of a loop body (one iteration of one wave).
struct LoopMix {
  int64_t mfma16x16x128 = 0; ///< v_mfma[_scale]_f32_16x16x128_f8f6f4
  int64_t mfma32x32x64 = 0;  ///< v_mfma[_scale]_f32_32x32x64_f8f6f4
  int64_t otherMfma = 0;
  int64_t ldsReads = 0;         ///< ds_read*, ds_load*
  int64_t ldsWrites = 0;        ///< ds_write*, ds_store*
  int64_t ldsOther = 0;         ///< ds_bpermute, ds_swizzle, LDS atomics, ...
  int64_t globalLoads = 0;      ///< global_load*, flat_load* (to VGPRs)
  int64_t bufferLoads = 0;      ///< buffer_load* (to VGPRs)
  int64_t directToLdsLoads = 0; ///< global_load_lds_*, buffer_load_* lds
  int64_t globalStores = 0;     ///< global/flat/buffer stores and atomics
  int64_t scratchAccesses = 0;  ///< scratch_* (spills, private arrays)
  int64_t scalarLoads = 0;      ///< s_load*, s_buffer_load*
  int64_t waits = 0;            ///< s_waitcnt*
  int64_t barriers = 0;         ///< s_barrier*
  int64_t valu = 0;             ///< other v_*
  int64_t salu = 0;             ///< other s_*
  int64_t branches = 0;         ///< s_branch, s_cbranch_*, s_setpc, ...
  int64_t other = 0;
  int64_t total = 0;

  /// Bytes per wave (all lanes active).
  int64_t globalBytes = 0; ///< loads (to VGPRs or LDS) and stores
  int64_t ldsReadBytes = 0;
  int64_t ldsWriteBytes = 0; ///< ds writes and direct-to-LDS loads
  int64_t directToLdsBytes = 0;
  int64_t scratchBytes = 0;

  /// Model inputs: matrix-core cycles, SIMD issue cycles (MFMA issue
  /// included) and MFMA floating-point operations.
  int64_t mfmaCycles = 0;
  int64_t issueCycles = 0;
  double mfmaFlops = 0;

  int64_t getMfmaCount() const {
    return mfma16x16x128 + mfma32x32x64 + otherMfma;
  }
};

/// The part of the kernel the throughput model is applied to.
struct SteadyState {
  enum class Scope {
    MfmaLoop,    ///< the innermost loop containing MFMAs
    HottestLoop, ///< no loop has MFMAs: the largest innermost loop
    WholeKernel  ///< no loop: the kernel as straight-line code
  };
  Scope scope = Scope::WholeKernel;
  /// The loop's header label and the assembly lines (1-based) of its first
  /// instruction and of its backward branch.
  std::string label;
  unsigned firstLine = 0;
  unsigned lastLine = 0;
  LoopMix mix;
};

/// llvm::StringRef names: "mfma-loop", "hottest-loop", "whole-kernel".
llvm::StringRef getScopeName(SteadyState::Scope scope);

/// The report of one kernel.
struct KernelReport : KernelMetadata {
  // Occupancy.
  int64_t workgroupSize = 0;
  int64_t wavesPerWorkgroup = 0;
  int64_t workgroupsPerCu = 0;
  int64_t wavesPerCu = 0;
  /// Waves on the busiest SIMD of a full CU (ceil(wavesPerCu / 4)).
  int64_t wavesPerSimd = 0;
  /// What bounds workgroupsPerCu: "vgpr" (registers), "waves" (the wave
  /// slots of a SIMD), "lds", "barriers" or "none" (the kernel does not
  /// fit).
  std::string occupancyLimiter;

  SteadyState steadyState;
  LoopMix wholeKernel;

  // The model for a full CU, per round in which every wave on the busiest
  // SIMD runs one iteration of the steady state.
  double roundMfmaCycles = 0;
  double roundIssueCycles = 0;
  double roundL2Cycles = 0;
  double roundLdsCycles = 0;
  /// Barrier latency not hidden by other waves' MFMAs, added to the round.
  double roundLatencyCycles = 0;
  double roundCycles = 0;
  /// Which of the four terms is the maximum: "mfma", "issue", "l2", "lds".
  std::string bound;
  /// Fraction of cycles the busiest SIMD's matrix core is busy.
  double mfmaBusy = 0;
  /// MFMA throughput of the whole GPU with every CU full, at the peak clock
  /// and at the sustained clock.
  double estimatedTflops = 0;
  double estimatedSustainedTflops = 0;

  /// Spills, scratch, no loop, no MFMA, kernel does not fit, ...
  std::vector<std::string> warnings;
};

/// A launch for which to estimate the tail effect.
struct LaunchShape {
  int64_t workgroups = 0;
  /// The GEMM, or all 0: with a shape, the report also derives the steady
  /// state's iterations per wave and the kernel time.
  int64_t m = 0, n = 0, k = 0;
  /// Without a GEMM shape: the steady state's iterations per wave, where the
  /// caller knows them (1 for a kernel without a loop; a loop's trip count
  /// from the kernel's IR), which gives the kernel time too; 0: unknown.
  double iterationsPerWave = 0;
};

/// The model applied to a whole grid.
struct LaunchEstimate {
  int64_t workgroups = 0;
  int64_t concurrentWorkgroups = 0; ///< computeUnits x workgroupsPerCu
  int64_t rounds = 0;               ///< ceil(workgroups / concurrent)
  /// Work done over work the rounds could have done.
  double tailEfficiency = 0;
  /// 2MNK / (workgroups x wavesPerWorkgroup x mfmaFlops), or the launch's
  /// iterationsPerWave; 0 without either.
  double iterationsPerWave = 0;
  double microseconds = 0;          ///< at the peak clock; 0 without either
  double sustainedMicroseconds = 0; ///< at the sustained clock
  double estimatedTflops = 0;
  double estimatedSustainedTflops = 0;
};

/// Analyses every kernel of the assembly. `sourceName` prefixes errors.
llvm::Expected<std::vector<KernelReport>>
analyzeGfx950Assembly(llvm::StringRef assembly, const IssueModel &model = {},
                      llvm::StringRef sourceName = "<assembly>");

/// Applies the model to a grid of `launch.workgroups` workgroups.
llvm::Expected<LaunchEstimate> estimateLaunch(const KernelReport &report,
                                              const LaunchShape &launch,
                                              const IssueModel &model = {});

/// As above, for every kernel of the assembly, each with the same launch
/// (a module normally holds one kernel).
llvm::Expected<std::vector<std::pair<KernelReport, LaunchEstimate>>>
analyzeGfx950Assembly(llvm::StringRef assembly, const LaunchShape &launch,
                      const IssueModel &model = {},
                      llvm::StringRef sourceName = "<assembly>");

llvm::json::Value toJSON(const LoopMix &mix);
llvm::json::Value toJSON(const KernelReport &report);
llvm::json::Value toJSON(const LaunchEstimate &estimate);
llvm::json::Value toJSON(const IssueModel &model);

/// {"model": {...}, "kernels": [...]}, pretty-printed.
std::string formatJSON(llvm::ArrayRef<KernelReport> reports,
                       const IssueModel &model = {});
/// One human-readable line per kernel.
std::string formatTable(llvm::ArrayRef<KernelReport> reports);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_TARGET_GFX950_KERNELREPORT_H
