//===- loss_plot.cpp - loss.svg of a run ----------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "loss_plot.h"

#include "npy.h"

#include "mxfp4/Formats/SvgPlot.h"

#include <cmath>

using mlir::mxfp4::PlotSeries;

void writeLossPlot(const std::string &path, const std::string &title,
                   const std::string &label,
                   const std::vector<MetricsRecord> &records) {
  PlotSeries train{label, {}, {}};
  PlotSeries eval{"validation", {}, {}, /*dashed=*/true};
  for (const MetricsRecord &r : records) {
    double tokens = r.value.getNumber("tokens").value_or(NAN);
    // A diverged step's loss is null: a gap in the curve.
    if (r.value.get("eval_loss")) {
      eval.x.push_back(tokens);
      eval.y.push_back(r.value.getNumber("eval_loss").value_or(NAN));
    } else if (r.value.get("loss")) {
      train.x.push_back(tokens);
      train.y.push_back(r.value.getNumber("loss").value_or(NAN));
    }
  }
  PlotSeries smoothed =
      mlir::mxfp4::getMovingAverage(train, "train, moving average");
  writeFile(path, mlir::mxfp4::renderSvgPlot(title, {train, smoothed, eval},
                                             "tokens", "loss"));
}
