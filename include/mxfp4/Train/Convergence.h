//===- Convergence.h - divergence and DNC, without LLVM ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// When a training run has diverged and when a study's run does not converge,
// in standard C++ only: the CPU trainer and study (lib/API) and the CUDA
// runtime's (runtime/, which cannot link LLVM) share these, so both stop
// at the same step with the same message, record it the same way in
// metrics.jsonl and render the same cells and notes in their tables.
//
// A run diverges at the first step whose training loss or gradient norm is
// not finite, whose held-out loss (of the weights after the step) is not
// finite, or after which a checkpoint would hold a parameter or moment that
// is not finite. Training stops there: nothing after it would be a result,
// and no checkpoint is ever written with non-finite values, so the last one
// written stays.
//
// A run does not converge (DNC) if it diverged or if its final loss is more
// than a threshold (relative, 20% by default) above the baseline's final
// loss of the same seed (docs/Training.md, "The study").
//
// A study's gap (a recipe's final loss minus the baseline's, per seed) is a
// claim only where its mean over seeds exceeds its seed spread, the sample
// standard deviation of the per-seed gaps.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_CONVERGENCE_H
#define MXFP4_TRAIN_CONVERGENCE_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

namespace convergence_detail {
/// `value` as the messages show numbers ("nan", "inf", 6 digits): a NaN's
/// sign is noise, printf's "-nan" would only vary the message.
inline std::string formatNumber(double value) {
  if (std::isnan(value))
    return "nan";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}
} // namespace convergence_detail

/// Why a step with this training loss and gradient norm diverged, e.g.
/// "loss is nan (gradient norm inf)" or "gradient norm is inf (loss 5.545)";
/// empty if both are finite.
inline std::string describeDivergence(double loss, double gradNorm) {
  using convergence_detail::formatNumber;
  if (!std::isfinite(loss))
    return "loss is " + formatNumber(loss) + " (gradient norm " +
           formatNumber(gradNorm) + ")";
  if (!std::isfinite(gradNorm))
    return "gradient norm is " + formatNumber(gradNorm) + " (loss " +
           formatNumber(loss) + ")";
  return "";
}

/// Why a step whose held-out loss is `evalLoss` diverged; empty if it is
/// finite.
inline std::string describeHeldOutDivergence(double evalLoss) {
  if (std::isfinite(evalLoss))
    return "";
  return "held-out loss is " + convergence_detail::formatNumber(evalLoss);
}

/// Why a step after which the tensor `name` (a parameter or an AdamW moment)
/// has a value that is not finite diverged.
inline std::string describeNonFiniteTensor(const std::string &name) {
  return "'" + name + "' is not finite after the update";
}

/// Whether the `bytes` bytes at `data`, f32 values, are all finite.
inline bool isFiniteF32(const void *data, size_t bytes) {
  const char *at = static_cast<const char *>(data);
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    float value;
    std::memcpy(&value, at + i, 4);
    if (!std::isfinite(value))
      return false;
  }
  return true;
}

/// The key of the first metrics.jsonl record of a new run, {"step": 0,
/// "tokens": 0, "run": {...}}: what produced the run (the compiler's
/// commit, the target, the recipe, the seed and the config).
inline const char *getRunKey() { return "run"; }

/// The key of the metrics.jsonl record that marks the step a run diverged
/// at: {"step": N, "tokens": T, "diverged": reason}, after the step's other
/// records.
inline const char *getDivergedKey() { return "diverged"; }

/// Whether the metrics record `r` (an llvm::json::Object or the CUDA
/// runtime's JsonValue) shows its step diverged: it is a divergence marker,
/// or it has a loss, gradient norm or held-out loss that is null (JSON's
/// NaN and infinities, as runs written before the marker existed have them).
template <typename Record> bool recordsDivergence(const Record &r) {
  if (r.get(getDivergedKey()))
    return true;
  for (const char *key : {"loss", "grad_norm", "eval_loss"})
    if (r.get(key) && !std::isfinite(r.getNumber(key).value_or(NAN)))
      return true;
  return false;
}

/// The error of a run that diverged at `step` for `reason`: it names the
/// checkpoint it keeps, of `checkpointStep` in `checkpointDir`, if any.
inline std::string
formatDivergenceError(int64_t step, const std::string &reason,
                      std::optional<int64_t> checkpointStep,
                      const std::string &checkpointDir) {
  std::string text =
      "training diverged at step " + std::to_string(step) + ": " + reason;
  if (checkpointStep)
    return text + "; the last finite checkpoint (step " +
           std::to_string(*checkpointStep) + ") is kept in " + checkpointDir;
  return text + "; no checkpoint was written before it";
}

/// The default threshold of the DNC rule: 20% above the baseline.
constexpr double kDefaultDncThreshold = 0.2;

/// One run of a study as the DNC rule reads it.
struct RunOutcome {
  /// The step the run diverged at, if it did.
  std::optional<int64_t> divergedAt;
  /// Its final loss (held-out where the runs evaluate); NaN if none.
  double finalLoss = NAN;
};

/// Whether `run` does not converge: it diverged, has no finite final loss,
/// or its final loss exceeds `baseline`'s (of the same seed) by more than
/// `threshold` of it. A baseline without a finite final loss is no
/// reference: then only divergence counts.
inline bool doesNotConverge(const RunOutcome &run, const RunOutcome &baseline,
                            double threshold) {
  if (run.divergedAt || !std::isfinite(run.finalLoss))
    return true;
  if (baseline.divergedAt || !std::isfinite(baseline.finalLoss))
    return false;
  return run.finalLoss - baseline.finalLoss >
         threshold * std::fabs(baseline.finalLoss);
}

/// The final-loss cell of a table row whose runs (one per seed of `seeds`)
/// include diverged ones: "diverged at step 7", or with several seeds
/// "diverged at step 7 (seed 1), step 9 (seed 2)"; empty if none diverged.
inline std::string describeDivergedRuns(const std::vector<RunOutcome> &runs,
                                        const std::vector<uint64_t> &seeds) {
  std::string text;
  for (size_t s = 0; s < runs.size(); ++s) {
    if (!runs[s].divergedAt)
      continue;
    text += text.empty() ? "diverged at step " : ", step ";
    text += std::to_string(*runs[s].divergedAt);
    if (seeds.size() > 1 && s < seeds.size())
      text += " (seed " + std::to_string(seeds[s]) + ")";
  }
  return text;
}

/// The convergence cell of a table row whose runs do not all converge
/// against `baselines` (the same seeds): "DNC", or "DNC (1 of 2 seeds)"
/// when only some do not; empty if all converge.
inline std::string describeDnc(const std::vector<RunOutcome> &runs,
                               const std::vector<RunOutcome> &baselines,
                               double threshold) {
  size_t dnc = 0;
  for (size_t s = 0; s < runs.size() && s < baselines.size(); ++s)
    dnc += doesNotConverge(runs[s], baselines[s], threshold);
  if (dnc == 0)
    return "";
  if (dnc == runs.size())
    return "DNC";
  return "DNC (" + std::to_string(dnc) + " of " + std::to_string(runs.size()) +
         " seeds)";
}

/// The note under a study table that defines DNC: `finalLoss` names the
/// loss the table compares ("final held-out eval loss").
inline std::string describeDncRule(double threshold, const std::string &baseline,
                                   const std::string &finalLoss) {
  char percent[32];
  std::snprintf(percent, sizeof(percent), "%g%%", 100 * threshold);
  return "DNC (does not converge): diverged (a non-finite loss or gradient "
         "norm), or " +
         finalLoss + " more than " + percent + " above " + baseline +
         "'s of the same seed.";
}

/// The seed spread of `values` (per-seed gaps, or the baseline's per-seed
/// losses): their sample standard deviation; NaN unless at least two are
/// finite (one seed has no spread, a diverged seed no gap).
inline double getSeedSpread(const std::vector<double> &values) {
  double sum = 0;
  size_t n = 0;
  for (double v : values)
    if (std::isfinite(v)) {
      sum += v;
      ++n;
    }
  if (n < 2)
    return NAN;
  double mean = sum / double(n), squares = 0;
  for (double v : values)
    if (std::isfinite(v))
      squares += (v - mean) * (v - mean);
  return std::sqrt(squares / double(n - 1));
}

/// Whether a mean gap is a claim: it exceeds its seed spread. A gap with no
/// spread (one seed) is no claim either.
inline bool exceedsSpread(double gap, double spread) {
  return std::isfinite(gap) && std::isfinite(spread) &&
         std::fabs(gap) > spread;
}

/// The note under a study table that defines the spread column.
inline std::string describeSpreadRule(const std::string &baseline) {
  return "Seed spread: the sample standard deviation over seeds of the "
         "per-seed gaps (of the final losses, in " +
         baseline +
         "'s row); a gap no larger than its spread is marked \"within "
         "spread\" and is no claim.";
}

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_CONVERGENCE_H
