//===- StudyTable.h - the study's table and plot, without LLVM --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The paper's Table 1 for a study, in standard C++ only: the CPU study
// (mxfp4-run study, lib/API/Study.cpp) and the CUDA runtime's
// (mxfp4-cuda-run study, runtime/) render their study.md and study.svg
// through these, one format for both.
//
// Every recipe is compared with the baseline (the first recipe) of the same
// seed, which started from the same weights and saw the same batches. With
// held-out losses in every run: the final eval loss, its paired gap and the
// tokens to reach the baseline's eval loss at 75% of the run (against the
// tokens of that step). Without, from the training loss: the mean of the
// last 20 steps, its paired gap and the tokens to reach the baseline's
// 20-step mean loss at 75% of the run (against the baseline's own
// crossing). With several seeds each gap has its seed spread and is a claim
// only where it exceeds it; a run that diverged shows as "diverged at step
// N", and a recipe whose runs do not converge as DNC (the rules and their
// wording are mxfp4/Train/Convergence.h's). A study that measured them adds
// per-role quantization telemetry and throughput columns.
//
// study.md is a heading (getStudyHeading) and formatStudyTable's text:
//
//   Llama 'NAME': 800 steps x 32768 tokens = 26.2 M tokens; seeds: 1 2 3
//   Compiler: 81d3c8566ac6
//
//   | recipe | final eval loss (mean of 3 seeds) | gap to bf16 (per seed) |
//     tokens to reach bf16's eval loss at step 600 | seed spread |
//   |---|---|---|---|---|
//   | bf16 | 1.1227 |  | 19.7 M (+0.0%) | 0.0066 |
//   | fp4-all | 1.1711 | +0.0484 (+0.0495, +0.0404, +0.0554) |
//     not within 800 steps (2 of 3 seeds) | 0.0075 |
//
// (one line a row) and the notes that define the columns.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_STUDYTABLE_H
#define MXFP4_FORMATS_STUDYTABLE_H

#include "mxfp4/Formats/Json.h"
#include "mxfp4/Train/Convergence.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// A loss of a run after `step` steps, `tokens` tokens.
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

  /// Adds what the metrics.jsonl record `record` says of the run: its
  /// training or held-out loss, whether the step diverged, what produced
  /// the run.
  void addRecord(const JsonValue &record);
};

/// Telemetry of one GEMM role ("fprop", "dgrad" or "wgrad"), averaged over
/// its quantizations and steps.
struct RoleTelemetry {
  std::string role;
  /// The fraction of values saturated, the fraction of nonzeros quantized to
  /// zero, and the signal-to-quantization-noise ratio.
  double clipped = 0, flushed = 0, sqnrDb = 0;
};

/// A study: every recipe's run of every seed.
struct StudyResults {
  /// The model, as the table's first line names it.
  std::string model;
  /// The first is the baseline.
  std::vector<std::string> recipes;
  std::vector<uint64_t> seeds;
  /// runs[recipe][seed].
  std::vector<std::vector<StudyCurves>> runs;
  int64_t steps = 0, tokensPerStep = 0;
  /// The DNC rule's threshold over the baseline's final loss.
  double dncThreshold = kDefaultDncThreshold;
  /// Per recipe, if the study measured it: the telemetry of each role (the
  /// table then has Fprop, Dgrad and Wgrad columns, "-" for a role without
  /// quantizations).
  std::vector<std::vector<RoleTelemetry>> telemetry;
  /// Per recipe, if the study measured it: the mean training throughput in
  /// tokens per second (a tokens/s column).
  std::vector<double> tokensPerSecond;
};

/// One recipe's row of the table, as numbers.
struct StudyRowNumbers {
  /// Means over seeds of the final loss and of its gap to the baseline's of
  /// the same seed; NaN if a seed has none.
  double finalLoss = 0, gap = 0;
  /// The gap of each seed.
  std::vector<double> gaps;
  /// The seed spread of the gaps (of the final losses in the baseline's
  /// row); NaN with one seed.
  double spread = NAN;
  /// The mean over seeds of the tokens to reach the target loss, and the
  /// number of seeds whose run never reached it.
  double tokens = 0;
  size_t missed = 0;
  /// The tokens relative to the reference (see the file comment), minus 1;
  /// set unless a seed missed the target.
  std::optional<double> extraTokensFraction;
  /// Per seed: where the run diverged, if it did, and its final loss.
  std::vector<RunOutcome> runs;
  /// How many of the runs do not converge.
  int64_t dncRuns = 0;
};

/// What the table shows of a study.
struct StudyNumbers {
  /// Whether losses are held-out (every run that did not diverge evaluated)
  /// or training losses.
  bool heldOut = false;
  /// 75% of the run: the step whose baseline loss is the target.
  double targetStep = 0;
  /// One per recipe.
  std::vector<StudyRowNumbers> rows;
};

/// The heading study.md starts with, before formatStudyTable's text.
inline const char *getStudyHeading() { return "# MXFP4 recipe study\n\n"; }

/// The numbers of `results`' table.
StudyNumbers getStudyNumbers(const StudyResults &results);

/// study.md's table and notes (without its heading).
std::string formatStudyTable(const StudyResults &results);

/// study.svg: each recipe's held-out (else smoothed training) loss curve
/// of the first seed.
std::string renderStudyPlot(const StudyResults &results);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_STUDYTABLE_H
