//===- Study.cpp - every recipe on every seed -----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Study.h"

#include "Compiled.h"
#include "Device.h"
#include "Failure.h"
#include "Metrics.h"
#include "Npy.h"
#include "Train.h"
#include "TrainingRun.h"

#include "mxfp4/Formats/StudyTable.h"
#include "mxfp4/Train/Convergence.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace mlir::mxfp4::runtime {

namespace fs = std::filesystem;

/// The recipe's name: its folder's.
static std::string recipeName(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return fs::path(dir).filename().string();
}

/// The step `records` say the run diverged at, if they do.
static std::optional<int64_t>
divergedAt(const std::vector<MetricsRecord> &records) {
  for (const MetricsRecord &r : records)
    if (mlir::mxfp4::recordsDivergence(r.value))
      return r.step;
  return std::nullopt;
}

/// Whether `records` end the run at `last`: its training record and, if
/// the run evaluates, the evaluation after it.
static bool isComplete(const std::vector<MetricsRecord> &records, int64_t last,
                       bool evaluates) {
  bool trained = false, evaluated = !evaluates;
  for (const MetricsRecord &r : records)
    if (r.step == last) {
      trained |= r.value.get("loss") != nullptr;
      evaluated |= r.value.get("eval_loss") != nullptr;
    }
  return trained && evaluated;
}

void study(const StudyOptions &options, const DeviceTarget &target) {
  // Everything is read and checked before the first step is trained.
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Compiled>> recipes;
  for (const std::string &dir : options.recipeDirs) {
    if (!fs::is_directory(dir))
      fail("no recipe folder '" + dir + "'");
    std::string codeObject = dir + "/" + target.codeObjectFile;
    if (!fs::exists(dir + "/plan.txt") || !fs::exists(codeObject))
      fail("recipe folder '" + dir + "' has no plan.txt and " +
           target.codeObjectFile + " (write them with 'mxfp4-run compile " +
           "--target=" + target.name + " --out-dir=" + dir + "')");
    std::string name = recipeName(dir);
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail("two recipe folders are named '" + name + "'");
    names.push_back(name);
    recipes.push_back(
        std::make_unique<Compiled>(dir + "/plan.txt", codeObject));
  }
  std::vector<TrainingRun> runs;
  for (const std::string &dir : options.runDirs) {
    runs.push_back(readTrainingRun(dir));
    const TrainingRun &run = runs.back(), &first = runs.front();
    if (run.steps != first.steps || run.batch != first.batch ||
        run.window != first.window || run.evalBatches != first.evalBatches)
      fail("runs '" + first.dir + "' and '" + dir +
           "' differ in steps, "
           "batch, window or held-out batches: a study compares runs of one "
           "schedule");
    for (size_t i = 0; i + 1 < runs.size(); ++i)
      if (runs[i].seed == run.seed)
        fail("runs '" + runs[i].dir + "' and '" + dir +
             "' have the same "
             "seed " +
             std::to_string(run.seed));
  }
  for (const std::unique_ptr<Compiled> &recipe : recipes)
    for (const TrainingRun &run : runs)
      checkTrainable(*recipe, run);
  int64_t last = options.steps > 0 ? std::min(options.steps, runs.front().steps)
                                   : runs.front().steps;
  bool evaluates = runs.front().evalBatches > 0;

  // The driver only once there is something to train.
  std::unique_ptr<Device> cu;
  mlir::mxfp4::StudyResults results;
  results.model = runs.front().model;
  results.recipes = names;
  results.steps = last;
  results.dncThreshold = options.dncThreshold;
  results.tokensPerStep = runs.front().batch * (runs.front().window - 1);
  for (const TrainingRun &run : runs)
    results.seeds.push_back(run.seed);
  for (size_t r = 0; r < recipes.size(); ++r) {
    void *module = nullptr;
    results.runs.emplace_back();
    for (const TrainingRun &run : runs) {
      TrainOptions pair;
      pair.outDir =
          options.outDir + "/" + names[r] + "-seed" + std::to_string(run.seed);
      pair.recipe = names[r];
      pair.steps = last;
      pair.checkpointEvery = options.checkpointEvery;
      std::string metrics = pair.outDir + "/metrics.jsonl";
      bool started = fs::exists(metrics);
      std::vector<MetricsRecord> records;
      if (started)
        records = readMetrics(metrics);
      // A run that diverged is a result: it would diverge again.
      std::optional<int64_t> diverged =
          started ? divergedAt(records) : std::nullopt;
      if (diverged && *diverged <= last) {
        std::printf("== %s, seed %llu: diverged at step %lld, skipped\n",
                    names[r].c_str(), (unsigned long long)run.seed,
                    (long long)*diverged);
      } else if (started && isComplete(records, last, evaluates)) {
        std::printf("== %s, seed %llu: complete, skipped\n", names[r].c_str(),
                    (unsigned long long)run.seed);
      } else {
        // A run cut short before its first checkpoint starts over.
        pair.resume = started && fs::exists(pair.outDir + "/checkpoint");
        std::printf("== %s, seed %llu -> %s%s\n", names[r].c_str(),
                    (unsigned long long)run.seed, pair.outDir.c_str(),
                    pair.resume ? " (resumed)" : "");
        // The driver before anything on disk changes: without a GPU, a
        // study that would train fails and loses nothing.
        if (!cu) {
          cu = target.open();
        }
        if (started && !pair.resume)
          fs::remove(metrics);
        if (!module)
          module =
              cu->loadModule(recipes[r]->codeObject(),
                              recipes[r]->codeObjectOrigin());
        try {
          train(*cu, module, *recipes[r], run, pair);
        } catch (const Divergence &d) {
          // A result of the study, which goes on with the other pairs.
          std::printf("== %s, seed %llu: %s\n", names[r].c_str(),
                      (unsigned long long)run.seed, d.what());
        }
      }
      mlir::mxfp4::StudyCurves curves;
      for (const MetricsRecord &r : readMetrics(metrics))
        curves.addRecord(r.value);
      results.runs.back().push_back(std::move(curves));
    }
  }
  std::string table = mlir::mxfp4::formatStudyTable(results);
  std::string tablePath = options.outDir + "/study.md";
  writeFile(tablePath, mlir::mxfp4::getStudyHeading() + table);
  writeFile(options.outDir + "/study.svg",
            mlir::mxfp4::renderStudyPlot(results));
  std::printf("\n%s\ntable: %s\nplot:  %s/study.svg\n", table.c_str(),
              tablePath.c_str(), options.outDir.c_str());
}

} // namespace mlir::mxfp4::runtime
