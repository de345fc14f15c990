//===- StudyCommand.cpp - mxfp4-run study ---------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-run study --preset=tiny --steps=200 --seeds=1,2 --out=runs/study
//
// Trains every recipe of a list from the same weights and data order and
// prints the paper's Table 1 for our setting (mxfp4/API/Study.h). A recipe
// whose run diverges is recorded as "diverged at step N" and the study goes
// on; --dnc-threshold sets when a run does not converge.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/API/Study.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"


using namespace mlir::mxfp4;
namespace cl = llvm::cl;

cl::SubCommand mlir::mxfp4::recipeStudyCommand(
    "study", "Train a list of recipes from the same weights and data and "
             "print the paper's Table 1 for this setting");
static cl::OptionCategory studyCategory("study options");

#define STUDY_OPT(type, name, ...)                                             \
  static cl::opt<type> name(__VA_ARGS__, cl::sub(recipeStudyCommand),                \
                            cl::cat(studyCategory))

STUDY_OPT(std::string, preset, "preset",
          cl::desc("Model preset or JSON config file"),
          cl::value_desc("name|file.json"), cl::init("tiny"));
static cl::list<std::string> recipes(
    "recipes",
    cl::desc("Recipes to compare, the first is the baseline (default: bf16 "
             "and the paper's Table 1 presets plus fp4-all-dht16-wgrad-only)"),
    cl::value_desc("r1,r2,..."), cl::CommaSeparated, cl::sub(recipeStudyCommand),
    cl::cat(studyCategory));
static cl::list<uint64_t> seeds(
    "seeds", cl::desc("Seeds (default 1); two give the noise level"),
    cl::value_desc("s1,s2,..."), cl::CommaSeparated, cl::sub(recipeStudyCommand),
    cl::cat(studyCategory));
STUDY_OPT(int64_t, steps, "steps", cl::desc("Steps per run"), cl::init(0));
STUDY_OPT(double, lr, "lr", cl::desc("Peak learning rate"), cl::init(0.0));
STUDY_OPT(int64_t, warmup, "warmup", cl::desc("Warm-up steps"),
          cl::init(-1));
STUDY_OPT(std::string, data, "data", cl::desc("Data source (as for train)"),
          cl::value_desc("source"), cl::init("default"));
STUDY_OPT(std::string, tokenizer, "tokenizer", cl::desc("byte or cl100k"),
          cl::value_desc("name"));
STUDY_OPT(std::string, cacheDir, "cache-dir",
          cl::desc("Downloads and token caches"), cl::value_desc("dir"));
STUDY_OPT(std::string, outDir, "out", cl::desc("Study folder"),
          cl::value_desc("dir"), cl::init("runs/study"));
STUDY_OPT(int64_t, evalEvery, "eval-every",
          cl::desc("Evaluate every N steps (default: a twentieth of the "
                   "run, so 75% of it is an evaluation)"),
          cl::init(0));
STUDY_OPT(int64_t, evalBatches, "eval-batches",
          cl::desc("Batches per evaluation"), cl::init(4));
STUDY_OPT(bool, parallel, "parallel", cl::desc("Use all cores"),
          cl::init(true));
STUDY_OPT(double, dncThreshold, "dnc-threshold",
          cl::desc("A run does not converge (DNC) if it diverges or its "
                   "final eval loss is more than this fraction above the "
                   "baseline's of the same seed (default 0.2)"),
          cl::init(kDefaultDncThreshold));

int mlir::mxfp4::runStudyCommand() {
  auto fail = reportError;
  llvm::Expected<LlamaConfig> config =
      configFromCommandLine(preset, steps, lr, warmup);
  if (!config)
    return fail(config.takeError());
  if (!(dncThreshold >= 0))
    return fail(llvm::createStringError(
        "--dnc-threshold wants a fraction of at least 0, not " +
        std::to_string(dncThreshold)));
  StudyOptions options;
  options.dncThreshold = dncThreshold;
  options.train.config = *config;
  options.train.data = data;
  options.train.tokenizer = tokenizer;
  options.train.cacheDir = cacheDir;
  options.train.outDir = outDir;
  options.train.evalEvery =
      evalEvery > 0 ? evalEvery
                    : std::max<int64_t>(config->totalSteps / 20, 1);
  options.train.evalBatches = evalBatches;
  options.train.parallel = parallel;
  options.train.interrupt = &installInterruptHandler();
  for (llvm::StringRef recipe : getDefaultStudyRecipes())
    options.recipes.push_back(recipe.str());
  if (!recipes.empty())
    options.recipes.assign(recipes.begin(), recipes.end());
  if (!seeds.empty())
    options.seeds.assign(seeds.begin(), seeds.end());
  llvm::Expected<StudyReport> report = runStudy(options);
  removeInterruptHandler();
  if (!report)
    return fail(report.takeError());
  llvm::outs() << "\n" << report->table << "\n";
  llvm::outs() << "table: " << report->tablePath << "\njson:  "
               << report->jsonPath << "\nplot:  " << report->plotPath << "\n";
  return 0;
}
