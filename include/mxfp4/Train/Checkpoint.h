//===- Checkpoint.h - Hugging Face-style checkpoints ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU trainer's checkpoints, in the layout of mxfp4/Formats/Checkpoint.h
// (which the CUDA runtime writes too): config.json is
// LlamaConfig::toHuggingFaceJSON, mxfp4_config.json and trainer_state.json's
// "mxfp4_config" are getLlamaConfigJSON, and the tensors go through
// mxfp4/Runtime/Safetensors.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_CHECKPOINT_H
#define MXFP4_TRAIN_CHECKPOINT_H

#include "mxfp4/Formats/Checkpoint.h"
#include "mxfp4/Models/LlamaConfig.h"
#include "mxfp4/Runtime/Safetensors.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The contents of a checkpoint folder.
struct Checkpoint {
  /// The text of config.json.
  std::string configJSON;
  /// The text of mxfp4_config.json, or empty if the folder has none.
  std::string mxfp4ConfigJSON;
  /// The parameters and their AdamW moments (getCheckpointTensorName).
  std::vector<NamedArray> params, optimizerState;
  TrainerState trainerState;
};

/// Returns `config` as a JSON object with the snake_case keys that
/// LlamaConfig::fromJSON reads ("name", "dim", "num_layers", "lr", ...).
llvm::json::Object getLlamaConfigJSON(const LlamaConfig &config);

/// The same object, as the formats library's JSON value.
JsonValue getLlamaConfigValue(const LlamaConfig &config);

/// Writes a checkpoint folder `dir`, replacing any previous one as a whole
/// (writeCheckpointFolder). `params` must be Float32. `trainerState` is
/// written as trainer_state.json, with "mxfp4_config" (getLlamaConfigJSON)
/// unless it has one. Refuses to replace an existing `dir` that is neither
/// empty nor a checkpoint, so a mistyped path cannot delete an unrelated
/// folder.
llvm::Error writeCheckpoint(llvm::StringRef dir, const LlamaConfig &config,
                            llvm::ArrayRef<NamedArray> params,
                            llvm::ArrayRef<NamedArray> optimizerState,
                            const TrainerState &trainerState);

/// Reads the checkpoint folder `dir`; errors name the folder and the file.
llvm::Expected<Checkpoint> readCheckpoint(llvm::StringRef dir);

/// Checks that `saved`, read from `dir`, can be resumed by a run of `seed`,
/// `recipe` and `config`: its trainer_state.json has a step, that seed and
/// recipe and the config keys it recorded (the name aside, which names the
/// preset or file), and every tensor is finite. Errors read "cannot resume
/// 'DIR': it was trained with seed 1, this run has 5" and the like.
llvm::Error checkResumable(llvm::StringRef dir, const Checkpoint &saved,
                           uint64_t seed, llvm::StringRef recipe,
                           const LlamaConfig &config);

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_CHECKPOINT_H
