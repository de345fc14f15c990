//===- Checkpoint.cpp - Hugging Face-style checkpoints --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Checkpoint.h"
#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Train/Convergence.h"
#include "mxfp4/Train/Metrics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

/// Returns an error "checkpoint 'dir': message".
static llvm::Error checkpointError(StringRef dir, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "checkpoint '" + dir + "': " + message);
}

/// Prefixes the message of `error` with "checkpoint 'dir': ".
static llvm::Error wrapError(StringRef dir, llvm::Error error) {
  return checkpointError(dir, llvm::toString(std::move(error)));
}

/// Returns `a/b` with the platform's separator.
static std::string joinPath(StringRef a, StringRef b) {
  llvm::SmallString<256> result(a);
  path::append(result, b);
  return std::string(result);
}

llvm::json::Object mlir::mxfp4::getLlamaConfigJSON(const LlamaConfig &config) {
  return llvm::json::Object{
      {"name", config.name},
      {"vocab_size", config.vocabSize},
      {"dim", config.dim},
      {"num_layers", config.numLayers},
      {"num_heads", config.numHeads},
      {"num_kv_heads", config.numKVHeads},
      {"ffn_dim", config.ffnDim},
      {"seq_len", config.seqLen},
      {"batch_size", config.batchSize},
      {"norm_eps", config.normEps},
      {"rope_theta", config.ropeTheta},
      {"tokenizer", config.tokenizer},
      {"lr", config.lr},
      {"min_lr_ratio", config.minLrRatio},
      {"warmup_steps", config.warmupSteps},
      {"total_steps", config.totalSteps},
      {"beta1", config.beta1},
      {"beta2", config.beta2},
      {"adam_eps", config.adamEps},
      {"weight_decay", config.weightDecay},
      {"clip_norm", config.clipNorm},
      {"init_std", config.initStd},
  };
}

JsonValue mlir::mxfp4::getLlamaConfigValue(const LlamaConfig &config) {
  return toJsonValue(llvm::json::Value(getLlamaConfigJSON(config)));
}

/// Writes `text` to `file` (with a final newline).
static llvm::Error writeTextFile(StringRef file, StringRef text) {
  return writeFileAtomically(file, [&](llvm::raw_ostream &os) {
    os << text;
    if (!text.ends_with("\n"))
      os << '\n';
    return llvm::Error::success();
  });
}

/// Writes the checkpoint files into the fresh folder `folder`.
static llvm::Error writeCheckpointFiles(StringRef folder,
                                        const LlamaConfig &config,
                                        llvm::ArrayRef<NamedArray> params,
                                        llvm::ArrayRef<NamedArray> optimizer,
                                        const TrainerState &state) {
  if (llvm::Error error = writeTextFile(joinPath(folder, kCheckpointConfigFile),
                                        config.toHuggingFaceJSON()))
    return error;
  // "format": "pt" is what transformers checks before loading the file.
  if (llvm::Error error = writeSafetensors(
          joinPath(folder, kCheckpointModelFile), params, {{"format", "pt"}}))
    return error;
  if (llvm::Error error =
          writeSafetensors(joinPath(folder, kCheckpointOptimizerFile),
                           optimizer, {{"format", "pt"}}))
    return error;
  JsonValue configJSON = getLlamaConfigValue(config);
  TrainerState fullState = state;
  if (!fullState.mxfp4Config)
    fullState.mxfp4Config = configJSON;
  if (llvm::Error error =
          writeTextFile(joinPath(folder, kCheckpointTrainerStateFile),
                        formatTrainerState(fullState)))
    return error;
  return writeTextFile(joinPath(folder, kCheckpointMxfp4ConfigFile),
                       formatCheckpointJson(configJSON));
}

llvm::Error mlir::mxfp4::writeCheckpoint(StringRef dir,
                                         const LlamaConfig &config,
                                         llvm::ArrayRef<NamedArray> params,
                                         llvm::ArrayRef<NamedArray> optimizer,
                                         const TrainerState &trainerState) {
  for (const NamedArray &param : params)
    if (param.array.dtype != DType::Float32)
      return checkpointError(dir, "parameter '" + param.name + "' is " +
                                      getDTypeName(param.array.dtype) +
                                      ", not float32");
  std::string error = writeCheckpointFolder(
      dir.str(), [&](const std::string &folder) -> std::string {
        if (llvm::Error error = writeCheckpointFiles(folder, config, params,
                                                     optimizer, trainerState))
          return llvm::toString(std::move(error));
        return "";
      });
  if (!error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return llvm::Error::success();
}

/// Returns the contents of `dir/file`.
static llvm::Expected<std::string> readTextFile(StringRef dir, StringRef file) {
  std::string name = joinPath(dir, file);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(name, /*IsText=*/true);
  if (std::error_code error = buffer.getError())
    return checkpointError(dir, "cannot read " + file + ": " + error.message());
  return (*buffer)->getBuffer().str();
}

/// Checks that `text`, the contents of `dir/file`, is a JSON object.
static llvm::Error checkObject(StringRef dir, StringRef file, StringRef text) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return checkpointError(
        dir, file + " is not valid JSON: " + llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return checkpointError(dir, file + " is not a JSON object");
  return llvm::Error::success();
}

llvm::Expected<Checkpoint> mlir::mxfp4::readCheckpoint(StringRef dir) {
  if (!fs::is_directory(dir))
    return checkpointError(dir, "no such folder");
  Checkpoint checkpoint;

  llvm::Expected<std::string> config = readTextFile(dir, kCheckpointConfigFile);
  if (!config)
    return config.takeError();
  if (llvm::Error error = checkObject(dir, kCheckpointConfigFile, *config))
    return error;
  checkpoint.configJSON = std::move(*config);

  llvm::Expected<std::vector<NamedArray>> params =
      readSafetensors(joinPath(dir, kCheckpointModelFile));
  if (!params)
    return wrapError(dir, params.takeError());
  checkpoint.params = std::move(*params);

  llvm::Expected<std::vector<NamedArray>> optimizer =
      readSafetensors(joinPath(dir, kCheckpointOptimizerFile));
  if (!optimizer)
    return wrapError(dir, optimizer.takeError());
  checkpoint.optimizerState = std::move(*optimizer);

  llvm::Expected<std::string> state =
      readTextFile(dir, kCheckpointTrainerStateFile);
  if (!state)
    return state.takeError();
  std::string error = parseTrainerState(*state, checkpoint.trainerState);
  if (!error.empty())
    return checkpointError(dir, StringRef(kCheckpointTrainerStateFile) + " " +
                                    error);

  // mxfp4_config.json is optional: a folder exported by other tools lacks it.
  if (fs::exists(joinPath(dir, kCheckpointMxfp4ConfigFile))) {
    llvm::Expected<std::string> text =
        readTextFile(dir, kCheckpointMxfp4ConfigFile);
    if (!text)
      return text.takeError();
    if (llvm::Error error =
            checkObject(dir, kCheckpointMxfp4ConfigFile, *text))
      return error;
    checkpoint.mxfp4ConfigJSON = std::move(*text);
  }
  return checkpoint;
}

/// Whether `a` and `b` are the same JSON value.
static bool isSameValue(const JsonValue &a, const JsonValue &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case JsonValue::Null:
    return true;
  case JsonValue::Bool:
    return a.boolean == b.boolean;
  case JsonValue::Number:
    return a.number == b.number;
  case JsonValue::String:
    return a.string == b.string;
  case JsonValue::Array:
    return std::equal(a.elements.begin(), a.elements.end(),
                      b.elements.begin(), b.elements.end(), isSameValue);
  case JsonValue::Object:
    if (a.members.size() != b.members.size())
      return false;
    for (const auto &[key, value] : a.members)
      if (const JsonValue *other = b.get(key);
          !other || !isSameValue(value, *other))
        return false;
    return true;
  }
  return false;
}

llvm::Error mlir::mxfp4::checkResumable(StringRef dir, const Checkpoint &saved,
                                        uint64_t seed, StringRef recipe,
                                        const LlamaConfig &config) {
  const TrainerState &state = saved.trainerState;
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot resume '" + dir + "': " + message);
  };
  auto mismatch = [&](const llvm::Twine &what, const llvm::Twine &old,
                      const llvm::Twine &now) {
    return fail("it was trained with " + what + " " + old + ", this run has " +
                now);
  };
  if (!state.step || !state.seed || !state.recipe)
    return fail(StringRef(kCheckpointTrainerStateFile) +
                " lacks step, seed or recipe");
  // Checkpoints are only written with finite values (Convergence.h); one
  // that is not finite came from elsewhere and would train on NaNs.
  for (const std::vector<NamedArray> *arrays :
       {&saved.params, &saved.optimizerState})
    for (const NamedArray &array : *arrays)
      if (array.array.dtype == DType::Float32 &&
          !isFiniteF32(array.array.bytes.data(), array.array.bytes.size()))
        return fail("tensor '" + array.name + "' is not finite");
  if (static_cast<uint64_t>(*state.seed) != seed)
    return mismatch("seed", llvm::Twine(*state.seed), llvm::Twine(seed));
  if (*state.recipe != recipe)
    return mismatch("recipe", "'" + *state.recipe + "'", "'" + recipe + "'");
  if (!state.mxfp4Config)
    return llvm::Error::success();
  // The name is the preset's or the config file's, which may move.
  JsonValue now = getLlamaConfigValue(config);
  std::sort(now.members.begin(), now.members.end(),
            [](auto &a, auto &b) { return a.first < b.first; });
  for (const auto &[key, value] : now.members)
    if (const JsonValue *old = state.mxfp4Config->get(key))
      if (key != "name" && !isSameValue(*old, value))
        return mismatch("config key " + key,
                        StringRef(formatCheckpointJson(*old)).rtrim(),
                        StringRef(formatCheckpointJson(value)).rtrim());
  return llvm::Error::success();
}
