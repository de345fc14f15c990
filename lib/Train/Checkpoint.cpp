//===- Checkpoint.cpp - Hugging Face-style checkpoints --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Checkpoint.h"
#include "mxfp4/Train/Metrics.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

#ifdef LLVM_ON_UNIX
#include <fcntl.h>
#include <unistd.h>
#endif

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static constexpr StringRef kConfigFile = "config.json";
static constexpr StringRef kModelFile = "model.safetensors";
static constexpr StringRef kOptimizerFile = "optimizer.safetensors";
static constexpr StringRef kTrainerStateFile = "trainer_state.json";
static constexpr StringRef kMxfp4ConfigFile = "mxfp4_config.json";

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


/// Atomically exchanges the folders `a` and `b` where the system can (Linux
/// renameat2); returns false if it cannot, so the caller falls back to two
/// renames.
static bool exchangeFolders(StringRef a, StringRef b) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  std::string from = a.str(), to = b.str();
  return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(),
                     RENAME_EXCHANGE) == 0;
#else
  (void)a;
  (void)b;
  return false;
#endif
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

/// Returns `value` as indented JSON with sorted keys; see writeJSON.
static std::string formatJSON(const llvm::json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  writeJSON(json, value);
  return text;
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
                                        const llvm::json::Object &state) {
  if (llvm::Error error = writeTextFile(joinPath(folder, kConfigFile),
                                        config.toHuggingFaceJSON()))
    return error;
  // "format": "pt" is what transformers checks before loading the file.
  if (llvm::Error error = writeSafetensors(joinPath(folder, kModelFile), params,
                                           {{"format", "pt"}}))
    return error;
  if (llvm::Error error = writeSafetensors(joinPath(folder, kOptimizerFile),
                                           optimizer, {{"format", "pt"}}))
    return error;

  llvm::json::Object configJSON = getLlamaConfigJSON(config);
  llvm::json::Object fullState = state;
  if (!fullState.get("mxfp4_config"))
    fullState["mxfp4_config"] = llvm::json::Object(configJSON);
  if (llvm::Error error =
          writeTextFile(joinPath(folder, kTrainerStateFile),
                        formatJSON(llvm::json::Value(std::move(fullState)))))
    return error;
  return writeTextFile(joinPath(folder, kMxfp4ConfigFile),
                       formatJSON(llvm::json::Value(std::move(configJSON))));
}

llvm::Error
mlir::mxfp4::writeCheckpoint(StringRef dirArg, const LlamaConfig &config,
                             llvm::ArrayRef<NamedArray> params,
                             llvm::ArrayRef<NamedArray> optimizerState,
                             const llvm::json::Object &trainerState) {
  // "ckpt/" and "ckpt" are the same folder; the suffixes below need the
  // latter.
  StringRef dir = dirArg;
  while (dir.size() > 1 && path::is_separator(dir.back()))
    dir = dir.drop_back();
  if (dir.empty())
    return checkpointError(dirArg, "empty folder name");

  for (const NamedArray &param : params)
    if (param.array.dtype != DType::Float32)
      return checkpointError(dir, "parameter '" + param.name + "' is " +
                                      getDTypeName(param.array.dtype) +
                                      ", not float32");

  // Replacing means deleting the old folder: make sure it is a checkpoint.
  fs::file_status status;
  bool exists =
      !fs::status(dir, status, /*Follow=*/false) && fs::exists(status);
  if (exists) {
    // Swapping a link would delete the folder it points to.
    if (fs::is_symlink_file(status))
      return checkpointError(dir, "is a symbolic link; name the folder "
                                  "itself");
    if (!fs::is_directory(status))
      return checkpointError(dir, "exists and is not a folder");
    std::error_code error;
    bool empty = fs::directory_iterator(dir, error) == fs::directory_iterator();
    if (error)
      return checkpointError(dir, "cannot list it: " + error.message());
    if (!empty && !fs::exists(joinPath(dir, kModelFile)) &&
        !fs::exists(joinPath(dir, kTrainerStateFile)))
      return checkpointError(dir, "refusing to replace a folder that is not "
                                  "a checkpoint (it has no " +
                                      kModelFile + " or " + kTrainerStateFile +
                                      ")");
  }

  std::string pid = std::to_string(llvm::sys::Process::getProcessId());
  std::string temp = (dir + ".tmp-" + pid).str();
  // A folder of that name is left over from a crashed run that had our pid.
  if (fs::exists(temp))
    if (std::error_code error = fs::remove_directories(temp))
      return checkpointError(dir, "cannot remove the stale '" + temp +
                                      "': " + error.message());
  // LLVM's default leaves others out; a checkpoint is as readable as any file
  // the umask lets through.
  if (std::error_code error =
          fs::create_directories(temp, /*IgnoreExisting=*/true, fs::all_all))
    return checkpointError(dir,
                           "cannot create '" + temp + "': " + error.message());
  if (llvm::Error error = writeCheckpointFiles(temp, config, params,
                                               optimizerState, trainerState)) {
    fs::remove_directories(temp);
    return wrapError(dir, std::move(error));
  }
  syncDirectory(temp);

  if (!exists) {
    if (std::error_code error = fs::rename(temp, dir)) {
      fs::remove_directories(temp);
      return checkpointError(dir, "cannot rename '" + temp +
                                      "' to it: " + error.message());
    }
  } else if (exchangeFolders(temp, dir)) {
    // `temp` now holds the previous checkpoint.
    fs::remove_directories(temp);
  } else {
    // Two renames: between them `dir` is missing but `old` holds the previous
    // checkpoint, which is only deleted once the new one is in place.
    std::string old = (dir + ".old-" + pid).str();
    if (fs::exists(old))
      fs::remove_directories(old);
    if (std::error_code error = fs::rename(dir, old)) {
      fs::remove_directories(temp);
      return checkpointError(dir, "cannot move it aside to '" + old +
                                      "': " + error.message());
    }
    if (std::error_code error = fs::rename(temp, dir)) {
      fs::rename(old, dir);
      fs::remove_directories(temp);
      return checkpointError(dir, "cannot rename '" + temp +
                                      "' to it: " + error.message());
    }
    fs::remove_directories(old);
  }
  syncDirectory(path::parent_path(dir));
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

/// Parses `text`, the contents of `dir/file`, as a JSON object.
static llvm::Expected<llvm::json::Object>
parseObject(StringRef dir, StringRef file, StringRef text) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return checkpointError(
        dir, file + " is not valid JSON: " + llvm::toString(value.takeError()));
  llvm::json::Object *object = value->getAsObject();
  if (!object)
    return checkpointError(dir, file + " is not a JSON object");
  return std::move(*object);
}

llvm::Expected<Checkpoint> mlir::mxfp4::readCheckpoint(StringRef dir) {
  if (!fs::is_directory(dir))
    return checkpointError(dir, "no such folder");
  Checkpoint checkpoint;

  llvm::Expected<std::string> config = readTextFile(dir, kConfigFile);
  if (!config)
    return config.takeError();
  if (llvm::Expected<llvm::json::Object> object =
          parseObject(dir, kConfigFile, *config);
      !object)
    return object.takeError();
  checkpoint.configJSON = std::move(*config);

  llvm::Expected<std::vector<NamedArray>> params =
      readSafetensors(joinPath(dir, kModelFile));
  if (!params)
    return wrapError(dir, params.takeError());
  checkpoint.params = std::move(*params);

  llvm::Expected<std::vector<NamedArray>> optimizer =
      readSafetensors(joinPath(dir, kOptimizerFile));
  if (!optimizer)
    return wrapError(dir, optimizer.takeError());
  checkpoint.optimizerState = std::move(*optimizer);

  llvm::Expected<std::string> stateText = readTextFile(dir, kTrainerStateFile);
  if (!stateText)
    return stateText.takeError();
  llvm::Expected<llvm::json::Object> state =
      parseObject(dir, kTrainerStateFile, *stateText);
  if (!state)
    return state.takeError();
  checkpoint.trainerState = std::move(*state);

  // mxfp4_config.json is optional: a folder exported by other tools lacks it.
  if (fs::exists(joinPath(dir, kMxfp4ConfigFile))) {
    llvm::Expected<std::string> text = readTextFile(dir, kMxfp4ConfigFile);
    if (!text)
      return text.takeError();
    if (llvm::Expected<llvm::json::Object> object =
            parseObject(dir, kMxfp4ConfigFile, *text);
        !object)
      return object.takeError();
    checkpoint.mxfp4ConfigJSON = std::move(*text);
  }
  return checkpoint;
}
