//===- Trainer.h - train a Llama with an MXFP4 recipe on the CPU -*- C++ -*-==//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loop behind `mxfp4-run train`: compiles the training step of a config
// under a recipe once, then feeds it batches, evaluates on held-out data,
// logs metrics.jsonl, draws loss.svg and writes Hugging Face checkpoints.
//
// Everything a run does is a function of (config, recipe, seed, data):
// parameters are drawn from a counter-based generator, batch b of step s
// reads windows at offsets hashed from (seed, s, b), and the compiled step
// is deterministic whatever the number of threads. So two runs with the same
// seed give the same curve, runs of different recipes start from the same
// weights and see the same data, and a resumed run continues bit-identically.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_TRAINER_H
#define MXFP4_API_TRAINER_H

#include "mxfp4/Formats/TrainingRun.h"
#include "mxfp4/Models/LlamaConfig.h"
#include "mxfp4/Runtime/HostArray.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

class CpuModule;

/// A training step compiled for the CPU, reusable across runs (seeds) of
/// the same config and recipe.
struct CompiledTrainingStep {
  std::unique_ptr<CpuModule> module;
  std::string recipe;
  /// The rows of the telemetry result, if the recipe records telemetry.
  std::vector<std::string> telemetryRows;
  double compileSeconds = 0;

  CompiledTrainingStep();
  CompiledTrainingStep(CompiledTrainingStep &&);
  CompiledTrainingStep &operator=(CompiledTrainingStep &&);
  ~CompiledTrainingStep();
};

/// Builds and compiles @loss and @train_step of `config` under `recipe`
/// (with telemetry=true added when `telemetry` and the recipe is not empty).
llvm::Expected<CompiledTrainingStep>
compileTrainingStep(const LlamaConfig &config, llvm::StringRef recipe,
                    bool telemetry, bool parallel = true);

struct TrainOptions {
  /// The model and schedule; `config.totalSteps` is the run's length.
  LlamaConfig config;
  /// A recipe (docs/Recipes.md); empty trains in f32 as built.
  std::string recipe;
  uint64_t seed = 1;
  /// "default" (the npm corpus), a text file or folder, or C4 JSON lines.
  std::string data = "default";
  /// "byte" or "cl100k"; empty takes the config's.
  std::string tokenizer;
  /// Where downloads and token caches live; empty takes the default.
  std::string cacheDir;
  /// Run folder: metrics.jsonl, loss.svg, checkpoint/.
  std::string outDir;
  /// Continue from outDir/checkpoint.
  bool resume = false;
  /// Evaluate every N steps (and at the end) on `evalBatches` batches.
  int64_t evalEvery = 50;
  int64_t evalBatches = 4;
  /// Write a checkpoint every N steps (0: only at the end or on Ctrl-C).
  int64_t checkpointEvery = 0;
  /// Stop after this many steps of this invocation, checkpointing as on
  /// Ctrl-C (for tests of resume).
  std::optional<int64_t> stopAfter;
  /// Collect per-quantization telemetry (adds telemetry=true to the recipe).
  bool telemetry = false;
  bool parallel = true;
  /// Print the progress line and messages (to stderr).
  bool progress = true;
  /// Set asynchronously (Ctrl-C) to stop after the current step.
  std::atomic<bool> *interrupt = nullptr;
};

struct TrainPoint {
  int64_t step; // 1-based: the number of updates done
  double loss, lr, gradNorm;
};

struct EvalPoint {
  int64_t step;
  int64_t tokens;
  double loss;
};

/// Telemetry of one quantization, averaged over the steps of the run.
struct TelemetryRow {
  std::string name; // layer/role/operand
  double clipped = 0, flushed = 0, sqnrDb = 0;
};

/// Where and why a run diverged (mxfp4/Train/Convergence.h).
struct Divergence {
  /// The step (1-based) whose loss, gradient norm, held-out loss or updated
  /// state was not finite: training stopped after it.
  int64_t step = 0;
  std::string reason;
  /// The step of the checkpoint left in the run folder, the last one
  /// written (never one with non-finite values); none if there is none.
  std::optional<int64_t> checkpointStep;
};

struct TrainReport {
  std::vector<TrainPoint> steps;
  std::vector<EvalPoint> evals;
  std::vector<TelemetryRow> telemetry;
  int64_t tokensPerStep = 0;
  double compileSeconds = 0, runSeconds = 0, tokensPerSecond = 0;
  /// Peak resident memory of the process, in MiB.
  double peakRssMiB = 0;
  bool interrupted = false;
  /// Set if the run diverged. Its steps up to the divergence are in
  /// `steps`, `evals`, metrics.jsonl (with a record marking it) and the
  /// plot; the caller reports it as the failure it is.
  std::optional<Divergence> divergence;
  std::string metricsPath, plotPath, checkpointPath;
  std::string dataDescription;
};

/// Trains as `options` say, with `compiled` if given (it must be of the same
/// config and recipe) or a step compiled here; errors name what is wrong
/// (config, data, checkpoint) and leave earlier outputs in place. A run that
/// diverges stops there and returns its report with `divergence` set,
/// keeping the last checkpoint written before it.
llvm::Expected<TrainReport> train(const TrainOptions &options,
                                  CompiledTrainingStep *compiled = nullptr);

/// The initial parameters of `config` for `seed`, in getLlamaParameters
/// order: N(0, initStd) matrices, unit RMSNorm gains.
std::vector<std::vector<float>> initLlamaParameters(const LlamaConfig &config,
                                                    uint64_t seed);

/// Writes what a GPU runtime needs to train exactly as `options` would on
/// the CPU (runtime/, `mxfp4-cuda-run train --run=DIR`): run.txt
/// (steps, batch, window, token width, seed, evaluation interval and
/// batches, the model's name, the parameters' names, initializers and
/// shapes in argument order), the initial parameters param<i>.npy from the
/// seed when they fit in 16 MiB (else the runtime draws them with the same
/// generator), batches.bin, every step's token batch as the CPU trainer
/// draws it, eval.bin, the held-out batches of every evaluation (bytes for
/// vocabularies of at most 256 ids, else little-endian int32), and
/// config.json and mxfp4_config.json for the runtime's checkpoints.
llvm::Error exportTrainingRun(const TrainOptions &options, llvm::StringRef dir);

/// Writes a run folder for given weights and batches (a frontend's model):
/// run.txt from `manifest` (its params name `params` in order), param<i>.npy
/// for every parameter, batches.bin (manifest.steps batches of
/// manifest.batch x manifest.window int32 tokens) and eval.bin
/// (manifest.evalBatches batches); the tokens are written as bytes when
/// manifest.tokenBytes is 1. Checks that every size agrees first.
llvm::Error writeTrainingRunFolder(llvm::StringRef dir,
                                   const TrainingRunManifest &manifest,
                                   llvm::ArrayRef<HostArray> params,
                                   llvm::ArrayRef<int32_t> batches,
                                   llvm::ArrayRef<int32_t> evalBatches);

} // namespace mlir::mxfp4

#endif // MXFP4_API_TRAINER_H
