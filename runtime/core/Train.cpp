//===- Train.cpp - @train_step, step after step ---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "Checkpoint.h"
#include "Failure.h"
#include "Launch.h"
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

/// The bytes of each of `run`'s parameters, in f32.
static std::vector<size_t> parameterBytes(const TrainingRun &run) {
  std::vector<size_t> bytes;
  for (const auto &[name, shape] : run.params) {
    size_t b = 4;
    for (int64_t d : shape)
      b *= size_t(d);
    bytes.push_back(b);
  }
  return bytes;
}

/// Checks that `function`'s arguments are `copies` times the buffers of the
/// run's parameters, then a buffer of `extraBytes` (the batch of `rows`
/// sequences, or the loss of @apply_step), then a step; `what` names them.
static void checkSignature(const Compiled &compiled, const TrainingRun &run,
                           const Program &program, const std::string &function,
                           size_t copies, size_t extraBytes,
                           const std::string &what) {
  std::vector<const Record *> args = argumentRecords(program);
  std::vector<size_t> params = parameterBytes(run);
  size_t n = params.size();
  bool fits = args.size() == copies * n + 2;
  for (size_t i = 0; fits && i < args.size(); ++i) {
    size_t bytes = i < copies * n ? params[i % n] : extraBytes;
    fits = args[i] && args[i]->buffer == (i <= copies * n) &&
           (i > copies * n || args[i]->bytes == bytes);
  }
  if (!fits)
    fail("@" + function + " of '" + compiled.planOrigin() + "' does not take " +
         what + " and a step, as the run '" + run.dir +
         "' has them: were they made from the same config?");
}

/// "a 2 x 33 batch": what `rows` rows of the run's batches are called.
static std::string describeBatch(const TrainingRun &run, int64_t rows) {
  return "a " + std::to_string(rows) + " x " + std::to_string(run.window) +
         " batch";
}

namespace {

/// A training run on the device.
/// The plan functions a run calls: @train_step, or @loss_and_grads and
/// @apply_step (data-parallel); @loss if it evaluates.
struct StepPrograms {
  Program step, grads, apply, loss;
  /// Whether grads and apply are the step (else step).
  bool dataParallel = false;
};

class Trainer {
public:
  Trainer(Device &cu, const Compiled &compiled, const TrainingRun &run,
          const TrainOptions &options, StepPrograms programs)
      : cu(cu), memory(cu), compiled(compiled), run(run), options(options),
        programs(std::move(programs)), comm(options.comm),
        leader(!comm || comm->getRank() == 0),
        rows(comm ? run.batch / comm->getRanks() : run.batch),
        n(run.params.size()), owner{options.recipe,
                                    hashText(compiled.planText())} {}

  void loop();

private:
  void upload(const Checkpoint &start);
  /// This rank's rows of batch `index` of `from`.
  std::vector<int32_t> rankTokens(const std::vector<char> &from,
                                  int64_t index) const;
  /// One step on the current batch: fills loss, grad norm and lr and
  /// makes the new parameters and moments the state.
  void step(int64_t s, float scalars[3]);
  /// Fails unless every rank holds the same bytes as this one (the replicas
  /// of data-parallel training must not drift apart); `hash` is this
  /// rank's hash of them.
  void checkReplicas(uint64_t hash, int64_t done);
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
  StepPrograms programs;
  Communicator *comm;
  /// Whether this process writes the output folder and prints (rank 0).
  bool leader;
  /// The sequences of each batch this rank trains on.
  int64_t rows;
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
  size_t bytes = size_t(rows * run.window) * 4;
  tokens = memory.hold(bytes);
  // The held-out batches are the same at every evaluation.
  for (int64_t b = 0; b < run.evalBatches; ++b) {
    std::vector<int32_t> batch = rankTokens(run.evalTokens, b);
    evalTokens.push_back(memory.hold(bytes));
    cu.copyToDevice(evalTokens.back(), batch.data(), bytes);
  }
}

std::vector<int32_t> Trainer::rankTokens(const std::vector<char> &from,
                                         int64_t index) const {
  std::vector<int32_t> batch = run.tokens(from, index);
  if (!comm)
    return batch;
  // Batches are row-major: a rank's rows are one contiguous piece.
  size_t piece = size_t(rows * run.window);
  auto first = batch.begin() + ptrdiff_t(piece * size_t(comm->getRank()));
  return std::vector<int32_t>(first, first + ptrdiff_t(piece));
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

void Trainer::step(int64_t s, float scalars[3]) {
  std::vector<DevicePtr> results, finished;
  if (!comm) {
    std::vector<DevicePtr> buffers = state;
    buffers.push_back(tokens);
    replay(cu, memory, programs.step, arguments(programs.step, buffers, s),
           nullptr, nullptr, &results);
    if (results.size() != 3 * n + 3)
      fail("@train_step returns " + std::to_string(results.size()) +
           " results, not " + std::to_string(3 * n + 3));
  } else {
    // This rank's loss and gradients, averaged over the ranks, then the
    // same update on every rank.
    std::vector<DevicePtr> buffers(state.begin(), state.begin() + n), grads;
    buffers.push_back(tokens);
    replay(cu, memory, programs.grads, arguments(programs.grads, buffers, s),
           nullptr, nullptr, &grads);
    if (grads.size() != n + 1)
      fail("@loss_and_grads returns " + std::to_string(grads.size()) +
           " results, not " + std::to_string(n + 1));
    std::vector<size_t> bytes = parameterBytes(run);
    comm->beginGroup();
    comm->allReduceF32(grads[0], 1, Communicator::Reduction::Average);
    for (size_t i = 0; i < n; ++i)
      comm->allReduceF32(grads[1 + i], bytes[i] / 4,
                         Communicator::Reduction::Average);
    comm->endGroup();
    buffers.assign(state.begin(), state.end());
    buffers.insert(buffers.end(), grads.begin() + 1, grads.end());
    buffers.push_back(grads[0]);
    replay(cu, memory, programs.apply, arguments(programs.apply, buffers, s),
           nullptr, nullptr, &results);
    if (results.size() != 3 * n + 3)
      fail("@apply_step returns " + std::to_string(results.size()) +
           " results, not " + std::to_string(3 * n + 3));
    finished = grads;
  }
  for (int k = 0; k < 3; ++k) {
    cu.copyToHost(&scalars[k], results[k], 4);
    finished.push_back(results[k]);
  }
  // The new parameters and moments are the next step's arguments. A step
  // that updates them in place returns its argument buffers (the plan's
  // result records name the arguments): nothing to swap or give back.
  std::set<DevicePtr> next(results.begin() + 3, results.end());
  if (next.size() != 3 * n)
    fail("the step returns one buffer as two of its parameters and "
         "moments");
  finished.insert(finished.end(), state.begin(), state.end());
  // Every buffer the step is done with is given back once, whichever of
  // its roles (old state, gradient, loss) it had.
  std::set<DevicePtr> given;
  for (DevicePtr p : finished)
    if (!next.count(p) && given.insert(p).second)
      memory.give(p);
  for (size_t i = 0; i < 3 * n; ++i)
    state[i] = results[3 + i];
}

double Trainer::evaluate(int64_t done) {
  double sum = 0;
  for (DevicePtr batch : evalTokens) {
    std::vector<DevicePtr> buffers(state.begin(), state.begin() + n);
    buffers.push_back(batch);
    // Per-step random rotations of the Fprops use the current step's draw.
    std::vector<DevicePtr> results;
    replay(cu, memory, programs.loss, arguments(programs.loss, buffers, done),
           nullptr, nullptr, &results);
    // Each rank's loss is the mean over its rows: their mean is the batch's.
    if (comm)
      comm->allReduceF32(results[0], 1, Communicator::Reduction::Average);
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
  // FNV-1a over every byte of the state, for the replicas' check.
  uint64_t hash = 14695981039346656037ull;
  std::string diverged;
  for (size_t i = 0; i < 3 * n; ++i) {
    size_t bytes = 4;
    for (int64_t d : run.params[i % n].second)
      bytes *= d;
    std::vector<char> host(bytes);
    cu.copyToHost(host.data(), state[i], bytes);
    for (char c : host)
      hash = (hash ^ uint64_t(uint8_t(c))) * 1099511628211ull;
    // On the host anyway: checking costs a pass over what is written.
    if (diverged.empty() && !mlir::mxfp4::isFiniteF32(host.data(), bytes))
      diverged = mlir::mxfp4::describeNonFiniteTensor(
          mlir::mxfp4::getCheckpointTensorName(run.params[i % n].first,
                                               unsigned(i / n)));
    (i < n       ? saved.params
     : i < 2 * n ? saved.m
                 : saved.v)
        .push_back(std::move(host));
  }
  // Every rank checks (the same bytes give the same verdict everywhere),
  // so all of them stop together when the run diverged.
  if (comm)
    checkReplicas(hash, done);
  if (!diverged.empty())
    return diverged;
  if (leader)
    writeCheckpoint(checkpointDir(), run, owner, saved);
  savedStep = done;
  return "";
}

void Trainer::checkReplicas(uint64_t hash, int64_t done) {
  uint64_t pair[2] = {hash, hash};
  DevicePtr buffer = memory.take(sizeof(pair));
  cu.copyToDevice(buffer, pair, sizeof(pair));
  comm->beginGroup();
  comm->allReduceU64(buffer, 1, Communicator::Reduction::Max);
  comm->allReduceU64(buffer + 8, 1, Communicator::Reduction::Min);
  comm->endGroup();
  cu.copyToHost(pair, buffer, sizeof(pair));
  memory.give(buffer);
  if (pair[0] != pair[1])
    fail("rank " + std::to_string(comm->getRank()) + " of " +
         std::to_string(comm->getRanks()) +
         ": the ranks' parameters and moments differ after step " +
         std::to_string(done) +
         " (they must be identical replicas); the run stops before writing "
         "the checkpoint");
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
  // under the lock. Of a data-parallel job, rank 0 holds it.
  if (leader) {
    std::string opened = openRunFolder(options.outDir, lock);
    if (!opened.empty())
      fail(opened);
  }
  if (leader && !options.resume && fs::exists(metricsPath))
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
    std::vector<MetricsRecord> records;
    if (leader)
      records = readMetrics(metricsPath);
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
  std::optional<MetricsLog> metrics;
  if (leader) {
    metrics.emplace(options.resume ? MetricsLog(metricsPath, start.step)
                                   : MetricsLog(metricsPath));
    if (!options.resume)
      metrics->append(describeRun());
  }

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
    if (leader) {
      metrics->append(JsonRecord()
                          .add("step", s)
                          .add("tokens", s * tokensPerStep)
                          .add(mlir::mxfp4::getDivergedKey(), reason));
      drawPlot();
      std::printf("metrics: %s\nplot: %s/loss.svg\n", metricsPath.c_str(),
                  options.outDir.c_str());
    }
    throw Divergence(mlir::mxfp4::formatDivergenceError(
                         s, reason, savedStep, checkpointDir()),
                     s);
  };
  size_t bytes = size_t(rows * run.window) * 4;
  Timer clock(cu);
  clock.begin();
  int64_t done = 0;
  for (int64_t s = start.step; s < last; ++s) {
    std::vector<int32_t> batch = rankTokens(run.batches, s);
    cu.copyToDevice(tokens, batch.data(), bytes);
    float scalars[3];
    step(s, scalars);
    ++done;
    double seconds = clock.end() / 1000.0;
    double tokensPerSecond = done * tokensPerStep / seconds;
    if (leader)
      metrics->append(JsonRecord()
                          .add("step", s + 1)
                          .add("tokens", (s + 1) * tokensPerStep)
                          .add("loss", double(scalars[0]))
                          .add("lr", double(scalars[2]))
                          .add("grad_norm", double(scalars[1]))
                          .add("tokens_per_s", tokensPerSecond)
                          .add("elapsed_s", seconds));
    std::string diverged =
        mlir::mxfp4::describeDivergence(scalars[0], scalars[1]);
    if (leader &&
        ((s + 1) % 50 == 0 || s + 1 == last || s < 3 || !diverged.empty()))
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
      if (leader) {
        metrics->append(JsonRecord()
                            .add("step", s + 1)
                            .add("tokens", (s + 1) * tokensPerStep)
                            .add("eval_loss", evalLoss));
        std::printf("step %lld: eval loss %.4f\n", (long long)(s + 1),
                    evalLoss);
      }
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
  // A resumed run that had nothing left to do keeps its checkpoint. Decided
  // from the options, not the folder, so that every rank decides alike.
  if (done > 0 || !options.resume) {
    std::string diverged = checkpoint(start.step + done);
    if (!diverged.empty())
      diverge(start.step + done, diverged);
  }
  if (!leader)
    return;
  drawPlot();
  std::printf("metrics: %s\nplot: %s/loss.svg\ncheckpoint: %s\n",
              metricsPath.c_str(), options.outDir.c_str(),
              checkpointDir().c_str());
}

void checkTrainable(const Compiled &compiled, const TrainingRun &run,
                    int ranks) {
  std::string n = std::to_string(run.params.size());
  int64_t rows = run.batch;
  if (ranks > 0) {
    if (run.batch % ranks != 0)
      fail("the run '" + run.dir + "' has batches of " +
           std::to_string(run.batch) + " sequences, which do not split over " +
           std::to_string(ranks) + " GPUs");
    rows = run.batch / ranks;
    for (const char *function : {"loss_and_grads", "apply_step"})
      if (!compiled.has(function))
        fail("'" + compiled.planOrigin() + "' has no @" + function +
             ": data-parallel training (--gpus) needs a compile for it, "
             "`mxfp4-run compile --ranks=" +
             std::to_string(ranks) + "`");
    std::string batch = describeBatch(run, rows);
    checkSignature(compiled, run, compiled.program("loss_and_grads"),
                   "loss_and_grads", 1, rows * run.window * 4,
                   n + " parameters, " + batch + " (the run's " +
                       std::to_string(run.batch) + " sequences over " +
                       std::to_string(ranks) + " GPUs)");
    checkSignature(compiled, run, compiled.program("apply_step"), "apply_step",
                   4, 4, n + " parameters, their moments and gradients, a loss");
  } else {
    checkSignature(compiled, run, compiled.program("train_step"), "train_step",
                   3, run.batchTokens() * 4,
                   n + " parameters and their moments, " +
                       describeBatch(run, rows));
  }
  if (run.evalBatches == 0)
    return;
  if (!compiled.has("loss"))
    fail("'" + compiled.planOrigin() +
         "' has no @loss to evaluate the "
         "run's held-out batches with");
  checkSignature(compiled, run, compiled.program("loss"), "loss", 1,
                 rows * run.window * 4,
                 n + " parameters, " + describeBatch(run, rows));
}

/// Fails unless the device has the memory of `run`'s training with
/// `programs` free: what the trainer keeps on the device for the whole run
/// (the parameters, their AdamW moments, the training batch and the
/// held-out batches) and the most a step's calls allocate besides their
/// arguments (results included; of data-parallel training, @loss_and_grads'
/// and @apply_step's together, the gradients living from one into the
/// other). Checked before anything is written, so a run that cannot fit
/// fails at once instead of at an allocation deep in the first step.
static void checkDeviceMemory(Device &cu, const Compiled &compiled,
                              const TrainingRun &run,
                              const StepPrograms &programs, int64_t rows) {
  uint64_t resident = 0;
  for (size_t bytes : parameterBytes(run))
    resident += 3 * uint64_t(bytes);
  resident += uint64_t(1 + run.evalBatches) * uint64_t(rows * run.window) * 4;
  bool dataParallel = programs.dataParallel;
  uint64_t temporaries =
      dataParallel ? uint64_t(programs.grads.memory.peakTemporaries) +
                         uint64_t(programs.apply.memory.peakTemporaries)
                   : uint64_t(programs.step.memory.peakTemporaries);
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
       (dataParallel ? " for @loss_and_grads' and @apply_step's temporaries"
                     : " for @train_step's temporaries") +
       ") but the device has " + std::to_string(freeBytes) + " free of " +
       std::to_string(totalBytes));
}

void train(Device &cu, void *module, const Compiled &compiled,
           const TrainingRun &run, const TrainOptions &options) {
  int ranks = options.comm ? options.comm->getRanks() : 0;
  checkTrainable(compiled, run, ranks);
  StepPrograms programs;
  if (ranks > 0) {
    programs.dataParallel = true;
    programs.grads = compiled.program("loss_and_grads");
    programs.apply = compiled.program("apply_step");
  } else {
    programs.step = compiled.program("train_step");
  }
  checkDeviceMemory(cu, compiled, run, programs,
                    ranks > 0 ? run.batch / ranks : run.batch);
  if (programs.dataParallel) {
    resolveKernels(cu, module, programs.grads);
    resolveKernels(cu, module, programs.apply);
  } else {
    resolveKernels(cu, module, programs.step);
  }
  if (run.evalBatches > 0) {
    programs.loss = compiled.program("loss");
    resolveKernels(cu, module, programs.loss);
  }
  Trainer(cu, compiled, run, options, std::move(programs)).loop();
}

void runTrainCommand(char **argv, const Options &o, const Compiled &compiled,
                     const TrainingRun &run,
                     const std::function<std::unique_ptr<Device>(int)> &open,
                     const std::string &collectiveLibrary) {
  std::optional<RankEnvironment> rank = getRankEnvironment();
  TrainOptions options{o.outDir, o.recipe, o.steps, o.checkpointEvery,
                       o.resume};
  if (!rank) {
    checkTrainable(compiled, run, o.dataParallel ? int(o.gpus) : 0);
    if (o.dataParallel) {
      launchRanks(argv, int(o.gpus), getCollectiveLibrary(collectiveLibrary));
      return;
    }
    std::unique_ptr<Device> device = open(0);
    void *module =
        device->loadModule(compiled.codeObject(), compiled.codeObjectOrigin());
    train(*device, module, compiled, run, options);
    return;
  }
  // A rank: its messages say which.
  std::string who = "rank " + std::to_string(rank->rank) + " of " +
                    std::to_string(rank->ranks) + ": ";
  try {
    if (o.dataParallel && int(o.gpus) != rank->ranks)
      fail("--gpus=" + std::to_string(o.gpus) + " in a job of " +
           std::to_string(rank->ranks) + " ranks");
    checkTrainable(compiled, run, rank->ranks);
    std::unique_ptr<Device> device = open(rank->localRank);
    void *module =
        device->loadModule(compiled.codeObject(), compiled.codeObjectOrigin());
    // After the device: NCCL binds the communicator to the current GPU.
    Communicator comm(getCollectiveLibrary(collectiveLibrary), rank->ranks,
                      rank->rank, rank->uniqueId);
    options.comm = &comm;
    train(*device, module, compiled, run, options);
  } catch (const Divergence &d) {
    throw Divergence(who + d.what(), d.step);
  } catch (const std::exception &e) {
    std::string message = e.what();
    // The communicator's messages already name the rank.
    throw Failure(message.rfind("rank ", 0) == 0 ? message : who + message);
  }
}

} // namespace mlir::mxfp4::runtime
