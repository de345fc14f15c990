//===- Commands.h - subcommands of mxfp4-run in their own files -*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TOOLS_MXFP4RUN_COMMANDS_H
#define MXFP4_TOOLS_MXFP4RUN_COMMANDS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <atomic>

namespace mlir::mxfp4 {

struct LlamaConfig;

extern llvm::cl::SubCommand compileCommand;
int runCompileCommand();

extern llvm::cl::SubCommand trainCommand;
int runTrainCommand();

extern llvm::cl::SubCommand recipeStudyCommand;
int runStudyCommand();

/// Prints `error` as mxfp4-run's errors look and returns exit status 1.
int reportError(llvm::Error error);

/// Ctrl-C during train or study: sets the flag the trainer polls between
/// steps (it then checkpoints and stops) instead of killing the process.
std::atomic<bool> &installInterruptHandler();
void removeInterruptHandler();

/// The config of a preset or JSON file with the command line's overrides
/// (non-positive values keep the config's).
llvm::Expected<LlamaConfig> configFromCommandLine(llvm::StringRef presetOrFile,
                                                  int64_t steps, double lr,
                                                  int64_t warmup);

/// Whether the command line selected `mxfp4-run data` (valid after
/// cl::ParseCommandLineOptions).
bool isDataCommandSelected();

/// Runs `mxfp4-run data`; returns the exit code.
int runDataCommand();

} // namespace mlir::mxfp4

#endif // MXFP4_TOOLS_MXFP4RUN_COMMANDS_H
