//===- LossPlot.h - loss.svg of a run ---------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU trainer's plot, drawn by the code the two share
// (mxfp4/Formats/LossPlot.h): training loss, its moving average and the
// held-out loss against tokens, read from a run's metrics records.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_LOSS_PLOT_H
#define MXFP4_RUNTIME_CORE_LOSS_PLOT_H

#include "Metrics.h"

#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// Writes the plot of `records` to `path`; `label` names the training curve.
void writeLossPlot(const std::string &path, const std::string &title,
                   const std::string &label,
                   const std::vector<MetricsRecord> &records);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_LOSS_PLOT_H
