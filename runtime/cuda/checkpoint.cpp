//===- checkpoint.cpp - checkpoints of a GPU training run -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "checkpoint.h"

#include "failure.h"
#include "npy.h"

#include "mxfp4/Formats/Json.h"
#include "mxfp4/Train/Convergence.h"

#include <cstdio>
#include <filesystem>

using namespace mlir::mxfp4;

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
  if (fs::exists(dir) && !fs::exists(dir + "/trainer_state.json"))
    fail("refusing to replace '" + dir +
         "': it is not a checkpoint (it has "
         "no trainer_state.json)");
  std::string temp = dir + ".tmp", old = dir + ".old";
  std::error_code ec;
  fs::remove_all(temp, ec);
  if (!fs::create_directories(temp, ec))
    fail("cannot create '" + temp + "': " + ec.message());
  std::vector<NamedTensor> params, moments;
  for (size_t i = 0; i < run.params.size(); ++i) {
    const auto &[name, shape] = run.params[i];
    params.push_back({name, shape, saved.params[i]});
    moments.push_back({name + ".exp_avg", shape, saved.m[i]});
    moments.push_back({name + ".exp_avg_sq", shape, saved.v[i]});
  }
  writeSafetensors(temp + "/model.safetensors", params);
  writeSafetensors(temp + "/optimizer.safetensors", moments);
  JsonRecord state;
  state.add("step", saved.step)
      .add("seed", int64_t(run.seed))
      .add("tokens_seen", saved.step * run.batch * (run.window - 1))
      .add("recipe", owner.recipe)
      .add("plan", owner.planHash)
      .add("run", hashText(run.manifest));
  writeFile(temp + "/trainer_state.json", state.format(/*indent=*/true) + "\n");
  // Runs exported before the configs travelled have none.
  for (const char *file : {"config.json", "mxfp4_config.json"})
    if (fs::exists(run.dir + "/" + file))
      fs::copy_file(run.dir + "/" + file, temp + "/" + file);
  fs::remove_all(old, ec);
  if (fs::exists(dir))
    fs::rename(dir, old);
  fs::rename(temp, dir);
  fs::remove_all(old, ec);
}

/// Reads the tensors `names` (with `suffix`) of `path` in that order.
static std::vector<std::vector<char>> readTensors(const std::string &path,
                                                  const TrainingRun &run,
                                                  const std::string &suffix) {
  std::vector<NamedTensor> tensors = readSafetensors(path);
  std::vector<std::vector<char>> data;
  for (const auto &[name, shape] : run.params) {
    const NamedTensor *found = nullptr;
    for (const NamedTensor &t : tensors)
      if (t.name == name + suffix)
        found = &t;
    if (!found || found->shape != shape)
      fail("cannot resume: '" + path + "' has no tensor '" + name + suffix +
           "' of the run's shape");
    // Checkpoints are only written with finite values; one that is not
    // finite came from elsewhere and would train on NaNs.
    if (!mlir::mxfp4::isFiniteF32(found->data.data(), found->data.size()))
      fail("cannot resume '" + path + "': tensor '" + name + suffix +
           "' is not finite");
    data.push_back(found->data);
  }
  return data;
}

Checkpoint readCheckpoint(const std::string &dir, const TrainingRun &run,
                          const CheckpointOwner &owner) {
  std::vector<char> text = readFile(dir + "/trainer_state.json");
  std::string error;
  std::optional<JsonValue> state =
      parseJson(std::string(text.begin(), text.end()), error);
  std::optional<int64_t> step, seed;
  if (state) {
    step = state->getInteger("step");
    seed = state->getInteger("seed");
  }
  if (!step || !seed || *step < 0 || *step > run.steps)
    fail("cannot resume: '" + dir +
         "/trainer_state.json' has no step of "
         "the run" +
         (error.empty() ? "" : ": " + error));
  auto mismatch = [&](const std::string &what, const std::string &old,
                      const std::string &now) {
    fail("cannot resume '" + dir + "': it was trained with " + what + " " +
         old + ", this run has " + now);
  };
  if (uint64_t(*seed) != run.seed)
    mismatch("seed", std::to_string(*seed), std::to_string(run.seed));
  std::string runHash = hashText(run.manifest);
  if (state->getString("run") != runHash)
    mismatch("the exported run", state->getString("run").value_or("?"),
             runHash + " ('" + run.dir + "/run.txt')");
  if (state->getString("plan") != owner.planHash)
    mismatch("the plan", state->getString("plan").value_or("?"),
             owner.planHash + " (compiled with another recipe or config?)");
  Checkpoint saved;
  saved.step = *step;
  saved.params = readTensors(dir + "/model.safetensors", run, "");
  saved.m = readTensors(dir + "/optimizer.safetensors", run, ".exp_avg");
  saved.v = readTensors(dir + "/optimizer.safetensors", run, ".exp_avg_sq");
  return saved;
}
