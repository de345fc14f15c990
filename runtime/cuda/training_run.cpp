//===- training_run.cpp - a run exported for the GPU ----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "training_run.h"

#include "failure.h"
#include "npy.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

/// SplitMix64, as lib/API/Trainer.cpp draws initial weights.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  return mix(mix(mix(a) ^ b) ^ c);
}

std::vector<char> drawParameter(const TrainingRun &run, size_t i,
                                size_t elements) {
  std::vector<float> v(elements, 1.0f);
  auto unitOpen = [](uint64_t bits) {
    return (double(bits >> 11) + 0.5) * 0x1.0p-53;
  };
  if (run.normal[i])
    for (size_t j = 0; j < elements; ++j) {
      uint64_t pair = j / 2;
      double u1 = unitOpen(mix(run.seed, i * 2 + 0x1000, pair));
      double u2 = unitOpen(mix(run.seed, i * 2 + 0x1001, pair));
      double radius = std::sqrt(-2.0 * std::log(u1));
      double angle = 2.0 * M_PI * u2;
      double z =
          j % 2 == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
      v[j] = static_cast<float>(z * run.initStd);
    }
  std::vector<char> bytes(elements * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
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
  std::string path = dir + "/run.txt";
  if (!std::ifstream(path))
    fail("cannot read '" + path +
         "' (write it with 'mxfp4-run train "
         "--export-gpu-run=" +
         dir + "')");
  std::vector<char> text = readFile(path);
  TrainingRun run;
  run.dir = dir;
  run.manifest.assign(text.begin(), text.end());
  std::istringstream manifest(run.manifest);
  std::string line;
  for (int number = 1; std::getline(manifest, line); ++number) {
    std::istringstream w(line);
    std::string key;
    w >> key;
    if (key == "steps")
      w >> run.steps;
    else if (key == "batch")
      w >> run.batch;
    else if (key == "window")
      w >> run.window;
    else if (key == "token_bytes")
      w >> run.tokenBytes;
    else if (key == "seed")
      w >> run.seed;
    else if (key == "init_std")
      w >> run.initStd;
    else if (key == "eval_every")
      w >> run.evalEvery;
    else if (key == "eval_batches")
      w >> run.evalBatches;
    else if (key == "model")
      std::getline(w >> std::ws, run.model);
    else if (key == "param") {
      size_t index;
      std::string name, init;
      w >> index >> name >> init;
      run.normal.push_back(init == "normal");
      std::vector<int64_t> shape;
      for (int64_t d; w >> d;)
        shape.push_back(d);
      run.params.push_back({name, shape});
    }
    if (w.fail() && !w.eof())
      fail("'" + path + "': line " + std::to_string(number) + ": bad '" + key +
           "' entry");
  }
  if (run.steps <= 0 || run.batch <= 0 || run.window <= 1 ||
      run.params.empty() || (run.tokenBytes != 1 && run.tokenBytes != 4) ||
      run.evalEvery < 0 || run.evalBatches < 0)
    fail("'" + path +
         "' is not a training run (it needs steps, batch, "
         "window, token_bytes 1 or 4 and the parameters)");
  run.batches = readBatches(run, "batches.bin", run.steps);
  if (run.evalBatches > 0)
    run.evalTokens = readBatches(run, "eval.bin", run.evalBatches);
  return run;
}

int checkInitialWeights(const std::string &dir) {
  TrainingRun run = readTrainingRun(dir);
  size_t checked = 0;
  for (size_t i = 0; i < run.params.size(); ++i) {
    std::string path = dir + "/param" + std::to_string(i) + ".npy";
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
