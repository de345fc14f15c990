//===- LayerStudy.h - MXFP4 error of one linear layer's GEMMs ---*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiles one module that runs the three GEMMs of a linear layer (Fprop,
// Dgrad, Wgrad) in MXFP4 under several rotation recipes, runs it on
// synthetic activations with outlier channels and gradients with outlier
// tokens, and reports each result's relative error against the exact
// product: a quick, CPU-sized look at how a recipe changes the error of each
// GEMM role. (Relative Frobenius error of one product is not the training
// outcome the seed paper measures; it is a first-order diagnostic.)
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_LAYERSTUDY_H
#define MXFP4_API_LAYERSTUDY_H

#include "mxfp4/API/CpuRunner.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

struct LayerStudyOptions {
  int64_t tokens = 2048;
  int64_t inFeatures = 1024;
  int64_t outFeatures = 512;
  /// Activation channels and gradient tokens scaled by `outlierScale`.
  int64_t outliers = 8;
  float outlierScale = 50.0f;
  uint64_t seed = 1;
  CpuCompileOptions compile;
};

struct LayerStudyRow {
  std::string gemm;    // "Fprop", "Dgrad", "Wgrad"
  std::string recipe;  // "bf16", "fp4", "fp4+H16", ...
  double relativeError; // ||C - exact||_F / ||exact||_F
};

struct LayerStudyReport {
  std::vector<LayerStudyRow> rows;
  /// The generated module, for inspection.
  std::string source;
  double compileSeconds = 0, runSeconds = 0;
};

/// Runs the study; errors name what failed.
llvm::Expected<LayerStudyReport> runLayerStudy(const LayerStudyOptions &options);

} // namespace mlir::mxfp4

#endif // MXFP4_API_LAYERSTUDY_H
