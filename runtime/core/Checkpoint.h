//===- Checkpoint.h - checkpoints of a GPU training run ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU trainer's layout, from one implementation
// (mxfp4/Formats/Checkpoint.h), so transformers loads the weights as they
// are: OUT/checkpoint/ holds
// model.safetensors, optimizer.safetensors, trainer_state.json (the step
// and what the run must match to resume it: its seed, the hash of its plan
// and of its exported run) and the run's config.json and mxfp4_config.json.
// The folder is written whole beside the old one and then swapped in, so a
// run killed while writing keeps its last checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_CHECKPOINT_H
#define MXFP4_RUNTIME_CORE_CHECKPOINT_H

#include "Safetensors.h"
#include "TrainingRun.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A checkpoint: the state @train_step carries from step to step.
struct Checkpoint {
  /// The number of steps done.
  int64_t step = 0;
  /// The parameters, then AdamW's first and second moments, in the order
  /// of `TrainingRun::params`.
  std::vector<std::vector<char>> params, m, v;
};

/// Who writes a checkpoint: the recipe's name (for people) and the hash of
/// the plan's text, which a resumed run's plan must match (as its run's
/// seed and run.txt must).
struct CheckpointOwner {
  std::string recipe;
  std::string planHash;
};

/// A short stable hash of `text` (FNV-1a, 16 hex digits).
std::string hashText(const std::string &text);

/// Writes `saved` of `run` to `dir`, replacing the checkpoint there.
void writeCheckpoint(const std::string &dir, const TrainingRun &run,
                     const CheckpointOwner &owner, const Checkpoint &saved);

/// Reads the checkpoint in `dir`; fails naming the folder unless it was
/// written by a run of `run` with `owner`'s plan and its tensors fit.
Checkpoint readCheckpoint(const std::string &dir, const TrainingRun &run,
                          const CheckpointOwner &owner);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_CHECKPOINT_H
