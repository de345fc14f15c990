//===- study_table.h - the study's table and plot ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The paper's Table 1 for a GPU study: every recipe against the baseline
// (the first) of the same seed, which started from the same weights and saw
// the same batches. With held-out losses in every run, as the CPU study
// (lib/API/Study.cpp): the final eval loss, its paired gap and the extra
// tokens to reach the baseline's eval loss at 75% of the run. Without, from
// the training loss: the mean of the last 20 steps, its paired gap and the
// tokens to reach the baseline's 20-step mean loss at 75% of the run. A
// run that diverged shows as "diverged at step N", and a recipe whose runs
// do not converge (include/mxfp4/Train/Convergence.h) as DNC, in the CPU
// study's words.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_STUDY_TABLE_H
#define MXFP4_RUNTIME_CUDA_STUDY_TABLE_H

#include "metrics.h"

#include "mxfp4/Train/Convergence.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

/// A loss at a step.
struct LossPoint {
  int64_t step = 0;
  double tokens = 0, loss = 0;
};

/// The curves of one (recipe, seed) run.
struct StudyCurves {
  std::vector<LossPoint> train, eval;
  /// The step the run diverged at, if it did.
  std::optional<int64_t> divergedAt;
  /// The compiler's commit its first record names ("unknown" if it has no
  /// such record: written before runs recorded it).
  std::string commit = "unknown";
};

/// The curves in `records`.
StudyCurves getStudyCurves(const std::vector<MetricsRecord> &records);

struct StudyResults {
  std::string model;
  std::vector<std::string> recipes; // the first is the baseline
  std::vector<uint64_t> seeds;
  std::vector<std::vector<StudyCurves>> runs; // [recipe][seed]
  int64_t steps = 0, tokensPerStep = 0;
  /// The DNC rule's threshold over the baseline's final loss.
  double dncThreshold = mlir::mxfp4::kDefaultDncThreshold;
};

/// study.md's table and notes.
std::string formatStudyTable(const StudyResults &results);

/// study.svg: each recipe's held-out (else smoothed training) loss curve
/// of the first seed.
std::string renderStudyPlot(const StudyResults &results);

#endif // MXFP4_RUNTIME_CUDA_STUDY_TABLE_H
