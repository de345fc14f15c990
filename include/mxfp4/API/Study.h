//===- Study.h - the paper's Table 1 for our setting ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Trains one Llama per (recipe, seed) from the same initial weights and data
// order (Trainer.h) and compares each recipe with the baseline (the first
// recipe) of the same seed: the paired final eval-loss gap, the tokens
// needed to reach the baseline's eval loss at 75% of the schedule, and the
// per-role quantization telemetry. With two or more seeds, each gap has a
// seed spread (the standard deviation of its per-seed gaps) and is a claim
// only where it exceeds it (mxfp4/Train/Convergence.h). A run
// that diverges is recorded as such and the study goes on; the table marks
// the recipes that do not converge (DNC, mxfp4/Train/Convergence.h). The
// table and plot are those of mxfp4-cuda-run study, from one implementation
// (mxfp4/Formats/StudyTable.h).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_STUDY_H
#define MXFP4_API_STUDY_H

#include "mxfp4/API/Trainer.h"
#include "mxfp4/Formats/StudyTable.h"
#include "mxfp4/Train/Convergence.h"

#include <optional>

namespace mlir::mxfp4 {

/// The paper's Table 1 recipes plus the Wgrad-only rotation.
llvm::ArrayRef<llvm::StringRef> getDefaultStudyRecipes();

struct StudyOptions {
  /// Everything but recipe, seed and outDir is taken from here.
  TrainOptions train;
  /// The first is the baseline.
  std::vector<std::string> recipes;
  std::vector<uint64_t> seeds = {1};
  /// A run whose final eval loss is more than this fraction above the
  /// baseline's of the same seed does not converge (DNC), as one that
  /// diverged does not.
  double dncThreshold = kDefaultDncThreshold;
};

struct StudyRow {
  std::string recipe;
  /// Mean over seeds of the final eval loss, and of its gap to the baseline
  /// of the same seed.
  double finalLoss = 0, gap = 0;
  /// The sample standard deviation over seeds of the per-seed gaps (of the
  /// final losses in the baseline's row); NaN with one seed.
  double spread = NAN;
  /// Extra tokens to reach the baseline's eval loss at 75% of the schedule,
  /// relative to the tokens of that step (without held-out losses: to the
  /// baseline's own crossing), averaged over seeds; unset if a run never
  /// reached it.
  std::optional<double> extraTokensFraction;
  std::vector<RoleTelemetry> telemetry;
  double tokensPerSecond = 0, compileSeconds = 0;
  /// Per seed: where the run diverged, if it did, and its final eval loss.
  std::vector<RunOutcome> runs;
  /// Whether a run of some seed diverged, and how many do not converge.
  bool diverged = false;
  int64_t dncRuns = 0;
};

struct StudyReport {
  std::vector<StudyRow> rows;
  int64_t steps = 0, tokensPerStep = 0;
  /// study.md, study.json, study.svg in the study folder.
  std::string tablePath, jsonPath, plotPath;
  std::string table;
};

/// Runs the study into `options.train.outDir`/<recipe>-seed<s>/.
llvm::Expected<StudyReport> runStudy(const StudyOptions &options);

} // namespace mlir::mxfp4

#endif // MXFP4_API_STUDY_H
