//===- Gfx950StepModel.h - a host function by the issue model ---*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel report's issue model (Target/GFX950/KernelReport.h) applied to
// every launch of one host function of a compiled gfx950 program, in
// program order: modeled microseconds per launch and per kernel, each
// kernel's efficiency against its roofline bound, the modeled step time,
// tokens per second and the device memory the call holds at its peak.
// MODELED, not measured: docs/gfx950.md, "The step by the model", states
// the assumptions.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_GFX950STEPMODEL_H
#define MXFP4_API_GFX950STEPMODEL_H

#include "mxfp4/API/Gfx950.h"
#include "mxfp4/Formats/HostPlan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

struct Gfx950StepModelOptions {
  /// The host function to model.
  std::string function = "train_step";
  /// Tokens one call processes (batch x sequence); 0: unknown, no tokens/s.
  int64_t tokensPerStep = 0;
  /// Assumed: the gap the dispatch of one dependent kernel after another
  /// adds, per launch.
  double launchOverheadMicroseconds = 2.0;
  /// MI355X HBM3E bandwidth, for the roofline bound.
  double hbmBytesPerSecond = 8.0e12;
};

/// One kernel's launches in the function.
struct Gfx950KernelTime {
  std::string name;
  int64_t launches = 0;
  /// Modeled time of all its launches, at the peak and the sustained clock:
  /// per launch the issue model's time (estimateLaunch), or its buffers'
  /// bytes at the HBM bandwidth where that is longer (the issue model
  /// bounds memory by L2 alone).
  double microseconds = 0;
  double sustainedMicroseconds = 0;
  /// The issue model's time alone, at the peak clock, and the launches the
  /// HBM term decided.
  double issueModelMicroseconds = 0;
  int64_t hbmBoundLaunches = 0;
  /// Its roofline time: per launch the larger of its MFMA FLOPs at the
  /// matrix cores' peak for its MFMA and the bytes of its buffer arguments
  /// at the HBM bandwidth, summed.
  double idealMicroseconds = 0;
  /// idealMicroseconds / microseconds.
  double efficiency = 0;
  double mfmaFlops = 0;
  double hbmBytes = 0;
  /// The issue model's bound (mfma, issue, l2, lds; hbm where the HBM term
  /// decided most launches) and the roofline's
  /// (mfma or hbm: which term of the ideal time is larger, summed).
  std::string bound, roofline;
  /// How the steady state's iterations were found: "gemm-shape",
  /// "ir-loops" (the kernel IR's trip counts over the unroll factor),
  /// "no-loop" (straight-line code: one), "kernel-attribute" (the mean
  /// the kernel declares, `mxfp4.steady_iterations`) or
  /// "unknown-trip-count" (a loop whose bounds do not say: one iteration,
  /// an underestimate).
  std::string iterationSource;
  double iterationsPerWave = 0; ///< of its first launch
  int64_t workgroups = 0;       ///< of its first launch
};

struct Gfx950StepModel {
  std::string function;
  int64_t launches = 0;
  /// Sum of the kernels' modeled times, and the launches' overhead.
  double kernelMicroseconds = 0, sustainedKernelMicroseconds = 0;
  double overheadMicroseconds = 0;
  double idealMicroseconds = 0;
  /// kernel + overhead.
  double stepMicroseconds = 0, sustainedStepMicroseconds = 0;
  int64_t tokensPerStep = 0;
  double tokensPerSecond = 0, sustainedTokensPerSecond = 0;
  /// measureHostMemory of the function.
  HostMemory memory;
  /// Kernels, the largest modeled time first.
  std::vector<Gfx950KernelTime> kernels;
  Gfx950StepModelOptions options;
};

/// Models `options.function` of `artifact` (compiled with code objects).
llvm::Expected<Gfx950StepModel>
modelGfx950Step(const Gfx950Artifact &artifact,
                const Gfx950StepModelOptions &options = {});

/// The model as JSON (every field above, "modeled": true) and as a table
/// for people: the totals and the `top` kernels by time.
std::string formatGfx950StepModelJSON(const Gfx950StepModel &model);
std::string formatGfx950StepModelTable(const Gfx950StepModel &model,
                                       size_t top = 10);

} // namespace mlir::mxfp4

#endif // MXFP4_API_GFX950STEPMODEL_H
