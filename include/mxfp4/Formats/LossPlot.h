//===- LossPlot.h - the loss plot of a training run -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loss.svg of a training run in standard C++ only: the CPU trainer
// (mxfp4/Train/Plot.h, which writes it atomically) and the CUDA runtime
// (runtime/, which cannot link LLVM) draw their runs' curves through
// this, so both plots look alike. Drawn by mxfp4/Formats/SvgPlot.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_LOSSPLOT_H
#define MXFP4_FORMATS_LOSSPLOT_H

#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The points of a loss curve: `loss[i]` after `tokens[i]` tokens. A NaN
/// loss (a diverged step's) breaks the line.
struct LossCurve {
  std::vector<double> tokens;
  std::vector<double> loss;
};

/// The SVG text of a run's loss plot: the training loss `train`, labelled
/// `trainLabel`, its moving average, and the held-out loss `eval`, dashed
/// and labelled "validation", against tokens. The texts must be UTF-8.
std::string renderLossPlot(const std::string &title,
                           const std::string &trainLabel,
                           const LossCurve &train, const LossCurve &eval);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_LOSSPLOT_H
