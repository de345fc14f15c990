//===- TrainingBindings.cpp - Llama training from Python ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Llama step builder, the trainer and the study (mxfp4/API) for Python:
// configs are a preset name, a JSON file or a dict of LlamaConfig fields;
// reports come back as dicts of plain values.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "mxfp4/API/LlamaModel.h"
#include "mxfp4/API/Study.h"
#include "mxfp4/API/Trainer.h"
#include "mxfp4/Train/Checkpoint.h"
#include "mxfp4/Train/Convergence.h"
#include "mxfp4/Train/Metrics.h"

#include <pybind11/stl.h>

#include <functional>
#include <optional>

namespace py = pybind11;
using namespace mlir::mxfp4;

namespace {

/// A preset name or JSON file (str), or a dict of config fields (with an
/// optional "preset" key) turned into JSON.
LlamaConfig toConfig(const py::object &config) {
  if (py::isinstance<py::str>(config))
    return unwrap(loadLlamaConfig(config.cast<std::string>()));
  if (!py::isinstance<py::dict>(config))
    throw Mxfp4Error("a config is a preset name, a JSON file or a dict");
  std::string text =
      py::module_::import("json").attr("dumps")(config).cast<std::string>();
  return unwrap(LlamaConfig::fromJSON(text, "<dict>"));
}

py::dict toDict(const llvm::json::Object &object) {
  return py::module_::import("json")
      .attr("loads")(formatMetricsRecord(object))
      .cast<py::dict>();
}

py::dict reportToDict(const TrainReport &report) {
  py::list steps, evals, telemetry;
  for (const TrainPoint &p : report.steps)
    steps.append(py::dict(py::arg("step") = p.step, py::arg("loss") = p.loss,
                          py::arg("lr") = p.lr,
                          py::arg("grad_norm") = p.gradNorm));
  for (const EvalPoint &p : report.evals)
    evals.append(py::dict(py::arg("step") = p.step,
                          py::arg("tokens") = p.tokens,
                          py::arg("eval_loss") = p.loss));
  for (const TelemetryRow &t : report.telemetry)
    telemetry.append(py::dict(py::arg("name") = t.name,
                              py::arg("clipped") = t.clipped,
                              py::arg("flushed") = t.flushed,
                              py::arg("sqnr_db") = t.sqnrDb));
  return py::dict(
      py::arg("steps") = steps, py::arg("evals") = evals,
      py::arg("telemetry") = telemetry,
      py::arg("tokens_per_step") = report.tokensPerStep,
      py::arg("tokens_per_s") = report.tokensPerSecond,
      py::arg("compile_s") = report.compileSeconds,
      py::arg("run_s") = report.runSeconds,
      py::arg("peak_rss_mib") = report.peakRssMiB,
      py::arg("interrupted") = report.interrupted,
      py::arg("metrics") = report.metricsPath,
      py::arg("plot") = report.plotPath,
      py::arg("checkpoint") = report.checkpointPath,
      py::arg("data") = report.dataDescription);
}

/// Runs `work` with the GIL released (training takes minutes) and returns
/// its value, or raises Mxfp4Error with the GIL held again.
template <typename T>
T runWithoutGil(const std::function<llvm::Expected<T>()> &work) {
  std::optional<T> value;
  std::string error;
  {
    py::gil_scoped_release release;
    llvm::Expected<T> result = work();
    if (result)
      value = std::move(*result);
    else
      error = llvm::toString(result.takeError());
  }
  if (!value)
    throw Mxfp4Error(error);
  return std::move(*value);
}

TrainOptions makeTrainOptions(const py::object &config, int64_t steps,
                              double lr, const std::string &data,
                              const std::string &tokenizer,
                              const std::string &cacheDir,
                              const std::string &out, int64_t evalEvery,
                              int64_t evalBatches) {
  TrainOptions options;
  options.config = toConfig(config);
  if (steps > 0) {
    options.config.totalSteps = steps;
    options.config.warmupSteps = std::min<int64_t>(
        options.config.warmupSteps, std::max<int64_t>(steps / 10, 1));
  }
  if (lr > 0)
    options.config.lr = lr;
  if (llvm::Error error = options.config.verify())
    throw Mxfp4Error(llvm::toString(std::move(error)));
  options.data = data;
  options.tokenizer = tokenizer;
  options.cacheDir = cacheDir;
  options.outDir = out;
  options.evalEvery = evalEvery;
  options.evalBatches = evalBatches;
  options.progress = false;
  return options;
}

} // namespace

void mlir::mxfp4::bindTraining(py::module_ &m) {
  m.def(
      "llama_config",
      [](const py::object &config) {
        return toDict(getLlamaConfigJSON(toConfig(config)));
      },
      py::arg("config") = "tiny",
      "The full Llama config (dict of LlamaConfig fields) of a preset name, "
      "a JSON file or a dict of overrides");
  m.def(
      "llama_step_source",
      [](const py::object &config, const std::string &recipe) {
        return unwrap(buildLlamaStepSource(toConfig(config), recipe)).text;
      },
      py::arg("config") = "tiny", py::arg("recipe") = "",
      "The Llama training step (@loss, @loss_and_grads, @train_step) as MLIR, "
      "with a recipe applied if given");
  m.def(
      "train",
      [](const py::object &config, const std::string &recipe, int64_t steps,
         double lr, uint64_t seed, const std::string &data,
         const std::string &tokenizer, const std::string &cacheDir,
         const std::string &out, bool resume, int64_t evalEvery,
         int64_t evalBatches, bool telemetry) {
        TrainOptions options =
            makeTrainOptions(config, steps, lr, data, tokenizer, cacheDir, out,
                             evalEvery, evalBatches);
        options.recipe = recipe;
        options.seed = seed;
        options.resume = resume;
        options.telemetry = telemetry;
        TrainReport report =
            runWithoutGil<TrainReport>([&] { return train(options); });
        // A run that diverged fails, as `mxfp4-run train` does; its files
        // are on disk.
        if (const std::optional<Divergence> &d = report.divergence)
          throw Mxfp4Error(formatDivergenceError(
              d->step, d->reason, d->checkpointStep, report.checkpointPath));
        return reportToDict(report);
      },
      py::arg("config") = "tiny", py::arg("recipe") = "fp4-all-dht16",
      py::arg("steps") = 0, py::arg("lr") = 0.0, py::arg("seed") = 1,
      py::arg("data") = "default", py::arg("tokenizer") = "",
      py::arg("cache_dir") = "", py::arg("out"), py::arg("resume") = false,
      py::arg("eval_every") = 50, py::arg("eval_batches") = 4,
      py::arg("telemetry") = false,
      "Train a Llama on the CPU (as `mxfp4-run train`); returns the report: "
      "steps, evals, telemetry, throughput and the output paths; a run that "
      "diverges raises Mxfp4Error naming the step");
  m.def(
      "study",
      [](const py::object &config, const std::vector<std::string> &recipes,
         const std::vector<uint64_t> &seeds, int64_t steps, double lr,
         const std::string &data, const std::string &tokenizer,
         const std::string &cacheDir, const std::string &out,
         int64_t evalEvery, int64_t evalBatches, double dncThreshold) {
        if (!(dncThreshold >= 0))
          throw Mxfp4Error("dnc_threshold wants a fraction of at least 0");
        StudyOptions options;
        options.dncThreshold = dncThreshold;
        options.train = makeTrainOptions(config, steps, lr, data, tokenizer,
                                         cacheDir, out, evalEvery, evalBatches);
        if (options.train.evalEvery <= 0)
          options.train.evalEvery =
              std::max<int64_t>(options.train.config.totalSteps / 20, 1);
        options.recipes = recipes;
        if (options.recipes.empty())
          for (llvm::StringRef r : getDefaultStudyRecipes())
            options.recipes.push_back(r.str());
        options.seeds = seeds;
        StudyReport report = runWithoutGil<StudyReport>(
            [&] { return runStudy(options); });
        py::list rows;
        for (const StudyRow &row : report.rows) {
          py::dict roles;
          for (const RoleTelemetry &t : row.telemetry)
            roles[py::str(t.role)] =
                py::dict(py::arg("clipped") = t.clipped,
                         py::arg("flushed") = t.flushed,
                         py::arg("sqnr_db") = t.sqnrDb);
          py::object extra = py::none();
          if (row.extraTokensFraction)
            extra = py::float_(*row.extraTokensFraction);
          py::list divergedAt;
          for (const RunOutcome &run : row.runs)
            divergedAt.append(run.divergedAt ? py::object(py::int_(
                                                   *run.divergedAt))
                                             : py::object(py::none()));
          rows.append(py::dict(
              py::arg("recipe") = row.recipe,
              py::arg("final_eval_loss") = row.finalLoss,
              py::arg("gap") = row.gap,
              py::arg("spread") = std::isfinite(row.spread)
                                      ? py::object(py::float_(row.spread))
                                      : py::object(py::none()),
              py::arg("extra_tokens_fraction") = extra,
              py::arg("telemetry") = roles,
              py::arg("tokens_per_s") = row.tokensPerSecond,
              py::arg("diverged_at_step") = divergedAt,
              py::arg("dnc_runs") = row.dncRuns));
        }
        return py::dict(py::arg("rows") = rows,
                        py::arg("table") = report.table,
                        py::arg("plot") = report.plotPath,
                        py::arg("json") = report.jsonPath);
      },
      py::arg("config") = "tiny",
      py::arg("recipes") = std::vector<std::string>{},
      py::arg("seeds") = std::vector<uint64_t>{1}, py::arg("steps") = 0,
      py::arg("lr") = 0.0, py::arg("data") = "default",
      py::arg("tokenizer") = "", py::arg("cache_dir") = "", py::arg("out"),
      py::arg("eval_every") = 0, py::arg("eval_batches") = 4,
      py::arg("dnc_threshold") = kDefaultDncThreshold,
      "Train each recipe for each seed from the same weights and data and "
      "compare them with the first (as `mxfp4-run study`); returns the rows "
      "(with each seed's divergence step or None and the number of runs that "
      "do not converge, and its seed spread) and the Markdown table");
}
