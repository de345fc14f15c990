//===- LossPlot.cpp - the loss plot of a training run, without LLVM -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/LossPlot.h"

#include "mxfp4/Formats/SvgPlot.h"

using namespace mlir::mxfp4;

std::string mlir::mxfp4::renderLossPlot(const std::string &title,
                                        const std::string &trainLabel,
                                        const LossCurve &train,
                                        const LossCurve &eval) {
  PlotSeries trainSeries{trainLabel, train.tokens, train.loss};
  // The moving average shows the trend through the per-batch noise of small
  // batches.
  PlotSeries smoothed = getMovingAverage(trainSeries, "train, moving average");
  PlotSeries evalSeries{"validation", eval.tokens, eval.loss, /*dashed=*/true};
  return renderSvgPlot(title, {trainSeries, smoothed, evalSeries}, "tokens",
                       "loss");
}
