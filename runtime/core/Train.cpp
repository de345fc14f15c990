//===- Train.cpp - @train_step, step after step ---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "Checkpoint.h"
#include "Failure.h"
#include "LossPlot.h"
#include "Memory.h"
#include "Metrics.h"
#include "Npy.h"
#include "Replay.h"
#include "Timing.h"

#include "mxfp4/Formats/Checkpoint.h"
#include "mxfp4/Formats/RunLock.h"
#include "mxfp4/Train/Convergence.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace mlir::mxfp4::runtime {

namespace fs = std::filesystem;

/// The argument records of `program`, by index.
static std::vector<const Record *> argumentRecords(const Program &program) {
  std::vector<const Record *> args;
  for (const Record &r : program.records)
    if (r.kind == Record::Arg) {
      if (args.size() <= r.index)
        args.resize(r.index + 1);
      args[r.index] = &r;
    }
  return args;
}

/// Checks that `function`'s arguments are `copies` times the buffers of the
/// run's parameters, a batch and a step; `what` names the buffers.
static void checkSignature(const Compiled &compiled, const TrainingRun &run,
                           const Program &program, const std::string &function,
                           size_t copies, const std::string &what) {
  std::vector<const Record *> args = argumentRecords(program);
  size_t n = run.params.size();
  bool fits = args.size() == copies * n + 2;
  for (size_t i = 0; fits && i < args.size(); ++i) {
    size_t bytes = 4;
    if (i < copies * n)
      for (int64_t d : run.params[i % n].second)
        bytes *= d;
    else if (i == copies * n)
      bytes = run.batchTokens() * 4;
    fits = args[i] && args[i]->buffer == (i <= copies * n) &&
           (i > copies * n || args[i]->bytes == bytes);
  }
  if (!fits)
    fail("@" + function + " of '" + compiled.planOrigin() + "' does not take " +
         what + ", a " + std::to_string(run.batch) + " x " +
         std::to_string(run.window) + " batch and a step, as the run '" +
         run.dir + "' has them: were they made from the same config?");
}

namespace {

/// A training run on the device.
class Trainer {
public:
  Trainer(Device &cu, const Compiled &compiled, const TrainingRun &run,
          const TrainOptions &options, Program step, Program loss)
      : cu(cu), memory(cu), compiled(compiled), run(run), options(options),
        step(std::move(step)),
        loss(std::move(loss)),
        n(run.params.size()), owner{options.recipe,
                                    hashText(compiled.planText())} {}

  void loop();

private:
  void upload(const Checkpoint &start);
  double evaluate(int64_t done);
  /// Checkpoints step `done`, unless a parameter or moment is not finite:
  /// then it writes nothing and returns why the run diverged.
  std::string checkpoint(int64_t done);

  std::string checkpointDir() const { return options.outDir + "/checkpoint"; }

  /// The first record of a new run's metrics: what produced it.
  JsonRecord describeRun() const;

  Device &cu;
  Memory memory;
  /// This process's hold on options.outDir, from loop() on.
  RunFolderLock lock;
  const Compiled &compiled;
  const TrainingRun &run;
  const TrainOptions &options;
  Program step, loss;
  size_t n;
  CheckpointOwner owner;
  /// Parameters, m and v on the device.
  std::vector<DevicePtr> state;
  DevicePtr tokens = 0;
  std::vector<DevicePtr> evalTokens;
  /// The step of the checkpoint in the output folder, if there is one.
  std::optional<int64_t> savedStep;
};

} // namespace

void Trainer::upload(const Checkpoint &start) {
  state.resize(3 * n);
  for (size_t i = 0; i < 3 * n; ++i) {
    const std::vector<char> &host = i < n       ? start.params[i]
                                    : i < 2 * n ? start.m[i - n]
                                                : start.v[i - 2 * n];
    state[i] = memory.take(host.size());
    cu.copyToDevice(state[i], host.data(), host.size());
  }
  size_t bytes = run.batchTokens() * 4;
  tokens = memory.hold(bytes);
  // The held-out batches are the same at every evaluation.
  for (int64_t b = 0; b < run.evalBatches; ++b) {
    std::vector<int32_t> batch = run.tokens(run.evalTokens, b);
    evalTokens.push_back(memory.hold(bytes));
    cu.copyToDevice(evalTokens.back(), batch.data(), bytes);
  }
}

/// Arguments of `program`: the first `buffers` device buffers, then the
/// step.
static Arguments arguments(const Program &program,
                           const std::vector<DevicePtr> &buffers,
                           int64_t step) {
  Arguments a;
  std::vector<const Record *> args = argumentRecords(program);
  for (const Record &r : program.records)
    if (r.kind == Record::Const)
      a.scalars[r.id] = r.bits;
  for (size_t i = 0; i < buffers.size(); ++i) {
    Input input;
    input.index = i;
    input.id = args[i]->id;
    input.device = buffers[i];
    a.buffers.push_back(input);
  }
  a.scalars[args[buffers.size()]->id] = uint64_t(step);
  return a;
}

double Trainer::evaluate(int64_t done) {
  double sum = 0;
  for (DevicePtr batch : evalTokens) {
    std::vector<DevicePtr> buffers(state.begin(), state.begin() + n);
    buffers.push_back(batch);
    // Per-step random rotations of the Fprops use the current step's draw.
    std::vector<DevicePtr> results;
    replay(cu, memory, loss, arguments(loss, buffers, done), nullptr, nullptr,
           &results);
    float value = 0;
    cu.copyToHost(&value, results[0], 4);
    for (DevicePtr p : results)
      memory.give(p);
    sum += value;
  }
  return sum / double(evalTokens.size());
}

std::string Trainer::checkpoint(int64_t done) {
  Checkpoint saved;
  saved.step = done;
  for (size_t i = 0; i < 3 * n; ++i) {
    size_t bytes = 4;
    for (int64_t d : run.params[i % n].second)
      bytes *= d;
    std::vector<char> host(bytes);
    cu.copyToHost(host.data(), state[i], bytes);
    // On the host anyway: checking costs a pass over what is written.
    if (!mlir::mxfp4::isFiniteF32(host.data(), bytes))
      return mlir::mxfp4::describeNonFiniteTensor(
          mlir::mxfp4::getCheckpointTensorName(run.params[i % n].first,
                                               unsigned(i / n)));
    (i < n       ? saved.params
     : i < 2 * n ? saved.m
                 : saved.v)
        .push_back(std::move(host));
  }
  writeCheckpoint(checkpointDir(), run, owner, saved);
  savedStep = done;
  return "";
}

JsonRecord Trainer::describeRun() const {
  JsonRecord what;
  const JsonValue &provenance = compiled.provenance();
  what.add("commit", provenance.getString("commit").value_or("unknown"));
  for (const char *key : {"target", "recipe", "model", "gemm_precision"})
    if (std::optional<std::string> value = provenance.getString(key))
      what.add(key, *value);
  if (!options.recipe.empty())
    what.add("name", options.recipe);
  what.add("seed", int64_t(run.seed))
      .add("steps", run.steps)
      .add("batch", run.batch)
      .add("window", run.window)
      .add("init_std", run.initStd)
      .add("eval_every", run.evalEvery)
      .add("eval_batches", run.evalBatches)
      .add("run_manifest_hash", hashText(run.manifest));
  return JsonRecord().add("step", int64_t(0)).add("tokens", int64_t(0))
      .add(mlir::mxfp4::getRunKey(), what);
}

void Trainer::loop() {
  std::string metricsPath = options.outDir + "/metrics.jsonl";
  // One trainer a folder, for the whole loop: the checks below are made
  // under the lock.
  std::string opened = openRunFolder(options.outDir, lock);
  if (!opened.empty())
    fail(opened);
  if (!options.resume && fs::exists(metricsPath))
    fail("'" + options.outDir +
         "' already holds a run (metrics.jsonl); "
         "continue it with --resume or choose another --out");
  if (options.resume && !fs::exists(checkpointDir()))
    fail("cannot resume: '" + options.outDir + "' has no checkpoint folder");
  int64_t last =
      options.steps > 0 ? std::min(options.steps, run.steps) : run.steps;

  Checkpoint start;
  if (options.resume) {
    start = readCheckpoint(checkpointDir(), run, owner);
    if (start.step > last)
      fail("cannot resume '" + checkpointDir() + "': its step " +
           std::to_string(start.step) + " is past the run's last step " +
           std::to_string(last));
    savedStep = start.step;
    // A run that diverged resumes from its last finite checkpoint and runs
    // the steps after it again: said, not silent.
    std::vector<MetricsRecord> records = readMetrics(metricsPath);
    for (const MetricsRecord &r : records)
      if (r.step > start.step && mlir::mxfp4::recordsDivergence(r.value)) {
        std::string reason;
        for (const MetricsRecord &marker : records)
          if (marker.step == r.step)
            if (std::optional<std::string> why =
                    marker.value.getString(mlir::mxfp4::getDivergedKey()))
              reason = ": " + *why;
        std::printf("note: this run diverged at step %lld%s; resuming from "
                    "its checkpoint of step %lld\n",
                    (long long)r.step, reason.c_str(), (long long)start.step);
        break;
      }
  } else {
    for (size_t i = 0; i < n; ++i) {
      std::string path = run.dir + "/param" + std::to_string(i) + ".npy";
      size_t bytes = 4;
      for (int64_t d : run.params[i].second)
        bytes *= d;
      std::vector<char> host = std::ifstream(path)
                                   ? readNpy(path)
                                   : drawParameter(run, i, bytes / 4);
      if (host.size() != bytes)
        fail("'" + path + "' does not fit parameter '" + run.params[i].first +
             "'");
      start.params.push_back(std::move(host));
      start.m.push_back(std::vector<char>(bytes, 0));
      start.v.push_back(std::vector<char>(bytes, 0));
    }
  }
  upload(start);
  MetricsLog metrics = options.resume ? MetricsLog(metricsPath, start.step)
                                      : MetricsLog(metricsPath);
  if (!options.resume)
    metrics.append(describeRun());

  int64_t tokensPerStep = run.batch * (run.window - 1);
  std::string title = (run.model.empty() ? "" : "Llama " + run.model + ", ") +
                      "seed " + std::to_string(run.seed);
  auto drawPlot = [&] {
    writeLossPlot(options.outDir + "/loss.svg", title,
                  options.recipe.empty() ? "train"
                                         : "train (" + options.recipe + ")",
                  readMetrics(metricsPath));
  };
  // The run diverged at step `s`: mark it, draw what ran, keep the last
  // checkpoint written.
  auto diverge = [&](int64_t s, const std::string &reason) {
    metrics.append(JsonRecord()
                       .add("step", s)
                       .add("tokens", s * tokensPerStep)
                       .add(mlir::mxfp4::getDivergedKey(), reason));
    drawPlot();
    std::printf("metrics: %s\nplot: %s/loss.svg\n", metricsPath.c_str(),
                options.outDir.c_str());
    throw Divergence(mlir::mxfp4::formatDivergenceError(
                         s, reason, savedStep, checkpointDir()),
                     s);
  };
  std::vector<DevicePtr> buffers = state;
  buffers.push_back(tokens);
  size_t bytes = run.batchTokens() * 4;
  Timer clock(cu);
  clock.begin();
  int64_t done = 0;
  for (int64_t s = start.step; s < last; ++s) {
    std::vector<int32_t> batch = run.tokens(run.batches, s);
    cu.copyToDevice(tokens, batch.data(), bytes);
    std::vector<DevicePtr> results;
    replay(cu, memory, step, arguments(step, buffers, s), nullptr, nullptr,
           &results);
    if (results.size() != 3 * n + 3)
      fail("@train_step returns " + std::to_string(results.size()) +
           " results, not " + std::to_string(3 * n + 3));
    float scalars[3];
    for (int k = 0; k < 3; ++k) {
      cu.copyToHost(&scalars[k], results[k], 4);
      memory.give(results[k]);
    }
    // The new parameters and moments are the next step's arguments. A step
    // that updates them in place returns its argument buffers (the plan's
    // result records name the arguments): nothing to swap or give back.
    std::set<DevicePtr> next(results.begin() + 3, results.end());
    if (next.size() != 3 * n)
      fail("@train_step returns one buffer as two of its parameters and "
           "moments");
    for (size_t i = 0; i < 3 * n; ++i)
      if (!next.count(state[i]))
        memory.give(state[i]);
    for (size_t i = 0; i < 3 * n; ++i)
      state[i] = buffers[i] = results[3 + i];
    ++done;
    double seconds = clock.end() / 1000.0;
    double tokensPerSecond = done * tokensPerStep / seconds;
    metrics.append(JsonRecord()
                       .add("step", s + 1)
                       .add("tokens", (s + 1) * tokensPerStep)
                       .add("loss", double(scalars[0]))
                       .add("lr", double(scalars[2]))
                       .add("grad_norm", double(scalars[1]))
                       .add("tokens_per_s", tokensPerSecond)
                       .add("elapsed_s", seconds));
    std::string diverged =
        mlir::mxfp4::describeDivergence(scalars[0], scalars[1]);
    if ((s + 1) % 50 == 0 || s + 1 == last || s < 3 || !diverged.empty())
      std::printf("step %lld: loss %.4f, lr %.3g, grad norm %.3f, %.0f "
                  "tokens/s\n",
                  (long long)(s + 1), scalars[0], scalars[2], scalars[1],
                  tokensPerSecond);
    if (!diverged.empty())
      diverge(s + 1, diverged);
    bool isLast = s + 1 == last;
    if (run.evalBatches > 0 &&
        ((run.evalEvery > 0 && (s + 1) % run.evalEvery == 0) || isLast)) {
      double evalLoss = evaluate(s + 1);
      metrics.append(JsonRecord()
                         .add("step", s + 1)
                         .add("tokens", (s + 1) * tokensPerStep)
                         .add("eval_loss", evalLoss));
      std::printf("step %lld: eval loss %.4f\n", (long long)(s + 1), evalLoss);
      diverged = mlir::mxfp4::describeHeldOutDivergence(evalLoss);
      if (!diverged.empty())
        diverge(s + 1, diverged);
    }
    if (options.checkpointEvery > 0 && (s + 1) % options.checkpointEvery == 0 &&
        !isLast) {
      diverged = checkpoint(s + 1);
      if (!diverged.empty())
        diverge(s + 1, diverged);
    }
  }
  if (done > 0 || !fs::exists(checkpointDir())) {
    std::string diverged = checkpoint(start.step + done);
    if (!diverged.empty())
      diverge(start.step + done, diverged);
  }
  drawPlot();
  std::printf("metrics: %s\nplot: %s/loss.svg\ncheckpoint: %s\n",
              metricsPath.c_str(), options.outDir.c_str(),
              checkpointDir().c_str());
}

void checkTrainable(const Compiled &compiled, const TrainingRun &run) {
  std::string n = std::to_string(run.params.size());
  checkSignature(compiled, run, compiled.program("train_step"), "train_step", 3,
                 n + " parameters and their moments");
  if (run.evalBatches == 0)
    return;
  if (!compiled.has("loss"))
    fail("'" + compiled.planOrigin() +
         "' has no @loss to evaluate the "
         "run's held-out batches with");
  checkSignature(compiled, run, compiled.program("loss"), "loss", 1,
                 n + " parameters");
}

/// Fails unless the device has the memory of `run`'s training with `step`
/// free: what the trainer keeps on the device for the whole run (the
/// parameters, their AdamW moments, the training batch and the held-out
/// batches) and the most a call of @train_step allocates besides its
/// arguments (its results included). Checked before anything is written,
/// so a run that cannot fit fails at once instead of at an allocation deep
/// in the first step.
static void checkDeviceMemory(Device &cu, const Compiled &compiled,
                              const TrainingRun &run, const Program &step) {
  uint64_t resident = 0;
  for (const auto &[name, shape] : run.params) {
    uint64_t bytes = 4;
    for (int64_t d : shape)
      bytes *= uint64_t(d);
    resident += 3 * bytes;
  }
  resident += uint64_t(1 + run.evalBatches) * run.batchTokens() * 4;
  uint64_t temporaries = uint64_t(step.memory.peakTemporaries);
  size_t freeBytes = 0, totalBytes = 0;
  cu.memoryInfo(freeBytes, totalBytes);
  if (resident + temporaries <= freeBytes)
    return;
  fail("the training step of '" + compiled.planOrigin() + "' needs " +
       std::to_string(resident + temporaries) + " bytes of device memory (" +
       std::to_string(resident) +
       " resident: the parameters, their AdamW moments and the token "
       "batches; " +
       std::to_string(temporaries) +
       " for @train_step's temporaries) but the device has " +
       std::to_string(freeBytes) + " free of " + std::to_string(totalBytes));
}

void train(Device &cu, void *module, const Compiled &compiled,
           const TrainingRun &run, const TrainOptions &options) {
  checkTrainable(compiled, run);
  Program step = compiled.program("train_step"), loss;
  checkDeviceMemory(cu, compiled, run, step);
  resolveKernels(cu, module, step);
  if (run.evalBatches > 0) {
    loss = compiled.program("loss");
    resolveKernels(cu, module, loss);
  }
  Trainer(cu, compiled, run, options, std::move(step), std::move(loss)).loop();
}

} // namespace mlir::mxfp4::runtime
