//===- Train.h - @train_step, step after step -------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU trainer's loop (lib/API/Trainer.cpp) on the device: @train_step
// (parameters, AdamW m and v, tokens, step) -> (loss, gradient norm,
// learning rate, new parameters, m, v), with the state kept on the device
// and each step's results becoming the next step's arguments; @loss on the
// run's held-out batches at the CPU trainer's evaluation steps; checkpoints
// and a bit-identical resume; metrics.jsonl, loss.svg and checkpoint/ in the
// output folder, as the CPU trainer writes them. A run that diverges (a
// loss or gradient norm that is not finite, include/mxfp4/Train/
// Convergence.h) stops there as the CPU trainer's does: its metrics mark
// the step, its plot is drawn, its last finite checkpoint is kept.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_TRAIN_H
#define MXFP4_RUNTIME_CORE_TRAIN_H

#include "Collective.h"
#include "Compiled.h"
#include "Device.h"
#include "Failure.h"
#include "Options.h"
#include "TrainingRun.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mlir::mxfp4::runtime {

struct TrainOptions {
  /// metrics.jsonl, loss.svg, checkpoint/.
  std::string outDir;
  /// The recipe's name, for the plot and the checkpoint (may be empty).
  std::string recipe;
  /// The last step (0: the run's); a shorter run evaluates and checkpoints
  /// at its end as a run of that length would.
  int64_t steps = 0;
  /// Write a checkpoint every N steps (0: only at the end).
  int64_t checkpointEvery = 0;
  /// Continue from outDir/checkpoint.
  bool resume = false;
  /// Data-parallel training: this process's rank (null: one GPU, with
  /// @train_step). Each rank computes @loss_and_grads on its rows of the
  /// global batch; the loss is averaged over the ranks and the gradient
  /// reduce-scattered, and each rank updates its shard of the parameters
  /// with @sum_squares and @apply_shard (ZeRO-1, `mxfp4-run compile
  /// --ranks=N`); only rank 0 writes the output folder and prints.
  Communicator *comm = nullptr;
};

/// The failure of a run that diverged, after its metrics, plot and the
/// checkpoint it keeps are on disk: a study records it and goes on.
struct Divergence : Failure {
  Divergence(const std::string &message, int64_t step)
      : Failure(message), step(step) {}
  int64_t step;
};

/// Fails unless the plan's @train_step (and @loss, if the run evaluates)
/// take the run's parameters and batches; with `ranks` (data-parallel
/// training), its @loss_and_grads, @sum_squares, @apply_shard and @loss
/// instead, on 1/ranks of each batch and shards of the parameters. Needs no
/// GPU.
void checkTrainable(const Compiled &compiled, const TrainingRun &run,
                    int ranks = 0);

/// Trains `run` with the plan functions of `compiled`, whose code object is
/// loaded as `module`; throws Divergence if the run diverges. Fails before
/// it writes anything if the device's free memory cannot hold the run's
/// resident state and @train_step's temporaries (Device::memoryInfo).
void train(Device &cu, void *module, const Compiled &compiled,
           const TrainingRun &run, const TrainOptions &options);

/// A driver's `train` command: checks the compile against the run (no GPU
/// needed), opens GPU 0 with `open` and trains. With --gpus=N it starts N
/// ranks (Launch.h) and waits for them; in a rank that a launcher started
/// it opens the rank's GPU, joins the job through `collectiveLibrary`
/// (Collective.h) and trains its part.
void runTrainCommand(char **argv, const Options &options,
                     const Compiled &compiled, const TrainingRun &run,
                     const std::function<std::unique_ptr<Device>(int)> &open,
                     const std::string &collectiveLibrary);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_TRAIN_H
