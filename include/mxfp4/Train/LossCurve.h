//===- LossCurve.h - reading a loss curve, without LLVM ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The two readings of a loss curve that the study's table makes, in
// standard C++ only: the CPU study (lib/API/Study.cpp) and the CUDA
// runtime's (runtime/, which cannot link LLVM) share them, so both
// tables agree. A point is anything with `step`, `tokens` and `loss`.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_LOSSCURVE_H
#define MXFP4_TRAIN_LOSSCURVE_H

#include <optional>
#include <vector>

namespace mlir::mxfp4 {

/// The loss of `points` at `step`, linearly interpolated between the points
/// around it (the first point's loss before it); none after the last.
template <typename Point>
std::optional<double> lossAtStep(const std::vector<Point> &points,
                                 double step) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].step < step)
      continue;
    if (points[i].step == step || i == 0)
      return points[i].loss;
    const Point &a = points[i - 1], &b = points[i];
    double t = (step - a.step) / static_cast<double>(b.step - a.step);
    return a.loss + t * (b.loss - a.loss);
  }
  return std::nullopt;
}

/// The first (interpolated) token count at which `points` reach `target`;
/// none if they never do (a NaN loss never reaches it).
template <typename Point>
std::optional<double> tokensToReach(const std::vector<Point> &points,
                                    double target) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].loss <= target))
      continue;
    if (i == 0)
      return static_cast<double>(points[i].tokens);
    const Point &a = points[i - 1], &b = points[i];
    double t = (a.loss - target) / (a.loss - b.loss);
    return a.tokens + t * static_cast<double>(b.tokens - a.tokens);
  }
  return std::nullopt;
}

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_LOSSCURVE_H
