//===- LossPlot.cpp - loss.svg of a run -----------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LossPlot.h"

#include "Npy.h"

#include "mxfp4/Formats/LossPlot.h"

#include <cmath>

namespace mlir::mxfp4::runtime {

void writeLossPlot(const std::string &path, const std::string &title,
                   const std::string &label,
                   const std::vector<MetricsRecord> &records) {
  LossCurve train, eval;
  for (const MetricsRecord &r : records) {
    double tokens = r.value.getNumber("tokens").value_or(NAN);
    // A diverged step's loss is null: a gap in the curve.
    if (r.value.get("eval_loss")) {
      eval.tokens.push_back(tokens);
      eval.loss.push_back(r.value.getNumber("eval_loss").value_or(NAN));
    } else if (r.value.get("loss")) {
      train.tokens.push_back(tokens);
      train.loss.push_back(r.value.getNumber("loss").value_or(NAN));
    }
  }
  writeFile(path, mlir::mxfp4::renderLossPlot(title, label, train, eval));
}

} // namespace mlir::mxfp4::runtime
