//===- Plot.h - SVG loss curves ---------------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Writes loss curves as a self-contained SVG file that opens in any browser:
// axes with round tick labels, grid lines, a legend and one colour per series
// (rendered by mxfp4/Formats/SvgPlot.h, a run's plot composed by
// mxfp4/Formats/LossPlot.h, both shared with the CUDA runtime).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_PLOT_H
#define MXFP4_TRAIN_PLOT_H

#include "mxfp4/Formats/LossPlot.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::mxfp4 {

/// Writes the loss plot of a training run (renderLossPlot of
/// mxfp4/Formats/LossPlot.h: `train`, labelled `trainLabel`, its moving
/// average and the held-out `eval` against tokens) to `svgPath`, atomically.
/// Invalid UTF-8 in the texts is replaced.
llvm::Error writeLossPlot(llvm::StringRef svgPath, llvm::StringRef title,
                          llvm::StringRef trainLabel, const LossCurve &train,
                          const LossCurve &eval);

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_PLOT_H
