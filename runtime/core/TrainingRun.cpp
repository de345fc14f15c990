//===- TrainingRun.cpp - a run exported for the GPU -----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TrainingRun.h"

#include "Failure.h"
#include "Npy.h"

#include "mxfp4/Formats/TrainingRun.h"
#include "mxfp4/Formats/WeightInit.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace mlir::mxfp4::runtime {

std::vector<char> drawParameter(const TrainingRun &run, size_t i,
                                size_t elements) {
  std::vector<float> values =
      drawInitialWeights(run.normal[i] ? WeightInit::Normal : WeightInit::Ones,
                         run.seed, i, elements, run.initStd);
  std::vector<char> bytes(elements * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<int32_t> TrainingRun::tokens(const std::vector<char> &from,
                                         int64_t index) const {
  std::vector<int32_t> tokens(batchTokens());
  const char *at = from.data() + index * tokens.size() * tokenBytes;
  for (size_t t = 0; t < tokens.size(); ++t)
    if (tokenBytes == 1)
      tokens[t] = static_cast<uint8_t>(at[t]);
    else
      std::memcpy(&tokens[t], at + 4 * t, 4);
  return tokens;
}

/// The bytes of `dir/file`, which must hold `count` batches of `run`.
static std::vector<char> readBatches(const TrainingRun &run,
                                     const std::string &file, int64_t count) {
  std::string path = run.dir + "/" + file;
  std::vector<char> bytes = readFile(path);
  if (bytes.size() != size_t(count) * run.batchTokens() * run.tokenBytes)
    fail("'" + path + "' does not hold " + std::to_string(count) +
         " batches of " + std::to_string(run.batch) + " x " +
         std::to_string(run.window) + " tokens");
  return bytes;
}

TrainingRun readTrainingRun(const std::string &dir) {
  std::string path = dir + "/" + kTrainingRunManifestFile;
  if (!std::ifstream(path))
    fail("cannot read '" + path +
         "' (write it with 'mxfp4-run train "
         "--export-gpu-run=" +
         dir + "')");
  std::vector<char> text = readFile(path);
  TrainingRun run;
  run.dir = dir;
  run.manifest.assign(text.begin(), text.end());
  TrainingRunManifest manifest;
  std::string problem = parseTrainingRunManifest(run.manifest, path, manifest);
  if (!problem.empty())
    fail(problem);
  run.steps = manifest.steps;
  run.batch = manifest.batch;
  run.window = manifest.window;
  run.tokenBytes = manifest.tokenBytes;
  run.seed = manifest.seed;
  run.initStd = manifest.initStd;
  run.evalEvery = manifest.evalEvery;
  run.evalBatches = manifest.evalBatches;
  run.model = manifest.model;
  for (TrainingRunParameter &param : manifest.params) {
    run.params.push_back({std::move(param.name), std::move(param.shape)});
    run.normal.push_back(param.init == WeightInit::Normal);
  }
  run.batches = readBatches(run, kTrainingRunBatchesFile, run.steps);
  if (run.evalBatches > 0)
    run.evalTokens = readBatches(run, kTrainingRunEvalFile, run.evalBatches);
  return run;
}

int checkInitialWeights(const std::string &dir) {
  TrainingRun run = readTrainingRun(dir);
  size_t checked = 0;
  for (size_t i = 0; i < run.params.size(); ++i) {
    std::string path = dir + "/" + getTrainingRunParameterFile(i);
    if (!std::ifstream(path))
      continue;
    std::vector<char> carried = readNpy(path);
    if (drawParameter(run, i, carried.size() / 4) != carried)
      fail("the runtime draws parameter '" + run.params[i].first +
           "' differently from the CPU trainer ('" + path + "')");
    ++checked;
  }
  if (!checked)
    fail("'" + dir + "' carries no initial weights to compare with");
  std::printf("initial weights: %zu of %zu parameters drawn bit-identically "
              "to the CPU trainer's\n",
              checked, run.params.size());
  return 0;
}

} // namespace mlir::mxfp4::runtime
