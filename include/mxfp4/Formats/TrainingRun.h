//===- TrainingRun.h - a training run exported for a GPU --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The folder `mxfp4-run train --export-gpu-run=DIR` writes (lib/API/
// Trainer.cpp) and the CUDA runtime trains from (runtime/), in standard
// C++ only: the names of its files and its manifest, run.txt, which both
// write and read through here.
//
// The manifest is text, one `KEY VALUE` a line, `#` comments:
//
//   # mxfp4 training run v1
//   steps N          batch N          window N (tokens a row: a sequence + 1)
//   token_bytes 1|4  seed N           init_std X (printf's %.9e)
//   eval_every N     eval_batches N   model NAME
//   param I NAME normal|ones DIMS...  (one a parameter, in argument order)
//
// Runs exported before held-out batches travelled have no eval_every,
// eval_batches and model; a reader ignores keys it does not know.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_TRAININGRUN_H
#define MXFP4_FORMATS_TRAININGRUN_H

#include "mxfp4/Formats/WeightInit.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::mxfp4 {

/// The manifest of a run folder.
inline constexpr char kTrainingRunManifestFile[] = "run.txt";
/// Every step's batch, one after another: steps x batch x window tokens of
/// token_bytes each (little-endian int32 when 4).
inline constexpr char kTrainingRunBatchesFile[] = "batches.bin";
/// The held-out batches of every evaluation, laid out as the batches.
inline constexpr char kTrainingRunEvalFile[] = "eval.bin";
/// The model's Hugging Face config, which checkpoints carry.
inline constexpr char kTrainingRunConfigFile[] = "config.json";
/// The model's mxfp4 config, which checkpoints carry.
inline constexpr char kTrainingRunMxfp4ConfigFile[] = "mxfp4_config.json";

/// "param<index>.npy": parameter `index`'s initial values, carried when the
/// model is small (else drawn from the seed with WeightInit.h).
std::string getTrainingRunParameterFile(size_t index);

/// A parameter of the model, in argument order.
struct TrainingRunParameter {
  std::string name;
  WeightInit init = WeightInit::Normal;
  std::vector<int64_t> shape;
};

/// The contents of run.txt; the defaults are what an older manifest that
/// lacks a key means.
struct TrainingRunManifest {
  int64_t steps = 0, batch = 0, window = 0;
  /// 1 for vocabularies of at most 256 ids, else 4.
  int64_t tokenBytes = 4;
  uint64_t seed = 0;
  /// The standard deviation of the normal parameters.
  double initStd = 0;
  /// Evaluate every `evalEvery` steps (0: only at the end) on
  /// `evalBatches` held-out batches (0: never).
  int64_t evalEvery = 0, evalBatches = 0;
  /// The model's name (empty in older runs).
  std::string model;
  std::vector<TrainingRunParameter> params;
};

/// `manifest` as run.txt's text.
std::string formatTrainingRunManifest(const TrainingRunManifest &manifest);

/// Appends `count` token ids to the bytes of batches.bin or eval.bin: one
/// byte each when `tokenBytes` is 1, else little-endian int32.
void appendTrainingRunTokens(std::string &out, const int32_t *tokens,
                             size_t count, int64_t tokenBytes);

/// Parses run.txt's `text` (read from `name`) into `manifest`. Returns what
/// is wrong, naming the file ("'NAME': line 3: bad 'window' entry", "'NAME'
/// is not a training run (...)"), or an empty string.
std::string parseTrainingRunManifest(std::string_view text,
                                     const std::string &name,
                                     TrainingRunManifest &manifest);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_TRAININGRUN_H
