//===- Checkpoint.h - Hugging Face-style checkpoints ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is a folder that `transformers.LlamaForCausalLM.from_pretrained`
// loads as is, plus what a resumed run needs:
//
//   config.json            Hugging Face config (LlamaConfig::toHuggingFaceJSON)
//   model.safetensors      the parameters under their HF names, F32,
//                          metadata {"format": "pt"}
//   optimizer.safetensors  AdamW moments "<param>.exp_avg" and
//                          "<param>.exp_avg_sq"
//   trainer_state.json     step, seed, recipe, data position, RNG state, ...
//                          as the driver fills it, plus "mxfp4_config"
//   mxfp4_config.json      the LlamaConfig in the keys LlamaConfig::fromJSON
//                          reads (optional on read)
//
// A checkpoint is written whole into `DIR.tmp-<pid>` and then swapped in for
// `DIR`, so a crash or a failed write leaves the previous checkpoint intact.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_CHECKPOINT_H
#define MXFP4_TRAIN_CHECKPOINT_H

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
  std::vector<NamedArray> params, optimizerState;
  llvm::json::Object trainerState;
};

/// Returns `config` as a JSON object with the snake_case keys that
/// LlamaConfig::fromJSON reads ("name", "dim", "num_layers", "lr", ...).
llvm::json::Object getLlamaConfigJSON(const LlamaConfig &config);

/// Writes a checkpoint folder `dir`, replacing any previous one as a whole.
/// `params` must be Float32. `trainerState` is written as trainer_state.json
/// with "mxfp4_config" (getLlamaConfigJSON) added unless it has one. Refuses to
/// replace an existing `dir` that is neither empty nor a checkpoint, so a
/// mistyped path cannot delete an unrelated folder.
llvm::Error writeCheckpoint(llvm::StringRef dir, const LlamaConfig &config,
                            llvm::ArrayRef<NamedArray> params,
                            llvm::ArrayRef<NamedArray> optimizerState,
                            const llvm::json::Object &trainerState);

/// Reads the checkpoint folder `dir`; errors name the folder and the file.
llvm::Expected<Checkpoint> readCheckpoint(llvm::StringRef dir);

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_CHECKPOINT_H
