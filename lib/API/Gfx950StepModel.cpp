//===- Gfx950StepModel.cpp - a host function's time by the issue model ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Gfx950StepModel.h"

#include "mxfp4/Target/GFX950/KernelReport.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::mxfp4;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// What the model needs of one kernel, computed once.
struct KernelEntry {
  const Gfx950KernelInfo *info = nullptr;
  gfx950::KernelReport report;
  /// Iterations of the steady state per wave without a GEMM shape.
  double iterationsPerWave = 1;
  std::string iterationSource;
  /// Matrix-core FLOP/s of the whole GPU for the steady state's MFMAs.
  double peakMfmaFlops = 0;
  /// Its entry in the model's kernels, once launched.
  std::optional<size_t> index;
};
} // namespace

/// The steady state's iterations per wave of a kernel without a GEMM shape:
/// the IR's trip counts over the unroll factor, the steady state's bytes
/// per lane over the IR loop's bytes per work-item.
static void countIterations(KernelEntry &entry) {
  const Gfx950KernelInfo &info = *entry.info;
  const gfx950::SteadyState &steady = entry.report.steadyState;
  if (info.m) {
    entry.iterationSource = "gemm-shape";
    return;
  }
  if (info.steadyIterations > 0) {
    entry.iterationsPerWave = info.steadyIterations;
    entry.iterationSource = "kernel-attribute";
    return;
  }
  if (steady.scope == gfx950::SteadyState::Scope::WholeKernel ||
      info.loopIterations <= 0) {
    entry.iterationsPerWave = 1;
    entry.iterationSource = info.unknownTripCounts ? "unknown-trip-count"
                                                   : "no-loop";
    return;
  }
  double unroll = 1;
  double laneBytes = double(steady.mix.globalBytes) / 64.0;
  if (info.loopBytes > 0 && laneBytes > info.loopBytes)
    unroll = std::round(laneBytes / double(info.loopBytes));
  entry.iterationsPerWave = std::max(1.0, info.loopIterations / unroll);
  entry.iterationSource =
      info.unknownTripCounts ? "unknown-trip-count" : "ir-loops";
}

llvm::Expected<Gfx950StepModel>
mxfp4::modelGfx950Step(const Gfx950Artifact &artifact,
                       const Gfx950StepModelOptions &options) {
  if (!artifact.planError.empty())
    return makeError("the host functions are not a plan: " +
                     artifact.planError);
  const std::vector<HostFunction> &plan = artifact.plan;
  const HostFunction *function = nullptr;
  for (const HostFunction &f : plan)
    if (f.name == options.function)
      function = &f;
  if (!function) {
    std::string names;
    for (const HostFunction &f : plan)
      names += (names.empty() ? "@" : ", @") + f.name;
    return makeError("no host function @" + options.function +
                     " to model (the program has " +
                     (names.empty() ? std::string("none") : names) + ")");
  }
  if (artifact.kernels.empty() || artifact.kernels.front().assembly.empty())
    return makeError("the step model needs the kernels' assembly (compile "
                     "with code objects)");

  gfx950::IssueModel issue;
  Gfx950StepModel model;
  model.function = function->name;
  model.options = options;
  model.tokensPerStep = options.tokensPerStep;
  model.memory = measureHostMemory(*function);

  llvm::StringMap<KernelEntry> kernels;
  for (const Gfx950KernelInfo &info : artifact.kernels) {
    llvm::Expected<std::vector<gfx950::KernelReport>> reports =
        gfx950::analyzeGfx950Assembly(info.assembly, issue, info.name);
    if (!reports)
      return reports.takeError();
    if (reports->size() != 1)
      return makeError("the assembly of kernel '" + info.name +
                       "' does not describe exactly one kernel");
    KernelEntry entry;
    entry.info = &info;
    entry.report = std::move(reports->front());
    const gfx950::LoopMix &mix = entry.report.steadyState.mix;
    if (mix.mfmaCycles > 0)
      entry.peakMfmaFlops = double(issue.computeUnits) * issue.simdsPerCu *
                            mix.mfmaFlops / double(mix.mfmaCycles) *
                            issue.clockGHz * 1e9;
    countIterations(entry);
    kernels[info.name] = std::move(entry);
  }

  // Bytes of every buffer value, a view by what it views.
  std::map<int64_t, int64_t> bytes, root;
  for (const HostValue &argument : function->arguments)
    if (argument.buffer)
      bytes[argument.id] = argument.bytes;
  auto rootOf = [&](int64_t id) {
    auto it = root.find(id);
    return it == root.end() ? id : it->second;
  };

  // Roofline terms per kernel, to name the larger one.
  std::vector<std::pair<double, double>> terms; // (mfma s, hbm s)
  for (const HostStep &step : function->steps) {
    if (step.kind == HostStep::Kind::View) {
      root[step.id] = rootOf(step.source);
      continue;
    }
    if (step.kind == HostStep::Kind::Alloc ||
        step.kind == HostStep::Kind::Global ||
        step.kind == HostStep::Kind::Const) {
      bytes[step.id] = step.bytes;
      continue;
    }
    if (step.kind != HostStep::Kind::Launch)
      continue;
    auto it = kernels.find(step.kernel);
    if (it == kernels.end())
      return makeError("@" + function->name + " launches '" + step.kernel +
                       "', which the program's kernels do not include");
    KernelEntry &entry = it->second;
    const Gfx950KernelInfo &info = *entry.info;
    int64_t workgroups = step.grid[0] * step.grid[1] * step.grid[2];
    gfx950::LaunchShape shape;
    shape.workgroups = workgroups;
    if (info.m) {
      shape.m = info.m;
      shape.n = info.n;
      shape.k = info.k;
    } else {
      shape.iterationsPerWave = entry.iterationsPerWave;
    }
    llvm::Expected<gfx950::LaunchEstimate> estimate =
        gfx950::estimateLaunch(entry.report, shape, issue);
    if (!estimate)
      return estimate.takeError();

    // The roofline: MFMA FLOPs at the peak of its MFMA, its buffers' bytes
    // (each once) at the HBM bandwidth.
    double flops =
        info.m ? 2.0 * info.m * info.n * info.k
               : double(workgroups) * entry.report.wavesPerWorkgroup *
                     entry.report.steadyState.mix.mfmaFlops *
                     estimate->iterationsPerWave;
    std::set<int64_t> buffers;
    double moved = 0;
    for (auto [isBuffer, id] : step.params)
      if (isBuffer && buffers.insert(rootOf(id)).second) {
        auto size = bytes.find(rootOf(id));
        if (size != bytes.end())
          moved += double(size->second);
      }
    double mfmaSeconds =
        entry.peakMfmaFlops > 0 ? flops / entry.peakMfmaFlops : 0;
    double hbmSeconds = moved / options.hbmBytesPerSecond;

    if (!entry.index) {
      entry.index = model.kernels.size();
      Gfx950KernelTime time;
      time.name = info.name;
      time.bound = entry.report.bound;
      time.iterationSource = entry.iterationSource;
      time.iterationsPerWave = estimate->iterationsPerWave;
      time.workgroups = workgroups;
      model.kernels.push_back(std::move(time));
      terms.emplace_back(0, 0);
    }
    Gfx950KernelTime &time = model.kernels[*entry.index];
    ++time.launches;
    // The issue model has no HBM term (its memory bound is L2's, 64 B/clk
    // a CU): a launch takes at least its buffers' bytes at HBM bandwidth.
    double hbmMicroseconds = hbmSeconds * 1e6;
    time.issueModelMicroseconds += estimate->microseconds;
    time.microseconds += std::max(estimate->microseconds, hbmMicroseconds);
    time.sustainedMicroseconds +=
        std::max(estimate->sustainedMicroseconds, hbmMicroseconds);
    if (hbmMicroseconds > estimate->microseconds)
      ++time.hbmBoundLaunches;
    time.idealMicroseconds += std::max(mfmaSeconds, hbmSeconds) * 1e6;
    time.mfmaFlops += flops;
    time.hbmBytes += moved;
    terms[*entry.index].first += mfmaSeconds;
    terms[*entry.index].second += hbmSeconds;
    ++model.launches;
  }

  for (auto [time, term] : llvm::zip(model.kernels, terms)) {
    time.roofline = term.first >= term.second ? "mfma" : "hbm";
    if (2 * time.hbmBoundLaunches > time.launches)
      time.bound = "hbm";
    time.efficiency =
        time.microseconds > 0 ? time.idealMicroseconds / time.microseconds : 0;
    model.kernelMicroseconds += time.microseconds;
    model.sustainedKernelMicroseconds += time.sustainedMicroseconds;
    model.idealMicroseconds += time.idealMicroseconds;
  }
  model.overheadMicroseconds =
      double(model.launches) * options.launchOverheadMicroseconds;
  model.stepMicroseconds = model.kernelMicroseconds + model.overheadMicroseconds;
  model.sustainedStepMicroseconds =
      model.sustainedKernelMicroseconds + model.overheadMicroseconds;
  if (options.tokensPerStep > 0 && model.stepMicroseconds > 0) {
    model.tokensPerSecond =
        double(options.tokensPerStep) / (model.stepMicroseconds * 1e-6);
    model.sustainedTokensPerSecond =
        double(options.tokensPerStep) / (model.sustainedStepMicroseconds * 1e-6);
  }
  llvm::sort(model.kernels,
             [](const Gfx950KernelTime &a, const Gfx950KernelTime &b) {
               if (a.microseconds != b.microseconds)
                 return a.microseconds > b.microseconds;
               return a.name < b.name;
             });
  return model;
}

std::string mxfp4::formatGfx950StepModelJSON(const Gfx950StepModel &model) {
  llvm::json::Array kernels;
  for (const Gfx950KernelTime &k : model.kernels)
    kernels.push_back(llvm::json::Object{
        {"name", k.name},
        {"launches", k.launches},
        {"microseconds", k.microseconds},
        {"issue_model_microseconds", k.issueModelMicroseconds},
        {"hbm_bound_launches", k.hbmBoundLaunches},
        {"sustained_microseconds", k.sustainedMicroseconds},
        {"ideal_microseconds", k.idealMicroseconds},
        {"efficiency", k.efficiency},
        {"mfma_flops", k.mfmaFlops},
        {"hbm_bytes", k.hbmBytes},
        {"bound", k.bound},
        {"roofline", k.roofline},
        {"iteration_source", k.iterationSource},
        {"iterations_per_wave", k.iterationsPerWave},
        {"workgroups", k.workgroups},
    });
  gfx950::IssueModel issue;
  llvm::json::Object root{
      {"modeled", true},
      {"target", "gfx950"},
      {"function", model.function},
      {"launches", model.launches},
      {"kernel_microseconds", model.kernelMicroseconds},
      {"sustained_kernel_microseconds", model.sustainedKernelMicroseconds},
      {"overhead_microseconds", model.overheadMicroseconds},
      {"ideal_microseconds", model.idealMicroseconds},
      {"step_microseconds", model.stepMicroseconds},
      {"sustained_step_microseconds", model.sustainedStepMicroseconds},
      {"tokens_per_step", model.tokensPerStep},
      {"tokens_per_second", model.tokensPerSecond},
      {"sustained_tokens_per_second", model.sustainedTokensPerSecond},
      {"memory",
       llvm::json::Object{{"arguments_bytes", model.memory.arguments},
                          {"peak_temporaries_bytes",
                           model.memory.peakTemporaries},
                          {"peak_bytes", model.memory.peak()}}},
      {"assumptions",
       llvm::json::Object{
           {"launch_overhead_microseconds",
            model.options.launchOverheadMicroseconds},
           {"hbm_bytes_per_second", model.options.hbmBytesPerSecond},
           {"clock_ghz", issue.clockGHz},
           {"sustained_clock_ghz", issue.sustainedClockGHz}}},
      {"kernels", std::move(kernels)},
  };
  return llvm::formatv("{0:2}\n", llvm::json::Value(std::move(root))).str();
}

std::string mxfp4::formatGfx950StepModelTable(const Gfx950StepModel &model,
                                              size_t top) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv(
      "step model (MODELED by the issue model, not measured) of @{0}: {1} "
      "launches, {2:F3} ms at 2.4 GHz ({3:F3} ms at the sustained clock), "
      "of which {4:F3} ms launch overhead ({5:F1} us a launch, assumed)\n",
      model.function, model.launches, model.stepMicroseconds / 1000,
      model.sustainedStepMicroseconds / 1000, model.overheadMicroseconds / 1000,
      model.options.launchOverheadMicroseconds);
  if (model.tokensPerStep > 0)
    os << llvm::formatv("  {0} tokens a step: {1:F0} tokens/s ({2:F0} at the "
                        "sustained clock)\n",
                        model.tokensPerStep, model.tokensPerSecond,
                        model.sustainedTokensPerSecond);
  os << llvm::formatv("  device memory at the peak: {0:F3} GB ({1:F3} GB "
                      "arguments + {2:F3} GB temporaries)\n",
                      model.memory.peak() / 1e9, model.memory.arguments / 1e9,
                      model.memory.peakTemporaries / 1e9);
  os << llvm::formatv("  roofline (MFMA peak, {0:F1} TB/s HBM): {1:F3} ms; "
                      "kernels at >= 70% of it: ",
                      model.options.hbmBytesPerSecond / 1e12,
                      model.idealMicroseconds / 1000);
  size_t met = llvm::count_if(model.kernels, [](const Gfx950KernelTime &k) {
    return k.efficiency >= 0.7;
  });
  os << met << " of " << model.kernels.size() << "\n";
  for (size_t i = 0; i < model.kernels.size() && i < top; ++i) {
    const Gfx950KernelTime &k = model.kernels[i];
    os << llvm::formatv("  {0,-48} {1,5} launches {2,10:F1} us {3,5:P0} of "
                        "the step, {4} bound, {5:P0} of its {6} roofline "
                        "({7})\n",
                        k.name, k.launches, k.microseconds,
                        model.kernelMicroseconds > 0
                            ? k.microseconds / model.kernelMicroseconds
                            : 0.0,
                        k.bound, k.efficiency, k.roofline, k.iterationSource);
  }
  return text;
}
