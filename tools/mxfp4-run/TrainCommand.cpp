//===- TrainCommand.cpp - mxfp4-run train ---------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-run train --preset=tiny --recipe=fp4-all-dht16 --steps=300
//       --out=runs/tiny
//
// Trains a Llama on the CPU (mxfp4/API/Trainer.h). Ctrl-C saves a
// checkpoint before exiting; --resume continues it bit-identically. A run
// that diverges (a loss or gradient norm that is not finite) stops there,
// keeps its last finite checkpoint and exits with status 1.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/API/LlamaModel.h"
#include "mxfp4/API/Trainer.h"
#include "mxfp4/Train/Convergence.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace mlir::mxfp4;
namespace cl = llvm::cl;

cl::SubCommand mlir::mxfp4::trainCommand(
    "train", "Train a Llama on the CPU with an MXFP4 recipe (the main job)");
static cl::OptionCategory trainCategory("train options");

#define TRAIN_OPT(type, name, ...)                                             \
  static cl::opt<type> name(__VA_ARGS__, cl::sub(trainCommand),                \
                            cl::cat(trainCategory))

TRAIN_OPT(std::string, preset, "preset",
          cl::desc("Model preset (tiny, small, pilot, llama3.2-1b, "
                   "llama3.2-3b, llama3.1-8b) or a JSON config file"),
          cl::value_desc("name|file.json"), cl::init("tiny"));
TRAIN_OPT(std::string, recipe, "recipe",
          cl::desc("MXFP4 recipe: a preset (docs/Recipes.md) or settings; "
                   "'bf16' trains the GEMMs unquantized"),
          cl::value_desc("recipe"), cl::init("fp4-all-dht16"));
TRAIN_OPT(int64_t, steps, "steps",
          cl::desc("Steps of the schedule (default: the preset's)"),
          cl::init(0));
TRAIN_OPT(double, lr, "lr", cl::desc("Peak learning rate (default: the "
                                     "preset's)"),
          cl::init(0.0));
TRAIN_OPT(int64_t, warmup, "warmup",
          cl::desc("Warm-up steps (default: the preset's, capped at a tenth "
                   "of --steps)"),
          cl::init(-1));
TRAIN_OPT(uint64_t, seed, "seed",
          cl::desc("Seed of the initial weights and the data order"),
          cl::init(1));
TRAIN_OPT(std::string, data, "data",
          cl::desc("'default' (the npm corpus), a text file, a folder, or C4 "
                   "JSON lines (.json, .jsonl, .json.gz)"),
          cl::value_desc("source"), cl::init("default"));
TRAIN_OPT(std::string, tokenizer, "tokenizer",
          cl::desc("byte or cl100k (default: the preset's)"),
          cl::value_desc("name"));
TRAIN_OPT(std::string, cacheDir, "cache-dir",
          cl::desc("Downloads and token caches (default: $MXFP4_CACHE_DIR, "
                   "else ~/.cache/mxfp4)"),
          cl::value_desc("dir"));
TRAIN_OPT(std::string, outDir, "out",
          cl::desc("Run folder: metrics.jsonl, loss.svg, checkpoint/"),
          cl::value_desc("dir"), cl::init("runs/train"));
TRAIN_OPT(bool, resume, "resume",
          cl::desc("Continue the run in --out from its checkpoint"));
TRAIN_OPT(int64_t, evalEvery, "eval-every",
          cl::desc("Evaluate on held-out data every N steps (and at the end)"),
          cl::init(50));
TRAIN_OPT(int64_t, evalBatches, "eval-batches",
          cl::desc("Batches per evaluation"), cl::init(4));
TRAIN_OPT(int64_t, checkpointEvery, "checkpoint-every",
          cl::desc("Write a checkpoint every N steps (it is always written "
                   "at the end and on Ctrl-C)"),
          cl::init(0));
TRAIN_OPT(int64_t, stopAfter, "stop-after",
          cl::desc("Stop after N steps of this invocation, as Ctrl-C does"),
          cl::init(-1), cl::Hidden);
TRAIN_OPT(bool, telemetry, "telemetry",
          cl::desc("Record per-quantization telemetry in the report"));
TRAIN_OPT(bool, parallel, "parallel",
          cl::desc("Use all cores (results do not depend on it)"),
          cl::init(true));

TRAIN_OPT(std::string, exportGpuRun, "export-gpu-run",
          cl::desc("Instead of training, write the run's initial weights, "
                   "every step's token batch and the held-out batches for "
                   "the CUDA runtime (mxfp4-cuda-run train --run=DIR), which "
                   "then trains the step compiled with 'compile "
                   "--target=sm_90a' exactly as this command would"),
          cl::value_desc("dir"));

static std::atomic<bool> interrupted{false};

extern "C" void onInterrupt(int) { interrupted.store(true); }

std::atomic<bool> &mlir::mxfp4::installInterruptHandler() {
  std::signal(SIGINT, onInterrupt);
  return interrupted;
}

void mlir::mxfp4::removeInterruptHandler() { std::signal(SIGINT, SIG_DFL); }

int mlir::mxfp4::reportError(llvm::Error error) {
  llvm::WithColor::error() << llvm::toString(std::move(error)) << "\n";
  return 1;
}

/// Applies the command line to the preset.
llvm::Expected<LlamaConfig> mlir::mxfp4::configFromCommandLine(
    llvm::StringRef presetOrFile, int64_t stepsOverride, double lrOverride,
    int64_t warmupOverride) {
  llvm::Expected<LlamaConfig> config = loadLlamaConfig(presetOrFile);
  if (!config)
    return config.takeError();
  if (stepsOverride > 0) {
    config->totalSteps = stepsOverride;
    config->warmupSteps =
        std::min<int64_t>(config->warmupSteps, std::max<int64_t>(
                                                   stepsOverride / 10, 1));
  }
  if (lrOverride > 0)
    config->lr = lrOverride;
  if (warmupOverride >= 0)
    config->warmupSteps = warmupOverride;
  if (llvm::Error error = config->verify())
    return std::move(error);
  return config;
}

int mlir::mxfp4::runTrainCommand() {
  auto fail = reportError;
  llvm::Expected<LlamaConfig> config =
      configFromCommandLine(preset, steps, lr, warmup);
  if (!config)
    return fail(config.takeError());
  TrainOptions options;
  options.config = *config;
  options.recipe = recipe;
  options.seed = seed;
  options.data = data;
  options.tokenizer = tokenizer;
  options.cacheDir = cacheDir;
  options.outDir = outDir;
  options.resume = resume;
  options.evalEvery = evalEvery;
  options.evalBatches = evalBatches;
  options.checkpointEvery = checkpointEvery;
  if (stopAfter >= 0)
    options.stopAfter = stopAfter;
  options.telemetry = telemetry;
  options.parallel = parallel;
  if (!exportGpuRun.empty()) {
    if (llvm::Error error = exportTrainingRun(options, exportGpuRun))
      return fail(std::move(error));
    llvm::outs() << "wrote the initial weights and " << config->totalSteps
                 << " batches of '" << config->name << "' (seed " << seed
                 << ") to " << exportGpuRun << "\n";
    return 0;
  }
  options.interrupt = &installInterruptHandler();

  llvm::errs() << "training Llama '" << config->name << "' ("
               << config->numLayers << " layers, dim " << config->dim
               << ", seq " << config->seqLen << " x batch "
               << config->batchSize << ") with recipe '" << options.recipe
               << "' for " << config->totalSteps << " steps\n";
  llvm::Expected<TrainReport> report = train(options);
  removeInterruptHandler();
  if (!report)
    return fail(report.takeError());
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::format("compiled in %.1f s; %.0f tokens/s; peak memory %.0f MiB\n",
                     report->compileSeconds, report->tokensPerSecond,
                     report->peakRssMiB);
  if (!report->steps.empty())
    os << llvm::format("step %lld: loss %.4f", (long long)report->steps.back().step,
                       report->steps.back().loss);
  if (!report->evals.empty())
    os << llvm::format(", eval loss %.4f", report->evals.back().loss);
  os << "\n";
  os << "data:       " << report->dataDescription << "\n";
  os << "metrics:    " << report->metricsPath << "\n";
  os << "plot:       " << report->plotPath << "\n";
  // A run that diverged before its first checkpoint has none.
  if (!report->divergence || report->divergence->checkpointStep)
    os << "checkpoint: " << report->checkpointPath
       << " (Hugging Face safetensors + config.json)\n";
  if (report->divergence) {
    const Divergence &d = *report->divergence;
    return fail(llvm::createStringError(formatDivergenceError(
        d.step, d.reason, d.checkpointStep, report->checkpointPath)));
  }
  if (report->interrupted) {
    os << "stopped early; continue with the same command and --resume\n";
    return interrupted.load() ? 130 : 0;
  }
  return 0;
}
