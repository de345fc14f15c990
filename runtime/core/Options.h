//===- Options.h - the command line -----------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_OPTIONS_H
#define MXFP4_RUNTIME_CORE_OPTIONS_H

#include "mxfp4/Train/Convergence.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// What a tool's command line differs in: its name, what its code object
/// is called, and the flags only some tools have.
struct Tool {
  /// For the usage ("mxfp4-cuda-run").
  std::string name;
  /// The second positional argument of exec and train ("CUBIN").
  std::string codeObject;
  /// Whether exec and train take --host=LIBRARY instead of PLAN CUBIN.
  bool hostLibrary = false;
  /// The values of --target= for exec, train and study, the default first;
  /// empty: the tool has no --target.
  std::vector<std::string> targets;
  /// Said at the end of the usage, after the flags (may be empty).
  std::string notes;
};

/// A command line: the subcommand and its flags.
struct Options {
  /// The tool's name (Tool::name), for its notes and messages.
  std::string toolName;
  /// exec, train, study or check-weights.
  std::string command;
  /// PLAN and the code object (CUBIN, ...).
  std::string planPath, cubinPath;
  std::string hostPath; // --host: the library instead of PLAN CUBIN
  /// --target, else the tool's first.
  std::string target;
  // exec
  std::string function, timeJson;
  std::vector<std::string> inputs, outputs;
  size_t repeat = 1;
  bool profile = false; // one more call, timing each launch
  // The --repeat calls timed as one batch, not one by one: no idle gap
  // between calls, as in training (each call gets the batch's mean).
  bool backToBack = false;
  // Back to back: this many batches of --repeat calls, each timed alone
  // (min_ms is then the best batch's mean, as peers time short bursts).
  size_t batches = 1;
  // train, study, check-weights
  std::string runDir, outDir, recipe;
  std::vector<std::string> recipeDirs, runDirs;
  int64_t steps = 0, checkpointEvery = 0;
  bool resume = false;
  /// train: data-parallel over this many GPUs, one process each (Launch.h);
  /// 1 with no --gpus.
  uint64_t gpus = 1;
  /// Whether --gpus was given (even as 1: the data-parallel path on one GPU).
  bool dataParallel = false;
  // study: the DNC rule's threshold over the baseline's final loss.
  double dncThreshold = mlir::mxfp4::kDefaultDncThreshold;
};

/// Parses the command line of `tool`; fails with the usage or the wrong
/// argument.
Options parseOptions(int argc, char **argv, const Tool &tool);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_OPTIONS_H
