//===- Study.cpp - the paper's Table 1 for our setting --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Study.h"

#include "mxfp4/Train/Commit.h"
#include "mxfp4/Train/LossCurve.h"
#include "mxfp4/Train/Metrics.h"
#include "mxfp4/Train/Plot.h"
#include "mxfp4/Runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::mxfp4;
using llvm::StringRef;

static const StringRef defaultRecipes[] = {
    "bf16",          "fp4-fprop",     "fp4-fprop-dgrad",
    "fp4-all",       "fp4-all-sr",    "fp4-all-rht16",
    "fp4-all-dht16", "fp4-all-dht16-wgrad-only"};

llvm::ArrayRef<StringRef> mlir::mxfp4::getDefaultStudyRecipes() {
  return defaultRecipes;
}

/// The final eval loss; a run that diverged has none (its last evaluation
/// may be of a step before it).
static double finalLoss(const TrainReport &report) {
  return report.evals.empty() || report.divergence ? NAN
                                                   : report.evals.back().loss;
}

/// Averages telemetry rows ("layer/role/operand") per role.
static std::vector<RoleTelemetry>
telemetryByRole(const std::vector<TelemetryRow> &rows) {
  std::map<std::string, std::pair<RoleTelemetry, int>> sums;
  for (const TelemetryRow &row : rows) {
    llvm::SmallVector<StringRef> parts;
    StringRef(row.name).split(parts, '/');
    std::string role = parts.size() >= 2 ? parts[1].str() : "?";
    auto &[sum, count] = sums[role];
    sum.role = role;
    sum.clipped += row.clipped;
    sum.flushed += row.flushed;
    sum.sqnrDb += row.sqnrDb;
    ++count;
  }
  std::vector<RoleTelemetry> result;
  for (const char *role : {"fprop", "dgrad", "wgrad"}) {
    auto it = sums.find(role);
    if (it == sums.end())
      continue;
    RoleTelemetry t = it->second.first;
    int n = it->second.second;
    t.clipped /= n;
    t.flushed /= n;
    t.sqnrDb /= n;
    result.push_back(t);
  }
  return result;
}

static std::string formatTable(const StudyReport &report,
                               const StudyOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const LlamaConfig &c = options.train.config;
  os << llvm::formatv("Llama '{0}': {1} layers, dim {2}, {3} steps x {4} "
                      "tokens = {5} tokens; seeds:",
                      c.name, c.numLayers, c.dim, report.steps,
                      report.tokensPerStep, report.steps * report.tokensPerStep);
  for (uint64_t seed : options.seeds)
    os << " " << seed;
  os << "\nCompiler: " << getBuildCommit() << "\n\n";
  os << "| recipe | final eval loss | gap to " << options.recipes.front()
     << " | extra tokens to reach " << options.recipes.front()
     << "'s loss at 75% | seed spread | Fprop clip / flush / SQNR | Dgrad "
        "clip / flush / SQNR | Wgrad clip / flush / SQNR | tokens/s |\n";
  os << "|---|---|---|---|---|---|---|---|---|\n";
  const std::vector<RunOutcome> &baselines = report.rows.front().runs;
  for (const StudyRow &row : report.rows) {
    os << "| " << row.recipe << " | ";
    // The cells that say a run diverged or does not converge are the CUDA
    // runtime's (runtime/cuda/study_table.cpp), from one place.
    std::string diverged = describeDivergedRuns(row.runs, options.seeds);
    std::string dnc =
        describeDnc(row.runs, baselines, options.dncThreshold);
    if (!diverged.empty())
      os << diverged;
    else if (std::isfinite(row.finalLoss))
      os << llvm::formatv("{0:F4}", row.finalLoss);
    else
      os << "-";
    os << " | ";
    if (&row == &report.rows.front())
      os << "(baseline)";
    else if (!std::isfinite(row.gap))
      os << "-";
    else {
      os << llvm::format("%+.4f", row.gap);
      if (std::isfinite(row.spread) && !exceedsSpread(row.gap, row.spread))
        os << " (within spread)";
    }
    os << " | ";
    if (!dnc.empty())
      os << dnc;
    else if (&row == &report.rows.front())
      os << "(baseline)";
    else if (row.extraTokensFraction)
      os << llvm::format("%+.1f%%", 100 * *row.extraTokensFraction);
    else
      os << "not reached";
    os << " | ";
    if (std::isfinite(row.spread))
      os << llvm::format("%.4f", row.spread);
    else
      os << "-";
    for (const char *role : {"fprop", "dgrad", "wgrad"}) {
      os << " | ";
      auto it = llvm::find_if(row.telemetry, [&](const RoleTelemetry &t) {
        return t.role == role;
      });
      if (it == row.telemetry.end())
        os << "-";
      else
        os << llvm::formatv("{0:F3} / {1:F3} / {2:F1} dB", it->clipped,
                            it->flushed, it->sqnrDb);
    }
    os << llvm::formatv(" | {0:F0} |\n", row.tokensPerSecond);
  }
  os << "\n";
  if (options.seeds.size() >= 2)
    os << describeSpreadRule(options.recipes.front()) << "\n";
  else
    os << "Seed spread: unknown (one seed); run with two or more seeds to "
          "measure it.\n";
  os << describeDncRule(options.dncThreshold, options.recipes.front(),
                        "final held-out eval loss")
     << "\n";
  os << "Gaps are paired (each recipe against the baseline of the same "
        "seed, same initial weights and data order), averaged over seeds. "
        "Telemetry is averaged over the quantizations of each role and over "
        "all steps: clip = fraction saturated, flush = fraction of nonzeros "
        "quantized to zero.\n";
  return text;
}

llvm::Expected<StudyReport> mlir::mxfp4::runStudy(const StudyOptions &options) {
  if (options.recipes.empty() || options.seeds.empty())
    return llvm::createStringError("a study needs at least one recipe and "
                                   "one seed");
  const std::string &dir = options.train.outDir;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create '" + dir +
                                   "': " + ec.message());
  StudyReport report;
  report.steps = options.train.config.totalSteps;
  report.tokensPerStep = options.train.config.getTokensPerStep();
  // reports[recipe][seed]
  std::vector<std::vector<TrainReport>> runs(options.recipes.size());
  std::vector<double> compileSeconds(options.recipes.size(), 0);
  for (auto [r, recipe] : llvm::enumerate(options.recipes)) {
    // One compilation per recipe serves every seed.
    llvm::Expected<CompiledTrainingStep> compiled = compileTrainingStep(
        options.train.config, recipe, /*telemetry=*/true,
        options.train.parallel);
    if (!compiled)
      return compiled.takeError();
    compileSeconds[r] = compiled->compileSeconds;
    for (uint64_t seed : options.seeds) {
      TrainOptions runOptions = options.train;
      runOptions.recipe = recipe;
      runOptions.seed = seed;
      runOptions.telemetry = true;
      runOptions.outDir = dir + "/" + recipe + "-seed" + std::to_string(seed);
      if (runOptions.progress)
        llvm::errs() << "== " << recipe << ", seed " << seed << " -> "
                     << runOptions.outDir << "\n";
      llvm::Expected<TrainReport> run = train(runOptions, &*compiled);
      if (!run)
        return run.takeError();
      // A run that diverged is a result of the study, which goes on.
      if (run->divergence && runOptions.progress)
        llvm::errs() << "== " << recipe << ", seed " << seed << ": "
                     << formatDivergenceError(run->divergence->step,
                                              run->divergence->reason,
                                              run->divergence->checkpointStep,
                                              run->checkpointPath)
                     << "\n";
      if (run->interrupted)
        return llvm::createStringError("study interrupted during " + recipe +
                                       ", seed " + std::to_string(seed));
      runs[r].push_back(std::move(*run));
    }
  }

  size_t seeds = options.seeds.size();
  double step75 = 0.75 * static_cast<double>(report.steps);
  const std::vector<TrainReport> &baseline = runs.front();
  for (auto [r, recipe] : llvm::enumerate(options.recipes)) {
    StudyRow row;
    row.recipe = recipe;
    row.compileSeconds = compileSeconds[r];
    int reached = 0;
    double extra = 0;
    std::vector<TelemetryRow> telemetry;
    std::vector<double> spreadOf;
    for (size_t s = 0; s < seeds; ++s) {
      const TrainReport &run = runs[r][s];
      double loss = finalLoss(run);
      // The baseline's spread is of its losses, the others' of their gaps.
      spreadOf.push_back(r == 0 ? loss : loss - finalLoss(baseline[s]));
      RunOutcome outcome;
      if (run.divergence)
        outcome.divergedAt = run.divergence->step;
      outcome.finalLoss = loss;
      row.runs.push_back(outcome);
      row.diverged |= run.divergence.has_value();
      row.finalLoss += loss / seeds;
      row.gap += (loss - finalLoss(baseline[s])) / seeds;
      row.tokensPerSecond += run.tokensPerSecond / seeds;
      llvm::append_range(telemetry, run.telemetry);
      std::optional<double> target = lossAtStep(baseline[s].evals, step75);
      std::optional<double> tokens =
          target ? tokensToReach(run.evals, *target) : std::nullopt;
      if (tokens) {
        ++reached;
        extra += (*tokens / (step75 * report.tokensPerStep) - 1.0) / seeds;
      }
    }
    if (reached == static_cast<int>(seeds))
      row.extraTokensFraction = extra;
    row.spread = getSeedSpread(spreadOf);
    row.telemetry = telemetryByRole(telemetry);
    const std::vector<RunOutcome> &baselines =
        r == 0 ? row.runs : report.rows.front().runs;
    for (size_t s = 0; s < seeds; ++s)
      row.dncRuns +=
          doesNotConverge(row.runs[s], baselines[s], options.dncThreshold);
    report.rows.push_back(row);
  }
  report.table = formatTable(report, options);

  // study.md, study.json and one plot of every recipe's eval curve.
  report.tablePath = dir + "/study.md";
  report.jsonPath = dir + "/study.json";
  report.plotPath = dir + "/study.svg";
  if (llvm::Error error = writeFileAtomically(
          report.tablePath, [&](llvm::raw_ostream &os) {
            os << "# MXFP4 recipe study\n\n" << report.table;
            return llvm::Error::success();
          }))
    return std::move(error);
  llvm::json::Array rowsJson;
  for (const StudyRow &row : report.rows) {
    llvm::json::Array roles;
    for (const RoleTelemetry &t : row.telemetry)
      roles.push_back(llvm::json::Object{{"role", t.role},
                                         {"clipped", t.clipped},
                                         {"flushed", t.flushed},
                                         {"sqnr_db", t.sqnrDb}});
    llvm::json::Object o{{"recipe", row.recipe},
                         {"final_eval_loss", row.finalLoss},
                         {"gap", row.gap},
                         {"spread", std::isfinite(row.spread)
                                        ? llvm::json::Value(row.spread)
                                        : llvm::json::Value(nullptr)},
                         {"tokens_per_s", row.tokensPerSecond},
                         {"compile_s", row.compileSeconds},
                         {"telemetry", std::move(roles)}};
    if (row.extraTokensFraction)
      o["extra_tokens_fraction"] = *row.extraTokensFraction;
    llvm::json::Array divergedAt;
    for (const RunOutcome &run : row.runs)
      divergedAt.push_back(run.divergedAt ? llvm::json::Value(*run.divergedAt)
                                          : llvm::json::Value(nullptr));
    o["diverged_at_step"] = std::move(divergedAt);
    o["dnc_runs"] = row.dncRuns;
    rowsJson.push_back(std::move(o));
  }
  llvm::json::Object json{{"commit", getBuildCommit()},
                          {"steps", report.steps},
                          {"tokens_per_step", report.tokensPerStep},
                          {"seeds", llvm::json::Array(options.seeds)},
                          {"dnc_threshold", options.dncThreshold},
                          {"rows", std::move(rowsJson)}};
  if (llvm::Error error = writeFileAtomically(
          report.jsonPath, [&](llvm::raw_ostream &os) {
            os << formatMetricsRecord(json) << "\n";
            return llvm::Error::success();
          }))
    return std::move(error);
  std::vector<PlotSeries> series;
  for (auto [r, recipe] : llvm::enumerate(options.recipes)) {
    PlotSeries curve{recipe + " (seed " + std::to_string(options.seeds[0]) +
                         ")",
                     {},
                     {}};
    for (const EvalPoint &p : runs[r][0].evals) {
      curve.x.push_back(static_cast<double>(p.tokens));
      curve.y.push_back(p.loss);
    }
    series.push_back(std::move(curve));
  }
  if (llvm::Error error =
          writeLossPlot(report.plotPath, "Eval loss per recipe", series,
                        "tokens", "eval loss"))
    return std::move(error);
  return report;
}
