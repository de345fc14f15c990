//===- LlamaModel.h - the Llama training step as source text ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The facade over lib/Models that tools and Python use: a Llama config in,
// the training-step module (mxfp4/Models/LlamaStep.h) out, as MLIR text that
// CpuModule (or mxfp4-opt) compiles.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_LLAMAMODEL_H
#define MXFP4_API_LLAMAMODEL_H

#include "mxfp4/Models/LlamaConfig.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// Returns the config of `presetOrFile`: a preset name, or a path to a JSON
/// config (LlamaConfig::fromJSON).
llvm::Expected<LlamaConfig> loadLlamaConfig(llvm::StringRef presetOrFile);

/// The training-step module as text, and what the recipe added to it.
struct LlamaStepSource {
  std::string text;
  /// The rows of @train_step's telemetry result (`layer/role/operand`), when
  /// the recipe asks for telemetry; @train_step then returns the table as
  /// its last result.
  std::vector<std::string> telemetryRows;
};

/// Returns the verified training-step module of `config` as MLIR text, with
/// `recipe` applied (and its rotations checked) when it is not empty.
/// `functions` selects the functions built (LlamaStep.h; empty: all), and
/// `ranks` the ZeRO-1 shards of @sum_squares and @apply_shard (0: none).
llvm::Expected<LlamaStepSource>
buildLlamaStepSource(const LlamaConfig &config, llvm::StringRef recipe = "",
                     llvm::ArrayRef<llvm::StringRef> functions = {},
                     int64_t ranks = 0);

} // namespace mlir::mxfp4

#endif // MXFP4_API_LLAMAMODEL_H
