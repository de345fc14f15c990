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
#include "mxfp4/Train/Sharding.h"

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

/// Whether `program`'s arguments are buffers of `bytes`, in order, then
/// (if `step`) a scalar.
static bool takes(const Program &program, const std::vector<size_t> &bytes,
                  bool step) {
  std::vector<const Record *> args = argumentRecords(program);
  if (args.size() != bytes.size() + (step ? 1 : 0))
    return false;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i] || args[i]->buffer != (i < bytes.size()) ||
        (i < bytes.size() && args[i]->bytes != bytes[i]))
      return false;
  return true;
}

/// Checks that `function`'s arguments are `copies` times the buffers of the
/// run's parameters, then a buffer of `extraBytes` (the batch of `rows`
/// sequences), then a step; `what` names them.
static void checkSignature(const Compiled &compiled, const TrainingRun &run,
                           const Program &program, const std::string &function,
                           size_t copies, size_t extraBytes,
                           const std::string &what) {
  std::vector<size_t> params = parameterBytes(run), bytes;
  for (size_t copy = 0; copy < copies; ++copy)
    bytes.insert(bytes.end(), params.begin(), params.end());
  bytes.push_back(extraBytes);
  if (!takes(program, bytes, true))
    fail("@" + function + " of '" + compiled.planOrigin() + "' does not take " +
         what + " and a step, as the run '" + run.dir +
         "' has them: were they made from the same config?");
}

/// The ZeRO-1 layout of `run`'s parameters over `ranks` ranks.
static ShardLayout getRunShardLayout(const TrainingRun &run, int64_t ranks) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto &[name, shape] : run.params)
    shapes.push_back(shape);
  return getShardLayout(shapes, ranks);
}

/// "a 2 x 33 batch": what `rows` rows of the run's batches are called.
static std::string describeBatch(const TrainingRun &run, int64_t rows) {
  return "a " + std::to_string(rows) + " x " + std::to_string(run.window) +
         " batch";
}

namespace {

/// A training run on the device.
/// The plan functions a run calls: @train_step, or @loss_and_grads and
/// @sum_squares and @apply_shard (data-parallel); @loss if it evaluates.
struct StepPrograms {
  Program step, grads, sumSquares, apply, loss;
  /// Whether grads, sumSquares and apply are the step (else step).
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
  /// The buffers of the parameters: the state's, or views of the flat
  /// weights (data-parallel).
  std::vector<DevicePtr> parameters() const;
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
  /// Parameters, m and v on the device (one GPU).
  std::vector<DevicePtr> state;
  /// Data-parallel (ZeRO-1): the parameters in the flat layout, whole on
  /// every rank; the flat gradient, this rank's shard of it reduced over the
  /// ranks; this rank's shard of the moments and its weight-decay mask.
  ShardLayout layout;
  DevicePtr flatWeights = 0, flatGrads = 0, shardM = 0, shardV = 0,
            decayMask = 0;
  DevicePtr tokens = 0;
  std::vector<DevicePtr> evalTokens;
  /// The step of the checkpoint in the output folder, if there is one.
  std::optional<int64_t> savedStep;
};

} // namespace

/// `tensors` (one a parameter) in `layout`'s flat order, zeros between.
static std::vector<char> flatten(const ShardLayout &layout,
                                 const std::vector<std::vector<char>> &tensors) {
  std::vector<char> flat(size_t(layout.total) * 4, 0);
  for (size_t i = 0; i < tensors.size(); ++i)
    std::copy(tensors[i].begin(), tensors[i].end(),
              flat.begin() + ptrdiff_t(layout.offsets[i] * 4));
  return flat;
}

void Trainer::upload(const Checkpoint &start) {
  if (!comm) {
    state.resize(3 * n);
    for (size_t i = 0; i < 3 * n; ++i) {
      const std::vector<char> &host = i < n       ? start.params[i]
                                      : i < 2 * n ? start.m[i - n]
                                                  : start.v[i - 2 * n];
      state[i] = memory.take(host.size());
      cu.copyToDevice(state[i], host.data(), host.size());
    }
  } else {
    layout = getRunShardLayout(run, comm->getRanks());
    size_t flatBytes = size_t(layout.total) * 4,
           shardBytes = size_t(layout.shard) * 4,
           first = size_t(comm->getRank()) * shardBytes;
    flatWeights = memory.hold(flatBytes);
    cu.copyToDevice(flatWeights, flatten(layout, start.params).data(),
                    flatBytes);
    // The padding of the gradient stays zero: steps write parameters only.
    flatGrads = memory.hold(flatBytes);
    cu.copyToDevice(flatGrads, std::vector<char>(flatBytes, 0).data(),
                    flatBytes);
    for (auto [moments, shard] :
         {std::pair{&start.m, &shardM}, std::pair{&start.v, &shardV}}) {
      *shard = memory.take(shardBytes);
      cu.copyToDevice(*shard, flatten(layout, *moments).data() + first,
                      shardBytes);
    }
    std::vector<float> mask = getShardDecayMask(layout, comm->getRank());
    decayMask = memory.hold(shardBytes);
    cu.copyToDevice(decayMask, mask.data(), shardBytes);
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

std::vector<DevicePtr> Trainer::parameters() const {
  if (!comm)
    return std::vector<DevicePtr>(state.begin(), state.begin() + n);
  std::vector<DevicePtr> views;
  for (int64_t offset : layout.offsets)
    views.push_back(flatWeights + DevicePtr(offset) * 4);
  return views;
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
  if (args.size() > buffers.size())
    a.scalars[args[buffers.size()]->id] = uint64_t(step);
  return a;
}

/// Gives back, once each, the buffers of `finished` that are not in `kept`
/// nor `held` (buffers the trainer keeps for the whole run).
static void giveBack(Memory &memory, const std::vector<DevicePtr> &finished,
                     const std::set<DevicePtr> &kept,
                     const std::set<DevicePtr> &held) {
  std::set<DevicePtr> given;
  for (DevicePtr p : finished)
    if (!kept.count(p) && !held.count(p) && given.insert(p).second)
      memory.give(p);
}

void Trainer::step(int64_t s, float scalars[3]) {
  std::vector<DevicePtr> results;
  if (!comm) {
    std::vector<DevicePtr> buffers = state;
    buffers.push_back(tokens);
    replay(cu, memory, programs.step, arguments(programs.step, buffers, s),
           nullptr, nullptr, &results);
    if (results.size() != 3 * n + 3)
      fail("@train_step returns " + std::to_string(results.size()) +
           " results, not " + std::to_string(3 * n + 3));
    for (int k = 0; k < 3; ++k)
      cu.copyToHost(&scalars[k], results[k], 4);
    // The new parameters and moments are the next step's arguments. A step
    // that updates them in place returns its argument buffers (the plan's
    // result records name the arguments): nothing to swap or give back.
    std::set<DevicePtr> next(results.begin() + 3, results.end());
    if (next.size() != 3 * n)
      fail("@train_step returns one buffer as two of its parameters and "
           "moments");
    std::vector<DevicePtr> finished(results.begin(), results.begin() + 3);
    finished.insert(finished.end(), state.begin(), state.end());
    giveBack(memory, finished, next, {});
    for (size_t i = 0; i < 3 * n; ++i)
      state[i] = results[3 + i];
    return;
  }
  // ZeRO-1: this rank's loss and gradients; the gradients into the flat
  // layout, reduce-scattered (averaged) so that this rank holds its shard
  // of the batch's gradient; the whole gradient's norm from every shard's
  // sum of squares; this rank's shard of the weights and moments updated;
  // the weights all-gathered.
  std::vector<DevicePtr> buffers = parameters(), grads;
  buffers.push_back(tokens);
  replay(cu, memory, programs.grads, arguments(programs.grads, buffers, s),
         nullptr, nullptr, &grads);
  if (grads.size() != n + 1)
    fail("@loss_and_grads returns " + std::to_string(grads.size()) +
         " results, not " + std::to_string(n + 1));
  for (size_t i = 0; i < n; ++i) {
    cu.copyOnDevice(flatGrads + DevicePtr(layout.offsets[i]) * 4, grads[1 + i],
                    size_t(layout.sizes[i]) * 4);
    memory.give(grads[1 + i]);
  }
  DevicePtr shardBytes = DevicePtr(layout.shard) * 4,
            first = DevicePtr(comm->getRank()) * shardBytes;
  DevicePtr shardGrads = flatGrads + first, shardWeights = flatWeights + first;
  comm->beginGroup();
  comm->allReduceF32(grads[0], 1, Communicator::Reduction::Average);
  comm->reduceScatterF32(flatGrads, shardGrads, size_t(layout.shard),
                         Communicator::Reduction::Average);
  comm->endGroup();
  std::vector<DevicePtr> sumSquares;
  replay(cu, memory, programs.sumSquares,
         arguments(programs.sumSquares, {shardGrads}, s), nullptr, nullptr,
         &sumSquares);
  comm->allReduceF32(sumSquares[0], 1, Communicator::Reduction::Sum);
  buffers = {shardWeights, shardM,         shardV,  shardGrads,
             decayMask,    sumSquares[0], grads[0]};
  replay(cu, memory, programs.apply, arguments(programs.apply, buffers, s),
         nullptr, nullptr, &results);
  if (results.size() != 6)
    fail("@apply_shard returns " + std::to_string(results.size()) +
         " results, not 6");
  for (int k = 0; k < 3; ++k)
    cu.copyToHost(&scalars[k], results[k], 4);
  // In place when the shard's new weights are the flat weights' piece.
  comm->allGatherF32(results[3], flatWeights, size_t(layout.shard));
  std::vector<DevicePtr> finished = {grads[0], sumSquares[0], results[0],
                                     results[1], results[2], results[3],
                                     shardM, shardV};
  shardM = results[4];
  shardV = results[5];
  giveBack(memory, finished, {shardM, shardV},
           {flatWeights, flatGrads, shardWeights, shardGrads, decayMask});
}

double Trainer::evaluate(int64_t done) {
  double sum = 0;
  for (DevicePtr batch : evalTokens) {
    std::vector<DevicePtr> buffers = parameters();
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
  // Data-parallel: the weights are whole on every rank; the moments are
  // gathered from the ranks' shards (every rank takes part).
  std::vector<char> flat[3];
  if (comm) {
    size_t flatBytes = size_t(layout.total) * 4;
    flat[0].resize(flatBytes);
    cu.copyToHost(flat[0].data(), flatWeights, flatBytes);
    DevicePtr gathered = memory.take(flatBytes);
    for (int k = 1; k < 3; ++k) {
      comm->allGatherF32(k == 1 ? shardM : shardV, gathered,
                         size_t(layout.shard));
      flat[k].resize(flatBytes);
      cu.copyToHost(flat[k].data(), gathered, flatBytes);
    }
    memory.give(gathered);
  }
  for (size_t i = 0; i < 3 * n; ++i) {
    size_t bytes = 4;
    for (int64_t d : run.params[i % n].second)
      bytes *= d;
    std::vector<char> host(bytes);
    if (comm) {
      auto first = flat[i / n].begin() + ptrdiff_t(layout.offsets[i % n] * 4);
      std::copy(first, first + ptrdiff_t(bytes), host.begin());
    } else {
      cu.copyToHost(host.data(), state[i], bytes);
    }
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
  if (comm)
    std::printf("device memory: %zu bytes on rank 0 (ZeRO-1 over %d ranks)\n",
                memory.allocatedBytes(), comm->getRanks());
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
    for (const char *function : {"loss_and_grads", "sum_squares", "apply_shard"})
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
    size_t shard = size_t(getRunShardLayout(run, ranks).shard) * 4;
    std::vector<size_t> shardBytes(5, shard);
    shardBytes.insert(shardBytes.end(), {4, 4});
    if (!takes(compiled.program("sum_squares"), {shard}, false) ||
        !takes(compiled.program("apply_shard"), shardBytes, true))
      fail("@sum_squares and @apply_shard of '" + compiled.planOrigin() +
           "' do not take shards of " + std::to_string(shard / 4) +
           " elements, the run '" + run.dir + "''s parameters over " +
           std::to_string(ranks) + " GPUs: compiled for another GPU count " +
           "(`mxfp4-run compile --ranks=" + std::to_string(ranks) + "`)?");
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
/// and the most a step's calls allocate besides their arguments (results
/// included). One GPU keeps the parameters, their AdamW moments, the
/// training batch and the held-out batches; a ZeRO-1 rank (`ranks`) keeps
/// the flat weights and gradient whole, its shard of the moments and of the
/// weight-decay mask and its rows of the batches, and holds the gradients
/// of @loss_and_grads while @sum_squares and @apply_shard run (a
/// checkpoint's gathered moments, two flat copies, when they are more).
/// Checked before anything is written, so a run that cannot fit fails at
/// once instead of at an allocation deep in the first step.
static void checkDeviceMemory(Device &cu, const Compiled &compiled,
                              const TrainingRun &run,
                              const StepPrograms &programs, int ranks) {
  uint64_t resident = 0, temporaries = 0;
  int64_t rows = ranks > 0 ? run.batch / ranks : run.batch;
  resident += uint64_t(1 + run.evalBatches) * uint64_t(rows * run.window) * 4;
  std::string what;
  if (ranks > 0) {
    ShardLayout layout = getRunShardLayout(run, ranks);
    resident += uint64_t(layout.total) * 4 * 2 + uint64_t(layout.shard) * 4 * 3;
    uint64_t step = uint64_t(programs.grads.memory.peakTemporaries) +
                    std::max(uint64_t(programs.sumSquares.memory.peakTemporaries),
                             uint64_t(programs.apply.memory.peakTemporaries));
    temporaries = std::max(step, uint64_t(layout.total) * 4 * 2);
    what = "the flat weights and gradient, this rank's shard of the AdamW "
           "moments and its token batches; " +
           std::to_string(temporaries) +
           " for the temporaries of @loss_and_grads and @apply_shard";
  } else {
    for (size_t bytes : parameterBytes(run))
      resident += 3 * uint64_t(bytes);
    temporaries = uint64_t(programs.step.memory.peakTemporaries);
    what = "the parameters, their AdamW moments and the token batches; " +
           std::to_string(temporaries) + " for @train_step's temporaries";
  }
  size_t freeBytes = 0, totalBytes = 0;
  cu.memoryInfo(freeBytes, totalBytes);
  if (resident + temporaries <= freeBytes)
    return;
  fail("the training step of '" + compiled.planOrigin() + "' needs " +
       std::to_string(resident + temporaries) + " bytes of device memory (" +
       std::to_string(resident) + " resident: " + what +
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
    programs.sumSquares = compiled.program("sum_squares");
    programs.apply = compiled.program("apply_shard");
  } else {
    programs.step = compiled.program("train_step");
  }
  checkDeviceMemory(cu, compiled, run, programs, ranks);
  if (programs.dataParallel) {
    resolveKernels(cu, module, programs.grads);
    resolveKernels(cu, module, programs.sumSquares);
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
