//===- Study.h - every recipe on every seed ---------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mxfp4-cuda-run study`: trains every compiled recipe on every exported run
// (one a seed) into OUT/<recipe>-seed<seed>/, then writes OUT/study.md and
// OUT/study.svg (mxfp4/Formats/StudyTable.h). A pair whose metrics.jsonl is
// complete is skipped and one cut short continues from its checkpoint, so a
// study spans GPU sessions; with every pair complete it needs no GPU. A pair
// that diverged is complete: the table says where, and the study goes on.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_STUDY_H
#define MXFP4_RUNTIME_CORE_STUDY_H

#include "Device.h"

#include "mxfp4/Train/Convergence.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

struct StudyOptions {
  /// Folders of `mxfp4-run compile --target=T` (plan.txt and the code
  /// object), named for their recipe; the first is the baseline.
  std::vector<std::string> recipeDirs;
  /// Folders of `mxfp4-run train --export-gpu-run`, one a seed.
  std::vector<std::string> runDirs;
  std::string outDir;
  /// The last step (0: the runs').
  int64_t steps = 0;
  /// Checkpoint every N steps (0: at the end of each run only).
  int64_t checkpointEvery = 0;
  /// A run whose final loss is more than this fraction above the
  /// baseline's of the same seed does not converge (DNC).
  double dncThreshold = mlir::mxfp4::kDefaultDncThreshold;
};

/// Trains every recipe compiled for `target` on every run that is not
/// complete (on a device the target opens once the first pair needs one)
/// and tabulates them.
void study(const StudyOptions &options, const DeviceTarget &target);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_STUDY_H
