//===- loss_plot.h - loss.svg of a run --------------------------*- C++ -*-===//
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

#ifndef MXFP4_RUNTIME_CUDA_LOSS_PLOT_H
#define MXFP4_RUNTIME_CUDA_LOSS_PLOT_H

#include "metrics.h"

#include <string>
#include <vector>

/// Writes the plot of `records` to `path`; `label` names the training curve.
void writeLossPlot(const std::string &path, const std::string &title,
                   const std::string &label,
                   const std::vector<MetricsRecord> &records);

#endif // MXFP4_RUNTIME_CUDA_LOSS_PLOT_H
