//===- Study.cpp - the paper's Table 1 for our setting --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Study.h"

#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Train/Commit.h"
#include "mxfp4/Train/Metrics.h"
#include "mxfp4/Runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
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

  // The table's numbers are the runtime's too (mxfp4/Formats/StudyTable.h).
  StudyResults results;
  results.model = options.train.config.name;
  results.recipes = options.recipes;
  results.seeds = options.seeds;
  results.steps = report.steps;
  results.tokensPerStep = report.tokensPerStep;
  results.dncThreshold = options.dncThreshold;
  for (const std::vector<TrainReport> &recipe : runs) {
    results.runs.emplace_back();
    std::vector<TelemetryRow> telemetry;
    double tokensPerSecond = 0;
    for (const TrainReport &run : recipe) {
      StudyCurves curves;
      curves.commit = getBuildCommit();
      for (const TrainPoint &p : run.steps)
        curves.train.push_back(
            {p.step, static_cast<double>(p.step * report.tokensPerStep),
             p.loss});
      for (const EvalPoint &p : run.evals)
        curves.eval.push_back({p.step, static_cast<double>(p.tokens), p.loss});
      if (run.divergence)
        curves.divergedAt = run.divergence->step;
      results.runs.back().push_back(std::move(curves));
      llvm::append_range(telemetry, run.telemetry);
      tokensPerSecond += run.tokensPerSecond / recipe.size();
    }
    results.telemetry.push_back(telemetryByRole(telemetry));
    results.tokensPerSecond.push_back(tokensPerSecond);
  }
  StudyNumbers numbers = getStudyNumbers(results);
  for (auto [r, recipe] : llvm::enumerate(options.recipes)) {
    const StudyRowNumbers &n = numbers.rows[r];
    StudyRow row;
    row.recipe = recipe;
    row.compileSeconds = compileSeconds[r];
    row.finalLoss = n.finalLoss;
    row.gap = n.gap;
    row.spread = n.spread;
    row.extraTokensFraction = n.extraTokensFraction;
    row.telemetry = results.telemetry[r];
    row.tokensPerSecond = results.tokensPerSecond[r];
    row.runs = n.runs;
    row.diverged = llvm::any_of(
        n.runs, [](const RunOutcome &run) { return run.divergedAt; });
    row.dncRuns = n.dncRuns;
    report.rows.push_back(row);
  }
  report.table = formatStudyTable(results);

  // study.md, study.json and one plot of every recipe's curve.
  report.tablePath = dir + "/study.md";
  report.jsonPath = dir + "/study.json";
  report.plotPath = dir + "/study.svg";
  if (llvm::Error error = writeFileAtomically(
          report.tablePath, [&](llvm::raw_ostream &os) {
            os << getStudyHeading() << report.table;
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
  if (llvm::Error error =
          writeFileAtomically(report.plotPath, renderStudyPlot(results)))
    return std::move(error);
  return report;
}
