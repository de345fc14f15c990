//===- Plot.h - SVG loss curves ---------------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Draws loss curves as a self-contained SVG file that opens in any browser:
// axes with round tick labels, grid lines, a legend and one colour per series
// (rendered by mxfp4/Formats/SvgPlot.h, which the CUDA runtime shares).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_PLOT_H
#define MXFP4_TRAIN_PLOT_H

#include "mxfp4/Formats/SvgPlot.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::mxfp4 {

/// Returns the SVG text of the plot; see writeLossPlot.
std::string renderLossPlot(llvm::StringRef title,
                           llvm::ArrayRef<PlotSeries> series,
                           llvm::StringRef xLabel = "step",
                           llvm::StringRef yLabel = "loss");

/// Writes `series` as an SVG line plot to `svgPath`, atomically. The x axis,
/// labelled `xLabel` ("step", "tokens", ...), spans the data; large values
/// are labelled 250k, 1.5M, .... The y axis leaves out the initial loss
/// spike: it spans the minimum of all points up to the 98th percentile of the
/// points after each series' first 10%, and clips what lies above.
llvm::Error writeLossPlot(llvm::StringRef svgPath, llvm::StringRef title,
                          llvm::ArrayRef<PlotSeries> series,
                          llvm::StringRef xLabel = "step",
                          llvm::StringRef yLabel = "loss");

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_PLOT_H
