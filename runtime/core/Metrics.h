//===- Metrics.h - the metrics.jsonl of a run -------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One JSON object a line, read and cut by the code the CPU trainer uses
// (mxfp4/Formats/Metrics.h): training records {step, tokens, loss, lr,
// grad_norm, tokens_per_s, elapsed_s} and evaluations {step, tokens,
// eval_loss}. Every line is flushed as it is written; a torn last line (a
// run killed mid-write) is no record, any other line that is not a JSON
// object with a step is an error naming the file and the line.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_METRICS_H
#define MXFP4_RUNTIME_CORE_METRICS_H

#include "mxfp4/Formats/Json.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// One record and its line.
struct MetricsRecord {
  int64_t step = 0;
  mlir::mxfp4::JsonValue value;
  std::string line;
};

/// The records of `path`; fails naming the file and the line at the first
/// that is not a JSON object with an integral "step".
std::vector<MetricsRecord> readMetrics(const std::string &path);

/// A metrics.jsonl being written.
class MetricsLog {
public:
  /// A new log at `path`, replacing any file there.
  explicit MetricsLog(const std::string &path);
  /// The log at `path`, continued after the records of steps up to
  /// `lastStep` (the later ones, of a run cut short, are dropped).
  MetricsLog(const std::string &path, int64_t lastStep);

  /// Appends `record` as a line of its own and flushes it to the file.
  void append(const mlir::mxfp4::JsonRecord &record);

private:
  std::string path;
  std::ofstream out;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_METRICS_H
