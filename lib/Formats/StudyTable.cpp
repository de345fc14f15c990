//===- StudyTable.cpp - the study's table and plot, without LLVM ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/StudyTable.h"

#include "mxfp4/Formats/SvgPlot.h"
#include "mxfp4/Train/LossCurve.h"

#include <algorithm>
#include <cstdio>

using namespace mlir::mxfp4;

void StudyCurves::addRecord(const JsonValue &record) {
  if (const JsonValue *run = record.get(getRunKey()))
    commit = run->getString("commit").value_or("unknown");
  int64_t step = record.getInteger("step").value_or(0);
  if (!divergedAt && recordsDivergence(record))
    divergedAt = step;
  LossPoint p{step, record.getNumber("tokens").value_or(NAN), NAN};
  // A diverged step's loss is null.
  if (record.get("eval_loss")) {
    p.loss = record.getNumber("eval_loss").value_or(NAN);
    eval.push_back(p);
  } else if (record.get("loss")) {
    p.loss = record.getNumber("loss").value_or(NAN);
    train.push_back(p);
  }
}

/// printf into a string.
template <typename... Args>
static std::string format(const char *spec, Args... args) {
  int size = std::snprintf(nullptr, 0, spec, args...);
  std::string text(size > 0 ? size : 0, '\0');
  std::snprintf(text.data(), text.size() + 1, spec, args...);
  return text;
}

/// `v` with `digits` decimals; a NaN (a role whose values were all zero
/// has no SQNR) is "nan" whatever its sign.
static std::string fixed(double v, int digits) {
  return std::isnan(v) ? "nan" : format("%.*f", digits, v);
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

StudyNumbers mlir::mxfp4::getStudyNumbers(const StudyResults &results) {
  StudyNumbers numbers;
  size_t seeds = results.seeds.size();
  // A run that diverged before its first evaluation has none.
  bool eval = false, allEval = true;
  for (const std::vector<StudyCurves> &recipe : results.runs)
    for (const StudyCurves &run : recipe) {
      eval |= !run.eval.empty();
      allEval &= !run.eval.empty() || run.divergedAt;
    }
  eval &= allEval;
  numbers.heldOut = eval;
  double step75 = 0.75 * double(results.steps);
  numbers.targetStep = step75;
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

  double baseTokens = 0;
  for (const Cell &c : cells[0])
    baseTokens += c.tokens.value_or(NAN) / double(seeds);
  // Against the step's tokens with eval losses, against the baseline's own
  // crossing with smoothed training losses.
  double reference = eval ? step75 * double(results.tokensPerStep) : baseTokens;
  for (size_t r = 0; r < results.recipes.size(); ++r) {
    StudyRowNumbers row;
    std::vector<double> spreadOf;
    for (size_t s = 0; s < seeds; ++s) {
      const Cell &cell = cells[r][s];
      row.finalLoss += cell.final / double(seeds);
      double g = cell.final - cells[0][s].final;
      row.gap += g / double(seeds);
      row.gaps.push_back(g);
      // The baseline's spread is of its losses, the others' of their gaps.
      spreadOf.push_back(r == 0 ? cell.final : g);
      row.missed += !cell.tokens;
      row.tokens += cell.tokens.value_or(0) / double(seeds);
      row.runs.push_back({results.runs[r][s].divergedAt, cell.final});
    }
    row.spread = getSeedSpread(spreadOf);
    if (!row.missed)
      row.extraTokensFraction = row.tokens / reference - 1;
    numbers.rows.push_back(std::move(row));
  }
  for (StudyRowNumbers &row : numbers.rows)
    for (size_t s = 0; s < seeds; ++s)
      row.dncRuns += doesNotConverge(row.runs[s], numbers.rows[0].runs[s],
                                     results.dncThreshold);
  return numbers;
}

/// The "Compiler:" line's text: every run's compiler, from its metrics: one
/// commit, or each with the recipes compiled by it.
static std::string describeCompilers(const StudyResults &results) {
  std::vector<std::pair<std::string, std::string>> commits;
  for (size_t r = 0; r < results.recipes.size(); ++r)
    for (size_t s = 0; s < results.seeds.size(); ++s) {
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
  std::string text;
  for (size_t i = 0; i < commits.size(); ++i)
    text += (i ? "; " : "") + commits[i].first +
            (commits.size() > 1 ? " (" + commits[i].second + ")" : "");
  if (commits.size() > 1)
    text += " (the runs come from more than one compiler)";
  return text;
}

/// The GEMM roles of the telemetry columns, in the table's order.
static const char *const kRoles[] = {"fprop", "dgrad", "wgrad"};

std::string mlir::mxfp4::formatStudyTable(const StudyResults &results) {
  StudyNumbers numbers = getStudyNumbers(results);
  size_t seeds = results.seeds.size();
  bool eval = numbers.heldOut;
  const std::string &base = results.recipes.front();
  bool telemetry = !results.telemetry.empty();
  bool throughput = !results.tokensPerSecond.empty();

  std::string text = format("Llama '%s': %lld steps x %lld tokens = %.1f M "
                            "tokens; seeds:",
                            results.model.c_str(), (long long)results.steps,
                            (long long)results.tokensPerStep,
                            results.steps * results.tokensPerStep / 1e6);
  for (uint64_t seed : results.seeds)
    text += " " + std::to_string(seed);
  text += "\nCompiler: " + describeCompilers(results);

  std::string mean = seeds > 1 ? format("mean of %zu seeds", seeds) : "";
  std::string finalHeader =
      eval ? "final eval loss" + (seeds > 1 ? " (" + mean + ")" : "")
           : "final loss (last 20 steps" + (seeds > 1 ? ", " + mean : "") + ")";
  text += "\n\n| recipe | " + finalHeader + " | gap to " + base +
          (seeds > 1 ? " (per seed)" : "") + " | tokens to reach " + base +
          "'s " +
          (eval ? "eval loss at step " + format("%.0f", numbers.targetStep)
                : "step-" + std::to_string(int64_t(numbers.targetStep)) +
                      " loss") +
          " | seed spread |";
  std::string rule = "|---|---|---|---|---|";
  if (telemetry) {
    text += " Fprop clip / flush / SQNR | Dgrad clip / flush / SQNR | Wgrad "
            "clip / flush / SQNR |";
    rule += "---|---|---|";
  }
  if (throughput) {
    text += " tokens/s |";
    rule += "---|";
  }
  text += "\n" + rule + "\n";

  for (size_t r = 0; r < results.recipes.size(); ++r) {
    const StudyRowNumbers &row = numbers.rows[r];
    std::string diverged = describeDivergedRuns(row.runs, results.seeds);
    std::string dnc =
        describeDnc(row.runs, numbers.rows[0].runs, results.dncThreshold);
    text += "| " + results.recipes[r] + " | " +
            (!diverged.empty()               ? diverged
             : std::isfinite(row.finalLoss) ? format("%.4f", row.finalLoss)
                                            : "-") +
            " | ";
    if (r > 0 && !std::isfinite(row.gap)) {
      text += "-";
    } else if (r > 0) {
      text += format("%+.4f", row.gap);
      if (seeds > 1) {
        text += " (";
        for (size_t s = 0; s < seeds; ++s)
          text += format(s ? ", %+.4f" : "%+.4f", row.gaps[s]);
        text += ")";
      }
      if (std::isfinite(row.spread) && !exceedsSpread(row.gap, row.spread))
        text += " (within spread)";
    }
    text += " | ";
    if (!dnc.empty()) {
      text += dnc;
    } else if (row.missed) {
      text += format("not within %lld steps (%zu of %zu seeds)",
                     (long long)results.steps, row.missed, seeds);
    } else {
      text += format("%.1f M", row.tokens / 1e6);
      // The baseline's own crossing is its reference without held-out
      // losses.
      if (r > 0 || eval)
        text += format(" (%+.1f%%)", 100 * *row.extraTokensFraction);
    }
    text += std::isfinite(row.spread) ? format(" | %.4f |", row.spread)
                                      : " | - |";
    if (telemetry) {
      for (const char *role : kRoles) {
        const std::vector<RoleTelemetry> &roles = results.telemetry[r];
        auto it = std::find_if(roles.begin(), roles.end(),
                               [&](auto &t) { return t.role == role; });
        text += it == roles.end()
                    ? " - |"
                    : " " + fixed(it->clipped, 3) + " / " +
                          fixed(it->flushed, 3) + " / " +
                          fixed(it->sqnrDb, 1) + " dB |";
      }
    }
    if (throughput)
      text += format(" %.0f |", results.tokensPerSecond[r]);
    text += "\n";
  }

  text += "\n";
  text += "Gaps are paired: each recipe against the baseline of the same "
          "seed (same initial weights and batches), averaged over seeds. ";
  text += eval ? "Losses are held-out (eval) losses; token percentages are "
                 "against the tokens of 75% of the run.\n"
               : "Losses are training losses (the runs have no held-out "
                 "evaluations); token percentages are against the "
                 "baseline's own crossing of its smoothed loss.\n";
  text += seeds > 1 ? describeSpreadRule(base) + "\n"
                    : "Seed spread: unknown (one seed); run with two or more "
                      "seeds to measure it.\n";
  text += describeDncRule(
              results.dncThreshold, base,
              eval ? "final held-out eval loss"
                   : "final training loss (mean of the last 20 steps)") +
          "\n";
  if (telemetry)
    text += "Telemetry is averaged over the quantizations of each role and "
            "over all steps: clip = fraction saturated, flush = fraction of "
            "nonzeros quantized to zero.\n";
  return text;
}

std::string mlir::mxfp4::renderStudyPlot(const StudyResults &results) {
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
  return renderSvgPlot(title, series, "tokens", eval ? "eval loss" : "loss");
}
