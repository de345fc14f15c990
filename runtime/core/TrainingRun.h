//===- TrainingRun.h - a run exported for the GPU ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_TRAINING_RUN_H
#define MXFP4_RUNTIME_CORE_TRAINING_RUN_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A run exported by `mxfp4-run train --export-gpu-run=DIR`
/// (mxfp4/Formats/TrainingRun.h): run.txt, the initial parameters
/// param<i>.npy, every step's batch in batches.bin and the held-out batches
/// in eval.bin. Runs exported before held-out batches travelled have no
/// eval_every and eval_batches: they train without evaluating.
struct TrainingRun {
  std::string dir;
  /// The text of run.txt, which identifies the run in checkpoints.
  std::string manifest;
  int64_t steps = 0, batch = 0, window = 0, tokenBytes = 4;
  uint64_t seed = 0;
  double initStd = 0;
  /// Evaluate every `evalEvery` steps (0: only at the end) on
  /// `evalBatches` batches (0: never), as the CPU trainer does.
  int64_t evalEvery = 0, evalBatches = 0;
  /// The model's name, for plot titles (empty in older runs).
  std::string model;
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  std::vector<bool> normal; // else ones (norm gains)
  std::vector<char> batches, evalTokens;

  /// The tokens of one batch, `batch` x `window`.
  size_t batchTokens() const { return size_t(batch * window); }
  /// Training batch `step` (or held-out batch `step` of `evalTokens`) as
  /// the int32 tokens @train_step and @loss take.
  std::vector<int32_t> tokens(const std::vector<char> &from,
                              int64_t index) const;
};

/// Reads the run in `dir`; fails naming the file that is missing or wrong.
TrainingRun readTrainingRun(const std::string &dir);

/// Parameter `i`'s initial values, drawn from the seed as the CPU trainer
/// draws them (mxfp4/Formats/WeightInit.h), for runs too large to carry
/// them.
std::vector<char> drawParameter(const TrainingRun &run, size_t i,
                                size_t elements);

/// Draws every parameter that DIR also carries as param<i>.npy and compares
/// the bytes: the runtime's generator against the CPU trainer's, without a
/// GPU. Prints one line and returns 0 if all are identical.
int checkInitialWeights(const std::string &dir);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_TRAINING_RUN_H
