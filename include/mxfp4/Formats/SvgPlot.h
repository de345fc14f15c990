//===- SvgPlot.h - SVG line plots without LLVM ------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loss plots' renderer, in standard C++ only: the CPU driver draws with
// it (Plot.h) and so does the CUDA runtime (runtime/), which cannot link
// LLVM, so both draw the same pictures.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_SVGPLOT_H
#define MXFP4_FORMATS_SVGPLOT_H

#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// One curve: the points (x[i], y[i]); points where either is NaN or infinite
/// are skipped and break the line.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
  bool dashed = false;
};

/// The SVG text of a line plot of `series`. The x axis, labelled `xLabel`
/// ("step", "tokens", ...), spans the data; large values are labelled 250k,
/// 1.5M, .... The y axis leaves out the initial loss spike: it spans the
/// minimum of all points up to the 98th percentile of the points after each
/// series' first 10%, and clips what lies above. The texts must be UTF-8.
std::string renderSvgPlot(const std::string &title,
                          const std::vector<PlotSeries> &series,
                          const std::string &xLabel, const std::string &yLabel);

/// `series` smoothed by a trailing average over about 20 points, which shows
/// the trend through the per-batch noise of small batches; NaN and infinite
/// points are left out.
PlotSeries getMovingAverage(const PlotSeries &series, const std::string &label);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_SVGPLOT_H
