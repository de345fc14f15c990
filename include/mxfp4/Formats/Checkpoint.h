//===- Checkpoint.h - the checkpoint folder, without LLVM -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The layout of a training checkpoint in standard C++ only: the CPU trainer
// (mxfp4/Train/Checkpoint.h) and the CUDA runtime (runtime/, which
// cannot link LLVM) write and read their checkpoints through these, one
// layout for both. A checkpoint is a folder that
// `transformers.LlamaForCausalLM.from_pretrained` loads as is, plus what a
// resumed run needs:
//
//   config.json            the Hugging Face config
//   model.safetensors      the parameters under their Hugging Face names,
//                          F32, metadata {"format": "pt"}
//   optimizer.safetensors  AdamW's moments of each parameter,
//                          "<param>.exp_avg" and "<param>.exp_avg_sq"
//   trainer_state.json     the step and what a resumed run must match
//                          (TrainerState)
//   mxfp4_config.json      the model config in the keys LlamaConfig::fromJSON
//                          reads (optional on read)
//
// The tensors go through safetensors (mxfp4/Formats/Safetensors.h). The
// JSON files are indented by two spaces with their keys sorted, e.g.
//
//   {
//     "recipe": "bf16",
//     "seed": 5,
//     "step": 3,
//     "tokens_seen": 384
//   }
//
// A checkpoint is written whole into a folder beside the previous one,
// `DIR.tmp-<pid>`, whose files and entries are synced to disk before it
// takes the previous one's place (writeCheckpointFolder), so a crash, a
// power loss or a failed write leaves the previous checkpoint intact.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_CHECKPOINT_H
#define MXFP4_FORMATS_CHECKPOINT_H

#include "mxfp4/Formats/Json.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace mlir::mxfp4 {

/// The files of a checkpoint folder.
inline constexpr const char *kCheckpointConfigFile = "config.json";
inline constexpr const char *kCheckpointModelFile = "model.safetensors";
inline constexpr const char *kCheckpointOptimizerFile = "optimizer.safetensors";
inline constexpr const char *kCheckpointTrainerStateFile = "trainer_state.json";
inline constexpr const char *kCheckpointMxfp4ConfigFile = "mxfp4_config.json";

/// What optimizer.safetensors appends to a parameter's name for its AdamW
/// moments, the first (the mean) and the second (the uncentered variance),
/// as transformers' Trainer names them.
inline constexpr const char *kFirstMomentSuffix = ".exp_avg";
inline constexpr const char *kSecondMomentSuffix = ".exp_avg_sq";

/// The checkpoint's name of part `part` of the training state of the
/// parameter `param`: 0 the parameter itself, 1 and 2 its first and second
/// AdamW moments ("<param>", "<param>.exp_avg", "<param>.exp_avg_sq"). The
/// trainers hold their state as all parameters, then all first moments, then
/// all second moments: state tensor i of n parameters is part i / n of
/// parameter i % n.
std::string getCheckpointTensorName(const std::string &param, unsigned part);

/// trainer_state.json: the step a checkpoint holds and what a run that
/// resumes from it must match. A field that is unset is not written; on
/// read, a field the file lacks (or of another type) is unset, for the
/// reader to report.
struct TrainerState {
  /// The number of steps done, the run's seed and the tokens trained on.
  std::optional<int64_t> step, seed, tokensSeen;
  /// The recipe (the CPU trainer's recipe string, the runtime's recipe name).
  std::optional<std::string> recipe;
  /// The CPU trainer's: its data and tokenizer, and its model config
  /// ("mxfp4_config": an object in mxfp4_config.json's keys).
  std::optional<std::string> data, tokenizer;
  std::optional<JsonValue> mxfp4Config;
  /// The CUDA runtime's: the hashes of the plan that trained it and of its
  /// exported run's run.txt.
  std::optional<std::string> plan, run;
};

/// trainer_state.json's text for `state`, with its final newline.
std::string formatTrainerState(const TrainerState &state);

/// Parses trainer_state.json's text `text` into `state`. Returns what is
/// wrong ("is not valid JSON: ...", "is not a JSON object"), or an empty
/// string.
std::string parseTrainerState(const std::string &text, TrainerState &state);

/// `value` as a checkpoint's JSON files hold it (mxfp4_config.json): two
/// spaces of indent a level, keys sorted, numbers as jsonNumber writes them,
/// with a final newline.
std::string formatCheckpointJson(const JsonValue &value);

/// Puts the checkpoint folder `dir` back in order after a writer died in
/// writeCheckpointFolder (kill -9, power loss): a `DIR.old-<pid>` folder left
/// between the two renames of the fallback becomes `dir` again if `dir` is
/// missing, and every other `DIR.tmp-<pid>` and `DIR.old-<pid>` is removed
/// (a link as a link); a name whose `<pid>` is not decimal digits is not the
/// writer's and is left alone.
/// Only for a caller that holds the run folder's lock
/// (mxfp4/Formats/RunLock.h): no other process is writing then. Returns what
/// went wrong, or an empty string.
std::string recoverCheckpointFolder(const std::string &dir);

/// Writes the checkpoint folder `dir` whole, replacing any previous one:
/// `writeFiles` writes the files into a fresh folder beside `dir` (its
/// argument) and returns what went wrong or an empty string; that folder
/// then takes `dir`'s place, in one exchange where the system has it (Linux)
/// or else two renames between which the previous checkpoint is set aside,
/// deleted only once the new one is in place. Refuses to replace a `dir`
/// that is a symbolic link, not a folder, or neither empty nor a checkpoint
/// (it has no model.safetensors or trainer_state.json), so a mistyped path
/// cannot delete an unrelated folder. Returns what is wrong as "checkpoint
/// 'DIR': ...", or an empty string.
std::string writeCheckpointFolder(
    const std::string &dir,
    const std::function<std::string(const std::string &folder)> &writeFiles);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_CHECKPOINT_H
