//===- study_table.cpp - the study's table and plot -----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "study_table.h"

#include "mxfp4/Train/Convergence.h"
#include "mxfp4/Train/LossCurve.h"
#include "mxfp4/Formats/SvgPlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

using namespace mlir::mxfp4;

using mlir::mxfp4::lossAtStep;
using mlir::mxfp4::PlotSeries;
using mlir::mxfp4::RunOutcome;
using mlir::mxfp4::tokensToReach;

StudyCurves getStudyCurves(const std::vector<MetricsRecord> &records) {
  StudyCurves curves;
  for (const MetricsRecord &r : records) {
    if (const JsonValue *run = r.value.get(mlir::mxfp4::getRunKey()))
      curves.commit = run->getString("commit").value_or("unknown");
    if (!curves.divergedAt && mlir::mxfp4::recordsDivergence(r.value))
      curves.divergedAt = r.step;
    LossPoint p{r.step, r.value.getNumber("tokens").value_or(NAN), NAN};
    // A diverged step's loss is null.
    if (r.value.get("eval_loss")) {
      p.loss = r.value.getNumber("eval_loss").value_or(NAN);
      curves.eval.push_back(p);
    } else if (r.value.get("loss")) {
      p.loss = r.value.getNumber("loss").value_or(NAN);
      curves.train.push_back(p);
    }
  }
  return curves;
}

/// printf into a string.
template <typename... Args>
static std::string format(const char *spec, Args... args) {
  char text[256];
  std::snprintf(text, sizeof(text), spec, args...);
  return text;
}

/// Trailing means over up to 20 points.
static std::vector<double> smooth(const std::vector<LossPoint> &points) {
  std::vector<double> means;
  for (size_t i = 0; i < points.size(); ++i) {
    size_t first = i >= 19 ? i - 19 : 0;
    double sum = 0;
    for (size_t j = first; j <= i; ++j)
      sum += points[j].loss;
    means.push_back(sum / double(i - first + 1));
  }
  return means;
}

namespace {
/// One (recipe, seed) cell of the table.
struct Cell {
  double final = NAN;
  std::optional<double> tokens; // to reach the target
};
} // namespace

std::string formatStudyTable(const StudyResults &results) {
  size_t seeds = results.seeds.size();
  // A run that diverged before its first evaluation has none.
  bool eval = false, allEval = true;
  for (const std::vector<StudyCurves> &recipe : results.runs)
    for (const StudyCurves &run : recipe) {
      eval |= !run.eval.empty();
      allEval &= !run.eval.empty() || run.divergedAt;
    }
  eval &= allEval;
  const std::string &base = results.recipes.front();
  double step75 = 0.75 * double(results.steps);
  int64_t targetStep = int64_t(step75);

  // cells[recipe][seed]
  std::vector<std::vector<Cell>> cells(results.recipes.size());
  for (size_t s = 0; s < seeds; ++s) {
    const StudyCurves &baseline = results.runs[0][s];
    std::optional<double> target;
    if (eval)
      target = lossAtStep(baseline.eval, step75);
    else if (targetStep >= 1 && size_t(targetStep) <= baseline.train.size())
      target = smooth(baseline.train)[targetStep - 1];
    for (size_t r = 0; r < results.recipes.size(); ++r) {
      const StudyCurves &run = results.runs[r][s];
      Cell cell;
      if (eval) {
        // A run that diverged has no final loss; its last evaluation may
        // be of a step before.
        if (!run.divergedAt && !run.eval.empty())
          cell.final = run.eval.back().loss;
        if (target)
          cell.tokens = tokensToReach(run.eval, *target);
      } else if (!run.divergedAt) {
        size_t n = std::min<size_t>(20, run.train.size());
        double sum = 0;
        for (size_t i = run.train.size() - n; i < run.train.size(); ++i)
          sum += run.train[i].loss;
        cell.final = sum / double(n);
        std::vector<double> means = smooth(run.train);
        for (size_t i = 0; target && i < means.size() && !cell.tokens; ++i)
          if (means[i] <= *target)
            cell.tokens = run.train[i].tokens;
      }
      cells[r].push_back(cell);
    }
  }

  std::string text = format("Llama '%s': %lld steps x %lld tokens = %.1f M "
                            "tokens; seeds:",
                            results.model.c_str(), (long long)results.steps,
                            (long long)results.tokensPerStep,
                            results.steps * results.tokensPerStep / 1e6);
  for (uint64_t seed : results.seeds)
    text += " " + std::to_string(seed);
  // What the DNC rule reads of each run (the CPU study's RunOutcome).
  std::vector<std::vector<RunOutcome>> outcomes(results.recipes.size());
  for (size_t r = 0; r < results.recipes.size(); ++r)
    for (size_t s = 0; s < seeds; ++s)
      outcomes[r].push_back({results.runs[r][s].divergedAt, cells[r][s].final});
  std::string mean = seeds > 1 ? format("mean of %zu seeds", seeds) : "";
  std::string finalHeader =
      eval ? "final eval loss" + (seeds > 1 ? " (" + mean + ")" : "")
           : "final loss (last 20 steps" + (seeds > 1 ? ", " + mean : "") + ")";
  // Every run's compiler, from its metrics: one commit, or each with the
  // recipes compiled by it.
  std::vector<std::pair<std::string, std::string>> commits;
  for (size_t r = 0; r < results.recipes.size(); ++r)
    for (size_t s = 0; s < seeds; ++s) {
      const std::string &commit = results.runs[r][s].commit;
      auto it = std::find_if(commits.begin(), commits.end(),
                             [&](auto &c) { return c.first == commit; });
      bool seen = false;
      for (size_t t = 0; t < s; ++t)
        seen |= results.runs[r][t].commit == commit;
      if (it == commits.end())
        commits.push_back({commit, results.recipes[r]});
      else if (!seen)
        it->second += ", " + results.recipes[r];
    }
  text += "\nCompiler: ";
  for (size_t i = 0; i < commits.size(); ++i)
    text += (i ? "; " : "") + commits[i].first +
            (commits.size() > 1 ? " (" + commits[i].second + ")" : "");
  if (commits.size() > 1)
    text += " (the runs come from more than one compiler)";
  text += "\n\n| recipe | " + finalHeader + " | gap to " + base +
          (seeds > 1 ? " (per seed)" : "") + " | tokens to reach " + base +
          "'s " +
          (eval ? "eval loss at step " + format("%.0f", step75)
                : "step-" + std::to_string(targetStep) + " loss") +
          " | seed spread |\n|---|---|---|---|---|\n";
  double baseTokens = 0;
  for (const Cell &c : cells[0])
    baseTokens += c.tokens.value_or(NAN) / double(seeds);
  for (size_t r = 0; r < results.recipes.size(); ++r) {
    double final = 0, gap = 0, tokens = 0;
    std::string perSeed;
    std::vector<double> spreadOf;
    size_t missed = 0;
    for (size_t s = 0; s < seeds; ++s) {
      final += cells[r][s].final / double(seeds);
      double g = cells[r][s].final - cells[0][s].final;
      gap += g / double(seeds);
      perSeed += format(s ? ", %+.4f" : "%+.4f", g);
      // The baseline's spread is of its losses, the others' of their gaps.
      spreadOf.push_back(r == 0 ? cells[r][s].final : g);
      missed += !cells[r][s].tokens;
      tokens += cells[r][s].tokens.value_or(0) / double(seeds);
    }
    double spread = mlir::mxfp4::getSeedSpread(spreadOf);
    std::string diverged =
        mlir::mxfp4::describeDivergedRuns(outcomes[r], results.seeds);
    std::string dnc = mlir::mxfp4::describeDnc(outcomes[r], outcomes[0],
                                               results.dncThreshold);
    text += "| " + results.recipes[r] + " | " +
            (!diverged.empty()       ? diverged
             : std::isfinite(final) ? format("%.4f", final)
                                    : "-") +
            " | ";
    if (r > 0 && !std::isfinite(gap)) {
      text += "-";
    } else if (r > 0) {
      text += format("%+.4f", gap);
      if (seeds > 1)
        text += " (" + perSeed + ")";
      if (std::isfinite(spread) && !mlir::mxfp4::exceedsSpread(gap, spread))
        text += " (within spread)";
    }
    text += " | ";
    if (!dnc.empty()) {
      text += dnc;
    } else if (missed) {
      text += format("not within %lld steps (%zu of %zu seeds)",
                     (long long)results.steps, missed, seeds);
    } else {
      text += format("%.1f M", tokens / 1e6);
      // Against the step's tokens with eval losses (as the CPU study),
      // against the baseline's own crossing with smoothed training losses.
      double reference =
          eval ? step75 * double(results.tokensPerStep) : baseTokens;
      if (r > 0 || eval)
        text += format(" (%+.1f%%)", 100 * (tokens / reference - 1));
    }
    text += std::isfinite(spread) ? format(" | %.4f |\n", spread) : " | - |\n";
  }
  text += "\n";
  text += "Gaps are paired: each recipe against the baseline of the same "
          "seed (same initial weights and batches), averaged over seeds. ";
  text += eval ? "Losses are held-out (eval) losses; token percentages are "
                 "against the tokens of 75% of the run.\n"
               : "Losses are training losses (the runs have no held-out "
                 "evaluations); token percentages are against the "
                 "baseline's own crossing of its smoothed loss.\n";
  if (seeds > 1)
    text += mlir::mxfp4::describeSpreadRule(base) + "\n";
  text += mlir::mxfp4::describeDncRule(
              results.dncThreshold, base,
              eval ? "final held-out eval loss"
                   : "final training loss (mean of the last 20 steps)") +
          "\n";
  return text;
}

std::string renderStudyPlot(const StudyResults &results) {
  std::vector<PlotSeries> series;
  bool eval = !results.runs[0][0].eval.empty();
  for (size_t r = 0; r < results.recipes.size(); ++r) {
    const StudyCurves &run = results.runs[r][0];
    PlotSeries curve{results.recipes[r], {}, {}};
    if (eval) {
      for (const LossPoint &p : run.eval) {
        curve.x.push_back(p.tokens);
        curve.y.push_back(p.loss);
      }
    } else {
      // The first tenth, the initial loss, would squash the rest.
      std::vector<double> means = smooth(run.train);
      for (size_t i = run.train.size() / 10; i < means.size(); ++i) {
        curve.x.push_back(run.train[i].tokens);
        curve.y.push_back(means[i]);
      }
    }
    series.push_back(std::move(curve));
  }
  std::string title =
      (eval ? "Eval loss per recipe, seed "
            : "Training loss (20-step mean) per recipe, seed ") +
      std::to_string(results.seeds[0]);
  return mlir::mxfp4::renderSvgPlot(title, series, "tokens",
                                    eval ? "eval loss" : "loss");
}
