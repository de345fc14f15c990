//===- Checkpoint.cpp - checkpoints of a GPU training run -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "Failure.h"
#include "Npy.h"

#include "mxfp4/Formats/Checkpoint.h"
#include "mxfp4/Train/Convergence.h"

#include <cstdio>
#include <filesystem>

namespace mlir::mxfp4::runtime {

namespace fs = std::filesystem;

std::string hashText(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text)
    hash = (hash ^ uint8_t(c)) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)hash);
  return hex;
}

void writeCheckpoint(const std::string &dir, const TrainingRun &run,
                     const CheckpointOwner &owner, const Checkpoint &saved) {
  std::vector<NamedTensor> params, moments;
  for (size_t i = 0; i < run.params.size(); ++i) {
    const auto &[name, shape] = run.params[i];
    params.push_back({name, shape, saved.params[i]});
    moments.push_back({getCheckpointTensorName(name, 1), shape, saved.m[i]});
    moments.push_back({getCheckpointTensorName(name, 2), shape, saved.v[i]});
  }
  TrainerState state;
  state.step = saved.step;
  state.seed = int64_t(run.seed);
  state.tokensSeen = saved.step * run.batch * (run.window - 1);
  state.recipe = owner.recipe;
  state.plan = owner.planHash;
  state.run = hashText(run.manifest);
  std::string error = writeCheckpointFolder(dir, [&](const std::string &temp) {
    try {
      writeSafetensors(temp + "/" + kCheckpointModelFile, params);
      writeSafetensors(temp + "/" + kCheckpointOptimizerFile, moments);
      writeFile(temp + "/" + kCheckpointTrainerStateFile,
                formatTrainerState(state));
    } catch (const Failure &failure) {
      return std::string(failure.what());
    }
    // Runs exported before the configs travelled have none.
    for (const char *file :
         {kCheckpointConfigFile, kCheckpointMxfp4ConfigFile}) {
      std::string from = run.dir + "/" + file;
      std::error_code ec;
      if (fs::exists(from) &&
          !fs::copy_file(from, temp + "/" + file, ec))
        return "cannot copy '" + from + "': " + ec.message();
    }
    return std::string();
  });
  if (!error.empty())
    fail(error);
}

/// Reads part `part` of the training state of `run`'s parameters
/// (getCheckpointTensorName) from `path`, in the order of the parameters.
static std::vector<std::vector<char>> readTensors(const std::string &path,
                                                  const TrainingRun &run,
                                                  unsigned part) {
  std::vector<NamedTensor> tensors = readSafetensors(path);
  std::vector<std::vector<char>> data;
  for (const auto &[param, shape] : run.params) {
    std::string name = getCheckpointTensorName(param, part);
    const NamedTensor *found = nullptr;
    for (const NamedTensor &t : tensors)
      if (t.name == name)
        found = &t;
    if (!found || found->shape != shape)
      fail("cannot resume: '" + path + "' has no tensor '" + name +
           "' of the run's shape");
    // Checkpoints are only written with finite values; one that is not
    // finite came from elsewhere and would train on NaNs.
    if (!mlir::mxfp4::isFiniteF32(found->data.data(), found->data.size()))
      fail("cannot resume '" + path + "': tensor '" + name +
           "' is not finite");
    data.push_back(found->data);
  }
  return data;
}

Checkpoint readCheckpoint(const std::string &dir, const TrainingRun &run,
                          const CheckpointOwner &owner) {
  std::string statePath = dir + "/" + kCheckpointTrainerStateFile;
  std::vector<char> text = readFile(statePath);
  TrainerState state;
  std::string error =
      parseTrainerState(std::string(text.begin(), text.end()), state);
  if (!error.empty())
    fail("cannot resume: '" + statePath + "' " + error);
  std::optional<int64_t> step = state.step, seed = state.seed;
  if (!step || !seed || *step < 0 || *step > run.steps)
    fail("cannot resume: '" + statePath + "' has no step of the run");
  auto mismatch = [&](const std::string &what, const std::string &old,
                      const std::string &now) {
    fail("cannot resume '" + dir + "': it was trained with " + what + " " +
         old + ", this run has " + now);
  };
  if (uint64_t(*seed) != run.seed)
    mismatch("seed", std::to_string(*seed), std::to_string(run.seed));
  std::string runHash = hashText(run.manifest);
  if (state.run != runHash)
    mismatch("the exported run", state.run.value_or("?"),
             runHash + " ('" + run.dir + "/run.txt')");
  if (state.plan != owner.planHash)
    mismatch("the plan", state.plan.value_or("?"),
             owner.planHash + " (compiled with another recipe or config?)");
  Checkpoint saved;
  saved.step = *step;
  std::string model = dir + "/" + kCheckpointModelFile;
  std::string optimizer = dir + "/" + kCheckpointOptimizerFile;
  saved.params = readTensors(model, run, 0);
  saved.m = readTensors(optimizer, run, 1);
  saved.v = readTensors(optimizer, run, 2);
  return saved;
}

} // namespace mlir::mxfp4::runtime
