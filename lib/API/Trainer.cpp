//===- Trainer.cpp - train a Llama with an MXFP4 recipe on the CPU --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Trainer.h"

#include "TrainingData.h"

#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/API/LlamaModel.h"
#include "mxfp4/Formats/RunLock.h"
#include "mxfp4/Formats/TrainingRun.h"
#include "mxfp4/Formats/WeightInit.h"
#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Runtime/Npy.h"
#include "mxfp4/Train/Checkpoint.h"
#include "mxfp4/Train/Commit.h"
#include "mxfp4/Train/Convergence.h"
#include "mxfp4/Train/Metrics.h"
#include "mxfp4/Train/Plot.h"
#include "mxfp4/Train/Progress.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <sys/resource.h>

using namespace mlir;
using namespace mlir::mxfp4;
using llvm::ArrayRef;
using llvm::createStringError;
using llvm::MutableArrayRef;
using llvm::SmallVector;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double peakRssMiB() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

float readF32(const HostArray &array) {
  float value;
  std::memcpy(&value, array.bytes.data(), sizeof(value));
  return value;
}

/// The training state of a run: the compiled step and its buffers.
class Run {
public:
  Run(const TrainOptions &options, TrainReport &report,
      CompiledTrainingStep &compiled)
      : options(options), config(options.config), report(report),
        params(getLlamaParameters(options.config)),
        telemetryRows(compiled.telemetryRows), module(*compiled.module) {}

  llvm::Error setUp(const TrainingTokens &data, const Checkpoint *resumeFrom);
  llvm::Error loop();

private:
  llvm::Error restore(const Checkpoint &saved);
  llvm::Error evaluate(int64_t step);
  llvm::Error checkpoint(int64_t step);
  /// Checkpoints `step` unless a parameter or moment is not finite, which
  /// is the run diverging at `step`.
  llvm::Error save(int64_t step);
  /// Records that the run diverged at `step`; the loop stops.
  llvm::Error diverge(int64_t step, std::string reason);
  llvm::Error drawPlot();
  /// The first record of a new run's metrics: what produced it (the
  /// compiler's commit, the recipe, the seed and the config).
  llvm::json::Object describeRun() const;
  void fillTrainBatch(int64_t step, HostArray &tokens) const;
  void message(const llvm::Twine &text) {
    if (progress)
      progress->message(text);
  }

  const TrainOptions &options;
  const LlamaConfig &config;
  TrainReport &report;
  SmallVector<LlamaParameter> params;
  const std::vector<std::string> &telemetryRows;
  const TrainingTokens *data = nullptr;

  CpuModule &module;
  std::unique_ptr<PreparedCall> stepCall, evalCall;
  std::optional<MetricsLog> metrics;
  std::optional<ProgressLine> progress;
  int64_t startStep = 0;
  /// The step of the checkpoint in the run folder, if there is one.
  std::optional<int64_t> savedStep;
  std::vector<std::vector<double>> telemetrySums;
  int64_t telemetrySteps = 0;
};

} // namespace

std::vector<std::vector<float>>
mlir::mxfp4::initLlamaParameters(const LlamaConfig &config, uint64_t seed) {
  std::vector<std::vector<float>> values;
  for (auto [i, param] : llvm::enumerate(getLlamaParameters(config))) {
    int64_t n = 1;
    for (int64_t size : param.shape)
      n *= size;
    values.push_back(drawInitialWeights(
        param.isMatrix ? WeightInit::Normal : WeightInit::Ones, seed, i, n,
        config.initStd));
  }
  return values;
}

CompiledTrainingStep::CompiledTrainingStep() = default;
CompiledTrainingStep::CompiledTrainingStep(CompiledTrainingStep &&) = default;
CompiledTrainingStep &
CompiledTrainingStep::operator=(CompiledTrainingStep &&) = default;
CompiledTrainingStep::~CompiledTrainingStep() = default;

llvm::Expected<CompiledTrainingStep>
mlir::mxfp4::compileTrainingStep(const LlamaConfig &config,
                                 llvm::StringRef recipe, bool telemetry,
                                 bool parallel) {
  Clock::time_point start = Clock::now();
  std::string fullRecipe = recipe.str();
  if (telemetry && !fullRecipe.empty())
    fullRecipe += ",telemetry=true";
  llvm::Expected<LlamaStepSource> source =
      buildLlamaStepSource(config, fullRecipe, {"loss", "train_step"});
  if (!source)
    return source.takeError();
  CompiledTrainingStep compiled;
  compiled.recipe = recipe.str();
  compiled.telemetryRows = source->telemetryRows;
  CpuCompileOptions compileOptions;
  compileOptions.parallel = parallel;
  llvm::Expected<std::unique_ptr<CpuModule>> module = CpuModule::fromSource(
      source->text, "llama." + config.name, compileOptions);
  if (!module)
    return module.takeError();
  compiled.module = std::move(*module);
  compiled.compileSeconds = secondsSince(start);
  return compiled;
}

/// The training batch of `step`: `batch` windows of `window` tokens at
/// offsets drawn from the seed, step and row.
static void drawTrainBatch(const std::vector<uint32_t> &train, uint64_t seed,
                           int64_t step, int64_t batch, int64_t window,
                           int32_t *out) {
  uint64_t starts = train.size() - window + 1;
  for (int64_t row = 0; row < batch; ++row) {
    uint64_t offset = mixCounter(seed, 0x5eed0000 + step, row) % starts;
    for (int64_t t = 0; t < window; ++t)
      out[row * window + t] = static_cast<int32_t>(train[offset + t]);
  }
}

/// Held-out batch `index` of `batches`: fixed windows spread evenly over
/// the validation split, the same at every evaluation.
static void drawEvalBatch(const std::vector<uint32_t> &valid, int64_t index,
                          int64_t batches, int64_t batch, int64_t window,
                          int32_t *out) {
  int64_t windows = batches * batch;
  uint64_t span = valid.size() - window;
  for (int64_t row = 0; row < batch; ++row) {
    int64_t w = index * batch + row;
    uint64_t offset =
        windows > 1 ? span * static_cast<uint64_t>(w) / (windows - 1) : 0;
    for (int64_t t = 0; t < window; ++t)
      out[row * window + t] = static_cast<int32_t>(valid[offset + t]);
  }
}

void Run::fillTrainBatch(int64_t step, HostArray &tokens) const {
  drawTrainBatch(data->train, options.seed, step, config.batchSize,
                 config.seqLen + 1,
                 reinterpret_cast<int32_t *>(tokens.bytes.data()));
}

llvm::Error Run::setUp(const TrainingTokens &tokens,
                       const Checkpoint *resumeFrom) {
  data = &tokens;
  int64_t window = config.seqLen + 1;
  if (static_cast<int64_t>(data->train.size()) < window ||
      static_cast<int64_t>(data->validation.size()) < window)
    return createStringError(llvm::formatv(
        "the data has {0} training and {1} validation tokens; a sequence "
        "needs {2}",
        data->train.size(), data->validation.size(), window));
  if (data->vocabSize > static_cast<uint64_t>(config.vocabSize))
    return createStringError(llvm::formatv(
        "tokenizer '{0}' has {1} ids but the model's vocab_size is {2}",
        data->tokenizer, data->vocabSize, config.vocabSize));

  std::vector<std::vector<float>> init =
      initLlamaParameters(config, options.seed);
  SmallVector<CallArgument> stepArgs, evalArgs;
  auto f32Array = [](ArrayRef<int64_t> shape, const float *values) {
    HostArray array = HostArray::zeros(DType::Float32, shape);
    if (values)
      std::memcpy(array.bytes.data(), values, array.bytes.size());
    return array;
  };
  for (int k = 0; k < 3; ++k)
    for (auto [i, p] : llvm::enumerate(params))
      stepArgs.push_back(
          {f32Array(p.shape, k == 0 ? init[i].data() : nullptr), p.name});
  HostArray tokensArray =
      HostArray::zeros(DType::Int32, {config.batchSize, window});
  stepArgs.push_back({tokensArray, "tokens"});
  Scalar step;
  stepArgs.push_back({step, "step"});
  for (size_t i = 0; i < params.size(); ++i)
    evalArgs.push_back(stepArgs[i]);
  evalArgs.push_back({tokensArray, "tokens"});
  evalArgs.push_back({step, "step"});

  llvm::Expected<std::unique_ptr<PreparedCall>> prepared =
      module.prepare("train_step", stepArgs);
  if (!prepared)
    return prepared.takeError();
  stepCall = std::move(*prepared);
  prepared = module.prepare("loss", evalArgs);
  if (!prepared)
    return prepared.takeError();
  evalCall = std::move(*prepared);

  std::string metricsPath = options.outDir + "/metrics.jsonl";
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outDir))
    return createStringError("cannot create '" + options.outDir +
                             "': " + ec.message());
  if (resumeFrom)
    if (llvm::Error error = restore(*resumeFrom))
      return error;
  llvm::Expected<MetricsLog> log = MetricsLog::open(metricsPath);
  if (!log)
    return log.takeError();
  metrics.emplace(std::move(*log));
  if (options.resume) {
    if (llvm::Error error = metrics->truncateAfterStep(startStep))
      return error;
  } else if (llvm::Error error = metrics->append(describeRun())) {
    return error;
  }
  report.metricsPath = metricsPath;
  report.plotPath = options.outDir + "/loss.svg";
  report.checkpointPath = options.outDir + "/checkpoint";
  report.tokensPerStep = config.getTokensPerStep();
  return llvm::Error::success();
}

/// Reads the checkpoint of `options.outDir` and checks that it was trained
/// with the same seed, recipe and config, before anything is compiled.
static llvm::Expected<Checkpoint> readCompatibleCheckpoint(
    const TrainOptions &options) {
  std::string dir = options.outDir + "/checkpoint";
  llvm::Expected<Checkpoint> saved = readCheckpoint(dir);
  if (!saved)
    return saved.takeError();
  if (llvm::Error error = checkResumable(dir, *saved, options.seed,
                                         options.recipe, options.config))
    return std::move(error);
  return saved;
}

llvm::Error Run::restore(const Checkpoint &saved) {
  std::string dir = options.outDir + "/checkpoint";
  int64_t step = *saved.trainerState.step;
  MutableArrayRef<HostArray> inputs = stepCall->getInputs();
  auto load = [&](ArrayRef<NamedArray> arrays, size_t base,
                  llvm::StringRef suffix) -> llvm::Error {
    for (auto [i, p] : llvm::enumerate(params)) {
      std::string name = p.name + suffix.str();
      const NamedArray *found = nullptr;
      for (const NamedArray &array : arrays)
        if (array.name == name)
          found = &array;
      HostArray &target = inputs[base + i];
      if (!found || found->array.dtype != DType::Float32 ||
          found->array.shape != target.shape)
        return createStringError(
            "cannot resume '" + dir + "': tensor '" + name +
            "' is missing or has another dtype or shape than " +
            formatShape(target.shape) + " f32");
      target.bytes = found->array.bytes;
    }
    return llvm::Error::success();
  };
  size_t n = params.size();
  if (llvm::Error error = load(saved.params, 0, ""))
    return error;
  if (llvm::Error error = load(saved.optimizerState, n, kFirstMomentSuffix))
    return error;
  if (llvm::Error error =
          load(saved.optimizerState, 2 * n, kSecondMomentSuffix))
    return error;
  startStep = step;
  savedStep = step;
  // The curve so far, for the plot and the report.
  if (llvm::Expected<std::vector<llvm::json::Object>> records =
          readMetrics(options.outDir + "/metrics.jsonl")) {
    // A run that diverged resumes from its last finite checkpoint and runs
    // the steps after it again: said, not silent.
    std::optional<int64_t> diverged;
    std::string reason;
    for (const llvm::json::Object &r : *records) {
      std::optional<int64_t> s = r.getInteger("step");
      if (s && *s > startStep && !diverged && recordsDivergence(r))
        diverged = *s;
      if (s && s == diverged)
        if (std::optional<llvm::StringRef> why = r.getString(getDivergedKey()))
          reason = ": " + why->str();
    }
    // Before the progress line exists, so straight to stderr.
    if (diverged && options.progress)
      llvm::errs() << "note: this run diverged at step " << *diverged << reason
                   << "; resuming from its checkpoint of step " << startStep
                   << "\n";
    for (const llvm::json::Object &r : *records) {
      std::optional<int64_t> s = r.getInteger("step");
      if (!s || *s > startStep)
        continue;
      if (std::optional<double> loss = r.getNumber("eval_loss"))
        report.evals.push_back({*s, *s * config.getTokensPerStep(), *loss});
      else if (std::optional<double> loss = r.getNumber("loss"))
        report.steps.push_back({*s, *loss, r.getNumber("lr").value_or(0),
                                r.getNumber("grad_norm").value_or(0)});
    }
  } else {
    llvm::consumeError(records.takeError());
  }
  return llvm::Error::success();
}

llvm::Error Run::evaluate(int64_t step) {
  MutableArrayRef<HostArray> inputs = evalCall->getInputs();
  MutableArrayRef<HostArray> current = stepCall->getInputs();
  for (size_t i = 0; i < params.size(); ++i)
    inputs[i].bytes = current[i].bytes;
  HostArray &tokens = inputs[params.size()];
  // Per-step random rotations of the Fprops use the current step's draw.
  int64_t stepValue = step;
  std::memcpy(inputs[params.size() + 1].bytes.data(), &stepValue,
              sizeof(stepValue));
  double sum = 0;
  for (int64_t batch = 0; batch < options.evalBatches; ++batch) {
    drawEvalBatch(data->validation, batch, options.evalBatches,
                  config.batchSize, config.seqLen + 1,
                  reinterpret_cast<int32_t *>(tokens.bytes.data()));
    if (llvm::Error error = evalCall->run())
      return error;
    sum += readF32(evalCall->getResults()[0]);
  }
  double loss = sum / static_cast<double>(options.evalBatches);
  int64_t tokensSeen = step * config.getTokensPerStep();
  report.evals.push_back({step, tokensSeen, loss});
  message(llvm::formatv("step {0}: eval loss {1:F4}", step, loss));
  return metrics->append(llvm::json::Object{
      {"step", step}, {"tokens", tokensSeen}, {"eval_loss", loss}});
}

llvm::json::Object Run::describeRun() const {
  llvm::json::Object what{{"commit", getBuildCommit()},
                          {"target", "cpu"},
                          {"recipe", options.recipe},
                          {"seed", static_cast<int64_t>(options.seed)},
                          {"data", data ? data->description : ""},
                          {"eval_every", options.evalEvery},
                          {"eval_batches", options.evalBatches},
                          {"config", getLlamaConfigJSON(config)}};
  return llvm::json::Object{
      {"step", 0}, {"tokens", 0}, {getRunKey(), std::move(what)}};
}

llvm::Error Run::checkpoint(int64_t step) {
  MutableArrayRef<HostArray> inputs = stepCall->getInputs();
  std::vector<NamedArray> weights, moments;
  size_t n = params.size();
  for (auto [i, p] : llvm::enumerate(params)) {
    weights.push_back({p.name, inputs[i]});
    moments.push_back({getCheckpointTensorName(p.name, 1), inputs[n + i]});
    moments.push_back({getCheckpointTensorName(p.name, 2), inputs[2 * n + i]});
  }
  TrainerState state;
  state.step = step;
  state.seed = static_cast<int64_t>(options.seed);
  state.recipe = options.recipe;
  state.data = data->description;
  state.tokenizer = data->tokenizer;
  state.tokensSeen = step * config.getTokensPerStep();
  if (llvm::Error error = writeCheckpoint(report.checkpointPath, config,
                                          weights, moments, state))
    return error;
  savedStep = step;
  message("saved checkpoint of step " + llvm::Twine(step) + " to " +
          report.checkpointPath);
  return llvm::Error::success();
}

llvm::Error Run::save(int64_t step) {
  MutableArrayRef<HostArray> inputs = stepCall->getInputs();
  size_t n = params.size();
  for (size_t i = 0; i < 3 * n; ++i)
    if (!isFiniteF32(inputs[i].bytes.data(), inputs[i].bytes.size()))
      return diverge(step, describeNonFiniteTensor(getCheckpointTensorName(
                               params[i % n].name, unsigned(i / n))));
  return checkpoint(step);
}

llvm::Error Run::diverge(int64_t step, std::string reason) {
  report.divergence = Divergence{step, reason, savedStep};
  return metrics->append(
      llvm::json::Object{{"step", step},
                         {"tokens", step * config.getTokensPerStep()},
                         {getDivergedKey(), std::move(reason)}});
}

llvm::Error Run::drawPlot() {
  LossCurve train, eval;
  for (const TrainPoint &p : report.steps) {
    train.tokens.push_back(static_cast<double>(p.step * report.tokensPerStep));
    train.loss.push_back(p.loss);
  }
  for (const EvalPoint &p : report.evals) {
    eval.tokens.push_back(static_cast<double>(p.tokens));
    eval.loss.push_back(p.loss);
  }
  return writeLossPlot(
      report.plotPath,
      "Llama " + config.name + ", seed " + std::to_string(options.seed),
      "train (" + (options.recipe.empty() ? std::string("f32") : options.recipe) +
          ")",
      train, eval);
}

llvm::Error Run::loop() {
  int64_t total = config.totalSteps;
  size_t n = params.size();
  if (options.progress)
    progress.emplace(total);
  MutableArrayRef<HostArray> inputs = stepCall->getInputs();
  MutableArrayRef<HostArray> results = stepCall->getResults();
  HostArray &tokens = inputs[3 * n];
  HostArray &stepArray = inputs[3 * n + 1];
  bool hasTelemetry = !telemetryRows.empty();
  telemetrySums.assign(telemetryRows.size(), std::vector<double>(3, 0.0));

  Clock::time_point start = Clock::now();
  int64_t done = 0;
  for (int64_t step = startStep; step < total; ++step) {
    if (options.interrupt && options.interrupt->load()) {
      report.interrupted = true;
      break;
    }
    if (options.stopAfter && done == *options.stopAfter) {
      report.interrupted = true;
      break;
    }
    fillTrainBatch(step, tokens);
    int64_t stepValue = step;
    std::memcpy(stepArray.bytes.data(), &stepValue, sizeof(stepValue));
    if (llvm::Error error = stepCall->run())
      return error;
    ++done;
    // The updated parameters and moments become the next step's inputs.
    for (size_t i = 0; i < 3 * n; ++i)
      std::swap(inputs[i].bytes, results[3 + i].bytes);
    double loss = readF32(results[0]), gradNorm = readF32(results[1]),
           lr = readF32(results[2]);
    report.steps.push_back({step + 1, loss, lr, gradNorm});
    double elapsed = secondsSince(start);
    double tokensPerSecond = done * config.getTokensPerStep() / elapsed;
    if (progress)
      progress->update(step + 1, loss, lr, tokensPerSecond);
    llvm::json::Object record{{"step", step + 1},
                              {"tokens", (step + 1) * config.getTokensPerStep()},
                              {"loss", loss},
                              {"lr", lr},
                              {"grad_norm", gradNorm},
                              {"tokens_per_s", tokensPerSecond},
                              {"elapsed_s", elapsed}};
    if (hasTelemetry) {
      const HostArray &table = results.back();
      auto *rows = reinterpret_cast<const float *>(table.bytes.data());
      // Columns: elements, clipped, flushed, sqnr_db, ... (Recipes.md §7).
      for (size_t r = 0; r < telemetryRows.size(); ++r) {
        telemetrySums[r][0] += rows[r * 8 + 1];
        telemetrySums[r][1] += rows[r * 8 + 2];
        telemetrySums[r][2] += rows[r * 8 + 3];
      }
      ++telemetrySteps;
    }
    if (llvm::Error error = metrics->append(record))
      return error;
    std::string diverged = describeDivergence(loss, gradNorm);
    if (!diverged.empty()) {
      if (llvm::Error error = diverge(step + 1, diverged))
        return error;
      break;
    }
    bool last = step + 1 == total;
    if ((options.evalEvery > 0 && (step + 1) % options.evalEvery == 0) ||
        last) {
      if (llvm::Error error = evaluate(step + 1))
        return error;
      diverged = describeHeldOutDivergence(report.evals.back().loss);
      if (!diverged.empty()) {
        if (llvm::Error error = diverge(step + 1, diverged))
          return error;
        break;
      }
    }
    if (options.checkpointEvery > 0 &&
        (step + 1) % options.checkpointEvery == 0 && !last) {
      if (llvm::Error error = save(step + 1))
        return error;
      if (report.divergence)
        break;
    }
  }
  report.runSeconds = secondsSince(start);
  if (done > 0)
    report.tokensPerSecond =
        done * config.getTokensPerStep() / report.runSeconds;
  if (progress)
    progress->finish();
  int64_t finalStep = report.steps.empty() ? startStep : report.steps.back().step;
  // The end, Ctrl-C and --stop-after save through the same check.
  if (!report.divergence &&
      (done > 0 || !llvm::sys::fs::exists(report.checkpointPath)))
    if (llvm::Error error = save(finalStep))
      return error;
  if (report.divergence)
    report.interrupted = false;
  for (size_t r = 0; r < telemetryRows.size() && telemetrySteps > 0; ++r)
    report.telemetry.push_back({telemetryRows[r],
                                telemetrySums[r][0] / telemetrySteps,
                                telemetrySums[r][1] / telemetrySteps,
                                telemetrySums[r][2] / telemetrySteps});
  report.peakRssMiB = peakRssMiB();
  return drawPlot();
}

llvm::Expected<TrainReport>
mlir::mxfp4::train(const TrainOptions &options,
                   CompiledTrainingStep *compiled) {
  if (llvm::Error error = options.config.verify())
    return std::move(error);
  if (options.outDir.empty())
    return createStringError("no output folder given (--out)");
  // One trainer a folder, from before the checks below to the end (a second
  // one is refused before it spends time compiling).
  RunFolderLock lock;
  std::string opened = openRunFolder(options.outDir, lock);
  if (!opened.empty())
    return createStringError(opened);
  if (!options.resume &&
      llvm::sys::fs::exists(options.outDir + "/metrics.jsonl"))
    return createStringError(
        "'" + options.outDir +
        "' already holds a run (metrics.jsonl); continue it with --resume or "
        "choose another --out");
  if (options.resume &&
      !llvm::sys::fs::exists(options.outDir + "/checkpoint"))
    return createStringError("cannot resume: '" + options.outDir +
                             "' has no checkpoint folder");
  std::optional<Checkpoint> resumeFrom;
  if (options.resume) {
    llvm::Expected<Checkpoint> saved = readCompatibleCheckpoint(options);
    if (!saved)
      return saved.takeError();
    resumeFrom = std::move(*saved);
  }
  TrainReport report;
  llvm::Expected<TrainingTokens> tokens = loadTrainingTokens(
      options.data,
      options.tokenizer.empty() ? options.config.tokenizer : options.tokenizer,
      options.cacheDir);
  if (!tokens)
    return tokens.takeError();
  report.dataDescription = tokens->description;
  CompiledTrainingStep own;
  if (!compiled) {
    llvm::Expected<CompiledTrainingStep> step = compileTrainingStep(
        options.config, options.recipe, options.telemetry, options.parallel);
    if (!step)
      return step.takeError();
    own = std::move(*step);
    compiled = &own;
    report.compileSeconds = own.compileSeconds;
  }
  Run run(options, report, *compiled);
  if (llvm::Error error =
          run.setUp(*tokens, resumeFrom ? &*resumeFrom : nullptr))
    return std::move(error);
  if (llvm::Error error = run.loop())
    return std::move(error);
  return report;
}

llvm::Error mxfp4::exportTrainingRun(const TrainOptions &options,
                                     llvm::StringRef dir) {
  const LlamaConfig &config = options.config;
  llvm::Expected<TrainingTokens> data = loadTrainingTokens(
      options.data,
      options.tokenizer.empty() ? config.tokenizer : options.tokenizer,
      options.cacheDir);
  if (!data)
    return data.takeError();
  int64_t window = config.seqLen + 1;
  if (static_cast<int64_t>(data->train.size()) < window ||
      static_cast<int64_t>(data->validation.size()) < window)
    return createStringError(llvm::formatv(
        "the data has {0} training and {1} validation tokens; a sequence "
        "needs {2}",
        data->train.size(), data->validation.size(), window));
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return createStringError("cannot create '" + dir + "': " + ec.message());

  // The manifest: what the runtime checks and loops over.
  bool bytes = data->vocabSize <= 256;
  TrainingRunManifest manifest;
  manifest.steps = config.totalSteps;
  manifest.batch = config.batchSize;
  manifest.window = window;
  manifest.tokenBytes = bytes ? 1 : 4;
  manifest.seed = options.seed;
  manifest.initStd = config.initStd;
  manifest.evalEvery = options.evalEvery;
  manifest.evalBatches = options.evalBatches;
  manifest.model = config.name;
  std::vector<std::vector<float>> init =
      initLlamaParameters(config, options.seed);
  // Small models carry their exact initial weights; larger ones are drawn by
  // the runtime from the seed with the same generator (a few hundred MiB
  // would not travel).
  int64_t elements = 0;
  for (const std::vector<float> &v : init)
    elements += v.size();
  bool carry = elements * 4 <= (int64_t(16) << 20);
  auto path = [&](const std::string &file) { return (dir + "/" + file).str(); };
  for (auto [i, p] : llvm::enumerate(getLlamaParameters(config))) {
    manifest.params.push_back(
        {p.name, p.isMatrix ? WeightInit::Normal : WeightInit::Ones,
         std::vector<int64_t>(p.shape.begin(), p.shape.end())});
    if (!carry)
      continue;
    HostArray array = HostArray::zeros(DType::Float32, p.shape);
    std::memcpy(array.bytes.data(), init[i].data(), array.bytes.size());
    if (llvm::Error error =
            writeNpyFile(array, path(getTrainingRunParameterFile(i))))
      return error;
  }
  if (llvm::Error error = writeFileAtomically(
          path(kTrainingRunManifestFile), formatTrainingRunManifest(manifest)))
    return error;
  // The runtime's checkpoints carry these, as the CPU trainer's do.
  std::string mxfp4Config;
  {
    llvm::raw_string_ostream os(mxfp4Config);
    llvm::json::OStream json(os, /*IndentSize=*/2);
    writeJSON(json, llvm::json::Value(getLlamaConfigJSON(config)));
    os << "\n";
  }
  if (llvm::Error error = writeFileAtomically(path(kTrainingRunConfigFile),
                                              config.toHuggingFaceJSON()))
    return error;
  if (llvm::Error error =
          writeFileAtomically(path(kTrainingRunMxfp4ConfigFile), mxfp4Config))
    return error;

  // Every step's batch and the held-out batches, drawn as the CPU trainer
  // draws them.
  std::vector<int32_t> batch(config.batchSize * window);
  auto append = [&](std::string &tokens) {
    appendTrainingRunTokens(tokens, batch.data(), batch.size(),
                            manifest.tokenBytes);
  };
  std::string tokens;
  tokens.reserve(config.totalSteps * batch.size() * (bytes ? 1 : 4));
  for (int64_t step = 0; step < config.totalSteps; ++step) {
    drawTrainBatch(data->train, options.seed, step, config.batchSize, window,
                   batch.data());
    append(tokens);
  }
  if (llvm::Error error =
          writeFileAtomically(path(kTrainingRunBatchesFile), tokens))
    return error;
  std::string evalTokens;
  for (int64_t b = 0; b < options.evalBatches; ++b) {
    drawEvalBatch(data->validation, b, options.evalBatches, config.batchSize,
                  window, batch.data());
    append(evalTokens);
  }
  return writeFileAtomically(path(kTrainingRunEvalFile), evalTokens);
}

llvm::Error mxfp4::writeTrainingRunFolder(llvm::StringRef dir,
                                          const TrainingRunManifest &manifest,
                                          llvm::ArrayRef<HostArray> params,
                                          llvm::ArrayRef<int32_t> batches,
                                          llvm::ArrayRef<int32_t> evalBatches) {
  auto fail = [&](const llvm::Twine &what) {
    return createStringError("training run '" + dir + "': " + what);
  };
  if (manifest.steps < 1 || manifest.batch < 1 || manifest.window < 2)
    return fail(llvm::formatv("want at least one step, a batch of one and a "
                              "window of two tokens, got {0}, {1} and {2}",
                              manifest.steps, manifest.batch, manifest.window));
  if (manifest.params.size() != params.size())
    return fail(llvm::formatv("{0} parameters named, {1} given",
                              manifest.params.size(), params.size()));
  for (auto [i, array] : llvm::enumerate(params)) {
    const TrainingRunParameter &p = manifest.params[i];
    if (array.dtype != DType::Float32 ||
        llvm::ArrayRef<int64_t>(array.shape) != llvm::ArrayRef(p.shape))
      return fail("parameter '" + p.name +
                  "' is not an f32 array of its "
                  "declared shape");
  }
  size_t batchTokens = manifest.batch * manifest.window;
  if (batches.size() != manifest.steps * batchTokens ||
      evalBatches.size() != manifest.evalBatches * batchTokens)
    return fail(llvm::formatv("{0} training and {1} held-out tokens do not "
                              "make {2} and {3} batches of {4} x {5}",
                              batches.size(), evalBatches.size(),
                              manifest.steps, manifest.evalBatches,
                              manifest.batch, manifest.window));
  for (int32_t t : llvm::concat<const int32_t>(batches, evalBatches))
    if (t < 0 || (manifest.tokenBytes == 1 && t > 255))
      return fail(llvm::formatv("token id {0} is outside the {1}", t,
                                manifest.tokenBytes == 1 ? "bytes 0..255"
                                                         : "non-negative ids"));
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create it: " + ec.message());
  auto path = [&](const std::string &file) { return (dir + "/" + file).str(); };
  for (auto [i, array] : llvm::enumerate(params))
    if (llvm::Error error =
            writeNpyFile(array, path(getTrainingRunParameterFile(i))))
      return error;
  auto bytesOf = [&](llvm::ArrayRef<int32_t> tokens) {
    std::string out;
    appendTrainingRunTokens(out, tokens.data(), tokens.size(),
                            manifest.tokenBytes);
    return out;
  };
  if (llvm::Error error =
          writeFileAtomically(path(kTrainingRunBatchesFile), bytesOf(batches)))
    return error;
  if (llvm::Error error =
          writeFileAtomically(path(kTrainingRunEvalFile), bytesOf(evalBatches)))
    return error;
  // The manifest last: a folder without it is not a run.
  return writeFileAtomically(path(kTrainingRunManifestFile),
                             formatTrainingRunManifest(manifest));
}
